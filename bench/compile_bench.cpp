// Compile time against program size (issue 18): a straight-line f32 kernel of N instructions
// with a lane-varying branch every 50, compiled in-process the way `hologram-cc -O2` does
// (parse, verify, the -O2 pipeline, then an x86-64-v3 object or Vulkan 1.1 SPIR-V). The
// report compares 16k with 4k instructions: linear growth is 4x, the goal at most 5x.
//
// A small kernel (issue 15): saxpy with a bound check, compiled in-process to each target, and
// as a build script runs it, one process per file: `hologram-cc -O2` against clang-19 -O2
// compiling the same loop in C.
//
// Compiling at run time (issue 19), saxpy over 4096 elements on the CPU backend: the first
// execute_program of a fresh backend with the compile cache off (compile, ORC link, launch)
// and with a warm cache (read, link, launch); a later execute_program on the same backend
// against a launch of the same kernel loaded from a shared object compiled ahead of time;
// and hologram-run with a warm cache against hologram-run --help (the process alone).
#include "hologram/driver/cpu_output.h"
#include "hologram/driver/spirv_output.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/opt/pass_manager.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/file_io.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

using namespace hologram;

namespace {

/// The kernel: f32 arithmetic over six registers fed by a load, a branch on a loaded value
/// (so lanes diverge) around one instruction every 50, three stores at the end.
std::string straight_line_kernel(int n) {
  std::mt19937 rng(1);
  auto reg = [&] { return "r" + std::to_string(std::array{2, 3, 6, 7, 8, 9}[rng() % 6]); };
  std::string s = ".kernel big\n.param %a : buffer<f32> readwrite\n.param %n : u32\n"
                  "  cvt.u64.u32 r1, %lane.x\n  ld.f32 r2, [%a + r1*4]\n  mov.imm.f32 r3, 1.5\n"
                  "  mov.imm.f32 r6, 0.5\n  mov.imm.f32 r7, 0.25\n  mov.imm.f32 r8, 2.0\n"
                  "  mov.imm.f32 r9, 3.0\n  param.u32 r4, %n\n  mov.imm.u32 r5, 0\n";
  static const char *kOps[] = {"add", "mul", "sub"};
  for (int i = 0, label = 0; i < n; ++i) {
    if (i % 50 == 49) {
      const std::string l = "@L" + std::to_string(label++);
      s += "  setlt.f32 p0, r2, r3\n  bra p0 " + l + "\n  add.u32 r5, r5, r4\n" + l + ":\n";
    } else if (rng() % 4 == 0) {
      s += "  fma.f32 " + reg() + ", " + reg() + ", " + reg() + ", " + reg() + "\n";
    } else {
      s += "  " + std::string(kOps[rng() % 3]) + ".f32 " + reg() + ", " + reg() + ", " + reg() +
           "\n";
    }
  }
  // r5, which the branches' regions add to, is stored too, so -O2 keeps every region.
  return s + "  st.f32 [%a + r1*4], r2\n  st.f32 [%a + r1*4 + 4], r6\n"
             "  cvt.f32.u32 r10, r5\n  st.f32 [%a + r1*4 + 8], r10\n  exit\n";
}

/// Compiles `text` as `hologram-cc -O2` does, for `target` (an x86 level or "vulkan1.1").
void compile_once(const std::string &text, const std::string &target) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "bench.hasm", diags);
  if (!m || !isa::verify_module(*m, diags) || !opt::optimize(*m, {}, diags))
    throw std::runtime_error(diags.to_string());
  Expected<std::string> bytes = std::string();
  if (target == "vulkan1.1") {
    driver::SpirvOutputOptions o;
    bytes = driver::emit_spirv_output(*m, o, "spirv");
  } else {
    driver::CpuOutputOptions o;
    o.targets = {target};
    o.module_name = "bench";
    bytes = driver::emit_cpu_output(*m, o, "obj");
  }
  if (!bytes) throw std::runtime_error(bytes.status().describe());
  benchmark::DoNotOptimize(*bytes);
}

void compile(benchmark::State &state, bool spirv) {
  const std::string text = straight_line_kernel(static_cast<int>(state.range(0)));
  for (auto _ : state) compile_once(text, spirv ? "vulkan1.1" : "x86-64-v3");
}

const char *kSmallKernel = R"(.kernel saxpy
.param %x : buffer<f32> read
.param %y : buffer<f32> readwrite
.param %a : f32
.param %n : u32
  param.u32      r0, %n
  cvt.u64.u32    r1, r0
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.f32      r2, %a
  ld.f32         r3, [%x + %gid*4]
  ld.f32         r4, [%y + %gid*4]
  fma.f32        r5, r2, r3, r4
  st.f32         [%y + %gid*4], r5
@done:
  exit
)";

const char *kSmallC = "void saxpy(const float *x, float *y, float a, unsigned n) {\n"
                      "  for (unsigned i = 0; i < n; ++i) y[i] = a * x[i] + y[i];\n}\n";

void compile_small(benchmark::State &state, const char *target) {
  for (auto _ : state) compile_once(kSmallKernel, target);
}

/// `command` run by the shell once per iteration: the whole process, as a build runs it.
void run_process(benchmark::State &state, const std::string &command) {
  for (auto _ : state)
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

std::string scratch(const std::string &name, const std::string &text) {
  const std::string path = "/tmp/hologram-compile-bench-" + name;
  if (auto st = write_file_atomic(path, text); !st) throw std::runtime_error(st.message());
  return path;
}

void register_processes() {
  const std::string hasm = scratch("saxpy.hasm", kSmallKernel);
  const std::string c = scratch("saxpy.c", kSmallC);
  benchmark::RegisterBenchmark("compile_small/process/hologram_cc_x86-64-v3", run_process,
                               std::string(HOLOGRAM_CC) + " -O2 --emit=obj --target=x86-64-v3 " +
                                   hasm + " -o /tmp/hologram-compile-bench-saxpy.o")
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("compile_small/process/clang_O2_x86-64-v3", run_process,
                               std::string(HOLOGRAM_CLANG) + " -O2 -march=x86-64-v3 -c " + c +
                                   " -o /tmp/hologram-compile-bench-saxpy-c.o")
      ->Unit(benchmark::kMillisecond);
  const std::string run = std::string(HOLOGRAM_RUN) + " " + hasm +
                          " --backend=cpu --global 4 --arg x=[1,2,3,4] --arg y=[1,1,1,1] "
                          "--arg a=2 --arg n=4 > /dev/null";
  const std::string cached = "HOLOGRAM_CACHE_DIR=/tmp/hologram-compile-bench-cache ";
  if (std::system((cached + run).c_str()) != 0) throw std::runtime_error("failed: " + run);
  benchmark::RegisterBenchmark("runtime_compile/process/hologram_run_cache_warm", run_process,
                               cached + run)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("runtime_compile/process/hologram_run_help", run_process,
                               std::string(HOLOGRAM_RUN) + " --help > /dev/null")
      ->Unit(benchmark::kMillisecond);
}

/// saxpy over 4096 elements on a CPU backend: buffers made once, launches timed.
struct Saxpy {
  static constexpr uint32_t kN = 4096;
  std::unique_ptr<Backend> backend = create_backend(Preference::parse("cpu"));
  BufferHandle x = backend->allocate_buffer(kN * 4), y = backend->allocate_buffer(kN * 4);
  std::array<KernelArg, 4> args{KernelArg::buffer(x), KernelArg::buffer(y), KernelArg::f32(2.0f),
                                KernelArg::u32(kN)};
  LaunchConfig launch = LaunchConfig::linear(kN);
};

isa::Kernel small_kernel() {
  DiagnosticEngine diags;
  auto m = isa::parse_module(kSmallKernel, "saxpy.hasm", diags);
  if (!m) throw std::runtime_error(diags.to_string());
  return m->kernels.at(0);
}

/// The first execute_program of a fresh backend; `cache`: a warm compile cache, else none.
void first_execute(benchmark::State &state, bool cache) {
  const isa::Kernel k = small_kernel();
  ::setenv("HOLOGRAM_CACHE_DIR", "/tmp/hologram-compile-bench-cache", 1);
  ::setenv("HOLOGRAM_CACHE", cache ? "on" : "off", 1);
  if (cache) {
    Saxpy warm; // fills the cache
    warm.backend->execute_program(k, warm.launch, warm.args);
  }
  for (auto _ : state) {
    state.PauseTiming();
    Saxpy s;
    state.ResumeTiming();
    s.backend->execute_program(k, s.launch, s.args);
  }
  ::unsetenv("HOLOGRAM_CACHE");
}

/// Later calls: execute_program on a backend that compiled the kernel, or `launch` of it
/// loaded from a shared object hologram-cc made (`aot`).
void later_execute(benchmark::State &state, bool aot) {
  const isa::Kernel k = small_kernel();
  Saxpy s;
  ModuleHandle m{};
  if (aot) {
    isa::Module mod;
    mod.kernels.push_back(k);
    driver::CpuOutputOptions o;
    o.targets = {driver::host_cpu_target()};
    o.module_name = "saxpy";
    auto bytes = driver::emit_cpu_output(mod, o, "shared");
    if (!bytes) throw std::runtime_error(bytes.status().describe());
    m = s.backend->load_module(scratch("saxpy.so", *bytes));
  }
  for (auto _ : state) {
    if (aot)
      s.backend->launch(m, "saxpy", s.launch, s.args);
    else
      s.backend->execute_program(k, s.launch, s.args);
  }
}

} // namespace

BENCHMARK_CAPTURE(first_execute, uncached, false)
    ->Name("runtime_compile/first_execute_program/cache_off")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(first_execute, cached, true)
    ->Name("runtime_compile/first_execute_program/cache_warm")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(later_execute, jit, false)
    ->Name("runtime_compile/later_call/execute_program")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(later_execute, aot, true)
    ->Name("runtime_compile/later_call/launch_of_shared_object")
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(compile_small, x86_64_v3, "x86-64-v3")
    ->Name("compile_small/in_process/x86-64-v3")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_small, x86_64_v2_v3_v4, "x86-64-v4")
    ->Name("compile_small/in_process/x86-64-v4")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile_small, vulkan1_1, "vulkan1.1")
    ->Name("compile_small/in_process/vulkan1.1")
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(compile, x86_64_v3, false)
    ->Name("compile/x86-64-v3")
    ->Arg(1000)
    ->Arg(4000)
    ->Arg(16000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(compile, vulkan1_1, true)
    ->Name("compile/vulkan1.1")
    ->Arg(1000)
    ->Arg(4000)
    ->Arg(16000)
    ->Unit(benchmark::kMillisecond);

int main(int argc, char **argv) {
  register_processes();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
