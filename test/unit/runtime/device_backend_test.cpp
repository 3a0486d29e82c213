// The SPIR-V backends on this machine's devices (Vulkan on lavapipe, OpenCL on PoCL in CI):
// selection by name, buffers and pools, launches through execute_program, and every misuse as
// a precise error. Each test runs on both backends.
#include "hologram/codegen/cpu_abi.h"
#include "hologram/codegen/spirv.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/encoding.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/queue.h"
#include "random_kernels.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

using namespace hologram;

namespace {

using test::code_of;

class DeviceBackend : public ::testing::TestWithParam<std::string> {
protected:
  std::unique_ptr<Backend> start() {
    setenv("XDG_RUNTIME_DIR", "/tmp", 0);
    return create_backend(Preference::parse(GetParam()));
  }
};

} // namespace

TEST_P(DeviceBackend, StartsByNameAndDescribesItsDevice) {
  auto b = start();
  auto info = b->device_info();
  EXPECT_EQ(info.backend, GetParam());
  EXPECT_FALSE(info.name.empty());
  // How programs reach the device: the Vulkan target, or OpenCL's IL or SPIR path.
  std::string how = GetParam() == "vulkan" ? "SPIR-V target vulkan1." : "programs as SPIR";
  EXPECT_NE(info.details.find(how), std::string::npos) << info.details;
  bool listed = false;
  for (const auto &r : discover())
    if (r.backend == GetParam() && r.device.find(info.name) == 0) listed = r.usable;
  EXPECT_TRUE(listed);
}

TEST_P(DeviceBackend, RunsAProgramOverManyDispatchesOfBlocks) {
  auto b = start();
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t n = 70000; // not a multiple of the block
  std::vector<float> x(n), y(n);
  std::iota(x.begin(), x.end(), 0.0f);
  std::fill(y.begin(), y.end(), 1.0f);
  auto bx = b->allocate_buffer(n * 4), by = b->allocate_buffer(n * 4);
  b->write<float>(bx, x);
  b->write<float>(by, y);
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::f32(2.0f),
                      KernelArg::u64(n)};
  // One lane per block: 70000 blocks exceed the 65535 a Vulkan dispatch may have on most
  // devices, so the Vulkan backend splits the grid.
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 1), args);
  auto out = b->read<float>(by);
  for (uint64_t i = 0; i < n; i += 997) ASSERT_EQ(out[i], 2.0f * static_cast<float>(i) + 1.0f);
  EXPECT_EQ(out[n - 1], 2.0f * static_cast<float>(n - 1) + 1.0f);
  b->synchronize();
}

TEST_P(DeviceBackend, LaneIdsFollowTheGridInEveryShape) {
  // Each lane stores its %gid at the place its block and lane give it (SPEC: blocks in x,
  // then y, then z order, lanes likewise within a block), and %gsize. Vulkan specialises a
  // grid of one row of blocks (block x alone), so grids of every shape are run, one row
  // included, each in one pipeline after another of the same block.
  auto b = start();
  auto m = test::parse_ok(R"(.kernel ids
.param %out : buffer<u64> write
.param %size : buffer<u64> write
  cvt.u64.u32    r1, %block.z
  cvt.u64.u32    r2, %gdim.y
  mul.u64        r1, r1, r2
  cvt.u64.u32    r2, %block.y
  add.u64        r1, r1, r2
  cvt.u64.u32    r2, %gdim.x
  mul.u64        r1, r1, r2
  cvt.u64.u32    r2, %block.x
  add.u64        r1, r1, r2
  cvt.u64.u32    r3, %lane.z
  cvt.u64.u32    r2, %bdim.y
  mul.u64        r3, r3, r2
  cvt.u64.u32    r2, %lane.y
  add.u64        r3, r3, r2
  cvt.u64.u32    r2, %bdim.x
  mul.u64        r3, r3, r2
  cvt.u64.u32    r2, %lane.x
  add.u64        r3, r3, r2
  cvt.u64.u32    r4, %bdim.x
  cvt.u64.u32    r2, %bdim.y
  mul.u64        r4, r4, r2
  cvt.u64.u32    r2, %bdim.z
  mul.u64        r4, r4, r2
  mad.u64        r5, r1, r4, r3
  st.u64         [%out + r5*8], %gid
  st.u64         [%size + r5*8], %gsize
)");
  for (auto [grid, block] : std::initializer_list<std::pair<Dim3, Dim3>>{{{5, 1, 1}, {8, 1, 1}},
                                                                         {{3, 2, 1}, {8, 1, 1}},
                                                                         {{2, 3, 2}, {4, 2, 1}},
                                                                         {{1, 1, 3}, {8, 1, 1}},
                                                                         {{4, 1, 1}, {2, 2, 2}}}) {
    LaunchConfig l;
    l.grid = grid;
    l.block = block;
    const uint64_t n = l.total_lanes();
    auto out = b->allocate_buffer(n * 8), size = b->allocate_buffer(n * 8);
    KernelArg args[] = {KernelArg::buffer(out), KernelArg::buffer(size)};
    b->execute_program(m.kernels[0], l, args);
    auto ids = b->read<uint64_t>(out), sizes = b->read<uint64_t>(size);
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(ids[i], i) << "grid " << grid.x << "x" << grid.y << "x" << grid.z << ", block "
                           << block.x << "x" << block.y << "x" << block.z;
      ASSERT_EQ(sizes[i], n);
    }
  }
}

TEST_P(DeviceBackend, BuffersAndPoolsAreZeroFilledAndRangeChecked) {
  auto b = start();
  auto buf = b->allocate_buffer(16);
  EXPECT_EQ(b->buffer_size(buf), 16u);
  auto v = b->read<uint32_t>(buf);
  EXPECT_EQ(v, std::vector<uint32_t>(4, 0));
  std::vector<std::byte> big(17);
  std::string msg;
  EXPECT_EQ(code_of([&] { b->copy_to_buffer(buf, 0, big); }, &msg), ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("outside buffer #"), std::string::npos) << msg;
  EXPECT_EQ(code_of([&] { b->allocate_buffer(0); }), ErrorCode::InvalidArgument);
  auto pool = b->allocate_pool(64);
  std::vector<std::byte> bytes(8, std::byte{7}), back(8);
  b->copy_to_pool(pool, 56, bytes);
  b->copy_from_pool(pool, 56, back);
  EXPECT_EQ(back, bytes);
  EXPECT_EQ(code_of([&] { b->copy_from_pool(pool, 60, back); }), ErrorCode::OutOfBounds);
  b->free_pool(pool);
  EXPECT_EQ(code_of([&] { b->pool_size(pool); }), ErrorCode::InvalidHandle);
  b->free_buffer(buf);
  EXPECT_EQ(code_of([&] { b->free_buffer(buf); }, &msg), ErrorCode::InvalidHandle);
  EXPECT_NE(msg.find("was freed"), std::string::npos) << msg;
}

TEST_P(DeviceBackend, MisusedLaunchesAreErrors) {
  auto b = start();
  auto m = test::parse_ok(test::kSaxpy);
  const auto &k = m.kernels[0];
  auto bx = b->allocate_buffer(16), by = b->allocate_buffer(16), odd = b->allocate_buffer(6);
  std::string msg;
  KernelArg too_few[] = {KernelArg::buffer(bx)};
  EXPECT_EQ(code_of([&] { b->execute_program(k, LaunchConfig::linear(4), too_few); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("expects 4 argument(s), got 1"), std::string::npos) << msg;
  KernelArg wrong_type[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::f64(2.0),
                            KernelArg::u64(4)};
  EXPECT_EQ(code_of([&] { b->execute_program(k, LaunchConfig::linear(4), wrong_type); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("argument 3 (%a) of kernel 'saxpy' is f32, got f64"), std::string::npos)
      << msg;
  KernelArg partial[] = {KernelArg::buffer(odd), KernelArg::buffer(by), KernelArg::f32(2.0f),
                         KernelArg::u64(4)};
  EXPECT_EQ(code_of([&] { b->execute_program(k, LaunchConfig::linear(4), partial); }, &msg),
            ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("not a whole number of f32 elements"), std::string::npos) << msg;
  KernelArg ok[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::f32(2.0f),
                    KernelArg::u64(4)};
  LaunchConfig empty = LaunchConfig::linear(4);
  empty.block.y = 0;
  EXPECT_EQ(code_of([&] { b->execute_program(k, empty, ok); }), ErrorCode::InvalidArgument);
  LaunchConfig huge = LaunchConfig::linear(4, 1 << 20);
  EXPECT_EQ(code_of([&] { b->execute_program(k, huge, ok); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("is larger than"), std::string::npos) << msg;
  LaunchConfig shared = LaunchConfig::linear(4);
  shared.shared_memory = 1u << 30;
  EXPECT_EQ(code_of([&] { b->execute_program(k, shared, ok); }, &msg), ErrorCode::InvalidArgument);
  EXPECT_NE(msg.find("bytes of shared memory"), std::string::npos) << msg;
  KernelArg freed[] = {KernelArg::buffer(BufferHandle{999}), KernelArg::buffer(by),
                       KernelArg::f32(2.0f), KernelArg::u64(4)};
  EXPECT_EQ(code_of([&] { b->execute_program(k, LaunchConfig::linear(4), freed); }),
            ErrorCode::InvalidHandle);
  EXPECT_EQ(code_of([&] { b->load_linked_module(nullptr); }), ErrorCode::InvalidArgument);
}

TEST_P(DeviceBackend, LinkedModulesWithoutItsSpirvOrOfAnotherAbiAreRefused) {
  auto b = start();
  const char *variants[] = {"x86-64-v3"};
  const char *features[] = {""};
  const uint32_t widths[] = {8};
  hg_cpu_module_desc d{};
  d.abi_version = HG_CPU_ABI_VERSION;
  d.num_variants = 1;
  d.variant_names = variants;
  d.variant_features = features;
  d.variant_widths = widths;
  const std::vector<uint8_t> empty = isa::encode_module_with_locations(isa::Module{});
  d.isa = empty.data();
  d.isa_size = empty.size();
  d.source_name = "plain.json";
  std::string msg;
  EXPECT_EQ(code_of([&] { b->load_linked_module(&d); }, &msg), ErrorCode::InvalidModule);
  EXPECT_NE(msg.find("linked module 'plain.json' holds no code the " + GetParam() +
                     " backend runs (its targets: x86-64-v3)"),
            std::string::npos)
      << msg;
  d.abi_version = HG_CPU_ABI_VERSION - 1;
  EXPECT_EQ(code_of([&] { b->load_linked_module(&d); }, &msg), ErrorCode::InvalidModule);
  EXPECT_NE(msg.find("was compiled for ABI version"), std::string::npos) << msg;
  d.abi_version = HG_CPU_ABI_VERSION;
  const uint32_t word = 0x07230203;
  hg_spirv_module_desc bad{"vulkan9.9", &word, 1, "{}"};
  d.num_spirv = 1;
  d.spirv = &bad;
  EXPECT_EQ(code_of([&] { b->load_linked_module(&d); }, &msg), ErrorCode::InvalidModule);
  EXPECT_NE(msg.find("carries a damaged SPIR-V module"), std::string::npos) << msg;
}

TEST_P(DeviceBackend, LibraryKernelsTakeTheirParametersFromTheReflection) {
  // A module compiled ahead of time: the whole-launch kernel's reduce_all launches device
  // library kernels, which the runtime binds from the reflection alone (no ISA for them).
  auto b = start();
  auto m = test::parse_ok(test::kTotal);
  codegen::SpirvOptions options;
  options.target = *codegen::parse_spirv_target(GetParam() == "vulkan" ? "vulkan1.1" : "opencl1.2");
  auto compiled = codegen::compile_spirv(m, options);
  ASSERT_TRUE(compiled) << compiled.message();
  const codegen::SpirvModule &spirv = *compiled;
  bool library = false;
  for (const auto &k : spirv.kernels) {
    library |= codegen::is_spirv_library_kernel(k.name);
    EXPECT_EQ(k.params.empty(), k.host) << k.name;
  }
  ASSERT_TRUE(library);
  const std::vector<uint8_t> encoded = isa::encode_module_with_locations(m);
  auto load = [&](const std::string &reflection) {
    hg_spirv_module_desc s{options.target.name.c_str(), spirv.words.data(), spirv.words.size(),
                           reflection.c_str()};
    hg_cpu_module_desc d{};
    d.abi_version = HG_CPU_ABI_VERSION;
    d.isa = encoded.data();
    d.isa_size = encoded.size();
    d.source_name = "total.hasm";
    d.num_spirv = 1;
    d.spirv = &s;
    return b->load_linked_module(&d);
  };
  const uint64_t n = 5000;
  auto x = b->allocate_buffer(n * 4), out = b->allocate_buffer(4);
  b->write<float>(x, std::vector<float>(n, 0.5f));
  KernelArg args[] = {KernelArg::buffer(x), KernelArg::buffer(out), KernelArg::u64(n)};
  auto loaded = load(codegen::spirv_reflection_json(spirv));
  b->launch(loaded, "total", LaunchConfig::linear(1), args);
  EXPECT_EQ(b->read<float>(out), std::vector<float>{2500.0f});

  // A library kernel whose reflection lost its parameters, or that the module lacks.
  std::string msg;
  auto stripped = spirv;
  for (auto &k : stripped.kernels)
    if (codegen::is_spirv_library_kernel(k.name)) k.params.clear();
  EXPECT_EQ(code_of([&] { load(codegen::spirv_reflection_json(stripped)); }, &msg),
            ErrorCode::InvalidModule);
  EXPECT_NE(msg.find("has no parameters (recompile it with this hologram-cc)"), std::string::npos)
      << msg;
  auto missing = spirv;
  std::erase_if(missing.kernels,
                [](const auto &k) { return codegen::is_spirv_library_kernel(k.name); });
  auto lacking = load(codegen::spirv_reflection_json(missing));
  EXPECT_EQ(code_of([&] { b->launch(lacking, "total", LaunchConfig::linear(1), args); }, &msg),
            ErrorCode::InvalidModule);
  EXPECT_NE(msg.find("has no device library kernel '__hg_reduce_add_f32' for 'reduce_all' of "
                     "kernel 'total'"),
            std::string::npos)
      << msg;
}

TEST_P(DeviceBackend, KernelsItCannotCompileAreRefusedWithTheLocation) {
  auto b = start();
  // A whole-launch kernel's own code runs on the host, which has no atomics on the device.
  auto m = test::parse_ok(R"(.kernel host_atomic
.param %y : buffer<f32> readwrite
.param %x : buffer<f32> read
  mov.imm.u64 r0, 4
  mov.imm.f32 r1, 2.0
  atom.add.f32 r2, [%y + r0], r1
  axpy.f32 %y, %x, r0, r1
)");
  auto y = b->allocate_buffer(16), x = b->allocate_buffer(16);
  KernelArg args[] = {KernelArg::buffer(y), KernelArg::buffer(x)};
  std::string msg;
  EXPECT_EQ(
      code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1, 1), args); }, &msg),
      ErrorCode::InvalidProgram);
  EXPECT_NE(msg.find(":6:3: error: 'atom' in a whole-launch kernel is not supported by the "
                     "SPIR-V back end"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("note: in kernel 'host_atomic'"), std::string::npos) << msg;
}

TEST_P(DeviceBackend, RegisterAddressesThatNameNoRegionFailWithTheRegister) {
  auto b = start();
  auto m = test::parse_ok(R"(.kernel stray
.param %out : buffer<u32> readwrite
.param %v : u64
  addr           r0, %out
  mov.imm.u32    r1, 7
  st.u32         [r0 + 4], r1
  param.u64      r2, %v
  pool.alloc     r3, 8
  pool.ld.u32    r4, [r2]
  pool.free      r3
  exit
)");
  auto out = b->allocate_buffer(8);
  const std::array<uint32_t, 2> zero{};
  b->copy_to_buffer(out, 0, std::as_bytes(std::span(zero)));
  std::string msg;
  auto run = [&](uint64_t v) {
    KernelArg args[] = {KernelArg::buffer(out), KernelArg::scalar(isa::Type::U64, v)};
    return code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1, 1), args); },
                   &msg);
  };
  // `addr %out` is no pool handle; a made-up value is neither.
  EXPECT_EQ(run(uint64_t{1} << 48), ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("kernel 'stray': lane 0 (block (0,0,0), lane (0,0,0)), line 9 '"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("': register r2 holds no valid pool handle (0x1000000000000)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(run(0x1234), ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("register r2 holds no valid pool handle (0x1234)"), std::string::npos) << msg;
  EXPECT_EQ(b->read<uint32_t>(out)[1], 7u);
  // The handle pool.alloc returned is one.
  auto ok = test::parse_ok(R"(.kernel handle
.param %out : buffer<u32> readwrite
  pool.alloc     r3, 8
  mov.imm.u32    r1, 9
  pool.st.u32    [r3 + 4], r1
  mov.u64        r2, r3
  pool.ld.u32    r4, [r2 + 4]
  st.u32         [%out], r4
  pool.free      r3
  exit
)");
  KernelArg args[] = {KernelArg::buffer(out)};
  b->execute_program(ok.kernels[0], LaunchConfig::linear(1, 1), args);
  EXPECT_EQ(b->read<uint32_t>(out)[0], 9u);
}

TEST_P(DeviceBackend, MisalignedAccessesFailWithTheLaneAndLine) {
  auto b = start();
  auto m = test::parse_ok(R"(.kernel skewed
.param %x : buffer<u32> readwrite
.param %off : u64
  param.u64 r1, %off
  ld.u32 r2, [%x + r1]
  st.u32 [%x + r1], r2
  exit
)");
  auto x = b->allocate_buffer(16);
  KernelArg ok[] = {KernelArg::buffer(x), KernelArg::u64(4)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(1), ok);
  KernelArg skewed[] = {KernelArg::buffer(x), KernelArg::u64(2)};
  std::string msg;
  EXPECT_EQ(
      code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1), skewed); }, &msg),
      ErrorCode::LaunchFailed);
  EXPECT_NE(msg.find("kernel 'skewed': lane 0 (block (0,0,0), lane (0,0,0)), line 5 '"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("': access of 4 bytes at offset 2 of parameter %x is not aligned to its size"),
            std::string::npos)
      << msg;
}

TEST_P(DeviceBackend, WholeLaunchKernelsRunTheirScalarCodeOnTheHost) {
  // reduce_all runs on the device (two stages); the kernel's own st writes its result there.
  auto b = start();
  auto m = test::parse_ok(R"(.kernel total
.param %x : buffer<f32> read
.param %out : buffer<f32> write
.param %n : u32
.param %at : u64
  param.u32      r0, %n
  cvt.u64.u32    r1, r0
  reduce_all.add.f32 r2, %x, r1
  param.u64      r3, %at
  st.f32         [%out + r3*4], r2
)");
  const uint32_t n = 100000;
  std::vector<float> x(n, 0.25f);
  auto bx = b->allocate_buffer(n * 4), out = b->allocate_buffer(8);
  b->write<float>(bx, x);
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(out), KernelArg::u32(n),
                      KernelArg::u64(1)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(1), args);
  EXPECT_EQ(b->read<float>(out), (std::vector<float>{0.0f, 25000.0f}));
  KernelArg outside[] = {KernelArg::buffer(bx), KernelArg::buffer(out), KernelArg::u32(n),
                         KernelArg::u64(2)};
  std::string msg;
  EXPECT_EQ(
      code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1), outside); }, &msg),
      ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("out-of-bounds access to %out: offset 8, size 4, but it holds 8 bytes"),
            std::string::npos)
      << msg;
  KernelArg too_many[] = {KernelArg::buffer(bx), KernelArg::buffer(out), KernelArg::u32(n + 1),
                          KernelArg::u64(0)};
  EXPECT_EQ(
      code_of([&] { b->execute_program(m.kernels[0], LaunchConfig::linear(1), too_many); }, &msg),
      ErrorCode::OutOfBounds);
  EXPECT_NE(msg.find("needs 100001 elements, but the buffer holds 400000 bytes"), std::string::npos)
      << msg;
}

// Every Atlas instruction (SPEC §4) against the interpreter: classes of all 256 bytes, their
// mirrors, unity, neighbour counts and lists, bound.map, nbr.st/nbr.ld through the boundary
// pool, res.accum into the resonance and phase.get/phase.adv across two launches.
constexpr const char *kAtlasOps = R"(.kernel atlas_ops
.param %out : buffer<u32> write
.param %wide : buffer<u64> write
  cvt.u32.u64    r1, %gid
  cls.get        r2, r1
  mirror         r3, r2
  unity.test     p0, r2
  mov.imm.u32    r4, 0
  mov.imm.u32    r5, 1
  sel.u32        r6, p0, r5, r4
  nbr.count      r7, r2
  nbr.get        r8, r2, 0
  nbr.get        r9, r2, 1
  nbr.get        r10, r2, 2
  nbr.get        r11, r2, 3
  nbr.get        r12, r2, 4
  phase.get      r14
  mov.imm.u32    r15, 48
  rem.u32        r16, r1, r15
  bound.map      r17, r2, r16, r1
  mov.imm.u64    r18, 4
  mul.u64        r19, %gid, r18
  nbr.st.u32     r2, 1, r19, r1
  nbr.ld.u32     r20, r2, 1, r19
  mov.imm.f64    r21, 0.5
  res.accum      r2, r21
  phase.adv      5
  mov.imm.u64    r22, 12
  mul.u64        r23, %gid, r22
  st.u32         [%out + r23*4], r2
  mov.imm.u64    r24, 1
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r3
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r6
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r7
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r8
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r9
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r10
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r11
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r12
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r14
  add.u64        r23, r23, r24
  st.u32         [%out + r23*4], r20
  st.u64         [%wide + %gid*8], r17
  exit
)";

TEST_P(DeviceBackend, AtlasInstructionsMatchTheInterpreter) {
  auto m = test::parse_ok(kAtlasOps);
  const auto &k = m.kernels[0];
  auto run = [&](Backend &b, std::vector<uint32_t> &out, std::vector<uint64_t> &wide,
                 std::array<double, atlas::kNumClasses> &res, uint32_t &phase) {
    b.set_phase(700);
    std::array<double, atlas::kNumClasses> start{};
    start[3] = 1.5;
    b.set_resonance(start);
    auto bo = b.allocate_buffer(256 * 12 * 4), bw = b.allocate_buffer(256 * 8);
    KernelArg args[] = {KernelArg::buffer(bo), KernelArg::buffer(bw)};
    for (int i = 0; i < 2; ++i) b.execute_program(k, LaunchConfig::linear(256, 64), args);
    out = b.read<uint32_t>(bo);
    wide = b.read<uint64_t>(bw);
    res = b.resonance();
    phase = b.phase();
  };
  std::vector<uint32_t> out, want_out;
  std::vector<uint64_t> wide, want_wide;
  std::array<double, atlas::kNumClasses> res{}, want_res{};
  uint32_t phase = 0, want_phase = 0;
  auto device = start();
  run(*device, out, wide, res, phase);
  auto reference = create_backend(Preference::parse("cpu"));
  run(*reference, want_out, want_wide, want_res, want_phase);
  EXPECT_EQ(out, want_out);
  EXPECT_EQ(wide, want_wide);
  EXPECT_EQ(res, want_res);
  EXPECT_EQ(phase, want_phase);
  EXPECT_EQ(phase, (700 + 2 * 256 * 5) % 768);
  // phase.get reads the phase at the start of its launch: the second, after 256 lanes * 5.
  EXPECT_EQ(out[9], (700u + 256 * 5) % 768);
}

TEST_P(DeviceBackend, AtlasRangesAreLaunchErrors) {
  auto device = start();
  auto bad = test::parse_ok(R"(.kernel bad_class
.param %out : buffer<u32> write
  mov.imm.u32    r1, 200
  mirror         r2, r1
  st.u32         [%out + %gid*4], r2
  exit
)");
  auto bo = device->allocate_buffer(4);
  KernelArg args[] = {KernelArg::buffer(bo)};
  std::string msg;
  EXPECT_EQ(
      code_of([&] { device->execute_program(bad.kernels[0], LaunchConfig::linear(1, 1), args); },
              &msg),
      ErrorCode::LaunchFailed);
  EXPECT_NE(msg.find("kernel 'bad_class': lane 0 (block (0,0,0), lane (0,0,0)), line 4 '"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("': class 200 is out of range (0..95)"), std::string::npos) << msg;
}

TEST_P(DeviceBackend, PoolParametersAreByteAddressed) {
  // y = 2x + 1 over f32 values at any 4-byte offset of a pool, and bytes around them intact.
  auto b = start();
  auto m = test::parse_ok(R"(.kernel scale_chunk
.param %p : pool
.param %offset : u64
.param %n : u64
  param.u64      r1, %n
  setge.u64      p0, %gid, r1
  bra p0         @done
  param.u64      r2, %offset
  mov.imm.u64    r3, 4
  mul.u64        r4, %gid, r3
  add.u64        r5, r2, r4
  ld.f32         r6, [%pool:p + r5]
  mov.imm.f32    r7, 2.0
  mov.imm.f32    r8, 1.0
  fma.f32        r9, r6, r7, r8
  st.f32         [%pool:p + r5], r9
@done:
  exit
)");
  auto pool = b->allocate_pool(64);
  std::vector<float> in(16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  b->copy_to_pool(pool, 0, std::as_bytes(std::span(in)));
  KernelArg args[] = {KernelArg::pool(pool), KernelArg::u64(12), KernelArg::u64(5)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(5, 2), args);
  std::vector<float> out(16);
  b->copy_from_pool(pool, 0, std::as_writable_bytes(std::span(out)));
  for (size_t i = 0; i < out.size(); ++i) {
    float want = i >= 3 && i < 8 ? 2.0f * static_cast<float>(i) + 1.0f : static_cast<float>(i);
    EXPECT_EQ(out[i], want) << i;
  }
}

// 64-bit atomics on a pool and on the boundary pool (u32-word storage: a u64 view of the same
// binding on Vulkan, the word pointer reinterpreted on OpenCL): integer and f64, every lane of
// several blocks, against exact sums; a misaligned one fails naming the lane and offset.
TEST_P(DeviceBackend, SixtyFourBitAtomicsOnPoolsAndTheBoundaryPool) {
  auto b = start();
  auto m = test::parse_ok(R"(.kernel wide_atomics
.param %p : pool
  mov.imm.u64    r1, 0
  mov.imm.u64    r2, 8
  mov.imm.u64    r3, 16
  mov.imm.u64    r4, 24
  mov.u64        r5, %gid
  atom.add.u64   r6, [%pool:p + r1], r5
  atom.xor.u64   r6, [%pool:p + r2], r5
  mov.imm.i64    r7, 100
  cvt.i64.u64    r8, r5
  sub.i64        r9, r7, r8
  atom.min.i64   r10, [%pool:p + r3], r9
  cvt.f64.u64    r11, r5
  atom.add.f64   r12, [%pool:p + r4], r11
  atom.max.u64   r13, [class 3 + r2], r5
  exit
)");
  auto pool = b->allocate_pool(32);
  const uint32_t n = 512;
  KernelArg args[] = {KernelArg::pool(pool)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(n, 128), args);
  std::array<uint64_t, 4> out{};
  b->copy_from_pool(pool, 0, std::as_writable_bytes(std::span(out)));
  EXPECT_EQ(out[0], uint64_t{n} * (n - 1) / 2);
  uint64_t x = 0;
  for (uint64_t i = 0; i < n; ++i) x ^= i;
  EXPECT_EQ(out[1], x);
  EXPECT_EQ(static_cast<int64_t>(out[2]), 100 - int64_t{n - 1});
  EXPECT_EQ(std::bit_cast<double>(out[3]), double{n} * (n - 1) / 2);
  std::array<uint64_t, 2> cls{};
  b->copy_from_boundary(3 * atlas::kClassBytes, std::as_writable_bytes(std::span(cls)));
  EXPECT_EQ(cls[1], uint64_t{n - 1});

  // Shared memory: OpenCL reinterprets its words; Vulkan keeps them in u64 words.
  auto shared = test::parse_ok(R"(.kernel shared_sum
.param %out : buffer<u64> write
  mov.imm.u64    r1, 0
  cvt.u64.u32    r2, %lane.x
  setne.u64      p0, r2, r1
  bra p0         @zeroed
  sts.u64        [shared + r1], r1
@zeroed:
  bar.sync       0
  mov.u64        r3, %gid
  atom.add.u64   r4, [shared + r1], r3
  bar.sync       0
  bra p0         @done
  lds.u64        r5, [shared + r1]
  cvt.u64.u32    r6, %block.x
  mov.imm.u64    r7, 8
  mul.u64        r8, r6, r7
  st.u64         [%out + r8], r5
@done:
  exit
)");
  auto sums = b->allocate_buffer(4 * 8);
  KernelArg shared_args[] = {KernelArg::buffer(sums)};
  LaunchConfig four = LaunchConfig::linear(n, 128);
  four.shared_memory = 8;
  std::string why;
  auto code = code_of([&] { b->execute_program(shared.kernels[0], four, shared_args); }, &why);
  ASSERT_EQ(code, ErrorCode::Ok) << why;
  auto got = b->read<uint64_t>(sums);
  for (uint64_t k = 0; k < 4; ++k)
    EXPECT_EQ(got[k], 128 * 128 * k + 127 * 128 / 2) << "block " << k;

  auto skew = test::parse_ok(R"(.kernel skewed_atomic
.param %p : pool
  mov.imm.u64    r1, 4
  mov.imm.u64    r2, 1
  atom.add.u64   r3, [%pool:p + r1], r2
  exit
)");
  std::string msg;
  EXPECT_EQ(
      code_of([&] { b->execute_program(skew.kernels[0], LaunchConfig::linear(1, 1), args); }, &msg),
      ErrorCode::LaunchFailed);
  EXPECT_NE(msg.find("kernel 'skewed_atomic': lane 0 (block (0,0,0), lane (0,0,0)), line 5 '"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("': access of 8 bytes at offset 4 of parameter %p is not aligned to its size"),
            std::string::npos)
      << msg;
}

// Launch scratch (pool.alloc): each lane's zero-filled regions, one per allocation site,
// written and read through pool.st/pool.ld; an access past an allocation fails with
// -fbounds-check (compiled into a bundle here, as hologram-run does).
constexpr const char *kScratch = R"(.kernel scratch_sum
.param %out : buffer<u32> write
  pool.alloc     r1, 64
  mov.imm.u32    r2, 0
  mov.imm.u64    r3, 0
  mov.imm.u64    r4, 4
  mov.imm.u32    r5, 16
@fill:
  cvt.u32.u64    r6, r3
  add.u32        r7, r6, r2
  pool.st.u32    [r1 + r3], r7
  add.u64        r3, r3, r4
  mov.imm.u32    r8, 1
  sub.u32        r5, r5, r8
  mov.imm.u32    r9, 0
  setgt.u32      p0, r5, r9
  bra p0         @fill
  mov.imm.u64    r10, 60
  pool.ld.u32    r11, [r1 + r10]
  cvt.u32.u64    r12, %gid
  add.u32        r13, r11, r12
  pool.free      r1
  pool.alloc     r14, 12
  mov.imm.u64    r15, 8
  pool.ld.u32    r16, [r14 + r15]
  add.u32        r13, r13, r16
  pool.free      r14
  st.u32         [%out + %gid*4], r13
  exit
)";

TEST_P(DeviceBackend, LaunchScratchIsPerLaneAndZeroFilled) {
  auto b = start();
  auto m = test::parse_ok(kScratch);
  auto out = b->allocate_buffer(8 * 4);
  KernelArg args[] = {KernelArg::buffer(out)};
  b->execute_program(m.kernels[0], LaunchConfig::linear(8, 4), args);
  EXPECT_EQ(b->read<uint32_t>(out), (std::vector<uint32_t>{60, 61, 62, 63, 64, 65, 66, 67}));
}

// Issue 19: 8 threads allocating, copying, launching (through views and sub-buffers too) and
// freeing at once on one device; every result right, every handle's misuse an Error.
TEST_P(DeviceBackend, EightThreadsAllocateCopyLaunchAndFreeAtOnce) {
  auto b = start();
  auto m = test::parse_ok(test::kSaxpy);
  const uint64_t align = std::lcm<uint64_t>(b->device_info().view_alignment, 4);
  std::atomic<int> failures{0}, launches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < 12; ++it) {
        const uint64_t n = 64 + static_cast<uint64_t>((t * 13 + it) % 100);
        std::vector<float> x(n), y(n, static_cast<float>(it));
        for (uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>(t * 1000 + i);
        try {
          // y lives in the second part of a larger buffer, reached by a sub-buffer (odd
          // iterations) or a view (even ones).
          auto bx = b->allocate_buffer(n * 4), whole = b->allocate_buffer(align + n * 4);
          b->write<float>(bx, x);
          b->write<float>(whole, y, align);
          BufferHandle sub{};
          KernelArg ya = KernelArg::buffer(whole, align, n * 4);
          if (it % 2) {
            sub = b->create_sub_buffer(whole, align, n * 4);
            ya = KernelArg::buffer(sub);
          }
          KernelArg args[] = {KernelArg::buffer(bx), ya, KernelArg::f32(2.0f), KernelArg::u64(n)};
          b->execute_program(m.kernels[0], LaunchConfig::linear(n, 32), args);
          ++launches;
          std::vector<float> out(n);
          b->copy_from_buffer(whole, align, std::as_writable_bytes(std::span(out)));
          for (uint64_t i = 0; i < n; ++i)
            if (out[i] != 2.0f * x[i] + y[i]) ++failures;
          if (sub.id) b->free_buffer(sub);
          b->free_buffer(bx);
          b->free_buffer(whole);
        } catch (const Error &e) {
          ADD_FAILURE() << e.what();
          ++failures;
        }
      }
    });
  // A launch races the freeing of its buffer: it completes or reports InvalidHandle.
  std::vector<BufferHandle> victims;
  for (int i = 0; i < 20; ++i) victims.push_back(b->allocate_buffer(256 * 4));
  threads.emplace_back([&] {
    for (const auto &v : victims) {
      KernelArg args[] = {KernelArg::buffer(v), KernelArg::buffer(v), KernelArg::f32(1.0f),
                          KernelArg::u64(256)};
      try {
        b->execute_program(m.kernels[0], LaunchConfig::linear(256, 64), args);
      } catch (const Error &e) {
        if (e.code() != ErrorCode::InvalidHandle) ++failures;
      }
    }
  });
  threads.emplace_back([&] {
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) b->free_buffer(*it);
  });
  for (auto &th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(launches.load(), 96);
}

/// Runs a kernel of test::random_if_then_kernel or random_loop_kernel over x.size() lanes in
/// blocks of 20, each lane with its x and eight elements of y (7 each); returns y.
static std::vector<int32_t> run_random_kernel(Backend &on, const isa::Kernel &k,
                                              const std::vector<int32_t> &x) {
  const auto lanes = static_cast<uint32_t>(x.size());
  LaunchConfig config;
  config.grid = {lanes / 20, 1, 1};
  config.block = {20, 1, 1};
  auto bx = on.allocate_buffer(lanes * 4), by = on.allocate_buffer(lanes * 32);
  on.write<int32_t>(bx, x);
  on.write<int32_t>(by, std::vector<int32_t>(lanes * 8, 7));
  KernelArg args[] = {KernelArg::buffer(bx), KernelArg::buffer(by)};
  on.execute_program(k, config, args);
  auto y = on.read<int32_t>(by);
  on.free_buffer(bx);
  on.free_buffer(by);
  return y;
}

/// `trials` kernels of `generate` (test::random_if_then_kernel or random_loop_kernel) over 60
/// lanes, each on `b` and on the interpreter, with the same random x.
static void expect_random_kernels_match(Backend &b, uint32_t seed, int trials,
                                        std::string (*generate)(std::mt19937 &, uint32_t)) {
  auto interp = create_backend(Preference::parse("interp"));
  std::mt19937 rng(test::random_seed(seed));
  const uint32_t lanes = 60;
  std::vector<int32_t> x(lanes);
  for (auto &v : x) v = static_cast<int32_t>(rng() % 200) - 100;
  for (int trial = 0; trial < test::random_trials(trials); ++trial) {
    const std::string text = generate(rng, lanes);
    auto m = test::parse_ok(text);
    EXPECT_EQ(run_random_kernel(b, m.kernels[0], x), run_random_kernel(*interp, m.kernels[0], x))
        << text;
  }
}

TEST_P(DeviceBackend, RandomIfThenRegionsMatchTheInterpreter) {
  // Branches over short regions: folded into the block in front (pure regions, Vulkan) or
  // kept as branches (regions with loads, stores or a second branch), in blocks of 20 lanes,
  // against the interpreter.
  expect_random_kernels_match(*start(), 20261127, 20, test::random_if_then_kernel);
}

TEST_P(DeviceBackend, RandomLoopsMatchTheInterpreter) {
  // Nested loops whose bodies continue, break one or two levels, or end the lane part way
  // (the Vulkan structuriser branches to a loop's merge or continue block directly and leaves
  // the only block control can reach unguarded), in blocks of 20 lanes, against the
  // interpreter.
  expect_random_kernels_match(*start(), 20261128, 30, test::random_loop_kernel);
}

TEST_P(DeviceBackend, RandomArithmeticOfEveryTypeMatchesTheInterpreter) {
  // Straight-line arithmetic, conversions, compares and selects over every numeric type with
  // edge values (SPEC §3.4's exact rules), in blocks of 15 lanes, bit for bit against the
  // interpreter (NaNs as NaNs). Found on Vulkan: float `rem` several ulp off and NaN for an
  // infinite divisor (OpFRem), and f64 trunc/floor/ceil/round losing -0 and keeping a half
  // above 2^28 (lavapipe's), and f64 fma rounding twice (GLSL.std.450's Fma). Values come
  // from memory, not literals (random_typed_kernel says why).
  auto b = start();
  auto interp = create_backend(Preference::parse("interp"));
  std::mt19937 rng(test::random_seed(20261130));
  LaunchConfig config;
  config.grid = {3, 1, 1};
  config.block = {15, 1, 1};
  for (int trial = 0; trial < test::random_trials(12); ++trial) {
    const std::string text = test::random_typed_kernel(rng, 20 + 5 * (trial % 12), false);
    auto m = test::parse_ok(text);
    const auto inputs = test::random_kernel_inputs(rng, 45);
    auto on = [&](Backend &backend) {
      return test::run_random_typed_kernel(
          backend, inputs, [&](auto args) { backend.execute_program(m.kernels[0], config, args); });
    };
    const std::string diff = test::random_kernel_mismatch(on(*b), on(*interp));
    EXPECT_EQ(diff, "") << text;
  }
}

TEST_P(DeviceBackend, FmaOfF64RoundsOnce) {
  // fma.f64 and fms.f64 round once (SPEC §3.4): Vulkan's in integer arithmetic, since
  // GLSL.std.450's Fma need not fuse (lavapipe's rounds twice), OpenCL's is OpenCL.std's. Every
  // triple of edge values, random bits, products that c cancels down to their rounding error,
  // sums within a few ulp of a midpoint, subnormal, underflowing and overflowing results, bit
  // for bit against C's fma (any NaN for a NaN).
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double max = std::numeric_limits<double>::max();
  const std::vector<double> edges{
      0.0,        -0.0,      1.0,       -1.0,      1.0 + 0x1p-52, 0x1p-1074,
      -0x1p-1074, 0x1p-1022, 0x1p-1023, max,       -max,          inf,
      -inf,       nan,       3.0,       -0x1p-537, 0x1p511 * 1.5, 0x1.fffffffffffffp-1};
  std::vector<double> a, b, c;
  auto add = [&](double x, double y, double z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  };
  for (double x : edges)
    for (double y : edges)
      for (double z : edges) add(x, y, z);
  std::mt19937_64 rng(20261205);
  auto bits = [&] { return std::bit_cast<double>(rng()); };
  // A value with a random significand and an exponent in [lo, hi].
  auto near = [&](int lo, int hi) {
    const double m = 1.0 + static_cast<double>(rng() >> 12) * 0x1p-52;
    const int e = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
    return std::ldexp(rng() & 1 ? -m : m, e);
  };
  for (int i = 0; i < 3000; ++i) add(bits(), bits(), bits());
  for (int i = 0; i < 3000; ++i) {
    const double x = near(-40, 40), y = near(-40, 40), p = x * y;
    const double e = std::fma(x, y, -p); // the product's rounding error
    switch (i % 6) {
    case 0: add(x, y, -p); break;
    case 1: add(x, y, std::nextafter(-p, inf)); break;
    case 2: add(x, y, near(-100, 100)); break;
    // c within a few ulp of half an ulp of p: the sum near a midpoint.
    case 3: add(x, y, std::ldexp(0.5, std::ilogb(p) - 52) * static_cast<double>(rng() % 5)); break;
    case 4: add(x, y, -e * static_cast<double>(rng() % 3)); break;
    case 5:
      add(x, y, std::ldexp(near(0, 0), std::ilogb(p) - 53 - static_cast<int>(rng() % 60)));
      break;
    }
  }
  for (int i = 0; i < 1500; ++i) { // subnormal and underflowing results
    const double x = near(-560, -480), y = near(-560, -480);
    add(x, y, i % 3 == 0 ? 0.0 : i % 3 == 1 ? -x * y : near(-1074, -1020));
  }
  for (int i = 0; i < 1000; ++i) { // overflowing and nearly overflowing ones
    const double x = near(500, 520), y = near(500, 520);
    add(x, y, i % 2 ? -max : near(1000, 1023));
  }
  while (a.size() % 64) add(1.0, 1.0, 1.0);
  const auto n = static_cast<uint32_t>(a.size());

  auto backend = start();
  auto m = test::parse_ok(R"(.kernel fma64
.param %a : buffer<f64> read
.param %b : buffer<f64> read
.param %c : buffer<f64> read
.param %fused : buffer<f64> write
.param %negated : buffer<f64> write
  ld.f64         r0, [%a + %gid*8]
  ld.f64         r1, [%b + %gid*8]
  ld.f64         r2, [%c + %gid*8]
  fma.f64        r3, r0, r1, r2
  fms.f64        r4, r0, r1, r2
  st.f64         [%fused + %gid*8], r3
  st.f64         [%negated + %gid*8], r4
)");
  std::array<BufferHandle, 5> buf;
  for (auto &h : buf) h = backend->allocate_buffer(uint64_t{n} * 8);
  backend->write<double>(buf[0], a);
  backend->write<double>(buf[1], b);
  backend->write<double>(buf[2], c);
  std::vector<KernelArg> args;
  for (auto h : buf) args.push_back(KernelArg::buffer(h));
  backend->execute_program(m.kernels[0], LaunchConfig::linear(n, 64), args);
  const auto fused = backend->read<double>(buf[3]), negated = backend->read<double>(buf[4]);
  int wrong = 0;
  for (uint32_t i = 0; i < n && wrong < 10; ++i) {
    const double want = std::fma(a[i], b[i], c[i]), want_neg = std::fma(a[i], b[i], -c[i]);
    if (!test::same_bits_or_nans(fused[i], want) ||
        !test::same_bits_or_nans(negated[i], want_neg)) {
      ++wrong;
      ADD_FAILURE() << std::hexfloat << "fma(" << a[i] << ", " << b[i] << ", " << c[i]
                    << "): " << fused[i] << " (want " << want << "), fms: " << negated[i]
                    << " (want " << want_neg << ")";
    }
  }
  for (auto h : buf) backend->free_buffer(h);
}

/// HOLOGRAM_VULKAN_FMA set to `mode` (unset for null) while it lives: what the Vulkan
/// backend's first launch of an exact fma reads.
class VulkanFmaMode {
public:
  explicit VulkanFmaMode(const char *mode) {
    if (mode)
      setenv("HOLOGRAM_VULKAN_FMA", mode, 1);
    else
      unsetenv("HOLOGRAM_VULKAN_FMA");
  }
  ~VulkanFmaMode() { unsetenv("HOLOGRAM_VULKAN_FMA"); }
  VulkanFmaMode(const VulkanFmaMode &) = delete;
  VulkanFmaMode &operator=(const VulkanFmaMode &) = delete;
};

TEST(VulkanFma, TheDevicesFmaOnlyWhereItRoundsOnce) {
  // An exact fma calls the device's GLSL.std.450 Fma where the Vulkan backend's probe found
  // it to round once (specialisation constants 6 and 7, docs/spirv.md) and emulates it
  // elsewhere. HOLOGRAM_VULKAN_FMA=exact forces the emulation and =device the device's Fma;
  // the default must match C's fma bit for bit whatever the device does. lavapipe's Fma
  // rounds twice, in f32 and f64 (Mesa 22.3, CI's).
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);
  const float x = 1.0f + 0x1p-12f, fmax = std::numeric_limits<float>::max();
  const float up = (1.0f + 0x1p-23f) * 0x1p-12f, down = (1.0f - 0x1p-23f) * 0x1p-12f;
  std::vector<float> a{x, fmax, 1.5f, (1.0f + 0x1p-23f) * 0x1p-75f, up},
      b{x, 2.0f, 2.0f, (1.0f - 0x1p-23f) * 0x1p-75f, down},
      c{-(1.0f + 0x1p-11f), -fmax, 0.25f, 0x1.000004p-127f, -(1.0f + 0x1p-23f)};
  const double e = 1.0 + 0x1p-52, dmax = std::numeric_limits<double>::max();
  std::vector<double> a64{e, dmax, 1.5, e, e}, b64{e, 2.0, 2.0, 1.5, 1.5},
      c64{-(1.0 + 0x1p-51), -dmax, 0.25, -0x1p-200, 0x1p-200};
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (int i = 0; i < 60; ++i) {
    a.push_back(u(rng)), b.push_back(u(rng)), c.push_back(u(rng));
    a64.push_back(u(rng) / 3.0), b64.push_back(u(rng) / 7.0), c64.push_back(u(rng) / 11.0);
  }
  auto m = test::parse_ok(R"(.kernel f
.param %a : buffer<f32> read
.param %b : buffer<f32> read
.param %c : buffer<f32> read
.param %y : buffer<f32> write
.param %a64 : buffer<f64> read
.param %b64 : buffer<f64> read
.param %c64 : buffer<f64> read
.param %y64 : buffer<f64> write
  ld.f32         r0, [%a + %gid*4]
  ld.f32         r1, [%b + %gid*4]
  ld.f32         r2, [%c + %gid*4]
  fma.f32        r3, r0, r1, r2
  st.f32         [%y + %gid*4], r3
  ld.f64         r4, [%a64 + %gid*8]
  ld.f64         r5, [%b64 + %gid*8]
  ld.f64         r6, [%c64 + %gid*8]
  fma.f64        r7, r4, r5, r6
  st.f64         [%y64 + %gid*8], r7
)");
  const auto n = static_cast<uint32_t>(a.size());
  ASSERT_EQ(a64.size(), a.size());
  struct Results {
    std::vector<float> f32;
    std::vector<double> f64;
    std::string device;
  };
  // The kernel's eight buffers on `backend`, its inputs written; their handles and arguments.
  auto bind = [&](Backend &backend) {
    std::vector<BufferHandle> buf;
    for (int i = 0; i < 8; ++i)
      buf.push_back(backend.allocate_buffer(uint64_t{n} * (i < 4 ? 4 : 8)));
    backend.write<float>(buf[0], a);
    backend.write<float>(buf[1], b);
    backend.write<float>(buf[2], c);
    backend.write<double>(buf[4], a64);
    backend.write<double>(buf[5], b64);
    backend.write<double>(buf[6], c64);
    std::vector<KernelArg> args;
    for (auto h : buf) args.push_back(KernelArg::buffer(h));
    return std::pair(buf, args);
  };
  auto run = [&](const char *mode) {
    const VulkanFmaMode set(mode);
    auto backend = create_backend(Preference::parse("vulkan"));
    const auto [buf, args] = bind(*backend);
    backend->execute_program(m.kernels[0], LaunchConfig::linear(n, n), args);
    return Results{backend->read<float>(buf[3]), backend->read<double>(buf[7]),
                   backend->device_info().name};
  };
  const Results exact = run("exact"), probed = run(nullptr), device = run("device");
  bool twice = false;
  for (uint32_t i = 0; i < n; ++i) {
    const float want = std::fma(a[i], b[i], c[i]);
    volatile float p = a[i] * b[i];
    const float rounded_twice = p + c[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(exact.f32[i]), std::bit_cast<uint32_t>(want)) << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(probed.f32[i]), std::bit_cast<uint32_t>(want)) << i;
    // The device's Fma: fused or a product and a sum rounded apart.
    EXPECT_TRUE(device.f32[i] == want || device.f32[i] == rounded_twice) << i;
    twice = twice || device.f32[i] != want;
    const double want64 = std::fma(a64[i], b64[i], c64[i]);
    volatile double p64 = a64[i] * b64[i];
    const double rounded_twice64 = p64 + c64[i];
    EXPECT_EQ(std::bit_cast<uint64_t>(exact.f64[i]), std::bit_cast<uint64_t>(want64)) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(probed.f64[i]), std::bit_cast<uint64_t>(want64)) << i;
    EXPECT_TRUE(device.f64[i] == want64 || device.f64[i] == rounded_twice64) << i;
  }
  if (device.device.find("llvmpipe") != std::string::npos) {
    EXPECT_TRUE(twice) << "HOLOGRAM_VULKAN_FMA=device did not reach lavapipe's Fma";
  }
  { // A backend's first such launch from a queue probes on the queue's thread.
    auto backend = create_backend(Preference::parse("vulkan"));
    const auto [buf, args] = bind(*backend);
    Queue q(*backend);
    q.execute_program(m.kernels[0], LaunchConfig::linear(n, n), args);
    q.finish();
    const auto y = backend->read<float>(buf[3]);
    for (uint32_t i = 0; i < n; ++i)
      EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(std::fma(a[i], b[i], c[i])))
          << i;
  }
  // Anything else is refused, at the launch that would probe.
  std::string msg;
  {
    const VulkanFmaMode set("fast");
    auto backend = create_backend(Preference::parse("vulkan"));
    EXPECT_EQ(code_of(
                  [&] {
                    backend->execute_program(m.kernels[0], LaunchConfig::linear(n, n),
                                             bind(*backend).second);
                  },
                  &msg),
              ErrorCode::InvalidArgument);
  }
  EXPECT_NE(msg.find("HOLOGRAM_VULKAN_FMA=fast: expected probe, exact or device"),
            std::string::npos)
      << msg;
}

TEST(VulkanFma, F64MathTakesTheProductsErrorFromTheDevicesFmaOnlyWhereItRoundsOnce) {
  // The double-double products of the f64 functions (math64.h) take a*b - p from the device's
  // Fma under specialisation constant 7 (the probe's f64 answer) and from Dekker's split
  // elsewhere: the default and =exact agree bit for bit, within SPEC §3.4's 1 ulp. lavapipe's
  // Fma rounds twice, so there =device, which takes it without asking, loses the products'
  // errors and gets some results wrong: that shows the constant reaches the f64 functions.
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<double> angle(-30.0, 30.0), exponent(-10.0, 10.0);
  const uint32_t n = 256;
  std::vector<double> x(n), z(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = angle(rng), z[i] = std::exp2(exponent(rng));
  auto m = test::parse_ok(R"(.kernel f
.param %x : buffer<f64> read
.param %z : buffer<f64> read
.param %sin : buffer<f64> write
.param %log : buffer<f64> write
  ld.f64         r0, [%x + %gid*8]
  sin.f64        r1, r0
  st.f64         [%sin + %gid*8], r1
  ld.f64         r2, [%z + %gid*8]
  log.f64        r3, r2
  st.f64         [%log + %gid*8], r3
)");
  struct Results {
    std::vector<double> sin, log;
    std::string device;
  };
  auto run = [&](const char *mode) {
    const VulkanFmaMode set(mode);
    auto backend = create_backend(Preference::parse("vulkan"));
    std::vector<BufferHandle> buf;
    for (int i = 0; i < 4; ++i) buf.push_back(backend->allocate_buffer(uint64_t{n} * 8));
    backend->write<double>(buf[0], x);
    backend->write<double>(buf[1], z);
    std::vector<KernelArg> args;
    for (auto h : buf) args.push_back(KernelArg::buffer(h));
    backend->execute_program(m.kernels[0], LaunchConfig::linear(n, 64), args);
    return Results{backend->read<double>(buf[2]), backend->read<double>(buf[3]),
                   backend->device_info().name};
  };
  const Results exact = run("exact"), probed = run(nullptr), device = run("device");
  // Within 1 ulp of the value in long double (64 bits of significand on x86).
  auto near = [](double got, long double want) {
    const double w = static_cast<double>(want);
    return got == w || got == std::nextafter(w, static_cast<double>(want + (want - w)));
  };
  bool differs = false;
  for (uint32_t i = 0; i < n; ++i) {
    const long double want_sin = std::sin(static_cast<long double>(x[i]));
    const long double want_log = std::log(static_cast<long double>(z[i]));
    EXPECT_TRUE(near(exact.sin[i], want_sin)) << std::hexfloat << "sin " << x[i];
    EXPECT_TRUE(near(exact.log[i], want_log)) << std::hexfloat << "log " << z[i];
    EXPECT_EQ(std::bit_cast<uint64_t>(probed.sin[i]), std::bit_cast<uint64_t>(exact.sin[i])) << i;
    EXPECT_EQ(std::bit_cast<uint64_t>(probed.log[i]), std::bit_cast<uint64_t>(exact.log[i])) << i;
    differs = differs || device.sin[i] != exact.sin[i] || device.log[i] != exact.log[i];
  }
  if (device.device.find("llvmpipe") != std::string::npos) {
    EXPECT_TRUE(differs) << "HOLOGRAM_VULKAN_FMA=device did not reach the f64 functions";
  }
}

INSTANTIATE_TEST_SUITE_P(SpirvBackends, DeviceBackend, ::testing::Values("vulkan", "opencl"),
                         [](const auto &p) { return p.param; });
