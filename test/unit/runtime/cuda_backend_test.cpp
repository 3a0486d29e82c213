// The CUDA backend without a GPU. hologram-cuda-tests runs once per driver ctest gives it
// (test/CMakeLists.txt): this machine's own libcuda.so.1 or none (CudaDriver.*), the fake driver
// of fake_libcuda.cpp in each of its modes (CudaFake*), and the CUDA toolkit's stub library
// where the toolkit is installed (CudaToolkitStub.*). On the real driver the backend runs the
// conformance corpus (docs/gpu.md).
#include "fake_libcuda.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/frontend/json.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/file_io.h"
#include "hologram/support/process.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <bit>
#include <cstring>

using namespace hologram;

namespace {

const char *kSaxpy = R"(.kernel saxpy
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

const char *kSum = R"(.kernel total
.param %x : buffer<f32> read
.param %out : buffer<f32> write
.param %n : u32
  param.u32      r0, %n
  cvt.u64.u32    r1, r0
  reduce_all.add.f32 r2, %x, r1
  mov.imm.u64    r3, 0
  st.f32         [%out + r3*4], r2
)";

/// The message of what `f` throws (it must throw hologram::Error with `code`).
template <typename F> std::string error_of(F &&f, ErrorCode code) {
  try {
    f();
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

/// A bundle of kSaxpy for `targets`, written to a scratch directory that lives with the test.
class Bundles {
public:
  Bundles() : dir_(*ScratchDir::create("hologram-cuda-test")) {}
  std::string make(const std::vector<std::string> &targets, bool bounds_check = false,
                   const char *text = kSaxpy) {
    DiagnosticEngine diags;
    auto m = isa::parse_module(text, "saxpy.hasm", diags);
    EXPECT_TRUE(m) << diags.to_string();
    driver::CpuOutputOptions o;
    o.targets = targets;
    o.bounds_check = bounds_check;
    o.module_name = "saxpy";
    o.source_name = "saxpy.hasm";
    o.sources = {"saxpy.hasm"};
    auto bytes = driver::emit_cpu_output(*m, o, "bundle");
    EXPECT_TRUE(bytes) << bytes.status().describe();
    std::string path = dir_.path() + "/b" + std::to_string(n_++) + ".hgb";
    EXPECT_TRUE(write_file_atomic(path, *bytes));
    return path;
  }

private:
  ScratchDir dir_;
  int n_ = 0;
};

const FakeCudaLaunch &last_launch() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr);
  auto get = reinterpret_cast<const FakeCudaLaunch *(*)()>(dlsym(lib, "fake_cuda_last_launch"));
  EXPECT_NE(get, nullptr) << "not the fake driver";
  return *get();
}

BackendReport cuda_report() {
  for (const auto &r : discover())
    if (r.backend == "cuda") return r;
  ADD_FAILURE() << "discover() has no cuda row";
  return {};
}

/// What starting the cuda backend says when it cannot start.
std::string refusal() {
  return error_of([] { create_backend(Preference::parse("cuda")); }, ErrorCode::BackendUnavailable);
}

} // namespace

// This machine's driver, or none: never a crash, always the reason.
TEST(CudaDriver, StartsOrSaysWhyNot) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  BackendReport r = cuda_report();
  if (!lib) {
    EXPECT_FALSE(r.usable);
    EXPECT_NE(r.reason.find("no libcuda.so.1"), std::string::npos) << r.reason;
    EXPECT_NE(refusal().find("cuda: no libcuda.so.1"), std::string::npos);
    return;
  }
  dlclose(lib);
  try {
    auto b = create_backend(Preference::parse("cuda"));
    EXPECT_EQ(b->device_info().backend, "cuda");
    EXPECT_TRUE(r.usable);
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    EXPECT_FALSE(r.usable);
    EXPECT_FALSE(r.reason.empty());
  }
}

TEST(CudaFakeStub, RefusesTheStubLibrary) {
  std::string why = refusal();
  EXPECT_NE(why.find("cuInit failed"), std::string::npos) << why;
  EXPECT_NE(why.find("the CUDA toolkit's stub, not an NVIDIA driver"), std::string::npos) << why;
  EXPECT_FALSE(cuda_report().usable);
}

TEST(CudaToolkitStub, RefusesTheStubLibrary) {
  std::string why = refusal();
  EXPECT_NE(why.find("cuInit failed"), std::string::npos) << why;
  EXPECT_NE(why.find("stub, not an NVIDIA driver"), std::string::npos) << why;
}

TEST(CudaFakeNoDevice, RefusesWithTheDriversReason) {
  std::string why = refusal();
  EXPECT_NE(why.find("cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"),
            std::string::npos)
      << why;
}

TEST(CudaFakeZero, RefusesADriverWithoutDevices) {
  std::string why = refusal();
  EXPECT_NE(why.find("the CUDA driver (driver 12.4) finds no device"), std::string::npos) << why;
  EXPECT_EQ(cuda_report().reason, "the CUDA driver (driver 12.4) finds no device");
}

TEST(CudaFakeOld, RefusesDevicesOlderThanSm70) {
  std::string why = refusal();
  EXPECT_NE(why.find("Fake Old GPU is sm_60; hologram's PTX needs sm_70 or newer"),
            std::string::npos)
      << why;
  BackendReport r = cuda_report();
  EXPECT_EQ(r.device, "Fake Old GPU");
  EXPECT_FALSE(r.usable);
}

TEST(CudaFakeJit, TheJitErrorLogIsInTheMessage) {
  auto b = create_backend(Preference::parse("cuda"));
  Bundles bundles;
  std::string path = bundles.make({"cuda-sm_80"});
  std::string why = error_of([&] { b->load_module(path); }, ErrorCode::InvalidModule);
  EXPECT_NE(why.find("the driver cannot JIT-compile bundle '" + path +
                     "', payload 'cuda-sm_80' for Fake GPU (sm_80): CUDA_ERROR_INVALID_PTX"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("fatal   : the fake driver refuses it"), std::string::npos) << why;
}

TEST(CudaFakeGpu, DescribesItsDevice) {
  auto b = create_backend(Preference::parse("cuda"));
  DeviceInfo d = b->device_info();
  EXPECT_EQ(d.backend, "cuda");
  EXPECT_EQ(d.name, "Fake GPU");
  EXPECT_EQ(d.kind, DeviceKind::Gpu);
  EXPECT_EQ(d.compute_units, 4u);
  EXPECT_EQ(d.memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(d.view_alignment, 16u);
  EXPECT_NE(d.details.find("sm_80, 4 SMs, driver 12.4"), std::string::npos) << d.details;
  BackendReport r = cuda_report();
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(r.device, "Fake GPU");
}

TEST(CudaFakeGpu, BuffersPoolsAndViews) {
  auto b = create_backend(Preference::parse("cuda"));
  BufferHandle buf = b->allocate_buffer(64);
  EXPECT_EQ(b->read<uint32_t>(buf), std::vector<uint32_t>(16, 0u));
  std::vector<uint32_t> v(16);
  for (uint32_t i = 0; i < 16; ++i) v[i] = i * 3;
  b->write<uint32_t>(buf, v);
  EXPECT_EQ(b->read<uint32_t>(buf), v);
  BufferHandle view = b->create_sub_buffer(buf, 16, 32);
  EXPECT_EQ(b->read<uint32_t>(view), std::vector<uint32_t>(v.begin() + 4, v.begin() + 12));
  EXPECT_NE(
      error_of([&] { b->create_sub_buffer(buf, 4, 16); }, ErrorCode::InvalidArgument).find("16"),
      std::string::npos);
  std::vector<std::byte> out(8);
  error_of([&] { b->copy_from_buffer(buf, 60, out); }, ErrorCode::OutOfBounds);
  b->free_buffer(buf);
  // The view keeps the memory alive.
  EXPECT_EQ(b->read<uint32_t>(view)[0], 12u);
  error_of([&] { b->buffer_size(buf); }, ErrorCode::InvalidHandle);

  PoolHandle pool = b->allocate_pool(32);
  std::vector<std::byte> bytes(4, std::byte{7});
  b->copy_to_pool(pool, 28, bytes);
  std::vector<std::byte> back(32);
  b->copy_from_pool(pool, 0, back);
  EXPECT_EQ(back[27], std::byte{0});
  EXPECT_EQ(back[31], std::byte{7});
  error_of([&] { b->copy_to_pool(pool, 30, bytes); }, ErrorCode::OutOfBounds);
  error_of([] { create_backend(Preference::parse("cuda"))->allocate_buffer(0); },
           ErrorCode::InvalidArgument);
  error_of([&] { b->allocate_buffer(uint64_t{1} << 40); }, ErrorCode::OutOfMemory);
}

TEST(CudaFakeGpu, HostMemoryInPlaceWhenAligned) {
  auto b = create_backend(Preference::parse("cuda"));
  alignas(64) std::array<std::byte, 128> memory{};
  HostBuffer in_place = b->wrap_host_memory(memory);
  EXPECT_TRUE(in_place.shared);
  std::vector<std::byte> one(1, std::byte{9});
  b->copy_to_buffer(in_place.buffer, 3, one);
  EXPECT_EQ(memory[3], std::byte{9});
  // Not 16-byte aligned: the PTX assumes aligned buffer bases, so the buffer is a copy.
  HostBuffer copy = b->wrap_host_memory(std::span(memory).subspan(4, 64));
  EXPECT_FALSE(copy.shared);
  b->copy_to_buffer(copy.buffer, 0, one);
  EXPECT_EQ(memory[4], std::byte{0});
  EXPECT_EQ(b->buffer_size(copy.buffer), 64u);
  b->free_buffer(in_place.buffer);
  b->free_buffer(copy.buffer);
}

TEST(CudaFakeGpu, ChoosesTheNewestPayloadTheDeviceRuns) {
  auto b = create_backend(Preference::parse("cuda"));
  Bundles bundles;
  std::string too_new = bundles.make({"cuda-sm_86", "cuda-sm_90"});
  std::string why = error_of([&] { b->load_module(too_new); }, ErrorCode::InvalidModule);
  EXPECT_NE(why.find("holds no code the cuda backend runs; cuda-sm_86: PTX needs sm_86, device "
                     "Fake GPU is sm_80; cuda-sm_90: PTX needs sm_90, device Fake GPU is sm_80"),
            std::string::npos)
      << why;
  std::string none = bundles.make({"x86-64-v2"});
  why = error_of([&] { b->load_module(none); }, ErrorCode::InvalidModule);
  EXPECT_NE(why.find("holds no code the cuda backend runs (its targets: x86-64-v2); add a target "
                     "for it to --target (such as cuda-sm_80)"),
            std::string::npos)
      << why;
  ModuleHandle m = b->load_module(bundles.make({"cuda-sm_70", "cuda-sm_80", "cuda-sm_90"}));
  EXPECT_EQ(b->module_info(m).variant, "cuda-sm_80");
  EXPECT_EQ(b->module_info(m).kernels, std::vector<std::string>{"saxpy"});
  error_of([&] { b->load_linked_module(nullptr); }, ErrorCode::InvalidArgument);
}

TEST(CudaFakeGpu, LaunchParametersFollowThePtxAbi) {
  auto b = create_backend(Preference::parse("cuda"));
  Bundles bundles;
  ModuleHandle m = b->load_module(bundles.make({"cuda-sm_80"}));
  BufferHandle x = b->allocate_buffer(256), y = b->allocate_buffer(512);
  BufferHandle y_view = b->create_sub_buffer(y, 64, 128);
  std::vector<KernelArg> args = {KernelArg::buffer(x), KernelArg::buffer(y), KernelArg::f32(2.5f),
                                 KernelArg::u32(64)};
  b->launch(m, "saxpy", LaunchConfig{{2, 1, 1}, {32, 1, 1}, 0}, args);
  const FakeCudaLaunch &l = last_launch();
  EXPECT_EQ(l.function, "saxpy");
  EXPECT_EQ(l.grid[0], 2u);
  EXPECT_EQ(l.block[0], 32u);
  EXPECT_EQ(l.block[1], 1u);
  ASSERT_EQ(l.params.size(), 6u);
  EXPECT_NE(l.params[0], 0u);
  EXPECT_EQ(l.params[1], 256u);
  EXPECT_EQ(l.params[3], 512u);
  EXPECT_EQ(static_cast<uint32_t>(l.params[4]), std::bit_cast<uint32_t>(2.5f));
  EXPECT_EQ(static_cast<uint32_t>(l.params[5]), 64u);
  const uint64_t y_base = l.params[2];
  // A view: its first byte and its size.
  args[1] = KernelArg::buffer(y_view);
  b->launch(m, "saxpy", LaunchConfig{{1, 1, 1}, {64, 1, 1}, 0}, args);
  EXPECT_EQ(last_launch().params[2], y_base + 64);
  EXPECT_EQ(last_launch().params[3], 128u);
  args[1] = KernelArg::buffer(y, 16, 32);
  b->launch(m, "saxpy", LaunchConfig{{1, 1, 1}, {64, 1, 1}, 0}, args);
  EXPECT_EQ(last_launch().params[2], y_base + 16);
  EXPECT_EQ(last_launch().params[3], 32u);

  // -fbounds-check adds the status buffer (zeroed: the fake launch fails nothing).
  ModuleHandle checked = b->load_module(bundles.make({"cuda-sm_80"}, /*bounds_check=*/true));
  args[1] = KernelArg::buffer(y);
  b->launch(checked, "saxpy", LaunchConfig{{1, 1, 1}, {64, 1, 1}, 0}, args);
  ASSERT_EQ(last_launch().params.size(), 7u);
  EXPECT_NE(last_launch().params[6], 0u);
}

TEST(CudaFakeGpu, MisuseIsAPreciseError) {
  auto b = create_backend(Preference::parse("cuda"));
  Bundles bundles;
  ModuleHandle m = b->load_module(bundles.make({"cuda-sm_80"}));
  BufferHandle x = b->allocate_buffer(256);
  std::vector<KernelArg> args = {KernelArg::buffer(x), KernelArg::buffer(x), KernelArg::f32(1),
                                 KernelArg::u32(64)};
  auto launch = [&](LaunchConfig l, std::span<const KernelArg> a) { b->launch(m, "saxpy", l, a); };
  EXPECT_NE(error_of([&] { launch({{1, 1, 1}, {64, 1, 1}, 0}, std::span(args).first(3)); },
                     ErrorCode::InvalidArgument)
                .find("expects 4 argument(s), got 3"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { launch({{1, 1, 1}, {2048, 1, 1}, 0}, args); }, ErrorCode::InvalidArgument)
          .find("a block of 2048x1x1 lanes is larger than Fake GPU runs for it (1024 lanes"),
      std::string::npos);
  EXPECT_NE(
      error_of([&] { launch({{1, 70000, 1}, {64, 1, 1}, 0}, args); }, ErrorCode::InvalidArgument)
          .find("a grid of 1x70000x1 blocks is larger than Fake GPU launches"),
      std::string::npos);
  EXPECT_NE(error_of([&] { launch({{1, 1, 1}, {64, 1, 1}, 200 * 1024}, args); },
                     ErrorCode::InvalidArgument)
                .find("needs 204800 bytes of shared memory; Fake GPU has 163840"),
            std::string::npos);
  launch({{1, 1, 1}, {64, 1, 1}, 100 * 1024}, args); // above 48 KiB: opted in
  EXPECT_EQ(last_launch().shared, 100u * 1024);
  error_of([&] { launch({{0, 1, 1}, {64, 1, 1}, 0}, args); }, ErrorCode::InvalidArgument);
  error_of([&] { b->launch(m, "nope", LaunchConfig{{1, 1, 1}, {1, 1, 1}, 0}, args); },
           ErrorCode::InvalidArgument);
  DiagnosticEngine diags;
  auto k = isa::parse_module(kSaxpy, "saxpy.hasm", diags);
  ASSERT_TRUE(k);
  EXPECT_NE(error_of([&] { b->execute_program(k->kernels[0], {{1, 1, 1}, {64, 1, 1}, 0}, args); },
                     ErrorCode::InvalidProgram)
                .find("link Hologram::jit"),
            std::string::npos);
  b->unload_module(m);
  error_of([&] { b->module_info(m); }, ErrorCode::InvalidHandle);
}

TEST(CudaFakeGpu, WholeLaunchKernelsLaunchTheDeviceLibrary) {
  auto b = create_backend(Preference::parse("cuda"));
  Bundles bundles;
  ModuleHandle m = b->load_module(bundles.make({"cuda-sm_80"}, false, kSum));
  BufferHandle x = b->allocate_buffer(4096 * 4), out = b->allocate_buffer(8);
  std::vector<KernelArg> args = {KernelArg::buffer(x), KernelArg::buffer(out),
                                 KernelArg::u32(4096)};
  const LaunchConfig whole{{1, 1, 1}, {1, 1, 1}, 0};
  for (int run = 0; run < 2; ++run) { // the second takes its scratch from the cache
    b->write<float>(out, std::vector<float>{12345.0f, 7.0f});
    b->launch(m, "total", whole, args);
    const FakeCudaLaunch &l = last_launch();
    // The second of the reduction's two stages: one block over the first stage's partials,
    // writing the sum where the kernel stores it (the fake's device pointers are host
    // addresses: its first parameter points at `out`). The host stores nothing there.
    EXPECT_EQ(l.function, "__hg_reduce_add_f32");
    EXPECT_EQ(l.grid[0], 1u);
    ASSERT_FALSE(l.params.empty());
    EXPECT_EQ(*reinterpret_cast<const float *>(l.params[0]), 12345.0f);
    EXPECT_EQ(b->read<float>(out)[0], 12345.0f);
  }
  LibraryPathCounts paths = b->library_path_counts();
  EXPECT_EQ(paths,
            (LibraryPathCounts{{"reduce_all:two-stage", 2}, {"reduce_all:result-on-device", 2}}));
  // Stored at byte 4, which a view cannot start at (16-byte alignment): the second stage
  // writes its scratch, and a copy on the device takes it to `out` (the fake's launches leave
  // the scratch as zeros).
  std::string at_four = kSum;
  at_four.replace(at_four.find("[%out + r3*4]"), 13, "[%out + 4]");
  ModuleHandle m4 = b->load_module(bundles.make({"cuda-sm_80"}, false, at_four.c_str()));
  b->launch(m4, "total", whole, args);
  EXPECT_NE(*reinterpret_cast<const float *>(last_launch().params[0]), 12345.0f);
  EXPECT_EQ(b->read<float>(out), (std::vector<float>{12345.0f, 0.0f}));
  EXPECT_EQ(b->library_path_counts().at("reduce_all:result-on-device"), 3u);
}
