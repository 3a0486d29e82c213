// The generated header compiles as C++17; its C++ wrappers throw kernel_error on failure.
#include "vector.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char *what) {
    if (!ok) {
      std::fprintf(stderr, "expected %s\n", what);
      ++failures;
    }
  };
  std::vector<float> a(777), b(777), c(777);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 2.0f;
  }
  hologram_kernels::vector::vector_sub(a.data(), b.data(), c.data(), 777);
  expect(c[776] == 774.0f, "vector_sub through the C++ wrapper");
  hologram_kernels::vector::sigmoid(a.data(), c.data(), 777);
  expect(std::fabs(c[1] - 1.0f / (1.0f + std::exp(-1.0f))) < 1e-6f, "sigmoid(1)");
  hg_launch bad{};
  try {
    hologram_kernels::vector::relu(a.data(), c.data(), 777, &bad);
    expect(false, "a zero-size launch throws");
  } catch (const hologram_kernels::kernel_error &e) {
    expect(e.code() != 0 && std::strstr(e.what(), "zero-size") != nullptr, "kernel_error");
  }
  if (failures == 0) std::printf("header C++17 test passed\n");
  return failures != 0;
}
