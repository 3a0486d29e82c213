// Binary encoding and XXH3-128 content hash: deterministic, round-tripping, sensitive to
// content and options, insensitive to formatting.
#include "hologram/isa/encoding.h"
#include "test_util.h"

using namespace hologram;
using namespace hologram::test;

namespace {
const char *kProgram = R"(.kernel k
.param %a : buffer<f32> readwrite
.param %n : u32
  param.u32 r1, %n
  mov.imm.f32 r2, 2.5
@l:
  ld.f32 r3, [%a + %gid*4]
  mul.f32 r3, r3, r2
  st.f32 [%a + %gid*4], r3
  loop r1, @l
)";
}

TEST(Encoding, RoundTrip) {
  auto m = parse_ok(kProgram);
  auto bytes = isa::encode_module(m);
  auto back = isa::decode_module(bytes);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->same_as(m));
  EXPECT_EQ(isa::encode_module(*back), bytes);
}

TEST(Encoding, SameProgramSameBytesAndHash) {
  auto a = parse_ok(kProgram), b = parse_ok(kProgram);
  EXPECT_EQ(isa::encode_module(a), isa::encode_module(b));
  EXPECT_EQ(isa::content_hash(a), isa::content_hash(b));
  // Formatting and comments do not change identity.
  auto c = parse_ok(std::string("; a comment\n") + isa::print_module(a));
  EXPECT_EQ(isa::content_hash(a).hex(), isa::content_hash(c).hex());
  EXPECT_EQ(isa::content_hash(a).hex().size(), 32u);
}

TEST(Encoding, HashIsAPinnedValue) {
  // The hash is stable across runs and machines: a change here is a format change.
  auto m = parse_ok(".kernel k\n  exit\n");
  EXPECT_EQ(isa::content_hash(m).hex(), isa::content_hash(parse_ok(".kernel k\n  exit\n")).hex());
  auto bytes = isa::encode_module(m);
  std::vector<uint8_t> expected = {'H',
                                   'G',
                                   'I',
                                   'S',
                                   'A',
                                   1,
                                   1,
                                   1,
                                   'k',
                                   0,
                                   0,
                                   1,
                                   static_cast<uint8_t>(isa::Opcode::Exit),
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   /* shared bytes */ 0};
  EXPECT_EQ(bytes, expected);
}

TEST(Encoding, HashChangesWithContentAndOptions) {
  auto a = parse_ok(kProgram);
  std::string other = kProgram;
  other.replace(other.find("2.5"), 3, "2.6");
  EXPECT_NE(isa::content_hash(a), isa::content_hash(parse_ok(other)));
  isa::CompileOptions o;
  o.fast_math = true;
  EXPECT_NE(isa::content_hash(a), isa::content_hash(a, o));
  isa::CompileOptions t;
  t.targets = {"x86-64-v3"};
  EXPECT_NE(isa::content_hash(a, o), isa::content_hash(a, t));
}

/// Every proper prefix of `bytes` is refused by `decode`.
template <typename Decode>
void expect_every_truncation_refused(const std::vector<uint8_t> &bytes, Decode decode) {
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + cut);
    EXPECT_FALSE(decode(part)) << "cut at " << cut;
  }
}

TEST(Encoding, DamagedInputIsRejected) {
  auto bytes = isa::encode_module(parse_ok(kProgram));
  expect_every_truncation_refused(bytes, [](auto part) { return isa::decode_module(part); });
  auto bad = bytes;
  bad[0] = 'X';
  EXPECT_NE(isa::decode_module(bad).message().find("magic"), std::string::npos);
  bad = bytes;
  bad.push_back(0);
  EXPECT_NE(isa::decode_module(bad).message().find("trailing"), std::string::npos);
}

// What CPU module descriptors and bundles carry: the encoding and every source location, so
// the runtime's errors still name the line of an instruction without parsing text.
TEST(Encoding, WithLocationsRoundTripsTheLocations) {
  auto m = parse_ok(kProgram);
  auto bytes = isa::encode_module_with_locations(m);
  auto back = isa::decode_module_with_locations(bytes);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->same_as(m));
  ASSERT_EQ(back->kernels.size(), 1u);
  const auto &k = back->kernels[0], &want = m.kernels[0];
  EXPECT_EQ(k.loc, want.loc);
  for (size_t i = 0; i < k.params.size(); ++i) EXPECT_EQ(k.params[i].loc, want.params[i].loc);
  for (size_t i = 0; i < k.labels.size(); ++i) EXPECT_EQ(k.labels[i].loc, want.labels[i].loc);
  for (size_t i = 0; i < k.insts.size(); ++i) EXPECT_EQ(k.insts[i].loc, want.insts[i].loc) << i;
  EXPECT_EQ(k.insts[2].loc.line, 7u); // ld.f32, after the label
  EXPECT_EQ(isa::encode_module_with_locations(*back), bytes);
}

TEST(Encoding, WithLocationsRefusesDamagedInput) {
  auto bytes = isa::encode_module_with_locations(parse_ok(kProgram));
  expect_every_truncation_refused(
      bytes, [](auto part) { return isa::decode_module_with_locations(part); });
  auto bad = bytes;
  bad.push_back(0);
  auto trailing = isa::decode_module_with_locations(bad);
  EXPECT_FALSE(trailing);
  EXPECT_NE(trailing.message().find("trailing"), std::string::npos) << trailing.message();
  // The module's own encoding alone (no locations) is not enough.
  EXPECT_FALSE(isa::decode_module_with_locations(isa::encode_module(parse_ok(kProgram))));
  bad = bytes;
  bad[0] = 0xff; // a length beyond the input
  EXPECT_FALSE(isa::decode_module_with_locations(bad));
}
