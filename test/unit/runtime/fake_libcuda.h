// What test/unit/runtime/fake_libcuda.cpp (a stand-in for libcuda.so.1) records of a launch,
// read by the tests through its fake_cuda_last_launch().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct FakeCudaLaunch {
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, shared = 0;
  std::vector<uint64_t> params; ///< each parameter's first 8 bytes
  std::string function;
};
