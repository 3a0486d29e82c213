#include "device_runner.h"

#include "hologram/codegen/spirv.h"

namespace hologram::conformance {

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
    auto st =
        run_with_backend(*backend_, kernel.params, data, [&](std::span<const KernelArg> args) {
          backend_->execute_program(kernel, launch, args);
        });
    paths_ = paths_added(before, backend_->library_path_counts());
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
