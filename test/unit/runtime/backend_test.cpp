// The runtime's Backend API on the CPU backend (ISA programs compiled by Hologram::jit) and the
// interp backend (the same, with ISA programs on the reference interpreter): buffers, pools,
// launches, Atlas state, selection, and every misuse reported as a hologram::Error.
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/runtime/stream.h"
#include "test_util.h"

#include <atomic>
#include <cstdlib>
#include <thread>

using namespace hologram;

namespace {

using test::code_of;

isa::Kernel vector_add() {
  auto m = test::parse_ok(*test::read_file_for_test("examples/isa/vector_add.hasm"));
  return m.kernels.at(0);
}

std::span<const std::byte> as_bytes(const std::vector<float> &v) {
  return std::as_bytes(std::span(v));
}

} // namespace

TEST(Backend, BuffersAreZeroFilledAndCopyByOffset) {
  auto b = create_backend(Preference::parse("cpu"));
  auto buf = b->allocate_buffer(16);
  EXPECT_EQ(b->buffer_size(buf), 16u);
  EXPECT_EQ(b->read<uint32_t>(buf), (std::vector<uint32_t>{0, 0, 0, 0}));
  std::vector<uint32_t> two = {7, 9};
  b->write<uint32_t>(buf, two, 8);
  EXPECT_EQ(b->read<uint32_t>(buf), (std::vector<uint32_t>{0, 0, 7, 9}));
}

TEST(Backend, MisuseOfHandlesIsAnError) {
  auto b = create_backend();
  std::string msg;
  EXPECT_EQ(code_of([&] { b->buffer_size({0}); }, &msg), ErrorCode::InvalidHandle);
  EXPECT_EQ(msg, "buffer handle 0 is not a buffer");
  EXPECT_EQ(code_of([&] { b->buffer_size({99}); }, &msg), ErrorCode::InvalidHandle);
  EXPECT_EQ(msg, "unknown buffer #99");
  auto buf = b->allocate_buffer(8);
  b->free_buffer(buf);
  EXPECT_EQ(code_of([&] { b->free_buffer(buf); }, &msg), ErrorCode::InvalidHandle);
  EXPECT_EQ(msg, "buffer #1 was freed");
  auto pool = b->allocate_pool(8);
  EXPECT_EQ(code_of([&] { b->buffer_size({pool.id + 1000}); }), ErrorCode::InvalidHandle);
  EXPECT_EQ(code_of([&] { b->allocate_buffer(0); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of([&] { b->allocate_pool(uint64_t{1} << 62); }), ErrorCode::OutOfMemory);
}

TEST(Backend, OutOfRangeCopiesAreErrors) {
  auto b = create_backend();
  auto buf = b->allocate_buffer(16);
  std::vector<std::byte> data(8);
  std::string msg;
  EXPECT_EQ(code_of([&] { b->copy_to_buffer(buf, 12, data); }, &msg), ErrorCode::OutOfBounds);
  EXPECT_EQ(msg, "a copy of 8 bytes at offset 12 is outside buffer #1 of 16 bytes");
  EXPECT_EQ(code_of([&] { b->copy_from_buffer(buf, ~uint64_t{0}, data); }), ErrorCode::OutOfBounds);
  auto pool = b->allocate_pool(4);
  EXPECT_EQ(code_of([&] { b->copy_to_pool(pool, 0, data); }), ErrorCode::OutOfBounds);
  EXPECT_EQ(code_of([&] { b->copy_to_boundary(atlas::kBoundaryPoolBytes - 4, data); }),
            ErrorCode::OutOfBounds);
  b->copy_to_buffer(buf, 8, data); // exactly at the end is fine
}

TEST(Backend, ExecuteProgram) {
  auto b = create_backend();
  auto k = vector_add();
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  auto a = b->allocate_buffer(12), bb = b->allocate_buffer(12), c = b->allocate_buffer(12);
  b->copy_to_buffer(a, 0, as_bytes(x));
  b->copy_to_buffer(bb, 0, as_bytes(y));
  std::vector<KernelArg> args = {KernelArg::buffer(a), KernelArg::buffer(bb), KernelArg::buffer(c),
                                 KernelArg::u32(3)};
  b->execute_program(k, LaunchConfig::linear(3, 2), args);
  b->synchronize();
  EXPECT_EQ(b->read<float>(c), (std::vector<float>{11, 22, 33}));
}

TEST(Backend, LaunchMisuseIsAnError) {
  auto b = create_backend();
  auto k = vector_add();
  auto a = b->allocate_buffer(12), c = b->allocate_buffer(12);
  auto pool = b->allocate_pool(12);
  std::string msg;
  auto launch = [&](std::vector<KernelArg> args, LaunchConfig lc = LaunchConfig::linear(3)) {
    return code_of([&] { b->execute_program(k, lc, args); }, &msg);
  };
  EXPECT_EQ(launch({KernelArg::buffer(a)}), ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "kernel 'vector_add' expects 4 argument(s), got 1");
  EXPECT_EQ(
      launch({KernelArg::buffer(a), KernelArg::buffer(a), KernelArg::buffer(c), KernelArg::f32(3)}),
      ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "argument 4 (%n) of kernel 'vector_add' is u32, got f32");
  EXPECT_EQ(launch({KernelArg::pool(pool), KernelArg::buffer(a), KernelArg::buffer(c),
                    KernelArg::u32(3)}),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(msg, "argument 1 (%a) of kernel 'vector_add' must be a buffer");
  EXPECT_EQ(launch({KernelArg::buffer({77}), KernelArg::buffer(a), KernelArg::buffer(c),
                    KernelArg::u32(3)}),
            ErrorCode::InvalidHandle);
  LaunchConfig empty;
  empty.block = {0, 1, 1};
  EXPECT_EQ(
      launch({KernelArg::buffer(a), KernelArg::buffer(a), KernelArg::buffer(c), KernelArg::u32(3)},
             empty),
      ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("zero-size"), std::string::npos) << msg;
  // n = 4 but the buffers hold 3 floats: the interpreter, with every check on, names the lane
  // and the access (compiled code checks accesses under -fbounds-check only).
  b = create_backend(Preference::parse("interp"));
  a = b->allocate_buffer(12);
  c = b->allocate_buffer(12);
  EXPECT_EQ(
      launch({KernelArg::buffer(a), KernelArg::buffer(a), KernelArg::buffer(c), KernelArg::u32(4)},
             LaunchConfig::linear(4)),
      ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("lane 3"), std::string::npos) << msg;
}

TEST(Backend, AKernelChangedInPlaceIsCompiledAgain) {
  // The CPU backend finds a kernel it compiled by its address, and compares it: the same
  // object with another instruction is another program.
  auto b = create_backend(Preference::parse("cpu"));
  auto m = test::parse_ok(".kernel k\n.param %y : buffer<u32> write\n"
                          "  mov.imm.u32 r0, 7\n  st.u32 [%y + %gid*4], r0\n");
  isa::Kernel &k = m.kernels[0];
  auto y = b->allocate_buffer(4);
  KernelArg args[] = {KernelArg::buffer(y)};
  b->execute_program(k, LaunchConfig::linear(1, 1), args);
  EXPECT_EQ(b->read<uint32_t>(y), std::vector<uint32_t>{7});
  k.insts[0].operands[1].imm = 9;
  b->execute_program(k, LaunchConfig::linear(1, 1), args);
  EXPECT_EQ(b->read<uint32_t>(y), std::vector<uint32_t>{9});
}

TEST(Backend, CpuCompilesProgramsAndInterpRunsThemOnTheInterpreter) {
  // A whole-launch softmax: compiled, it runs the CPU library's row kernels, which count the
  // schedule they took; the interpreter runs its own reference and counts nothing.
  auto m = test::parse_ok(R"(.kernel rows
.param %y : buffer<f32> write
.param %x : buffer<f32> read
.param %n : u64
  param.u64      r0, %n
  mov.imm.u64    r1, 2
  softmax.f32    %y, %x, r1, r0
)");
  const uint64_t n = 40;
  std::vector<float> x(2 * n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.5f;
  std::map<std::string, std::vector<float>> results;
  for (const char *name : {"cpu", "interp"}) {
    auto b = create_backend(Preference::parse(name));
    EXPECT_EQ(b->device_info().backend, name);
    auto bx = b->allocate_buffer(x.size() * 4), by = b->allocate_buffer(x.size() * 4);
    b->copy_to_buffer(bx, 0, as_bytes(x));
    KernelArg args[] = {KernelArg::buffer(by), KernelArg::buffer(bx), KernelArg::u64(n)};
    for (const char *isa : {"", "v2"}) { // the compile follows the requested level
      runtime::set_cpu_isa(isa);
      b->execute_program(m.kernels[0], LaunchConfig::linear(1), args);
    }
    runtime::set_cpu_isa("");
    results[name] = b->read<float>(by);
    EXPECT_EQ(b->library_path_counts().empty(), std::string(name) == "interp") << name;
  }
  ASSERT_EQ(results["cpu"].size(), results["interp"].size());
  for (size_t i = 0; i < results["cpu"].size(); ++i)
    EXPECT_NEAR(results["cpu"][i], results["interp"][i], 1e-6f) << i;
  auto found = create_backend();
  EXPECT_NE(found->device_info().backend, "interp"); // auto never picks the interpreter
}

TEST(Backend, AtlasStatePersistsAndIsAccessible) {
  auto b = create_backend();
  auto m = test::parse_ok(
      ".kernel k\n  mov.imm.u32 r1, 7\n  mov.imm.f64 r2, 0.25\n  res.accum r1, r2\n  phase.adv 5\n"
      "  cvt.u64.u32 r3, %lane.x\n  ld.f32 r4, [class 2 + r3*4]\n  st.f32 [class 3 + r3*4], r4\n");
  std::vector<float> in = {1.5f, 2.5f};
  b->copy_to_boundary(2 * atlas::kClassBytes, as_bytes(in));
  b->set_phase(770);
  EXPECT_EQ(b->phase(), 2u);
  b->execute_program(m.kernels[0], LaunchConfig::linear(2, 2), {});
  EXPECT_EQ(b->resonance()[7], 0.5);
  EXPECT_EQ(b->phase(), 12u);
  std::vector<float> out(2);
  b->copy_from_boundary(3 * atlas::kClassBytes, std::as_writable_bytes(std::span(out)));
  EXPECT_EQ(out, in);
  std::array<double, atlas::kNumClasses> r{};
  b->set_resonance(r);
  EXPECT_EQ(b->resonance()[7], 0.0);
}

// The pool is made at first use (runtime/core/host_atlas.h): before that it reads as zeros,
// to copies and to kernels, and its bounds hold.
TEST(Backend, TheBoundaryPoolIsZeroUntilWritten) {
  for (const char *name : {"cpu", "interp"}) {
    auto b = create_backend(Preference::parse(name));
    std::vector<float> out(4, -1.0f);
    auto out_bytes = std::as_writable_bytes(std::span(out));
    b->copy_from_boundary(5 * atlas::kClassBytes, out_bytes);
    EXPECT_EQ(out, std::vector<float>(4, 0.0f)) << name;
    std::vector<std::byte> data(8);
    EXPECT_EQ(code_of([&] { b->copy_from_boundary(atlas::kBoundaryPoolBytes - 4, data); }),
              ErrorCode::OutOfBounds)
        << name;
    b->copy_to_boundary(0, {}); // an empty copy is no use of the pool
    auto m = test::parse_ok(".kernel k\n  cvt.u64.u32 r3, %lane.x\n  ld.f32 r4, [class 2 + r3*4]\n"
                            "  mov.imm.f32 r5, 1.0\n  add.f32 r4, r4, r5\n"
                            "  st.f32 [class 3 + r3*4], r4\n");
    b->execute_program(m.kernels[0], LaunchConfig::linear(4, 4), {});
    b->copy_from_boundary(3 * atlas::kClassBytes, out_bytes);
    EXPECT_EQ(out, std::vector<float>(4, 1.0f)) << name;
  }
}

TEST(Backend, SelectionNeverFallsBackSilently) {
  // auto takes Vulkan and OpenCL GPUs only; CPU-class devices (lavapipe, PoCL) need their name.
  auto chosen = create_backend();
  if (chosen->device_info().backend != "cpu") {
    EXPECT_EQ(chosen->device_info().kind, DeviceKind::Gpu);
  }
  std::string msg;
  EXPECT_EQ(code_of([&] { Preference::parse("metal"); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(
      msg.find("unknown backend 'metal' (expected auto, vulkan, opencl, cuda, cpu or interp)"),
      std::string::npos)
      << msg;
  // An OpenCL that cannot load our programs: every device is refused with its reason, and
  // only an explicit list goes on to the next backend.
  ::setenv("HOLOGRAM_OPENCL_PROGRAMS", "il", 1);
  EXPECT_EQ(code_of([&] { create_backend(Preference::parse("opencl")); }, &msg),
            ErrorCode::BackendUnavailable);
  EXPECT_NE(msg.find("opencl: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("HOLOGRAM_OPENCL_PROGRAMS=il"), std::string::npos) << msg;
  EXPECT_EQ(create_backend(Preference::parse("opencl,cpu"))->device_info().backend, "cpu");
  auto found = discover();
  ::unsetenv("HOLOGRAM_OPENCL_PROGRAMS");
  ASSERT_GE(found.size(), 3u);
  EXPECT_EQ(found.back().backend, "cpu");
  EXPECT_TRUE(found.back().usable);
  for (const auto &r : found) {
    if (r.backend != "opencl") continue;
    EXPECT_FALSE(r.usable);
    EXPECT_FALSE(r.reason.empty());
  }
}

TEST(Backend, StreamPushesAnyLengthThroughAFixedPool) {
  auto b = create_backend();
  auto pool = b->allocate_pool(4096);
  auto total = b->allocate_buffer(8);
  // A kernel adding the chunk's u8 values into total[0].
  auto m = test::parse_ok(R"(.kernel sum
.param %p : pool
.param %t : buffer<u64> readwrite
.param %off : u64
.param %n : u64
  param.u64      r1, %off
  param.u64      r2, %n
  setge.u64      p0, %gid, r2
  bra p0         @done
  add.u64        r3, r1, %gid
  ld.u8          r4, [%pool:p + r3]
  cvt.u64.u8     r5, r4
  mov.imm.u64    r6, 0
  atom.add.u64   r7, [%t + r6], r5
@done:
  exit
)");
  const uint64_t length = 1000003; // not a multiple of the chunk
  uint64_t produced = 0, expected = 0;
  auto source = [&](std::span<std::byte> out) {
    size_t n = std::min<uint64_t>(out.size(), length - produced);
    for (size_t i = 0; i < n; ++i) {
      out[i] = static_cast<std::byte>((produced + i) * 7 % 251);
      expected += (produced + i) * 7 % 251;
    }
    produced += n;
    return n;
  };
  uint64_t chunks = 0;
  auto step = [&](PoolHandle p, uint64_t offset, uint64_t n, uint64_t index) {
    EXPECT_EQ(offset, (index % 2) * 2048);
    std::vector<KernelArg> args = {KernelArg::pool(p), KernelArg::buffer(total),
                                   KernelArg::u64(offset), KernelArg::u64(n)};
    b->execute_program(m.kernels[0], LaunchConfig::linear(n, 256), args);
    ++chunks;
  };
  EXPECT_EQ(stream(*b, pool, source, step), length);
  EXPECT_EQ(chunks, (length + 2047) / 2048);
  EXPECT_EQ(b->read<uint64_t>(total)[0], expected);
}

TEST(Backend, ConcurrentUseFromManyThreads) {
  auto b = create_backend();
  auto k = vector_add();
  std::atomic<int> failures{0}, launches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < 40; ++it) {
        uint32_t n = 64 + static_cast<uint32_t>((t * 13 + it) % 100);
        std::vector<float> x(n), y(n);
        for (uint32_t i = 0; i < n; ++i) {
          x[i] = static_cast<float>(t * 1000 + i);
          y[i] = static_cast<float>(it);
        }
        auto a = b->allocate_buffer(n * 4), bb = b->allocate_buffer(n * 4),
             c = b->allocate_buffer(n * 4);
        b->copy_to_buffer(a, 0, as_bytes(x));
        b->copy_to_buffer(bb, 0, as_bytes(y));
        std::vector<KernelArg> args = {KernelArg::buffer(a), KernelArg::buffer(bb),
                                       KernelArg::buffer(c), KernelArg::u32(n)};
        b->execute_program(k, LaunchConfig::linear(n, 32), args);
        ++launches;
        auto out = b->read<float>(c);
        for (uint32_t i = 0; i < n; ++i)
          if (out[i] != x[i] + y[i]) ++failures;
        b->free_buffer(a);
        b->free_buffer(bb);
        b->free_buffer(c);
      }
    });
  // Two more threads race a launch against the freeing of its buffers: every launch either
  // completes or reports InvalidHandle, and nothing crashes.
  std::atomic<int> lost{0};
  std::vector<BufferHandle> victims;
  for (int i = 0; i < 60; ++i) victims.push_back(b->allocate_buffer(256 * 4));
  threads.emplace_back([&] {
    for (const auto &v : victims) {
      std::vector<KernelArg> args = {KernelArg::buffer(v), KernelArg::buffer(v),
                                     KernelArg::buffer(v), KernelArg::u32(256)};
      try {
        b->execute_program(k, LaunchConfig::linear(256, 64), args);
      } catch (const Error &e) {
        if (e.code() != ErrorCode::InvalidHandle) ++failures;
        ++lost;
      }
    }
  });
  threads.emplace_back([&] {
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) b->free_buffer(*it);
  });
  for (auto &t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(launches.load(), 320);
  EXPECT_LE(lost.load(), 60);
}
