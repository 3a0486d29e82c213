// A two-stage pipeline through the runtime: rmsnorm over the rows of a matrix, then a softmax
// over each row, on a backend chosen at run time (--backend=auto|cpu|vulkan|opencl or a list
// such as vulkan,cpu). The kernels come from a bundle made by add_hologram_kernel(... BUNDLE);
// intermediate results stay on the device between the two launches.
#include "hologram/runtime/backend.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::string preference = "auto", bundle = HOLOGRAM_EXAMPLE_BUNDLE;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backend=", 10) == 0)
      preference = argv[i] + 10;
    else if (std::strncmp(argv[i], "--bundle=", 9) == 0)
      bundle = argv[i] + 9;
    else {
      std::fprintf(stderr, "usage: %s [--backend=auto|cpu|vulkan|opencl] [--bundle=FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    auto backend = hologram::create_backend(hologram::Preference::parse(preference));
    auto device = backend->device_info();
    std::printf("backend: %s (%s)\n", device.backend.c_str(), device.name.c_str());
    auto module = backend->load_module(bundle);
    std::printf("module: %s, variant %s\n", bundle.c_str(),
                backend->module_info(module).variant.c_str());

    const uint64_t rows = 4096, cols = 1024;
    std::vector<float> x(rows * cols), gamma(cols, 1.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * static_cast<float>(i));
    using hologram::KernelArg;
    auto bx = backend->allocate_buffer(x.size() * 4);
    auto bg = backend->allocate_buffer(cols * 4);
    auto bn = backend->allocate_buffer(x.size() * 4);
    auto by = backend->allocate_buffer(x.size() * 4);
    backend->write<float>(bx, x);
    backend->write<float>(bg, gamma);
    auto one = hologram::LaunchConfig::linear(1, 1); // library ops run once per launch
    KernelArg norm_args[] = {KernelArg::buffer(bn), KernelArg::buffer(bx), KernelArg::buffer(bg),
                             KernelArg::u64(rows),  KernelArg::u64(cols),  KernelArg::f32(1e-6f)};
    backend->launch(module, "rmsnorm_rows", one, norm_args);
    KernelArg softmax_args[] = {KernelArg::buffer(by), KernelArg::buffer(bn), KernelArg::u64(rows),
                                KernelArg::u64(cols)};
    backend->launch(module, "softmax_rows", one, softmax_args);
    auto y = backend->read<float>(by);

    double worst = 0;
    for (uint64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (uint64_t c = 0; c < cols; ++c) sum += y[r * cols + c];
      worst = std::max(worst, std::fabs(sum - 1.0));
    }
    std::printf("%llu rows x %llu: every softmax row sums to 1 within %.2e; y[0][0..3] = %.6f "
                "%.6f %.6f %.6f\n",
                static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols), worst,
                static_cast<double>(y[0]), static_cast<double>(y[1]), static_cast<double>(y[2]),
                static_cast<double>(y[3]));
    return worst < 1e-4 ? 0 : 1;
  } catch (const hologram::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
