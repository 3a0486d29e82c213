// libFuzzer target: whatever .hasm parses and verifies compiles. The -O2 pipeline keeps it valid
// (opt::optimize verifies its result), and every back end either lowers it or refuses it with
// a message: an x86 object (the level chosen by the input's length, so that the corpus covers
// v2, v3 and v4), SPIR-V for Vulkan and for OpenCL (which validate their modules) and PTX,
// every one with -fbounds-check and -fcheck-div for half the lengths (the code of the checks
// is code generation too). An internal error, an empty refusal or a crash is a finding.
#include "hologram/driver/cpu_output.h"
#include "hologram/driver/ptx_output.h"
#include "hologram/driver/spirv_output.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/opt/pass_manager.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

using namespace hologram;

/// A back end's answer: bytes, or a refusal that says why and is not a bug of ours.
template <typename T> void expect_lowered_or_refused(const Expected<T> &out, const char *what) {
  if (out) return;
  const Status &st = out.status();
  if (st.code() != ErrorCode::Internal && !st.message().empty()) return;
  std::fprintf(stderr, "%s: %s\n", what, st.describe().c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "fuzz.hasm", diags);
  if (!m || !isa::verify_module(*m, diags)) return 0;
  if (!opt::optimize(*m, {}, diags)) {
    std::fprintf(stderr, "-O2 broke a verified module:\n%s\n", diags.to_string().c_str());
    std::abort();
  }
  static const char *const kLevels[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const bool checks = size / 3 % 2 == 1;
  driver::CpuOutputOptions cpu;
  cpu.targets = {kLevels[size % 3]};
  cpu.module_name = "fuzz";
  cpu.bounds_check = cpu.check_div = checks;
  expect_lowered_or_refused(driver::emit_cpu_output(*m, cpu, "obj"), cpu.targets[0].c_str());
  for (const char *target : {"vulkan1.1", "opencl1.2"}) {
    driver::SpirvOutputOptions spirv;
    spirv.targets = {target};
    spirv.bounds_check = spirv.check_div = checks;
    expect_lowered_or_refused(driver::emit_spirv_output(*m, spirv, "spirv"), target);
  }
  driver::PtxOutputOptions ptx;
  ptx.targets = {"cuda-sm_80"};
  ptx.bounds_check = ptx.check_div = checks;
  expect_lowered_or_refused(driver::emit_ptx_output(*m, ptx), "cuda-sm_80");
  return 0;
}
