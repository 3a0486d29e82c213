#include "device_runner.h"

#include "hologram/codegen/spirv.h"

namespace hologram::conformance {

Status run_with_backend(Backend &backend, const isa::Kernel &kernel, CaseData &data,
                        const std::function<void(std::span<const KernelArg>)> &launch) {
  std::vector<KernelArg> args;
  std::vector<std::pair<std::string, BufferHandle>> arrays;
  std::vector<std::pair<std::string, PoolHandle>> pools;
  for (const auto &p : kernel.params) {
    if (p.kind == isa::ParamKind::Scalar) {
      auto it = data.scalars.find(p.name);
      if (it == data.scalars.end())
        return {ErrorCode::InvalidArgument, "the case gives no scalar " + p.name};
      args.push_back(KernelArg::scalar(p.type, it->second));
      continue;
    }
    auto it = data.arrays.find(p.name);
    if (it == data.arrays.end())
      return {ErrorCode::InvalidArgument, "the case gives no array " + p.name};
    size_t bytes = std::max<size_t>(it->second.bytes.size(), 1);
    if (p.kind == isa::ParamKind::Pool) {
      auto pool = backend.allocate_pool(bytes);
      backend.copy_to_pool(pool, 0, it->second.bytes);
      pools.emplace_back(p.name, pool);
      args.push_back(KernelArg::pool(pool));
      continue;
    }
    auto b = backend.allocate_buffer(bytes);
    backend.copy_to_buffer(b, 0, it->second.bytes);
    arrays.emplace_back(p.name, b);
    args.push_back(KernelArg::buffer(b));
  }
  backend.copy_to_boundary(0, data.boundary);
  launch(args);
  for (auto &[name, b] : arrays) {
    backend.copy_from_buffer(b, 0, data.arrays.at(name).bytes);
    backend.free_buffer(b);
  }
  for (auto &[name, pool] : pools) {
    backend.copy_from_pool(pool, 0, data.arrays.at(name).bytes);
    backend.free_pool(pool);
  }
  backend.copy_from_boundary(0, data.boundary);
  return {};
}

std::unique_ptr<DeviceRunner> DeviceRunner::start(const std::string &backend, std::string &error,
                                                  std::string name) {
  try {
    return std::unique_ptr<DeviceRunner>(new DeviceRunner(
        name.empty() ? backend : std::move(name), create_backend(Preference::parse(backend))));
  } catch (const Error &e) {
    error = e.what();
    return nullptr;
  }
}

Status DeviceRunner::run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) {
  try {
    // The backend lives for the whole suite: this run's schedules are the counts it added.
    const LibraryPathCounts before = backend_->library_path_counts();
    auto st = run_with_backend(*backend_, kernel, data, [&](std::span<const KernelArg> args) {
      backend_->execute_program(kernel, launch, args);
    });
    paths_.clear();
    for (const auto &[key, count] : backend_->library_path_counts()) {
      auto it = before.find(key);
      if (const uint64_t added = count - (it == before.end() ? 0 : it->second); added)
        paths_[key] = added;
    }
    return st;
  } catch (const Error &e) {
    return {e.code(), e.what()};
  }
}

std::string DeviceRunner::unsupported(const isa::Kernel &kernel) {
  if (!spirv_) return ""; // the CPU runs every kernel
  isa::Module m;
  m.kernels.push_back(kernel);
  codegen::SpirvOptions o;
  o.target = *codegen::parse_spirv_target(name_ == "opencl" ? "opencl1.2" : "vulkan1.1");
  o.opt_level = 0;
  Status st = codegen::compile_spirv(m, o).status();
  return st.code() == ErrorCode::InvalidProgram ? st.describe() : "";
}

} // namespace hologram::conformance
