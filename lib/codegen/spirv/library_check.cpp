// hologram-spirv-library-check: a step of the build. Instantiates every device library kernel
// (each whole-launch instruction at each of its types and sub-operations), parses and
// verifies it, and compiles all of them for every SPIR-V target with SPIRV-Tools' validator
// before and after spirv-opt. A library text that is wrong for any instantiation fails the
// build, not a user's compile. Writes the stamp file it is given when everything passes.
#include "hologram/codegen/spirv_library.h"

#include <cstdio>
#include <fstream>
#include <future>
#include <vector>

int main(int argc, char **argv) {
  using namespace hologram;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s STAMP\n", argv[0]);
    return 2;
  }
  auto all = codegen::spirv_library_all();
  if (!all) {
    std::fprintf(stderr, "hologram-spirv-library-check: %s\n", all.message().c_str());
    return 1;
  }
  const std::vector<isa::Kernel> &kernels = *all;
  // The targets compile in parallel: each is independent of the others.
  const char *names[] = {"vulkan1.1", "vulkan1.2", "vulkan1.3",
                         "opencl1.2", "opencl2.0", "opencl3.0"};
  std::vector<std::future<Status>> results;
  for (const char *name : names)
    results.push_back(std::async(std::launch::async, [&kernels, name] {
      codegen::SpirvOptions options;
      options.target = *codegen::parse_spirv_target(name);
      return codegen::compile_spirv_library(kernels, options).status();
    }));
  int failed = 0;
  for (size_t i = 0; i < results.size(); ++i)
    if (auto st = results[i].get(); !st) {
      std::fprintf(stderr, "hologram-spirv-library-check: %s: %s\n", names[i],
                   st.message().c_str());
      failed = 1;
    }
  if (failed) return 1;
  std::ofstream(argv[1]) << kernels.size()
                         << " device library kernels compile for every "
                            "SPIR-V target\n";
  return 0;
}
