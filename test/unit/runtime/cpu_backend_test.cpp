// The CPU backend with compiled modules: the dispatcher (automatic choice, HOLOGRAM_CPU_ISA
// and set_cpu_isa capping or forcing, refusal naming missing features), loading errors,
// launch misuse and faults reported with the failing lane, how launches are split over threads
// and timed, and concurrent use.
#include "core/recent_cache.h"
#include "cpu/cpu_module.h"
#include "guard_page.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/isa/library_accuracy.h"
#include "hologram/isa/text.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/file_io.h"
#include "random_kernels.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace hologram;

namespace {

/// The spacing of f32 values at v (the ulp of the correctly rounded value).
float ulp_of(float v) {
  const float a = std::fabs(v);
  return std::nextafter(a, INFINITY) - a;
}

constexpr const char *kVectorAdd = R"(
.kernel vector_add
.param %a : buffer<f32> read
.param %b : buffer<f32> read
.param %c : buffer<f32> write
.param %n : u32
  param.u32      r1, %n
  cvt.u64.u32    r2, r1
  setge.u64      p0, %gid, r2
  bra p0         @done
  ld.f32         r3, [%a + %gid*4]
  ld.f32         r4, [%b + %gid*4]
  add.f32        r5, r3, r4
  st.f32         [%c + %gid*4], r5
@done:
  exit
.kernel divide
.param %x : buffer<i32> readwrite
.param %d : i32
  param.i32      r0, %d
  ld.i32         r1, [%x + %gid*4]
  div.i32        r2, r1, r0
  st.i32         [%x + %gid*4], r2
.kernel double_out
.param %x : buffer<f32> read
.param %y : buffer<f32> write
  ld.f32         r0, [%x + %gid*4]
  add.f32        r1, r0, r0
  st.f32         [%y + %gid*4], r1
.kernel overrun
.param %x : buffer<f32> readwrite
  mov.imm.u64    r0, 100
  add.u64        r1, %gid, r0
  ld.f32         r2, [%x + r1*4]
  st.f32         [%x + %gid*4], r2
)";

/// A shared object of the module `text` compiled with `o`, in a new temporary file.
std::string compile_text(const char *text, driver::CpuOutputOptions o) {
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "test.hasm", diags);
  EXPECT_TRUE(m) << diags.to_string();
  o.module_name = "test";
  o.source_name = "test.hasm";
  auto compiled = driver::emit_cpu_output(*m, o, "shared");
  EXPECT_TRUE(compiled) << compiled.message();
  const std::string bytes = compiled ? *compiled : std::string();
  static int n = 0;
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("hologram-cpu-test-" + std::to_string(getpid()) + "-" + std::to_string(n++) + ".so"))
          .string();
  EXPECT_TRUE(write_file_atomic(path, bytes).is_ok());
  return path;
}

/// A shared object of kVectorAdd for `targets`, with codegen options.
std::string compile(std::vector<std::string> targets, bool bounds = false, bool div = false) {
  driver::CpuOutputOptions o;
  o.targets = targets;
  o.bounds_check = bounds;
  o.check_div = div;
  return compile_text(kVectorAdd, o);
}

struct IsaGuard {
  ~IsaGuard() { runtime::set_cpu_isa(""); }
};
/// Puts the thread count back to the default (the CPU's) at the end of a test.
struct ThreadsGuard {
  ~ThreadsGuard() { runtime::set_cpu_threads(0); }
};
/// Puts the streaming threshold back to the default (the cache size, or the environment's).
struct StreamGuard {
  ~StreamGuard() { runtime::set_cpu_stream_bytes(std::nullopt); }
};

bool has_v3() {
  return runtime::cpu_has_feature("avx2") && runtime::cpu_has_feature("fma");
}
bool has_v4() {
  return runtime::cpu_has_feature("avx512f") && runtime::cpu_has_feature("avx512bw") &&
         runtime::cpu_has_feature("avx512dq") && runtime::cpu_has_feature("avx512vl");
}

/// The x86 levels this CPU runs, for HOLOGRAM_CPU_ISA / set_cpu_isa.
std::vector<std::string> levels_this_cpu_runs() {
  std::vector<std::string> levels = {"v2"};
  if (has_v3()) levels.push_back("v3");
  if (has_v4()) levels.push_back("v4");
  return levels;
}

/// `text` compiled at -O0 and at -O2 for every level this CPU runs, each level loaded with the
/// dispatcher capped there and handed to `check` with "-ON at vN" for its messages.
void for_each_compiled_level(Backend &cpu, const std::string &text,
                             const std::function<void(ModuleHandle, const std::string &)> &check) {
  const std::vector<std::string> levels = levels_this_cpu_runs();
  for (unsigned opt : {0u, 2u}) {
    driver::CpuOutputOptions o;
    for (const std::string &level : levels) o.targets.push_back("x86-64-" + level);
    o.opt_level = opt;
    const std::string path = compile_text(text.c_str(), o);
    for (const std::string &level : levels) {
      runtime::set_cpu_isa(level);
      auto mod = cpu.load_module(path);
      check(mod, "-O" + std::to_string(opt) + " at " + level);
      cpu.unload_module(mod);
    }
    std::filesystem::remove(path);
  }
}

/// c = a + b with a[i] = b[i] = i; c bound `c_offset` bytes into its buffer (which is
/// 64-byte aligned), so that its stores start at that alignment.
std::vector<float> run_vector_add(Backend &b, ModuleHandle m, uint32_t n, uint32_t c_offset = 0) {
  std::vector<float> a(n), c(n);
  for (uint32_t i = 0; i < n; ++i) a[i] = static_cast<float>(i);
  auto ba = b.allocate_buffer(n * 4), bb = b.allocate_buffer(n * 4);
  auto bc = b.allocate_buffer(n * 4 + c_offset);
  b.write<float>(bc, std::vector<float>(n + c_offset / 4, -1.0f));
  b.write<float>(ba, a);
  b.write<float>(bb, a);
  KernelArg args[] = {KernelArg::buffer(ba), KernelArg::buffer(bb),
                      KernelArg::buffer(bc, c_offset, n * 4), KernelArg::u32(n)};
  b.launch(m, "vector_add", LaunchConfig::linear(n, 64), args);
  c = b.read<float>(bc);
  // The bytes before c are the buffer's first, which no lane writes.
  EXPECT_TRUE(std::all_of(c.begin(), c.begin() + c_offset / 4, [](float v) { return v == -1.0f; }))
      << "n = " << n << ", offset " << c_offset;
  c.erase(c.begin(), c.begin() + c_offset / 4);
  b.free_buffer(ba);
  b.free_buffer(bb);
  b.free_buffer(bc);
  return c;
}

TEST(CpuDispatch, ChoosesTheBestVariantThisCpuRuns) {
  IsaGuard guard;
  runtime::set_cpu_isa("");
  unsetenv("HOLOGRAM_CPU_ISA");
  auto path = compile({"x86-64-v2", "x86-64-v3", "x86-64-v4"});
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  std::string want = has_v4() ? "x86-64-v4" : has_v3() ? "x86-64-v3" : "x86-64-v2";
  EXPECT_EQ(b->module_info(m).variant, want);
  auto c = run_vector_add(*b, m, 1000);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(c[i], 2.0f * i);
}

TEST(CpuDispatch, EnvironmentCapsTheLevel) {
  IsaGuard guard;
  auto path = compile({"x86-64-v2", "x86-64-v3", "x86-64-v4"});
  setenv("HOLOGRAM_CPU_ISA", "v2", 1);
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  unsetenv("HOLOGRAM_CPU_ISA");
  EXPECT_EQ(b->module_info(m).variant, "x86-64-v2");
  auto c = run_vector_add(*b, m, 77);
  EXPECT_EQ(c[76], 152.0f);
}

TEST(CpuDispatch, ApiCallOverridesTheEnvironment) {
  IsaGuard guard;
  if (!has_v3()) GTEST_SKIP() << "this CPU has no AVX2/FMA";
  auto path = compile({"x86-64-v2", "x86-64-v3"});
  setenv("HOLOGRAM_CPU_ISA", "v2", 1);
  runtime::set_cpu_isa("x86-64-v3");
  auto b = create_backend(Preference::parse("cpu"));
  EXPECT_EQ(b->module_info(b->load_module(path)).variant, "x86-64-v3");
  unsetenv("HOLOGRAM_CPU_ISA");
}

/// Pretends the CPU lacks AVX-512 (HOLOGRAM_CPU_DISABLE), so the refusals are tested on any
/// machine.
struct NoAvx512 {
  NoAvx512() { setenv("HOLOGRAM_CPU_DISABLE", "avx512f", 1); }
  ~NoAvx512() { unsetenv("HOLOGRAM_CPU_DISABLE"); }
};

TEST(CpuDispatch, DisabledFeaturesAreMissing) {
  NoAvx512 no;
  EXPECT_FALSE(runtime::cpu_has_feature("avx512f"));
  EXPECT_TRUE(runtime::cpu_has_feature("sse2"));
  EXPECT_FALSE(runtime::cpu_has_feature("no-such-feature"));
  IsaGuard guard;
  runtime::set_cpu_isa("");
  auto path = compile({"x86-64-v2", "x86-64-v3", "x86-64-v4"});
  auto b = create_backend(Preference::parse("cpu"));
  EXPECT_EQ(b->module_info(b->load_module(path)).variant, has_v3() ? "x86-64-v3" : "x86-64-v2");
}

TEST(CpuDispatch, ForcingAMissingLevelNamesTheMissingFeatures) {
  IsaGuard guard;
  NoAvx512 no;
  auto path = compile({"x86-64-v2", "x86-64-v4"});
  runtime::set_cpu_isa("v4");
  auto b = create_backend(Preference::parse("cpu"));
  try {
    b->load_module(path);
    FAIL() << "forcing x86-64-v4 on a CPU without AVX-512 must fail";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    EXPECT_NE(std::string(e.what()).find("avx512f"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x86-64-v4"), std::string::npos) << e.what();
  }
}

TEST(CpuDispatch, AModuleWithOnlyUnsupportedVariantsIsRefused) {
  IsaGuard guard;
  NoAvx512 no;
  runtime::set_cpu_isa("");
  auto path = compile({"x86-64-v4"});
  auto b = create_backend(Preference::parse("cpu"));
  try {
    b->load_module(path);
    FAIL() << "a v4-only module cannot run here";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cannot run on this CPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("avx512"), std::string::npos) << e.what();
  }
}

TEST(CpuModules, LoadingErrorsAreReported) {
  auto b = create_backend(Preference::parse("cpu"));
  try {
    b->load_module("/nonexistent/module.so");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModule);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/module.so"), std::string::npos);
  }
  // A shared object that is not a hologram module.
  try {
    b->load_module("libm.so.6");
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidModule);
    EXPECT_NE(std::string(e.what()).find("not a hologram module"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b->launch(ModuleHandle{12345}, "x", LaunchConfig::linear(1), {}), Error);
}

TEST(CpuModules, LaunchMisuseIsAnError) {
  auto path = compile({"x86-64-v2"});
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  auto buf = b->allocate_buffer(16);
  KernelArg args[] = {KernelArg::buffer(buf), KernelArg::buffer(buf), KernelArg::buffer(buf),
                      KernelArg::u32(4)};
  auto code = [&](auto &&f) {
    try {
      f();
    } catch (const Error &e) {
      return e.code();
    }
    return ErrorCode::Ok;
  };
  EXPECT_EQ(code([&] { b->launch(m, "nope", LaunchConfig::linear(4), args); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", LaunchConfig::linear(4), std::span(args, 3)); }),
            ErrorCode::InvalidArgument);
  KernelArg wrong[] = {KernelArg::buffer(buf), KernelArg::buffer(buf), KernelArg::buffer(buf),
                       KernelArg::f32(4)};
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", LaunchConfig::linear(4), wrong); }),
            ErrorCode::InvalidArgument);
  LaunchConfig zero;
  zero.block = {0, 1, 1};
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", zero, args); }), ErrorCode::InvalidArgument);
  // Blocks above 2^30 lanes, and launches of 2^62 lanes or more, are refused before any runs
  // (the compiled code's %gid never wraps), even where the product overflows 64 bits.
  LaunchConfig big_block;
  big_block.block = {1u << 16, 1u << 15, 1};
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", big_block, args); }), ErrorCode::InvalidArgument);
  LaunchConfig huge;
  huge.grid = {0xffffffffu, 0xffffffffu, 1};
  huge.block = {1, 1, 1};
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", huge, args); }), ErrorCode::InvalidArgument);
  huge.grid = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  huge.block = {1u << 10, 1u << 10, 1u << 10};
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", huge, args); }), ErrorCode::InvalidArgument);
  b->unload_module(m);
  EXPECT_EQ(code([&] { b->launch(m, "vector_add", LaunchConfig::linear(4), args); }),
            ErrorCode::InvalidHandle);
}

TEST(CpuModules, DivisionByZeroIsZeroOrAnErrorNamingTheLane) {
  for (bool check : {false, true}) {
    auto path = compile({"x86-64-v2"}, false, check);
    auto b = create_backend(Preference::parse("cpu"));
    auto m = b->load_module(path);
    std::vector<int32_t> x{10, 20, 30, 40};
    auto buf = b->allocate_buffer(16);
    b->write<int32_t>(buf, x);
    KernelArg args[] = {KernelArg::buffer(buf), KernelArg::i32(0)};
    if (!check) {
      b->launch(m, "divide", LaunchConfig::linear(4, 4), args);
      EXPECT_EQ(b->read<int32_t>(buf), (std::vector<int32_t>{0, 0, 0, 0}));
      continue;
    }
    try {
      b->launch(m, "divide", LaunchConfig::linear(4, 4), args);
      FAIL() << "-fcheck-div must fail the launch";
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), ErrorCode::DivisionByZero);
      EXPECT_NE(std::string(e.what()).find("kernel 'divide': lane 0 (block (0,0,0), lane (0,0,0))"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("div.i32"), std::string::npos) << e.what();
    }
  }
}

/// Launches the bounds-checked `overrun` (lane i reads element i + 100) over `lanes` lanes in
/// blocks of 64 on a buffer of `floats` floats, and expects the error to name `lane` (with its
/// block and place in it) and `access` (the parameter, offset and size).
void expect_overrun(uint64_t floats, uint64_t lanes, const std::string &lane,
                    const std::string &access) {
  auto path = compile({"x86-64-v2"}, true);
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  auto buf = b->allocate_buffer(floats * 4);
  KernelArg args[] = {KernelArg::buffer(buf)};
  try {
    b->launch(m, "overrun", LaunchConfig::linear(lanes, 64), args);
    FAIL() << "-fbounds-check must catch the overrun";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfBounds);
    std::string w = e.what();
    EXPECT_NE(w.find("kernel 'overrun': " + lane), std::string::npos) << w;
    EXPECT_NE(w.find("parameter %x: " + access), std::string::npos) << w;
  }
}

TEST(CpuModules, BoundsCheckNamesKernelLaneParameterOffsetAndSize) {
  expect_overrun(200, 200, "lane 100 (block (1,0,0), lane (36,0,0))",
                 "offset 800, size 4, but it holds 800 bytes");
}

TEST(CpuModules, AFailureInALaunchOfManyTasksNamesItsFirstLane) {
  // 2^17 lanes on two threads: above the lanes a first launch may run on the calling thread to
  // time them, so the blocks are split into tasks; only the last task's blocks overrun (from
  // lane 125972), and the error must be its first lane's (the record a failing task fills in).
  ThreadsGuard threads;
  runtime::set_cpu_threads(2);
  expect_overrun((uint64_t{1} << 17) - 5000, uint64_t{1} << 17,
                 "lane 125972 (block (1968,0,0), lane (20,0,0))",
                 "offset 504288, size 4, but it holds 504288 bytes");
}

/// vector_add of n ones and ones, at x86-64-v2, launched straight on its CpuModule on two
/// threads, for tests of how launches are split and timed (runtime/cpu/cpu_module.cpp).
struct TimedVectorAdd {
  explicit TimedVectorAdd(uint32_t lanes)
      : n(lanes), path(compile({"x86-64-v2"})), m(runtime::CpuModule::load_file(path)),
        k(m->kernel_index("vector_add")), cost(m->lane_cost(k)), a(n, 1.0f), c(n, 0.0f) {
    runtime::set_cpu_threads(2);
  }
  ~TimedVectorAdd() { std::filesystem::remove(path); }
  void launch() {
    std::array<runtime::CpuArg, 4> args{
        runtime::CpuArg{a.data(), n * 4ull, 0}, runtime::CpuArg{a.data(), n * 4ull, 0},
        runtime::CpuArg{c.data(), n * 4ull, 0}, runtime::CpuArg{nullptr, 0, n}};
    std::fill(c.begin(), c.end(), 0.0f);
    runtime::launch_cpu_kernel(*m, k, LaunchConfig::linear(n, 256), args, nullptr);
    EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](float v) { return v == 2.0f; }));
  }
  ThreadsGuard threads;
  uint32_t n;
  std::string path;
  std::shared_ptr<runtime::CpuModule> m;
  uint32_t k;
  runtime::CpuModule::LaneCost &cost;
  std::vector<float> a, c;
};

TEST(CpuModules, ALaunchTooBigToRunOnTheCallingThreadTimesItsTasks) {
  // 2^17 lanes on two threads: too many for the first launch to run on the calling thread to
  // time them, so it runs in tasks, and the fastest task's time a lane becomes the kernel's
  // cost. Without it the kernel never has a cost, and every launch of it runs in eight tasks
  // a thread, however little work it holds.
  TimedVectorAdd va(uint32_t{1} << 17);
  EXPECT_EQ(va.cost.picoseconds.load(), 0u);
  va.launch();
  EXPECT_GT(va.cost.picoseconds.load(), 0u);
}

TEST(CpuModules, ALaunchDueForTimingFarAboveTheLineRunsInTasks) {
  // A launch of 2^16 lanes whose cost says 66 us of work, due for timing, is far from the line
  // between one thread and many: it runs in tasks and times them, where every 32nd launch of
  // it used to run on the calling thread alone.
  TimedVectorAdd va(uint32_t{1} << 16);
  va.cost.picoseconds = 1000; // 66 us for 2^16 lanes
  va.cost.launches = 32;      // due
  va.launch();
  EXPECT_EQ(va.cost.state.load(), runtime::CpuModule::LaneCost::kLastParallel);
  EXPECT_NE(va.cost.picoseconds.load(), 1000u) << "the tasks were not timed";
}

TEST(CpuModules, AProbeRightAfterAParallelLaunchIsNotTimed) {
  // A launch of 2^16 lanes whose cost says 8 us of work runs in two shares; the next launch
  // due for timing runs on the calling thread (it is near the line between the two), but half
  // its data is in the other core's cache, so it only warms up (its time is not kept) and the
  // launch after it is timed.
  TimedVectorAdd va(uint32_t{1} << 16);
  va.cost.picoseconds = 120; // 7.9 us for 2^16 lanes
  va.cost.launches = 1;      // not due for timing
  va.launch();
  EXPECT_EQ(va.cost.state.load(), runtime::CpuModule::LaneCost::kLastParallel);
  va.cost.launches = 32; // due
  va.launch();
  EXPECT_EQ(va.cost.picoseconds.load(), 120u) << "the warm-up's time was kept";
  EXPECT_EQ(va.cost.state.load(), runtime::CpuModule::LaneCost::kProbeNext);
  va.launch();
  EXPECT_EQ(va.cost.state.load(), 0u);
}

TEST(CpuModules, ConcurrentLaunchesFromManyThreads) {
  auto path = compile({"x86-64-v2", "x86-64-v3"});
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        uint32_t n = 100 + 37 * t + i;
        auto c = run_vector_add(*b, m, n);
        for (uint32_t k = 0; k < n; ++k)
          if (c[k] != 2.0f * k) ++bad;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(CpuModules, StreamingStoresWriteEveryElementAtEveryLevel) {
  // A threshold of one byte makes every full chunk's store to c (which vector_add only writes)
  // non-temporal; the chunk that straddles n stays masked. 0 turns streaming off, and 2^40
  // bytes is more than any of these launches writes. c starts 0, 16, 32 or 4 bytes past a
  // 64-byte boundary: one movntps per chunk where it is aligned to the whole vector, 16-byte
  // pieces where it is aligned to 16 bytes only, plain stores where it is not.
  StreamGuard restore;
  IsaGuard isa;
  auto path = compile({"x86-64-v2", "x86-64-v3", "x86-64-v4"});
  auto b = create_backend(Preference::parse("cpu"));
  const std::vector<std::string> levels = levels_this_cpu_runs();
  for (const std::string &level : levels)
    for (uint64_t threshold : {uint64_t{1}, uint64_t{0}, uint64_t{1} << 40}) {
      runtime::set_cpu_isa(level);
      runtime::set_cpu_stream_bytes(threshold);
      EXPECT_EQ(runtime::cpu_stream_bytes(), threshold);
      auto m = b->load_module(path);
      for (uint32_t n : {1u, 16u, 1000u, 100003u})
        for (uint32_t offset : {0u, 16u, 32u, 4u}) {
          auto c = run_vector_add(*b, m, n, offset);
          uint32_t bad = 0;
          for (uint32_t k = 0; k < n; ++k) bad += c[k] != 2.0f * static_cast<float>(k);
          EXPECT_EQ(bad, 0u) << level << ", threshold " << threshold << ", n = " << n << ", offset "
                             << offset;
        }
      // A kernel with no bound check, in blocks of whole chunks: its chunks run in the loop
      // of whole blocks, whose streaming chunks are narrower at v4 (chunk_widths) and, where
      // y is not aligned to a line, moved to it.
      for (uint32_t n : {256u, 4096u})
        for (uint32_t offset : {0u, 16u, 4u}) {
          std::vector<float> x(n);
          for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
          auto bx = b->allocate_buffer(n * 4), by = b->allocate_buffer(n * 4 + offset);
          b->write<float>(bx, x);
          b->write<float>(by, std::vector<float>(n + offset / 4, -1.0f));
          KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by, offset, n * 4)};
          b->launch(m, "double_out", LaunchConfig::linear(n, 256), args);
          const std::vector<float> y = b->read<float>(by);
          uint32_t bad = 0;
          for (uint32_t k = 0; k < offset / 4; ++k) bad += y[k] != -1.0f;
          for (uint32_t k = 0; k < n; ++k) bad += y[offset / 4 + k] != 2.0f * static_cast<float>(k);
          EXPECT_EQ(bad, 0u) << level << ", threshold " << threshold << ", double_out, n = " << n
                             << ", offset " << offset;
          b->free_buffer(bx);
          b->free_buffer(by);
        }
      b->unload_module(m);
    }
  runtime::set_cpu_stream_bytes(std::nullopt);
  EXPECT_GT(runtime::cpu_stream_bytes(), 0u); // the cache size, or the environment's value
}

TEST(CpuModules, AStreamingStoreWhoseBaseMovesBetweenChunksStaysCorrect) {
  // y's index steps by one a lane from a base read from x[0], which the compiler knows only as
  // uniform within a chunk: lane 300 sets it to 1, so every chunk after its own stores one
  // element further on. At v4 the streaming chunks were moved so that the first chunk's store
  // is a whole line; the later ones, 4 bytes off a line, must not take movntps (which faults
  // off alignment). One thread runs the chunks in order: y[k] = k up to the end B of lane
  // 300's chunk, y[B] is not written, and y[k + 1] = k after.
  constexpr const char *kBaseMoves = R"(
.kernel base_moves
.param %x : buffer<u32> readwrite
.param %y : buffer<f32> write
  ld.u32         r0, [%x]
  cvt.u64.u32    r1, r0
  add.u64        r2, %gid, r1
  cvt.f32.u64    r3, %gid
  st.f32         [%y + r2*4], r3
  mov.imm.u64    r4, 300
  setne.u64      p0, %gid, r4
  bra p0         @done
  mov.imm.u32    r5, 1
  st.u32         [%x], r5
@done:
  exit
)";
  StreamGuard restore;
  IsaGuard isa;
  ThreadsGuard threads;
  runtime::set_cpu_threads(1);
  runtime::set_cpu_stream_bytes(1);
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const std::string path = compile_text(kBaseMoves, o);
  auto b = create_backend(Preference::parse("cpu"));
  for (const std::string &level : levels_this_cpu_runs()) {
    runtime::set_cpu_isa(level);
    auto m = b->load_module(path);
    const uint32_t n = 4096;
    for (uint32_t offset : {4u, 16u, 0u}) {
      auto bx = b->allocate_buffer(4), by = b->allocate_buffer((n + 1) * 4 + offset);
      b->write<uint32_t>(bx, std::vector<uint32_t>{0});
      b->write<float>(by, std::vector<float>(n + 1 + offset / 4, -1.0f));
      KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by, offset, (n + 1) * 4)};
      b->launch(m, "base_moves", LaunchConfig::linear(n, 256), args);
      const std::vector<float> all = b->read<float>(by);
      const std::span<const float> y(all.data() + offset / 4, n + 1);
      uint32_t end = 0; // B: the first element not written
      while (end <= n && y[end] == static_cast<float>(end)) ++end;
      EXPECT_GT(end, 300u) << level << ", offset " << offset;
      EXPECT_LE(end, 364u) << level << ", offset " << offset;
      uint32_t bad = end <= n && y[end] != -1.0f;
      for (uint32_t k = end; k < n; ++k) bad += y[k + 1] != static_cast<float>(k);
      EXPECT_EQ(bad, 0u) << level << ", offset " << offset << ", B = " << end;
      b->free_buffer(bx);
      b->free_buffer(by);
    }
    b->unload_module(m);
  }
}

TEST(CpuModules, MaskedAccessesAtAnArraysEndBeforeAGuardPage) {
  // The chunk that straddles a launch's end loads and stores under a mask. At AVX-512 one
  // that reaches past its page goes register by register (memory.cpp, masked_access): none
  // for a register with no lane in bounds, and for the register that reaches past the page
  // itself masked accesses that stay in one page each, rotated into place (elements of 4 and
  // 8 bytes), or lane by lane (1 and 2 bytes). Here both arrays end where a page the process
  // may not touch begins, and the counts put that page's start inside a register, between
  // two, and at a chunk's end, for elements of 1, 2, 4 and 8 bytes (chunks of one to four
  // registers), at every level. Ending half an element before that page, the arrays of 2-,
  // 4- and 8-byte elements put its start inside an element of the chunk's last lanes (past
  // the bound): lane by lane.
  std::string text;
  const std::map<int, std::string> types = {{1, "u8"}, {2, "u16"}, {4, "f32"}, {8, "f64"}};
  for (const auto &[size, t] : types) {
    const std::string scaled = "%gid*" + std::to_string(size) + "]";
    text += ".kernel add_" + t + "\n.param %x : buffer<" + t + "> read\n.param %y : buffer<" + t +
            "> readwrite\n.param %n : u64\n  param.u64 r0, %n\n  setge.u64 p0, %gid, r0\n"
            "  bra p0 @done\n  ld." +
            t + " r1, [%x + " + scaled + "\n  ld." + t + " r2, [%y + " + scaled + "\n  add." + t +
            " r3, r1, r2\n  st." + t + " [%y + " + scaled + ", r3\n@done:\n  exit\n";
  }
  auto b = create_backend(Preference::parse("cpu"));
  IsaGuard isa;
  for_each_compiled_level(*b, text, [&](ModuleHandle m, const std::string &where) {
    for (const auto &[size, t] : types)
      for (const uint64_t skew : {0, size / 2})
        for (const uint64_t n : {1u, 5u, 16u, 17u, 40u, 63u, 999u, 1000u, 1009u, 1024u}) {
          if (size == 1 && skew) continue; // a byte never straddles a page's start
          runtime::test::BeforeAGuardPage x_pages(n * size + skew), y_pages(n * size + skew);
          const std::span<std::byte> xs = x_pages.data().first(n * size),
                                     ys = y_pages.data().first(n * size);
          // Elements as doubles, by memcpy: the skewed arrays' are not aligned to their size.
          auto element = [&](std::span<std::byte> a, uint64_t i, const double *v) -> double {
            uint8_t u = v ? static_cast<uint8_t>(*v) : 0;
            uint16_t h = v ? static_cast<uint16_t>(*v) : 0;
            float f = v ? static_cast<float>(*v) : 0;
            double d = v ? *v : 0;
            void *e = size == 1   ? static_cast<void *>(&u)
                      : size == 2 ? static_cast<void *>(&h)
                      : size == 4 ? static_cast<void *>(&f)
                                  : static_cast<void *>(&d);
            if (v)
              std::memcpy(&a[i * size], e, size);
            else
              std::memcpy(e, &a[i * size], size);
            return size == 1 ? u : size == 2 ? h : size == 4 ? f : d;
          };
          for (uint64_t i = 0; i < n; ++i) {
            const double x = static_cast<double>(i % 100), y = static_cast<double>(i % 7);
            element(xs, i, &x);
            element(ys, i, &y);
          }
          HostBuffer bx = b->wrap_host_memory(xs), by = b->wrap_host_memory(ys);
          const std::string kernel = "add_" + t;
          KernelArg args[] = {KernelArg::buffer(bx.buffer), KernelArg::buffer(by.buffer),
                              KernelArg::u64(n)};
          b->launch(m, kernel, LaunchConfig::linear(static_cast<uint32_t>(n), 256), args);
          if (!by.shared) b->copy_from_buffer(by.buffer, 0, ys);
          uint64_t bad = 0;
          for (uint64_t i = 0; i < n; ++i) {
            const double want = static_cast<double>(i % 100 + i % 7);
            bad += element(ys, i, nullptr) != want;
          }
          EXPECT_EQ(bad, 0u) << kernel << " " << where << ", n = " << n << ", skew " << skew;
          b->free_buffer(bx.buffer);
          b->free_buffer(by.buffer);
        }
  });
}

TEST(CpuModules, GuardedKernelsRunExactlyTheLanesBelowTheBound) {
  // A bound check on %gid is decided once per block when the block is a whole number of
  // chunks: its whole chunks below the bound run with no test, the chunk that straddles it
  // and the chunks after it per chunk, by its first and last lanes, or lane by lane. Blocks
  // of 7, 24, 64 and 256 lanes, bounds inside, at and between blocks and chunks (one lane
  // short of a chunk, at one, one past), and a grid one block longer than needed (a block
  // with no lane in bounds) reach each of those paths at every level; the lanes at or above
  // the bound must leave their elements alone. Both senses of the branch; each ordering,
  // with %gid on either side, and a bound of 2^64 - 1 (m = n - 1 for n = 0: every lane).
  // Each kernel doubles x[%gid] past its bound check: the check's lines, then the same body.
  std::string text;
  auto guarded = [&](const char *name, const char *check) {
    text += std::string(".kernel ") + name + "\n.param %x : buffer<f32> readwrite\n" + check +
            "  ld.f32 r2, [%x + %gid*4]\n  add.f32 r3, r2, r2\n  st.f32 [%x + %gid*4], r3\n"
            "@done:\n  exit\n";
  };
  guarded("below", ".param %n : u32\n  param.u32 r0, %n\n  cvt.u64.u32 r1, r0\n"
                   "  setge.u64 p0, %gid, r1\n  bra p0 @done\n");
  guarded("below_lt", ".param %n : u64\n  param.u64 r0, %n\n  setlt.u64 p0, %gid, r0\n"
                      "  bra !p0 @done\n");
  guarded("above_gt", ".param %n : u64\n  param.u64 r0, %n\n  setgt.u64 p0, r0, %gid\n"
                      "  bra !p0 @done\n");
  guarded("at_most_le", ".param %m : u64\n  param.u64 r0, %m\n  setle.u64 p0, %gid, r0\n"
                        "  bra !p0 @done\n");
  guarded("past_ge", ".param %m : u64\n  param.u64 r0, %m\n  setge.u64 p0, r0, %gid\n"
                     "  bra !p0 @done\n");
  guarded("past_gt", ".param %m : u64\n  param.u64 r0, %m\n  setgt.u64 p0, %gid, r0\n"
                     "  bra p0 @done\n");
  guarded("below_le", ".param %n : u64\n  param.u64 r0, %n\n  setle.u64 p0, r0, %gid\n"
                      "  bra p0 @done\n");
  guarded("past_lt", ".param %m : u64\n  param.u64 r0, %m\n  setlt.u64 p0, r0, %gid\n"
                     "  bra p0 @done\n");
  IsaGuard isa;
  auto b = create_backend(Preference::parse("cpu"));
  const std::vector<std::string> levels = levels_this_cpu_runs();
  for (int opt : {2, 3}) {
    driver::CpuOutputOptions o;
    o.targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
    o.opt_level = static_cast<unsigned>(opt);
    std::string path = compile_text(text.c_str(), o);
    for (const std::string &level : levels) {
      runtime::set_cpu_isa(level);
      auto m = b->load_module(path);
      for (const std::string kernel : {"below", "below_lt", "above_gt", "below_le", "at_most_le",
                                       "past_ge", "past_gt", "past_lt"})
        for (uint32_t block : {7u, 24u, 64u, 256u})
          for (uint32_t n :
               {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 65u, 255u, 256u, 257u, 1000u, 1023u}) {
            const uint32_t blocks = (n + block - 1) / block + 1;
            const uint32_t lanes = blocks * block;
            std::vector<float> x(lanes);
            for (uint32_t i = 0; i < lanes; ++i) x[i] = static_cast<float>(i + 1);
            auto bx = b->allocate_buffer(lanes * 4);
            b->write<float>(bx, x);
            // The kernels given m = n - 1 run the lanes up to m: all of them for n = 0.
            const bool by_m = kernel.starts_with("past") || kernel == "at_most_le";
            const uint64_t runs = by_m && n == 0 ? lanes : n;
            KernelArg args[] = {KernelArg::buffer(bx), kernel == "below" ? KernelArg::u32(n)
                                                       : by_m ? KernelArg::u64(uint64_t{n} - 1)
                                                              : KernelArg::u64(n)};
            LaunchConfig config;
            config.grid = {blocks, 1, 1};
            config.block = {block, 1, 1};
            b->launch(m, kernel, config, args);
            auto y = b->read<float>(bx);
            b->free_buffer(bx);
            uint32_t bad = 0;
            for (uint32_t i = 0; i < lanes; ++i)
              bad += y[i] != static_cast<float>(i + 1) * (i < runs ? 2.0f : 1.0f);
            EXPECT_EQ(bad, 0u) << kernel << " -O" << opt << " at " << level << ", block " << block
                               << ", n = " << n;
          }
      b->unload_module(m);
    }
    std::filesystem::remove(path);
  }
}

TEST(CpuModules, LanesPastABoundCheckStillDoWhatComesBeforeIt) {
  // The driver skips the chunks whose lanes all leave at the kernel's first bound check only
  // when nothing comes before the check, and probes a span's first chunk for the check's
  // answer (running it again in its loop of chunks that go on) only then. Here a store before
  // it is made by every lane of the launch, an atomic count before it counts every lane once,
  // and a division by zero before it (-fcheck-div) in lane 100, past the bound, fails the
  // launch: at every level, in blocks of 256 (one span of whole chunks) and of 7.
  // x[%gid] = 1 below the bound n, after `before` with a first parameter of its own.
  auto marking = [](const char *name, const char *param, const char *before) {
    return std::string(".kernel ") + name + "\n" + param +
           ".param %x : buffer<u32> write\n.param %n : u64\n  mov.imm.u32    r5, 1\n" + before +
           "  param.u64      r0, %n\n  setge.u64      p0, %gid, r0\n  bra p0         @done\n"
           "  st.u32         [%x + %gid*4], r5\n@done:\n  exit\n";
  };
  const std::string text = marking("mark", ".param %flags : buffer<u32> write\n",
                                   "  st.u32         [%flags + %gid*4], r5\n") +
                           marking("count", ".param %counter : buffer<u32> readwrite\n",
                                   "  atom.add.u32   r6, [%counter], r5\n") +
                           R"(.kernel divide
.param %x : buffer<u32> write
.param %n : u64
  cvt.u32.u64    r1, %gid
  mov.imm.u32    r2, 100
  sub.u32        r3, r1, r2
  mov.imm.u32    r4, 1000
  div.u32        r6, r4, r3
  param.u64      r0, %n
  setge.u64      p0, %gid, r0
  bra p0         @done
  st.u32         [%x + %gid*4], r6
@done:
  exit
)";
  IsaGuard isa;
  auto b = create_backend(Preference::parse("cpu"));
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  o.check_div = true;
  const std::string path = compile_text(text.c_str(), o);
  for (const std::string &level : levels_this_cpu_runs()) {
    runtime::set_cpu_isa(level);
    auto m = b->load_module(path);
    for (uint32_t block : {256u, 7u}) {
      const uint32_t lanes = 1024 / block * block, n = 16;
      auto flags = b->allocate_buffer(lanes * 4), x = b->allocate_buffer(lanes * 4);
      b->write<uint32_t>(flags, std::vector<uint32_t>(lanes, 0));
      b->write<uint32_t>(x, std::vector<uint32_t>(lanes, 0));
      KernelArg marks[] = {KernelArg::buffer(flags), KernelArg::buffer(x), KernelArg::u64(n)};
      b->launch(m, "mark", LaunchConfig::linear(lanes, block), marks);
      const auto f = b->read<uint32_t>(flags), y = b->read<uint32_t>(x);
      uint32_t bad = 0;
      for (uint32_t i = 0; i < lanes; ++i) bad += f[i] != 1 || y[i] != (i < n ? 1u : 0u);
      EXPECT_EQ(bad, 0u) << level << ", block " << block;
      // The count before the check, with n past the first chunk: chunks that go on.
      auto counter = b->allocate_buffer(4);
      b->write<uint32_t>(counter, std::vector<uint32_t>{0});
      KernelArg counts[] = {KernelArg::buffer(counter), KernelArg::buffer(x),
                            KernelArg::u64(lanes / 2)};
      b->launch(m, "count", LaunchConfig::linear(lanes, block), counts);
      EXPECT_EQ(b->read<uint32_t>(counter)[0], lanes) << level << ", block " << block;
      b->free_buffer(counter);
      KernelArg divides[] = {KernelArg::buffer(x), KernelArg::u64(n)};
      try {
        b->launch(m, "divide", LaunchConfig::linear(lanes, block), divides);
        ADD_FAILURE() << "lane 100 divides by zero before its bound check (" << level << ", block "
                      << block << ")";
      } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::DivisionByZero) << e.what();
        EXPECT_NE(std::string(e.what()).find("lane 100 "), std::string::npos) << e.what();
      }
      b->free_buffer(flags);
      b->free_buffer(x);
    }
    b->unload_module(m);
  }
  std::filesystem::remove(path);
}

TEST(CpuModules, BlocksRunAsOneSpanOnlyWhereTheKernelCannotTellThemApart) {
  // A kernel that reads only %gid runs consecutive blocks as one span (the driver's
  // spans_blocks): every lane must still run once, with its own %gid, whatever the block's
  // shape (one that is not a whole number of chunks, three-dimensional ones), the grid's, the
  // number of threads and the level. A kernel that reads a block or lane coordinate runs block
  // by block and must see its coordinates.
  const char *text = R"(
.kernel ids
.param %x : buffer<u64> write
  st.u64         [%x + %gid*8], %gid
.kernel coords
.param %x : buffer<u32> write
  mov.imm.u32    r0, 1000
  mul.u32        r1, %block.y, r0
  add.u32        r2, r1, %lane.x
  st.u32         [%x + %gid*4], r2
)";
  IsaGuard isa;
  ThreadsGuard threads_guard;
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  std::string path = compile_text(text, o);
  auto b = create_backend(Preference::parse("cpu"));
  const std::vector<std::string> levels = levels_this_cpu_runs();
  const std::vector<Dim3> blocks = {{1, 1, 1}, {3, 1, 1}, {64, 1, 1}, {5, 2, 1}, {7, 3, 2}};
  const std::vector<Dim3> grids = {{1, 1, 1}, {9, 1, 1}, {33, 1, 1}, {4, 3, 2}};
  for (const std::string &level : levels)
    for (unsigned threads : {1u, 2u}) {
      runtime::set_cpu_isa(level);
      runtime::set_cpu_threads(threads);
      auto m = b->load_module(path);
      for (const Dim3 &block : blocks)
        for (const Dim3 &grid : grids) {
          const uint64_t lanes = block.count() * grid.count();
          LaunchConfig config;
          config.grid = grid;
          config.block = block;
          // One element past the launch, which no lane may touch.
          auto ids = b->allocate_buffer((lanes + 1) * 8);
          b->write<uint64_t>(ids, std::vector<uint64_t>(lanes + 1, 7777));
          KernelArg ids_args[] = {KernelArg::buffer(ids)};
          b->launch(m, "ids", config, ids_args);
          auto got = b->read<uint64_t>(ids);
          b->free_buffer(ids);
          uint64_t bad = got[lanes] != 7777;
          for (uint64_t g = 0; g < lanes; ++g) bad += got[g] != g;
          auto coords = b->allocate_buffer(lanes * 4);
          KernelArg coord_args[] = {KernelArg::buffer(coords)};
          b->launch(m, "coords", config, coord_args);
          auto seen = b->read<uint32_t>(coords);
          b->free_buffer(coords);
          for (uint64_t g = 0; g < lanes; ++g) {
            const uint64_t block_linear = g / block.count(), lane = g % block.count();
            const uint64_t block_y = (block_linear / grid.x) % grid.y;
            bad += seen[g] != block_y * 1000 + lane % block.x;
          }
          EXPECT_EQ(bad, 0u) << level << ", " << threads << " threads, block " << block.x << "x"
                             << block.y << "x" << block.z << ", grid " << grid.x << "x" << grid.y
                             << "x" << grid.z;
        }
      b->unload_module(m);
    }
  std::filesystem::remove(path);
}

TEST(CpuModules, SpansOfBlocksStopAtTwoToTheThirtyLanes) {
  // Nine blocks of 2^29 lanes, more than 2^32 lanes in all: a span holds at most 2^30 lanes
  // (a lane's number in its span is 32 bits), so the launch runs as spans of two blocks and a
  // last one of one. The first lane of each block writes its %gid at the block's number.
  const char *text = R"(
.kernel marks
.param %x : buffer<u64> write
  mov.imm.u64    r0, 536870911
  and.u64        r1, %gid, r0
  mov.imm.u64    r2, 0
  setne.u64      p0, r1, r2
  bra p0         @done
  mov.imm.u32    r3, 29
  shr.u64        r4, %gid, r3
  st.u64         [%x + r4*8], %gid
@done:
  exit
)";
  ThreadsGuard threads_guard;
  runtime::set_cpu_threads(1);
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  std::string path = compile_text(text, o);
  auto b = create_backend(Preference::parse("cpu"));
  auto m = b->load_module(path);
  auto x = b->allocate_buffer(10 * 8);
  b->write<uint64_t>(x, std::vector<uint64_t>(10, 7777));
  KernelArg args[] = {KernelArg::buffer(x)};
  LaunchConfig config;
  config.grid = {9, 1, 1};
  config.block = {1u << 29, 1, 1};
  b->launch(m, "marks", config, args);
  std::vector<uint64_t> expected(10, 7777);
  for (uint64_t i = 0; i < 9; ++i) expected[i] = i << 29;
  EXPECT_EQ(b->read<uint64_t>(x), expected);
  b->free_buffer(x);
  b->unload_module(m);
  std::filesystem::remove(path);
}

TEST(CpuModules, RandomIfThenRegionsMatchTheInterpreter) {
  // Masked regions at every level and -O level, in full and partial chunks (blocks of 20
  // lanes), against the interpreter, which runs every lane on its own.
  IsaGuard isa;
  std::mt19937 rng(test::random_seed(20261126));
  auto cpu = create_backend(Preference::parse("cpu"));
  auto interp = create_backend(Preference::parse("interp"));
  const uint32_t lanes = 60;
  std::vector<int32_t> x(lanes);
  for (auto &v : x) v = static_cast<int32_t>(rng() % 200) - 100;
  LaunchConfig config;
  config.grid = {3, 1, 1};
  config.block = {20, 1, 1};
  auto run = [&](Backend &b, const std::function<void(std::span<const KernelArg>)> &go) {
    auto bx = b.allocate_buffer(lanes * 4), by = b.allocate_buffer(lanes * 32);
    b.write<int32_t>(bx, x);
    b.write<int32_t>(by, std::vector<int32_t>(lanes * 8, 7));
    KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by)};
    go(args);
    auto y = b.read<int32_t>(by);
    b.free_buffer(bx);
    b.free_buffer(by);
    return y;
  };
  for (int trial = 0; trial < test::random_trials(20); ++trial) {
    const std::string text = test::random_if_then_kernel(rng, lanes);
    auto m = test::parse_ok(text);
    const auto want = run(*interp, [&](std::span<const KernelArg> args) {
      interp->execute_program(m.kernels[0], config, args);
    });
    for_each_compiled_level(*cpu, text, [&](ModuleHandle mod, const std::string &where) {
      const auto got =
          run(*cpu, [&](std::span<const KernelArg> args) { cpu->launch(mod, "k", config, args); });
      EXPECT_EQ(got, want) << where << ":\n" << text;
    });
  }
}

TEST(CpuModules, FloatRemIsCsFmodExactlyAtEveryLevel) {
  // Float `rem` is C's fmod, exact (SPEC §3.4), in the lowering's own integer loop (shared
  // with PTX, value_ops.h): random bits, pairs whose exponents lie 0 to 300 (f32) and 0 to 2100
  // (f64) apart so that the loop takes one step or many, subnormal operands and results, and
  // edge values, at every level and -O0/-O2, bit for bit against C's fmod (any NaN for a NaN).
  IsaGuard isa;
  std::mt19937_64 rng(20261205);
  auto sample = [&]<typename F, typename U>(F, U, int bias, int mant) {
    const int top = 2 * bias;
    std::vector<F> a, b;
    auto value = [&](int e) { // a random significand at biased exponent e (0: subnormal)
      const U frac = static_cast<U>(rng()) & ((U{1} << mant) - 1);
      return std::bit_cast<F>(
          static_cast<U>((U(rng() & 1) << (sizeof(U) * 8 - 1)) | (U(e) << mant) | frac));
    };
    const F edges[] = {F(0),
                       F(-0.0),
                       F(1),
                       F(-1.5),
                       std::numeric_limits<F>::infinity(),
                       -std::numeric_limits<F>::infinity(),
                       std::numeric_limits<F>::quiet_NaN(),
                       std::numeric_limits<F>::denorm_min(),
                       std::numeric_limits<F>::min(),
                       std::numeric_limits<F>::max(),
                       F(0.1),
                       F(-7)};
    for (F x : edges)
      for (F y : edges) a.push_back(x), b.push_back(y);
    for (int i = 0; i < 4000; ++i) {
      const int ey = static_cast<int>(rng() % static_cast<uint64_t>(top + 1));
      const int gap = static_cast<int>(rng() % static_cast<uint64_t>(top + 2));
      switch (i % 4) {
      case 0:
        a.push_back(std::bit_cast<F>(static_cast<U>(rng())));
        b.push_back(std::bit_cast<F>(static_cast<U>(rng())));
        break;
      case 1:
        a.push_back(value(std::min(ey + gap, top)));
        b.push_back(value(ey));
        break;
      case 2:
        a.push_back(value(static_cast<int>(rng() % 3)));
        b.push_back(value(0));
        break;
      case 3:
        a.push_back(value(std::min(gap, top)));
        b.push_back(value(static_cast<int>(rng() % 2)));
        break;
      }
    }
    while (a.size() % 64) a.push_back(F(5)), b.push_back(F(3)); // whole blocks
    return std::pair{a, b};
  };
  const auto [a32, b32] = sample(float{}, uint32_t{}, 127, 23);
  const auto [a64, b64] = sample(double{}, uint64_t{}, 1023, 52);
  const auto n = static_cast<uint32_t>(a32.size());
  ASSERT_EQ(n, a64.size());
  const std::string text = R"(.kernel k
.param %a : buffer<f32> read
.param %b : buffer<f32> read
.param %r : buffer<f32> write
.param %c : buffer<f64> read
.param %d : buffer<f64> read
.param %s : buffer<f64> write
  ld.f32         r0, [%a + %gid*4]
  ld.f32         r1, [%b + %gid*4]
  rem.f32        r2, r0, r1
  st.f32         [%r + %gid*4], r2
  ld.f64         r3, [%c + %gid*8]
  ld.f64         r4, [%d + %gid*8]
  rem.f64        r5, r3, r4
  st.f64         [%s + %gid*8], r5
)";
  auto cpu = create_backend(Preference::parse("cpu"));
  for_each_compiled_level(*cpu, text, [&](ModuleHandle mod, const std::string &where) {
    std::array<BufferHandle, 6> buf;
    for (size_t i = 0; i < buf.size(); ++i)
      buf[i] = cpu->allocate_buffer(uint64_t{n} * (i < 3 ? 4 : 8));
    cpu->write<float>(buf[0], a32);
    cpu->write<float>(buf[1], b32);
    cpu->write<double>(buf[3], a64);
    cpu->write<double>(buf[4], b64);
    std::vector<KernelArg> args;
    for (auto h : buf) args.push_back(KernelArg::buffer(h));
    cpu->launch(mod, "k", LaunchConfig::linear(n, 64), args);
    const auto r32 = cpu->read<float>(buf[2]);
    const auto r64 = cpu->read<double>(buf[5]);
    int wrong = 0;
    for (uint32_t i = 0; i < n && wrong < 10; ++i) {
      if (!test::same_bits_or_nans(r32[i], std::fmod(a32[i], b32[i])))
        ++wrong, ADD_FAILURE() << where << std::hexfloat << ": fmod(" << a32[i] << ", " << b32[i]
                               << ") = " << r32[i] << ", not " << std::fmod(a32[i], b32[i]);
      if (!test::same_bits_or_nans(r64[i], std::fmod(a64[i], b64[i])))
        ++wrong, ADD_FAILURE() << where << std::hexfloat << ": fmod(" << a64[i] << ", " << b64[i]
                               << ") = " << r64[i] << ", not " << std::fmod(a64[i], b64[i]);
    }
    for (auto h : buf) cpu->free_buffer(h);
  });
}

TEST(CpuModules, NarrowingToF16AndBf16RoundsOnceAtEveryLevel) {
  // f16 and bf16 from f64 and from 32- and 64-bit integers round once (SPEC §3.4), in the
  // lowering's integer code (shared with PTX, value_ops.h): random bits, values a tie and an
  // ulp either side of it at every exponent of both formats' normal and subnormal ranges, the
  // overflow threshold, integers that are ties far above 2^11, at every level and -O0/-O2,
  // bit for bit against the ISA's reference conversion (isa::convert_bits).
  using isa::Type;
  const double kInf = std::numeric_limits<double>::infinity();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  IsaGuard isa;
  std::mt19937_64 rng(20261205);
  std::vector<double> f;
  std::vector<uint64_t> ints;
  for (int i = 0; i < 1500; ++i) {
    f.push_back(std::bit_cast<double>(rng()));
    ints.push_back(i % 3 ? rng() : rng() >> (rng() % 64));
  }
  for (int p : {11, 8}) // f16, bf16: a tie (2k + 1) 2^(e - p) and its neighbours
    for (int e = p == 11 ? -27 : -136; e <= (p == 11 ? 17 : 129); ++e) {
      const double k =
          static_cast<double>((rng() % (uint64_t{1} << (p - 1))) | (uint64_t{1} << (p - 1)));
      const double tie = std::ldexp(2 * k + 1, e - p);
      for (double v : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, kInf)})
        f.push_back(rng() & 1 ? -v : v);
    }
  for (double v : {65504.0, 65519.99999999999, 65520.0, 0x1p-25, 0x1.0000000000001p-25, 0x1p-134,
                   0x1.0000000000001p-134, 3.3895313892515355e38, 0.0, -0.0, kInf, kNan, -kNan})
    f.push_back(v);
  for (int s = 0; s < 53; ++s) { // integer ties: (2k + 1) 2^s with k of 11 and 8 bits
    const uint64_t k = rng() % 2048 + 2048;
    for (uint64_t v : {(2 * k + 1) << s, ((2 * k + 1) << s) + 1, ((2 * k + 1) << s) - 1})
      ints.push_back(rng() & 1 ? 0 - v : v);
  }
  while (f.size() % 64) f.push_back(1.0);
  ints.resize(f.size(), 7);
  const auto n = static_cast<uint32_t>(f.size());
  const Type srcs[] = {Type::F64, Type::I32, Type::U32, Type::I64, Type::U64};
  std::string text = ".kernel k\n.param %x : buffer<f64> read\n.param %i : buffer<u64> read\n";
  for (int j = 0; j < 10; ++j) text += ".param %o" + std::to_string(j) + " : buffer<u16> write\n";
  text += "  ld.f64         r0, [%x + %gid*8]\n  ld.u64         r1, [%i + %gid*8]\n";
  text += "  cvt.i32.u64    r2, r1\n  cvt.u32.u64    r3, r1\n  cvt.i64.u64    r4, r1\n";
  const char *reg[] = {"r0", "r2", "r3", "r4", "r1"};
  for (int j = 0; j < 10; ++j) {
    const std::string dst = j % 2 ? "bf16" : "f16", o = std::to_string(j);
    text += "  cvt." + dst + "." + std::string(isa::type_name(srcs[j / 2])) + " r" +
            std::to_string(10 + j) + ", " + reg[j / 2] + "\n";
    text += "  st." + dst + " [%o" + o + " + %gid*2], r" + std::to_string(10 + j) + "\n";
  }
  auto cpu = create_backend(Preference::parse("cpu"));
  for_each_compiled_level(*cpu, text, [&](ModuleHandle mod, const std::string &where) {
    std::vector<BufferHandle> buf{cpu->allocate_buffer(uint64_t{n} * 8),
                                  cpu->allocate_buffer(uint64_t{n} * 8)};
    for (int j = 0; j < 10; ++j) buf.push_back(cpu->allocate_buffer(uint64_t{n} * 2));
    cpu->write<double>(buf[0], f);
    cpu->write<uint64_t>(buf[1], ints);
    std::vector<KernelArg> args;
    for (auto h : buf) args.push_back(KernelArg::buffer(h));
    cpu->launch(mod, "k", LaunchConfig::linear(n, 64), args);
    int wrong = 0;
    for (int j = 0; j < 10 && wrong < 10; ++j) {
      const auto out = cpu->read<uint16_t>(buf[2 + static_cast<size_t>(j)]);
      const Type dst = j % 2 ? Type::BF16 : Type::F16, src = srcs[j / 2];
      for (uint32_t i = 0; i < n && wrong < 10; ++i) {
        const uint64_t bits = src == Type::F64                       ? std::bit_cast<uint64_t>(f[i])
                              : src == Type::I32 || src == Type::U32 ? ints[i] & 0xffffffff
                                                                     : ints[i];
        const auto want = static_cast<uint16_t>(isa::convert_bits(dst, src, bits));
        if (out[i] != want)
          ++wrong, ADD_FAILURE() << where << ": cvt." << isa::type_name(dst) << "."
                                 << isa::type_name(src) << " of 0x" << std::hex << bits << " = 0x"
                                 << out[i] << ", not 0x" << want;
      }
    }
    for (auto h : buf) cpu->free_buffer(h);
  });
}

TEST(CpuModules, RandomArithmeticOfEveryTypeMatchesTheInterpreter) {
  // Straight-line arithmetic, conversions, compares and selects over every numeric type with
  // edge values (SPEC §3.4's exact rules), at every level and -O0/-O2, in full and partial
  // chunks (blocks of 15 lanes), bit for bit against the interpreter (NaNs as NaNs).
  IsaGuard isa;
  std::mt19937 rng(test::random_seed(20261129));
  auto cpu = create_backend(Preference::parse("cpu"));
  auto interp = create_backend(Preference::parse("interp"));
  LaunchConfig config;
  config.grid = {3, 1, 1};
  config.block = {15, 1, 1};
  for (int trial = 0; trial < test::random_trials(3); ++trial) {
    const std::string text = test::random_typed_kernel(rng, 40 + 20 * (trial % 3));
    auto m = test::parse_ok(text);
    const auto inputs = test::random_kernel_inputs(rng, 45);
    const auto want = test::run_random_typed_kernel(
        *interp, inputs, [&](auto args) { interp->execute_program(m.kernels[0], config, args); });
    for_each_compiled_level(*cpu, text, [&](ModuleHandle mod, const std::string &where) {
      const auto got = test::run_random_typed_kernel(
          *cpu, inputs, [&](auto args) { cpu->launch(mod, "k", config, args); });
      EXPECT_EQ(test::random_kernel_mismatch(got, want), "") << where << ":\n" << text;
    });
  }
}

TEST(CpuModules, WholeLaunchOperationsSplitOverThreadsMatchTheInterpreter) {
  // Large enough that map, softmax, reduce_all and dot run in parallel ranges.
  const char *text = R"(
.kernel ops
.param %x : buffer<f32> read
.param %y : buffer<f32> readwrite
.param %s : buffer<f32> readwrite
.param %n : u32
.param %rows : u32
.param %cols : u32
  param.u32      r0, %n
  cvt.u64.u32    r1, r0
  param.u32      r2, %rows
  cvt.u64.u32    r3, r2
  param.u32      r5, %cols
  cvt.u64.u32    r6, r5
  map.sigmoid.f32 %y, %x, r1
  reduce_all.add.f32 r4, %y, r1
  dot.f32        r7, %x, %y, r1
  softmax.f32    %s, %x, r3, r6
  mov.imm.u64    r8, 0
  st.f32         [%s + r8*4], r4
  mov.imm.u64    r8, 1
  st.f32         [%s + r8*4], r7
)";
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "ops.hasm", diags);
  ASSERT_TRUE(m) << diags.to_string();
  driver::CpuOutputOptions o;
  o.targets = {"x86-64-v2"};
  o.module_name = "ops";
  auto bytes = driver::emit_cpu_output(*m, o, "shared");
  ASSERT_TRUE(bytes) << bytes.message();
  std::string path = (std::filesystem::temp_directory_path() /
                      ("hologram-ops-" + std::to_string(getpid()) + ".so"))
                         .string();
  ASSERT_TRUE(write_file_atomic(path, *bytes).is_ok());
  const uint32_t n = 200000, rows = 500, cols = 400;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 250.0f - 2.0f;
  auto run = [&](auto &&launch) {
    auto b = create_backend(Preference::parse("cpu"));
    auto bx = b->allocate_buffer(n * 4), by = b->allocate_buffer(n * 4),
         bs = b->allocate_buffer(n * 4);
    b->write<float>(bx, x);
    std::vector<KernelArg> args{KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::buffer(bs),
                                KernelArg::u32(n),     KernelArg::u32(rows),  KernelArg::u32(cols)};
    launch(*b, args);
    return std::make_pair(b->read<float>(by), b->read<float>(bs));
  };
  auto compiled = run([&](Backend &b, std::vector<KernelArg> &args) {
    b.launch(b.load_module(path), "ops", LaunchConfig::linear(1), args);
  });
  auto reference = run([&](Backend &b, std::vector<KernelArg> &args) {
    b.execute_program(m->kernels[0], LaunchConfig::linear(1), args);
  });
  // Element-wise: f32 sigmoid within the SPEC's 4 ulp.
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_LE(std::fabs(compiled.first[i] - reference.first[i]), 4 * ulp_of(reference.first[i]))
        << i;
  // Row-wise: softmax within the bound of docs/isa.md.
  for (uint32_t i = 2; i < rows * cols; ++i)
    ASSERT_LE(std::fabs(compiled.second[i] - reference.second[i]),
              isa::accuracy::kSoftmaxUlps * ulp_of(reference.second[i]))
        << i;
  // Reductions reassociate across ranges: within n * eps * sum|x| (SPEC §3.4).
  double sum_abs = 0;
  for (float v : reference.first) sum_abs += std::fabs(v);
  EXPECT_NEAR(compiled.second[0], reference.second[0], n * 1.2e-7 * sum_abs);
}

TEST(RecentCache, DropsTheValueUsedLeastRecently) {
  runtime::RecentCache<std::string, int> c(3);
  c.put("a", 1);
  c.put("b", 2);
  c.put("c", 3);
  ASSERT_NE(c.find(std::string("a")), nullptr); // a is now newer than b
  c.put("d", 4);                                // drops b
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.find(std::string("b")), nullptr);
  EXPECT_EQ(*c.find(std::string("a")), 1);
  c.put("c", 30); // replacing a value keeps the size
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(*c.find(std::string("c")), 30);
  c.put("e", 5); // drops d, the one left unused longest
  EXPECT_EQ(c.find(std::string("d")), nullptr);
}

/// Runs the attention kernel of `text` (parameters out, q, k, v, then `scalars`; q and out of
/// q_len floats, k and v of kv_len, uniform in [-1, 1) from `seed`) on the interpreter and on
/// a CPU backend at 1, 2 and 3 threads: each of the CPU's outputs within `tol` of the
/// interpreter's. Returns the CPU backend, whose library paths the caller checks.
std::shared_ptr<Backend> attention_on_threads(const std::string &text, size_t q_len, size_t kv_len,
                                              uint32_t seed, const std::vector<KernelArg> &scalars,
                                              float tol) {
  ThreadsGuard threads_guard;
  const isa::Module m = test::parse_ok(text);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> q(q_len), k(kv_len), v(kv_len);
  for (auto *a : {&q, &k, &v})
    for (float &x : *a) x = u(rng);
  auto run = [&](Backend &b) {
    auto out = b.allocate_buffer(q_len * 4), bq = b.allocate_buffer(q.size() * 4),
         bk = b.allocate_buffer(k.size() * 4), bv = b.allocate_buffer(v.size() * 4);
    b.write<float>(bq, q);
    b.write<float>(bk, k);
    b.write<float>(bv, v);
    std::vector<KernelArg> args{KernelArg::buffer(out), KernelArg::buffer(bq),
                                KernelArg::buffer(bk), KernelArg::buffer(bv)};
    args.insert(args.end(), scalars.begin(), scalars.end());
    b.execute_program(m.kernels[0], LaunchConfig::linear(1), args);
    return b.read<float>(out);
  };
  auto interp = create_backend(Preference::parse("interp"));
  const std::vector<float> want = run(*interp);
  std::shared_ptr<Backend> cpu = create_backend(Preference::parse("cpu"));
  for (unsigned threads : {1u, 2u, 3u}) {
    runtime::set_cpu_threads(threads);
    const std::vector<float> got = run(*cpu);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size() && i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], tol) << threads << " threads, element " << i;
  }
  return cpu;
}

TEST(CpuLibrary, DecodingAttentionGivesTheSameOutputsOnAnyNumberOfThreads) {
  // One query row of 6 heads on 3 key/value heads against 100 cached positions whose rows are
  // 59 floats apart, a transformer's decoding step: the CPU runs it position by position, the
  // positions split between the threads (runtime/cpu/library.cpp, decode_attention). On 1, 2
  // and 3 threads (one part, then two) the outputs match the interpreter's within the op's
  // bound (docs/isa.md: 64 sk ulp of the output's scale), through the "decode" schedule.
  const char *text = R"(
.kernel att
.param %out : buffer<f32> write
.param %q : buffer<f32> read
.param %k : buffer<f32> read
.param %v : buffer<f32> read
.param %len : u64
.param %kv_row : u64
.param %scale : f32
  mov.imm.u64    r1, 6
  mov.imm.u64    r2, 3
  mov.imm.u64    r3, 1
  param.u64      r4, %len
  mov.imm.u64    r5, 18
  param.u64      r6, %kv_row
  mov.imm.u64    r7, 108
  param.f32      r8, %scale
  attention.f32  %out, %q, %k, %v, none, r1, r2, r3, r4, r5, r5, r7, r5, r6, r8, 0
)";
  const uint64_t len = 100, row = 59, kv = (len - 1) * row + 3 * 18;
  auto cpu = attention_on_threads(text, 108, kv, 11,
                                  {KernelArg::u64(len), KernelArg::u64(row), KernelArg::f32(0.25f)},
                                  64 * len * 0x1p-24);
  EXPECT_EQ(cpu->library_path_counts().at("attention:decode"), 3u);
}

TEST(CpuLibrary, PrefillAttentionGivesTheSameOutputsOnAnyNumberOfThreads) {
  // 100 query rows of 2 heads on one key/value head (grouped-query attention), rows of all
  // heads side by side and key/value rows 23 floats apart, causal and without a mask. The CPU
  // runs each head's rows in blocks, one task each, as many as make the tasks a multiple of
  // the threads, each block computing the scores of the keys its last row sees
  // (runtime/cpu/library.cpp, fast_attention): on 3 threads a causal head is 3 blocks, of 48,
  // 29 and 23 rows seeing up to 48, 77 and 100 keys; on 2, one block a head. On 1, 2 and 3
  // threads the outputs match the interpreter's within the op's bound (docs/isa.md: 64 sk
  // ulp of the output's scale).
  const char *text = R"(
.kernel att
.param %out : buffer<f32> write
.param %q : buffer<f32> read
.param %k : buffer<f32> read
.param %v : buffer<f32> read
.param %scale : f32
  mov.imm.u64    r1, 2
  mov.imm.u64    r2, 1
  mov.imm.u64    r3, 100
  mov.imm.u64    r5, 18
  mov.imm.u64    r6, 23
  mov.imm.u64    r7, 36
  param.f32      r8, %scale
  attention.f32  %out, %q, %k, %v, none, r1, r2, r3, r3, r5, r5, r7, r5, r6, r8, CAUSAL
)";
  const uint64_t seq = 100, q_len = seq * 36, kv = (seq - 1) * 23 + 18;
  for (const char *causal : {"1", "0"}) {
    std::string source = text;
    source.replace(source.find("CAUSAL"), 6, causal);
    SCOPED_TRACE(std::string("causal ") + causal);
    auto cpu =
        attention_on_threads(source, q_len, kv, 12, {KernelArg::f32(0.25f)}, 64 * seq * 0x1p-24);
    EXPECT_EQ(cpu->library_path_counts().at("attention:gemm"), 3u);
  }
}

// execute_program keeps the code of the last runtime::kRecentPrograms programs only: more
// distinct programs than that all run right, and the first runs again after it was dropped.
TEST(CpuExecuteProgram, ManyDistinctProgramsRunAndOldOnesAreCompiledAgain) {
  auto b = create_backend(Preference::parse("cpu"));
  auto out = b->allocate_buffer(4);
  auto run = [&](int c) {
    DiagnosticEngine diags;
    auto m = isa::parse_module(".kernel k" + std::to_string(c) +
                                   "\n.param %o : buffer<u32> write\n  mov.imm.u32 r0, " +
                                   std::to_string(c) + "\n  st.u32 [%o], r0\n",
                               "p.hasm", diags);
    EXPECT_TRUE(m) << diags.to_string();
    KernelArg args[] = {KernelArg::buffer(out)};
    b->execute_program(m->kernels[0], LaunchConfig::linear(1), args);
    return b->read<uint32_t>(out)[0];
  };
  for (int c = 0; c < static_cast<int>(runtime::kRecentPrograms) + 6; ++c)
    ASSERT_EQ(run(c), static_cast<uint32_t>(c));
  EXPECT_EQ(run(0), 0u);
}

} // namespace
