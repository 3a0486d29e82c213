// Bundles (SPEC §10): deterministic bytes, a faithful round trip, and every kind of damage
// (truncation, flipped bytes in each part, version skew, forged manifests with fresh
// checksums) refused with a message that names the failed check, by the reader and by the
// CPU backend's load_module. Nothing crashes, whatever the bytes.
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/cpu_abi.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"
#include "test_util.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <unistd.h>

using namespace hologram;

namespace {

constexpr const char *kScale = R"(
.kernel scale
.param %x : buffer<f32> readwrite
.param %k : f32
.param %n : u32
  param.u32      r1, %n
  cvt.u64.u32    r2, r1
  setge.u64      p0, %gid, r2
  bra p0         @done
  param.f32      r3, %k
  ld.f32         r4, [%x + %gid*4]
  mul.f32        r5, r4, r3
  st.f32         [%x + %gid*4], r5
@done:
  exit
)";

isa::Module scale_module() {
  return test::parse_ok(kScale);
}

/// What hologram-cc scale.hasm --target=x86-64-v2,x86-64-v3 passes the driver.
driver::CpuOutputOptions scale_options() {
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2", "x86-64-v3"};
  o.module_name = "scale";
  o.sources = {"scale.hasm"};
  o.compiler_version = "test";
  return o;
}

/// The bytes of a bundle of kScale made by the driver, as hologram-cc --emit=bundle does.
const std::string &scale_bundle() {
  static const std::string bytes = [] {
    auto out = driver::emit_cpu_output(scale_module(), scale_options(), "bundle");
    EXPECT_TRUE(out) << out.message();
    return out ? *out : std::string();
  }();
  return bytes;
}

std::string read_error(std::string bytes) {
  Status st = artifact::read_bundle(std::move(bytes)).status();
  EXPECT_FALSE(st) << "a damaged bundle was accepted";
  EXPECT_EQ(st.code(), ErrorCode::InvalidModule);
  return st.message();
}

uint64_t le64(const std::string &b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
void put64(std::string &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
}

/// A bundle with its manifest replaced and every size and checksum made consistent again:
/// what a forger (or a buggy writer) would produce. Only the deeper checks can catch it.
std::string reseal(const std::string &bundle, const std::string &manifest,
                   std::string payloads = "\x01") {
  uint64_t msize = le64(bundle, 56);
  if (payloads == "\x01") payloads = bundle.substr(artifact::kBundleHeaderSize + msize);
  std::string out = bundle.substr(0, artifact::kBundleHeaderSize) + manifest + payloads;
  put64(out, 48, out.size());
  put64(out, 56, manifest.size());
  put64(out, 64, XXH3_64bits(manifest.data(), manifest.size()));
  put64(out, 72, XXH3_64bits(out.data(), 72));
  return out;
}

std::string manifest_of(const std::string &bundle) {
  return bundle.substr(artifact::kBundleHeaderSize, le64(bundle, 56));
}

std::string replace_once(std::string s, const std::string &from, const std::string &to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string temp_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() /
          ("hologram-bundle-test-" + std::to_string(getpid()) + "-" + name))
      .string();
}

TEST(Bundle, RoundTripsAndIsDeterministic) {
  const auto &bytes = scale_bundle();
  auto o = scale_options();
  auto again = driver::emit_cpu_output(scale_module(), o, "bundle");
  ASSERT_TRUE(again);
  EXPECT_EQ(bytes, *again);

  auto read = artifact::read_bundle(bytes);
  ASSERT_TRUE(read) << read.message();
  const artifact::Bundle &b = *read;
  EXPECT_EQ(b.format_version, artifact::kBundleFormatVersion);
  EXPECT_EQ(b.compiler_version, "test");
  EXPECT_EQ(b.module_name, "scale");
  EXPECT_EQ(b.sources, std::vector<std::string>{"scale.hasm"});
  EXPECT_EQ(b.options.targets, o.targets);
  EXPECT_TRUE(b.module.same_as(scale_module()));
  EXPECT_EQ(b.content_hash, isa::content_hash(scale_module(), b.options));
  ASSERT_EQ(b.payloads.size(), 2u);
  EXPECT_EQ(b.payloads[0].kind, artifact::kPayloadIsa);
  const auto *cpu = b.find_payload(artifact::kPayloadCpu);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->abi_version, HG_CPU_ABI_VERSION);
  ASSERT_EQ(cpu->targets.size(), 2u);
  EXPECT_EQ(cpu->targets[1].name, "x86-64-v3");
  EXPECT_NE(std::find(cpu->targets[1].features.begin(), cpu->targets[1].features.end(), "avx2"),
            cpu->targets[1].features.end());
  EXPECT_EQ(cpu->bytes.substr(0, 4), "\x7f"
                                     "ELF");
  // The manifest is the one --emit=manifest writes.
  auto manifest = driver::emit_cpu_output(scale_module(), o, "manifest");
  ASSERT_TRUE(manifest);
  EXPECT_EQ(b.manifest, *manifest);
}

TEST(Bundle, RefusesWhatIsNotABundle) {
  EXPECT_EQ(read_error("").rfind("magic:", 0), 0u);
  EXPECT_EQ(read_error("\x7f"
                       "ELF\x02\x01\x01")
                .rfind("magic:", 0),
            0u);
  EXPECT_EQ(read_error(".kernel k\n").rfind("magic:", 0), 0u);
}

TEST(Bundle, RefusesTruncatedFilesAtEveryLength) {
  const auto &bytes = scale_bundle();
  for (size_t len = 8; len < bytes.size(); len += len < 200 ? 1 : 97) {
    auto msg = read_error(bytes.substr(0, len));
    EXPECT_EQ(msg.rfind("truncated:", 0), 0u) << len << ": " << msg;
  }
  EXPECT_EQ(read_error(bytes + "x").rfind("size:", 0), 0u);
}

TEST(Bundle, NamesTheDamagedPart) {
  const auto &bytes = scale_bundle();
  auto flip = [&](size_t at) {
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x20);
    return read_error(b);
  };
  EXPECT_EQ(flip(0).rfind("magic:", 0), 0u);
  EXPECT_EQ(flip(20).rfind("header checksum:", 0), 0u); // compiler version
  EXPECT_EQ(flip(33).rfind("header checksum:", 0), 0u); // content hash
  size_t manifest = artifact::kBundleHeaderSize + 10;
  EXPECT_EQ(flip(manifest).rfind("manifest checksum:", 0), 0u);
  size_t payloads = artifact::kBundleHeaderSize + le64(bytes, 56);
  auto isa = flip(payloads + 3);
  EXPECT_EQ(isa.rfind("payload checksum: payload 'isa'", 0), 0u) << isa;
  auto cpu = flip(bytes.size() - 5);
  EXPECT_EQ(cpu.rfind("payload checksum: payload 'cpu'", 0), 0u) << cpu;
}

TEST(Bundle, RefusesOtherFormatVersions) {
  // Version 1 held the ISA as text; 3 is from the future.
  for (char version : {1, 3}) {
    std::string b = scale_bundle();
    b[8] = version;
    auto msg = read_error(b);
    EXPECT_EQ(msg.rfind("format version:", 0), 0u) << msg;
    EXPECT_NE(
        msg.find("format version " + std::to_string(version) + "; this runtime reads version 2"),
        std::string::npos)
        << msg;
  }
}

TEST(Bundle, EveryFlippedByteIsCaught) {
  const auto &bytes = scale_bundle();
  for (size_t at = 0; at < bytes.size(); at += 7) {
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x01);
    EXPECT_FALSE(artifact::read_bundle(b)) << "flipping byte " << at << " went unnoticed";
  }
}

TEST(Bundle, ForgedManifestsFailTheDeeperChecks) {
  const auto &bytes = scale_bundle();
  auto m = manifest_of(bytes);
  auto hash = isa::content_hash(
      scale_module(),
      isa::CompileOptions{2, false, false, false, false, {0, 0, 0}, {"x86-64-v2", "x86-64-v3"}});
  // The resealed original is accepted: the helper itself is faithful.
  EXPECT_TRUE(artifact::read_bundle(reseal(bytes, m)));

  auto msg = read_error(reseal(bytes, "{not json"));
  EXPECT_EQ(msg.rfind("manifest:", 0), 0u) << msg;
  msg = read_error(reseal(bytes, replace_once(m, "\"module\"", "\"modul\"")));
  EXPECT_NE(msg.find("has no 'module'"), std::string::npos) << msg;
  msg = read_error(reseal(bytes, replace_once(m, "\"sources\": [", "\"sources\": [1, ")));
  EXPECT_NE(msg.find("'sources' has the wrong type"), std::string::npos) << msg;
  // Options that differ from those hashed into the header.
  msg = read_error(reseal(bytes, replace_once(m, "\"opt_level\": 2", "\"opt_level\": 3")));
  EXPECT_EQ(msg.rfind("content hash:", 0), 0u) << msg;
  msg = read_error(reseal(bytes, replace_once(m, hash.hex(), std::string(32, '0'))));
  EXPECT_EQ(msg.rfind("content hash:", 0), 0u) << msg;
  // Payload ranges that overlap, leave gaps or run past the end.
  msg = read_error(reseal(bytes, replace_once(m, "\"offset\": 0,", "\"offset\": 1,")));
  EXPECT_EQ(msg.rfind("payload range:", 0), 0u) << msg;
  msg = read_error(reseal(bytes, m, bytes.substr(artifact::kBundleHeaderSize + m.size()) + "zz"));
  EXPECT_EQ(msg.rfind("payload range:", 0), 0u) << msg;
  msg = read_error(
      reseal(bytes, replace_once(m, "\"offset\": 0,", "\"offset\": 18446744073709551615,")));
  EXPECT_EQ(msg.rfind("payload range:", 0), 0u) << msg;
}

TEST(Bundle, BackendLoadsAndRunsIt) {
  auto path = temp_path("scale.hgb");
  std::string err;
  ASSERT_TRUE(write_file_atomic(path, scale_bundle()).is_ok());
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  auto info = b->module_info(m);
  EXPECT_EQ(info.origin, path);
  EXPECT_EQ(info.kernels, std::vector<std::string>{"scale"});
  EXPECT_TRUE(info.variant == "x86-64-v2" || info.variant == "x86-64-v3") << info.variant;
  std::vector<float> x = {1, 2, 3, 4, 5};
  auto buf = b->allocate_buffer(x.size() * 4);
  b->write<float>(buf, x);
  KernelArg args[] = {KernelArg::buffer(buf), KernelArg::f32(3), KernelArg::u32(5)};
  b->launch(m, "scale", LaunchConfig::linear(5, 4), args);
  EXPECT_EQ(b->read<float>(buf), (std::vector<float>{3, 6, 9, 12, 15}));
  // A second bundle loaded while the first is live gets its own code.
  auto m2 = b->load_module(path);
  b->launch(m2, "scale", LaunchConfig::linear(5, 4), args);
  EXPECT_EQ(b->read<float>(buf), (std::vector<float>{9, 18, 27, 36, 45}));
  b->unload_module(m);
  b->unload_module(m2);
  std::filesystem::remove(path);
}

void expect_load_error(const std::string &bytes, const std::string &what) {
  auto path = temp_path("bad.hgb");
  std::string err;
  ASSERT_TRUE(write_file_atomic(path, bytes).is_ok());
  auto b = create_backend(Preference::parse("cpu"));
  try {
    b->load_module(path);
    ADD_FAILURE() << "loading a bad bundle succeeded";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModule);
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Bundle, BackendRefusesDamagedBundlesSayingWhy) {
  const auto &bytes = scale_bundle();
  expect_load_error(bytes.substr(0, bytes.size() / 2), "is not a valid bundle: truncated:");
  std::string b = bytes;
  b[b.size() - 100] ^= 1;
  expect_load_error(b, "is not a valid bundle: payload checksum: payload 'cpu'");
  b = bytes;
  b[8] = 7;
  expect_load_error(b, "is not a valid bundle: format version:");
  // A CPU payload for another ABI version; no CPU payload at all.
  auto m = manifest_of(bytes);
  expect_load_error(
      reseal(bytes, replace_once(m, "\"abi_version\": " + std::to_string(HG_CPU_ABI_VERSION),
                                 "\"abi_version\": 99")),
      "uses CPU ABI version 99; this runtime implements version");
  size_t cpu_at = m.find("    {\n      \"name\": \"cpu\"");
  ASSERT_NE(cpu_at, std::string::npos);
  std::string isa_only = m.substr(0, cpu_at);
  isa_only = isa_only.substr(0, isa_only.rfind(',')) + "\n  ]\n}\n";
  uint64_t isa_size = 0;
  {
    auto whole = artifact::read_bundle(bytes);
    ASSERT_TRUE(whole);
    isa_size = whole->payloads[0].bytes.size();
  }
  expect_load_error(
      reseal(bytes, isa_only, bytes.substr(artifact::kBundleHeaderSize + m.size(), isa_size)),
      "holds no code for the CPU backend (its targets: x86-64-v2, x86-64-v3)");
}

} // namespace
