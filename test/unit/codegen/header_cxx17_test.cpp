// The generated header compiles as C++17; its C++ wrappers throw kernel_error on failure.
#include "counts.h"
#include "vector.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
  // A launch sized by a 64-bit count: one lane per element, in blocks of 256.
  std::vector<uint32_t> x(1000, 0);
  hologram_kernels::counts::fill(x.data(), 999);
  expect(x[998] == 7 && x[999] == 0, "fill sized by a u64 count");
  // A count whose blocks of 256 outnumber a grid's 2^32 - 1 is refused, not wrapped into a
  // grid of one block.
  std::fill(x.begin(), x.end(), 0u);
  try {
    hologram_kernels::counts::fill(x.data(), ((uint64_t{1} << 32) + 1) * 256);
    expect(false, "a count of more than 2^32 - 1 blocks throws");
  } catch (const hologram_kernels::kernel_error &e) {
    expect(std::strstr(e.what(), "pass an hg_launch") != nullptr, "the refusal names the way out");
  }
  expect(x[0] == 0, "a refused launch runs no lane");
  // The Atlas state of linked calls: a class of the boundary pool that one kernel writes and
  // another reads, each called twice in a row (the second call a repeat, the short way).
  std::vector<float> s(16), t(16, 0.0f);
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(i) + 0.5f;
  hologram_kernels::counts::stash(s.data(), 16);
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<float>(i) + 100.0f;
  hologram_kernels::counts::stash(s.data(), 16);
  hologram_kernels::counts::unstash(t.data(), 16);
  expect(t[0] == 100.0f && t[15] == 115.0f, "unstash reads what the repeated stash wrote");
  std::fill(t.begin(), t.end(), 0.0f);
  hologram_kernels::counts::unstash(t.data(), 16);
  expect(t[0] == 100.0f && t[15] == 115.0f, "a repeated unstash reads it again");
  if (failures == 0) std::printf("header C++17 test passed\n");
  return failures != 0;
}
