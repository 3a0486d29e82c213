// The generated header compiles as C++17; its C++ wrappers throw kernel_error on failure.
#include "checks.h"
#include "counts.h"
#include "vector.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
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
  // A lane that fails (a division by zero, compiled with -fcheck-div) fails the call with its
  // lane, on its first call (checked) and on a repeat (the kept launch) alike; a call after
  // that succeeds and clears the message. One block runs on this thread without the timing of
  // a launch of several blocks (run_kept_cpu_launch's short way); two, on more than one
  // thread, go the other way.
  for (uint32_t n : {200u, 300u}) {
    std::vector<uint32_t> num(n), den(n, 3), quo(n, 0);
    for (uint32_t i = 0; i < n; ++i) num[i] = i * 6;
    den[n - 39] = 0;
    const std::string lane = "lane " + std::to_string(n - 39) + " ";
    for (int call = 0; call < 2; ++call) {
      try {
        hologram_kernels::checks::quotient(num.data(), den.data(), quo.data(), n);
        expect(false, "a division by zero throws");
      } catch (const hologram_kernels::kernel_error &e) {
        expect(std::strstr(e.what(), lane.c_str()) != nullptr &&
                   std::strstr(e.what(), "division by zero") != nullptr,
               "the error names the lane and the fault");
      }
    }
    den[n - 39] = 3;
    hologram_kernels::checks::quotient(num.data(), den.data(), quo.data(), n);
    expect(quo[n - 39] == 2 * (n - 39) && quo[n - 1] == 2 * (n - 1) &&
               std::strcmp(hg_cpu_last_error(), "") == 0,
           "a repeat with a good divisor runs and clears the message");
  }
  if (failures == 0) std::printf("header C++17 test passed\n");
  return failures != 0;
}
