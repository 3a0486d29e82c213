// GPU benchmarks (issue 5): hologram-cc's SPIR-V on the Vulkan and OpenCL backends against the
// same kernels written in GLSL (glslangValidator, spirv-opt -O) and in OpenCL C (compiled by
// the driver), in one process. The GLSL peers follow hologram's Vulkan interface
// (docs/spirv.md) and are launched through the same runtime, so only the code differs; the
// OpenCL C peers run through the OpenCL API directly. Also: the dispatch overhead of an empty
// kernel and host<->device transfer rates. Every row checks its result against a
// double-precision reference before it is timed (verify.h; `--verify` checks and times nothing).
// bench/report.py turns the JSON into docs/performance.md.
#include "data.h"
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/spirv.h"
#include "hologram/isa/text.h"
#include "hologram/runtime/backend.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/file_io.h"
#include "verify.h"

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace hologram;

namespace {

const uint32_t kN = 1u << 22; ///< elements of the streaming workloads

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "gpu bench: %s\n", msg.c_str());
  std::exit(1);
}

std::vector<float> data(size_t n, uint64_t seed = 0) {
  return bench_data(n, -0.5f, 0.5f, seed);
}

/// A bundle holding one GLSL peer (its SPIR-V) with the reflection of its signature in
/// bench/kernels/gpu_peers.hasm, written to a temporary file.
std::string glsl_bundle(const isa::Module &peers, const std::string &name) {
  const isa::Kernel *k = peers.find_kernel(name);
  if (!k) die("no signature for peer " + name);
  isa::Module m;
  m.kernels.push_back(*k);
  codegen::SpirvOptions so;
  so.target = *codegen::parse_spirv_target("vulkan1.1");
  auto reflection = codegen::compile_spirv(m, so);
  if (!reflection) die(reflection.status().describe());
  auto words = read_file(std::string(HOLOGRAM_GLSL_DIR) + "/" + name + ".spv");
  if (!words) die(words.message());
  artifact::Bundle b;
  b.compiler_version = "glslang";
  b.module_name = name;
  b.sources = {"bench/peers/glsl/" + name + ".comp"};
  b.module = m;
  b.options.targets = {"vulkan1.1"};
  artifact::BundlePayload p;
  p.name = "vulkan1.1";
  p.kind = std::string(artifact::kPayloadSpirvVulkan);
  p.targets.push_back({"vulkan1.1", {}});
  p.reflection = codegen::spirv_reflection_json(*reflection);
  p.bytes = std::move(*words);
  b.payloads.push_back(std::move(p));
  std::string path =
      (std::filesystem::temp_directory_path() / ("hologram-peer-" + name + ".hgb")).string();
  if (auto st = write_file_atomic(path, artifact::write_bundle(b)); !st) die(st.message());
  return path;
}

/// The OpenCL C peers on the device the hologram OpenCL backend chose.
struct OpenClPeer {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_program prog = nullptr;
  std::map<std::string, cl_kernel> kernels;

  explicit OpenClPeer(const std::string &device_name) {
    cl_uint np = 0;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> ps(np);
    clGetPlatformIDs(np, ps.data(), nullptr);
    cl_device_id dev = nullptr;
    for (auto p : ps) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS) continue;
      std::vector<cl_device_id> ds(nd);
      clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
      for (auto d : ds) {
        char name[256] = {};
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
        if (device_name == name) dev = d;
      }
    }
    if (!dev) die("OpenCL device '" + device_name + "' not found for the OpenCL C peers");
    cl_int e = CL_SUCCESS;
    ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
    q = clCreateCommandQueue(ctx, dev, 0, &e);
    auto src = read_file(HOLOGRAM_OPENCL_C);
    if (!src) die(src.message());
    const char *text = src->c_str();
    prog = clCreateProgramWithSource(ctx, 1, &text, nullptr, &e);
    if (clBuildProgram(prog, 1, &dev, "", nullptr, nullptr) != CL_SUCCESS) die("OpenCL C build");
    for (const char *k : {"vector_add", "saxpy", "sum_partial", "gemm", "empty"})
      kernels[k] = clCreateKernel(prog, k, &e);
  }
  std::vector<float> read(cl_mem m, size_t n) {
    std::vector<float> v(n);
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * 4, v.data(), 0, nullptr, nullptr);
    return v;
  }
  void write(cl_mem m, const std::vector<float> &v) {
    clEnqueueWriteBuffer(q, m, CL_TRUE, 0, v.size() * 4, v.data(), 0, nullptr, nullptr);
  }
  cl_mem buffer(const std::vector<float> &v) {
    cl_int e = CL_SUCCESS;
    cl_mem m =
        clCreateBuffer(ctx, CL_MEM_READ_WRITE, std::max<size_t>(4, v.size() * 4), nullptr, &e);
    if (!v.empty())
      clEnqueueWriteBuffer(q, m, CL_TRUE, 0, v.size() * 4, v.data(), 0, nullptr, nullptr);
    return m;
  }
  template <typename... A>
  void run(const char *name, size_t gx, size_t gy, size_t lx, size_t ly, const A &...args) {
    cl_kernel k = kernels.at(name);
    cl_uint i = 0;
    (clSetKernelArg(k, i++, sizeof(A), &args), ...);
    size_t global[2] = {gx, gy}, local[2] = {lx, ly};
    clEnqueueNDRangeKernel(q, k, 2, nullptr, global, local, 0, nullptr, nullptr);
    clFinish(q);
  }
};

void add(const std::string &name, std::function<void()> body, RowCheck check, double bytes = 0,
         double flops = 0) {
  add_checked_row(name, std::move(body), std::move(check), bytes, flops);
}

/// hologram's kernels (and, on Vulkan, the GLSL peers) through the runtime on one backend.
void register_backend(const std::string &backend, const isa::Module &peers,
                      std::vector<std::shared_ptr<Backend>> &keep) {
  std::shared_ptr<Backend> b;
  try {
    b = create_backend(Preference::parse(backend));
  } catch (const Error &e) {
    std::fprintf(stderr, "gpu bench: %s not run: %s\n", backend.c_str(), e.what());
    return;
  }
  keep.push_back(b);
  benchmark::AddCustomContext(backend + "_device", b->device_info().name);
  ModuleHandle holo = b->load_module(HOLOGRAM_GPU_BUNDLE);
  std::map<std::string, ModuleHandle> glsl;
  if (backend == "vulkan")
    for (const char *k : {"vector_add", "saxpy", "sum_partial", "gemm", "empty"})
      glsl[k] = b->load_module(glsl_bundle(peers, k));
  auto x = data(kN), y = data(kN, 1);
  auto sums = std::make_shared<Tolerances>(
      elementwise(kN, [&](size_t i) { return double{x[i]} + y[i]; }, 1));
  auto saxpys =
      std::make_shared<Tolerances>(elementwise(kN, [&](size_t i) { return 0.5 * x[i] + y[i]; }, 2));
  const auto [total, total_tol] = sum_reference(x);
  auto bx = b->allocate_buffer(kN * 4), by = b->allocate_buffer(kN * 4),
       bc = b->allocate_buffer(kN * 4), partial = b->allocate_buffer(256 * 4),
       out = b->allocate_buffer(4);
  b->write<float>(bx, x);
  b->write<float>(by, y);
  const std::string n = std::to_string(kN), h = "/hologram_" + backend;
  auto lin = LaunchConfig::linear(kN, 256);
  KernelArg va[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::buffer(bc),
                    KernelArg::u32(kN)};
  KernelArg sx[] = {KernelArg::buffer(bx), KernelArg::buffer(by), KernelArg::f32(0.5f),
                    KernelArg::u32(kN)};
  KernelArg sum[] = {KernelArg::buffer(bx), KernelArg::buffer(out), KernelArg::u32(kN)};
  // Checks: vector_add's c, saxpy's y from its initial value, sum's result; the empty kernel
  // has no output, its check is that the launch completes.
  auto vadd_check = [=](std::function<void()> run) -> RowCheck {
    return [=] {
      b->write<float>(by, y); // saxpy's rows update y in place
      b->write<float>(bc, std::vector<float>(kN, std::nanf("")));
      run();
      return mismatches("c", b->read<float>(bc), *sums);
    };
  };
  auto saxpy_check = [=](std::function<void()> run) -> RowCheck {
    return [=] {
      b->write<float>(by, y);
      run();
      return mismatches("y", b->read<float>(by), *saxpys);
    };
  };
  auto sum_check = [=](std::function<float()> run) -> RowCheck {
    return [=] { return mismatch("sum", run(), total, total_tol); };
  };
  auto read_out = [=] {
    float r = 0;
    b->copy_from_buffer(out, 0, std::as_writable_bytes(std::span(&r, 1)));
    return r;
  };
  auto launched = [](std::function<void()> run) -> RowCheck {
    return [=] {
      run();
      return std::string();
    };
  };
  auto holo_vadd = [=] { b->launch(holo, "vector_add", lin, va); };
  auto holo_saxpy = [=] { b->launch(holo, "saxpy", lin, sx); };
  auto holo_sum = [=] { b->launch(holo, "sum", LaunchConfig::linear(1), sum); };
  auto holo_empty = [=] { b->launch(holo, "empty", LaunchConfig::linear(1, 1), {}); };
  add("vector_add/" + n + h, holo_vadd, vadd_check(holo_vadd), 12.0 * kN);
  add("saxpy/" + n + h, holo_saxpy, saxpy_check(holo_saxpy), 12.0 * kN, 2.0 * kN);
  add("sum/" + n + h, holo_sum, sum_check([=] {
        holo_sum();
        return read_out();
      }),
      4.0 * kN);
  add("dispatch/empty" + h, holo_empty, launched(holo_empty));
  if (!glsl.empty()) {
    const std::string g = "/glsl_" + backend;
    auto glsl_vadd = [=] { b->launch(glsl.at("vector_add"), "vector_add", lin, va); };
    auto glsl_saxpy = [=] { b->launch(glsl.at("saxpy"), "saxpy", lin, sx); };
    // The same two stages hologram's sum runs, then the result read back.
    auto glsl_sum = [=] {
      KernelArg s1[] = {KernelArg::buffer(bx), KernelArg::buffer(partial), KernelArg::u32(kN)};
      b->launch(glsl.at("sum_partial"), "sum_partial", LaunchConfig::linear(256 * 256, 256), s1);
      KernelArg s2[] = {KernelArg::buffer(partial), KernelArg::buffer(out), KernelArg::u32(256)};
      b->launch(glsl.at("sum_partial"), "sum_partial", LaunchConfig::linear(256, 256), s2);
      return read_out();
    };
    auto glsl_empty = [=] { b->launch(glsl.at("empty"), "empty", LaunchConfig::linear(1, 1), {}); };
    add("vector_add/" + n + g, glsl_vadd, vadd_check(glsl_vadd), 12.0 * kN);
    add("saxpy/" + n + g, glsl_saxpy, saxpy_check(glsl_saxpy), 12.0 * kN, 2.0 * kN);
    add(
        "sum/" + n + g, [=] { benchmark::DoNotOptimize(glsl_sum()); }, sum_check(glsl_sum),
        4.0 * kN);
    add("dispatch/empty" + g, glsl_empty, launched(glsl_empty));
  }
  for (uint32_t m : {256u, 512u}) {
    auto a = data(size_t{m} * m), bb = data(size_t{m} * m, 1);
    auto ga = b->allocate_buffer(size_t{m} * m * 4), gb = b->allocate_buffer(size_t{m} * m * 4),
         gc = b->allocate_buffer(size_t{m} * m * 4);
    b->write<float>(ga, a);
    b->write<float>(gb, bb);
    KernelArg args[] = {KernelArg::buffer(ga), KernelArg::buffer(gb), KernelArg::buffer(gc),
                        KernelArg::u32(m)};
    const double flops = 2.0 * m * m * m;
    auto want = std::make_shared<Tolerances>(gemm_reference(a, bb, m));
    // C, and A and B unchanged: a gemm that writes its inputs is wrong whatever C says.
    auto gemm_check = [=](std::function<void()> run) -> RowCheck {
      return [=] {
        b->write<float>(gc, std::vector<float>(size_t{m} * m, std::nanf("")));
        run();
        std::string why = mismatches("C", b->read<float>(gc), *want);
        if (why.empty() && (b->read<float>(ga) != a || b->read<float>(gb) != bb))
          why = "the read-only inputs A or B changed";
        return why;
      };
    };
    auto holo_gemm = [=] { b->launch(holo, "gemm", LaunchConfig::linear(1), args); };
    add("gemm/" + std::to_string(m) + h, holo_gemm, gemm_check(holo_gemm), 0, flops);
    if (!glsl.empty()) {
      LaunchConfig tiles;
      tiles.grid = {m / 16, m / 16, 1};
      tiles.block = {16, 16, 1};
      auto glsl_gemm = [=] { b->launch(glsl.at("gemm"), "gemm", tiles, args); };
      add("gemm/" + std::to_string(m) + "/glsl_" + backend, glsl_gemm, gemm_check(glsl_gemm), 0,
          flops);
    }
  }
  // Transfers: 64 MiB to and from the device.
  const size_t bytes = size_t{64} << 20;
  auto big = b->allocate_buffer(bytes);
  auto host = std::make_shared<std::vector<std::byte>>(bytes, std::byte{1});
  // A copy there and back must return every byte.
  RowCheck round_trip = [=] {
    std::vector<std::byte> pattern(bytes), back(bytes);
    for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<std::byte>(i * 131 + (i >> 12));
    b->copy_to_buffer(big, 0, pattern);
    b->copy_from_buffer(big, 0, back);
    return back == pattern ? std::string() : std::string("the bytes read back differ");
  };
  add("transfer/64MiB_to_device" + h, [=] { b->copy_to_buffer(big, 0, *host); }, round_trip, bytes);
  add(
      "transfer/64MiB_from_device" + h, [=] { b->copy_from_buffer(big, 0, *host); }, round_trip,
      bytes);

  if (backend == "opencl") {
    auto peer = std::make_shared<OpenClPeer>(b->device_info().name);
    cl_mem px = peer->buffer(x), py = peer->buffer(y), pc = peer->buffer(std::vector<float>(kN)),
           pp = peer->buffer(std::vector<float>(256)), po = peer->buffer(std::vector<float>(1));
    const std::string o = "/openclc_" + backend;
    auto cl_vadd = [=] { peer->run("vector_add", kN, 1, 256, 1, px, py, pc, kN); };
    auto cl_saxpy = [=] { peer->run("saxpy", kN, 1, 256, 1, px, py, 0.5f, kN); };
    auto cl_sum = [=] {
      peer->run("sum_partial", 256 * 256, 1, 256, 1, px, pp, kN);
      peer->run("sum_partial", 256, 1, 256, 1, pp, po, 256u);
      return peer->read(po, 1)[0];
    };
    auto cl_empty = [=] { peer->run("empty", 1, 1, 1, 1); };
    add(
        "vector_add/" + n + o, cl_vadd,
        [=] {
          peer->write(py, y); // saxpy's rows update y in place
          peer->write(pc, std::vector<float>(kN, std::nanf("")));
          cl_vadd();
          return mismatches("c", peer->read(pc, kN), *sums);
        },
        12.0 * kN);
    add(
        "saxpy/" + n + o, cl_saxpy,
        [=] {
          peer->write(py, y);
          cl_saxpy();
          return mismatches("y", peer->read(py, kN), *saxpys);
        },
        12.0 * kN, 2.0 * kN);
    add("sum/" + n + o, [=] { benchmark::DoNotOptimize(cl_sum()); }, sum_check(cl_sum), 4.0 * kN);
    add("dispatch/empty" + o, cl_empty, launched(cl_empty));
    for (uint32_t m : {256u, 512u}) {
      auto av = data(size_t{m} * m), bv = data(size_t{m} * m, 1);
      auto want = std::make_shared<Tolerances>(gemm_reference(av, bv, m));
      cl_mem a = peer->buffer(av), bb = peer->buffer(bv),
             c = peer->buffer(std::vector<float>(size_t{m} * m));
      auto cl_gemm = [=] { peer->run("gemm", m, m, 16, 16, a, bb, c, m); };
      add(
          "gemm/" + std::to_string(m) + o, cl_gemm,
          [=] {
            peer->write(c, std::vector<float>(size_t{m} * m, std::nanf("")));
            cl_gemm();
            return mismatches("C", peer->read(c, size_t{m} * m), *want);
          },
          0, 2.0 * m * m * m);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  setenv("XDG_RUNTIME_DIR", "/tmp", 0);
  DiagnosticEngine diags;
  auto text = read_file(HOLOGRAM_PEERS_HASM);
  if (!text) die(text.message());
  auto peers = isa::parse_module(*text, HOLOGRAM_PEERS_HASM, diags);
  if (!peers) die(diags.to_string());
  std::vector<std::shared_ptr<Backend>> keep;
  for (const char *backend : {"vulkan", "opencl"}) register_backend(backend, *peers, keep);
  if (int status = verify_only(argc, argv); status >= 0) return status;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
