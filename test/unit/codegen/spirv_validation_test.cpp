// The SPIR-V back end's validation: a module it lowers passes, and a damaged one fails with
// the validator's own message (the fast first run leaves names out; the failure is checked
// again with them for the message).
#include "hologram/codegen/spirv.h"
#include "hologram/codegen/spirv_library.h"
#include "hologram/isa/text.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace hologram;

namespace {

constexpr const char *kKernel = R"(.kernel scale
.param %x : buffer<f32> readwrite
  ld.f32 r0, [%x + %gid*4]
  add.f32 r0, r0, r0
  st.f32 [%x + %gid*4], r0
  exit
)";

codegen::SpirvModule lowered(unsigned opt_level) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(kKernel, "scale.hasm", diags);
  EXPECT_TRUE(m) << diags.to_string();
  codegen::SpirvOptions o;
  o.target = *codegen::parse_spirv_target("vulkan1.1");
  o.opt_level = opt_level;
  auto out = codegen::compile_spirv(*m, o);
  EXPECT_TRUE(out) << out.status().describe();
  return *out;
}

} // namespace

TEST(SpirvValidation, AcceptsWhatTheBackEndLowers) {
  const auto target = *codegen::parse_spirv_target("vulkan1.1");
  for (unsigned level : {0u, 2u}) {
    auto st = codegen::validate_spirv(lowered(level).words, target);
    EXPECT_TRUE(st) << "-O" << level << ": " << st.message();
  }
}

TEST(SpirvValidation, ADamagedModuleFailsWithTheValidatorsMessage) {
  auto words = lowered(2).words;
  // OpFAdd (opcode 129, 5 words) adding its own result: an id used before its definition.
  auto add = std::find_if(words.begin() + 5, words.end(),
                          [](uint32_t w) { return (w & 0xffff) == 129 && (w >> 16) == 5; });
  ASSERT_NE(add, words.end());
  add[3] = add[2];
  auto st = codegen::validate_spirv(words, *codegen::parse_spirv_target("vulkan1.1"));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), ErrorCode::Internal);
  EXPECT_NE(st.message().find("SPIR-V validation for vulkan1.1 failed:\n  word "),
            std::string::npos)
      << st.message();
}

// The device library indexes shared memory by element, so no access of its kernels needs the
// run-time alignment test that a byte offset in a register gets (on lavapipe that test, with
// the status write behind it, made a block's tree over 256 lanes four times slower).
TEST(SpirvLibrary, SharedAccessesAreAlignedByTheirForm) {
  auto all = codegen::spirv_library_all();
  ASSERT_TRUE(all) << all.message();
  ASSERT_FALSE(all->empty());
  size_t accesses = 0;
  for (const isa::Kernel &k : *all)
    for (size_t i = 0; i < k.insts.size(); ++i) {
      const isa::Instruction &inst = k.insts[i];
      for (const isa::Operand &o : inst.operands) {
        if (o.kind != isa::OperandKind::Addr || o.addr.base != isa::AddrBase::Shared) continue;
        // Shared memory is words: an access needs the alignment of its size, at most 4.
        const uint32_t align = std::min(4u, std::max(1u, isa::type_size(inst.type)));
        ++accesses;
        EXPECT_TRUE((o.addr.index == isa::kNoReg || o.addr.scale % align == 0) &&
                    o.addr.disp % align == 0)
            << k.name << ", instruction " << i << ": " << isa::print_instruction(k, inst);
      }
    }
  EXPECT_GT(accesses, 0u);
}

TEST(SpirvReflection, NamesTheExactFmasSpecialisationConstants) {
  // A Vulkan kernel with an exact fma reflects specialisation constants 6 and 7 (whether the
  // device's Fma rounds once, f32 and f64), which the runtime sets from its probe; one without
  // does not, so that its launch probes nothing. A kernel of f64 math has them too: its
  // products' errors come from the device's Fma where it rounds once. OpenCL's fma rounds
  // once: none there.
  DiagnosticEngine diags;
  auto m = isa::parse_module(".kernel f\n.param %x : buffer<f32> readwrite\n"
                             "  ld.f32 r0, [%x + %gid*4]\n  fma.f32 r1, r0, r0, r0\n"
                             "  st.f32 [%x + %gid*4], r1\n  exit\n"
                             ".kernel g\n.param %x : buffer<f32> readwrite\n"
                             "  ld.f32 r0, [%x + %gid*4]\n  st.f32 [%x + %gid*4], r0\n  exit\n"
                             ".kernel h\n.param %x : buffer<f64> readwrite\n"
                             "  ld.f64 r0, [%x + %gid*8]\n  sin.f64 r1, r0\n"
                             "  st.f64 [%x + %gid*8], r1\n  exit\n",
                             "f.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  for (const char *target : {"vulkan1.1", "opencl1.2"}) {
    codegen::SpirvOptions o;
    o.target = *codegen::parse_spirv_target(target);
    auto out = codegen::compile_spirv(*m, o);
    ASSERT_TRUE(out) << out.status().describe();
    auto back = codegen::parse_spirv_reflection(codegen::spirv_reflection_json(*out));
    ASSERT_TRUE(back) << back.message();
    ASSERT_EQ(back->size(), 3u);
    const bool vulkan = std::string(target) == "vulkan1.1";
    EXPECT_EQ((*back)[0].exact_fma, vulkan) << target;
    EXPECT_EQ((*back)[0].fma_spec_ids[0], 6u);
    EXPECT_EQ((*back)[0].fma_spec_ids[1], 7u);
    EXPECT_FALSE((*back)[1].exact_fma) << target;
    EXPECT_EQ((*back)[2].exact_fma, vulkan) << target;
  }
}
