// Vector add through the generated header: hologram-cc compiled isa/vector_add.hasm into a
// static library (x86-64-v2, v3 and v4 variants and a dispatcher); calling the kernel is a
// function call. The first integer scalar (n) sizes the launch when no hg_launch is given.
#include "vector_add.h"

#include <cstdio>
#include <vector>

int main() {
  const uint32_t n = 1000;
  std::vector<float> a(n), b(n), c(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f * static_cast<float>(i);
  }
  // C++ wrapper: throws hologram_kernels::kernel_error on failure.
  hologram_kernels::vector_add::vector_add(a.data(), b.data(), c.data(), n);
  for (uint32_t i = 0; i < n; ++i)
    if (c[i] != 1.5f * static_cast<float>(i)) {
      std::fprintf(stderr, "c[%u] = %g, expected %g\n", i, static_cast<double>(c[i]), 1.5 * i);
      return 1;
    }
  // The C entry point with an explicit launch: 4 blocks of 256 lanes.
  hg_launch launch = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0};
  if (vector_add(a.data(), a.data(), c.data(), n, &launch) != 0) return 1;
  std::printf("vector_add: c[999] = %g (a + b), then %g (a + a)\n", 1.5 * 999,
              static_cast<double>(c[999]));
  std::printf("kernel %s: %u parameters, needs at least: %s\n", vector_add_info.name,
              vector_add_info.num_params, vector_add_info.required_features);
  return c[999] == 1998.0f ? 0 : 1;
}
