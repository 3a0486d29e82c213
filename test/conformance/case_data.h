// What a conformance case runs on and checks, without the compiler: typed arrays, scalars and
// the boundary pool of one run, the checks and their tolerances, a run through any Backend,
// and the comparison of its outputs with the expected ones. Shared by the suite
// (hologram-conformance) and by the runner of exported cases (hologram-conformance-run), which
// links only the runtime.
#pragma once

#include "hologram/isa/atlas.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/backend.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace hologram::conformance {

using isa::Type;

/// A typed array argument.
struct Array {
  Type type = Type::F32;
  std::vector<std::byte> bytes;
  template <typename T> std::span<T> as() {
    return {reinterpret_cast<T *>(bytes.data()), bytes.size() / sizeof(T)};
  }
  template <typename T> static Array of(Type t, std::vector<T> v) {
    Array a;
    a.type = t;
    a.bytes.resize(v.size() * sizeof(T));
    std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
    return a;
  }
};

/// Inputs and outputs of one run: arrays (buffers and pools) and scalars by parameter name, and the
/// boundary pool (classes) for circuits.
struct CaseData {
  std::map<std::string, Array> arrays;
  std::map<std::string, uint64_t> scalars;
  std::vector<std::byte> boundary = std::vector<std::byte>(atlas::kBoundaryPoolBytes);
  template <typename T> std::span<T> array(const std::string &name) {
    return arrays.at(name).as<T>();
  }
  std::span<float> klass(uint32_t c) {
    return {reinterpret_cast<float *>(boundary.data() + uint64_t{c} * atlas::kClassBytes),
            atlas::kClassBytes / sizeof(float)};
  }
};

/// How close a result must be: bit-exact, within `ulps` units in the last place, or within
/// an absolute bound (set by the reference for floating-point sums).
struct Tolerance {
  uint32_t ulps = 0;
  double abs = 0;
};

struct Check {
  std::string name; ///< array parameter, or "cK" for class K of a circuit
  Tolerance tol;
  size_t count = SIZE_MAX; ///< compare only the first `count` elements
  bool unordered = false;  ///< compare as multisets (results whose order depends on atomics)
};

/// ULP distance between two floats (0 for equal values and for two NaNs).
uint64_t ulp_distance(float a, float b);
uint64_t ulp_distance(double a, double b);

/// The class K that check name "cK" names, unless `data` has an array of that name.
std::optional<uint32_t> checked_class(const Check &check, const CaseData &data);

/// Compares one check's output in `got` with `want`: "" when it holds, else the first
/// mismatches, one line each.
std::string compare_check(const Check &check, const CaseData &got, const CaseData &want);

/// The read-only parameters (access `read`) whose arrays differ between `given` and `got`.
std::vector<std::string> changed_read_only(const std::vector<isa::Param> &params,
                                           const CaseData &given, const CaseData &got);

/// The schedules a run took on a backend whose counts went from `before` to `after`
/// (Backend::library_path_counts), with how often each was taken in the run.
LibraryPathCounts paths_added(const LibraryPathCounts &before, const LibraryPathCounts &after);

/// "" when the schedules a run `took` are exactly `want` (nothing to check when it is empty),
/// else "took gemm:packed, expected gemm:reference".
std::string check_paths(const std::set<std::string> &want, const LibraryPathCounts &took);

/// Copies a case's arrays, scalars and boundary pool into `backend` for a kernel with
/// `params`, calls `launch` with the arguments, and copies the arrays and the boundary pool
/// back.
Status run_with_backend(Backend &backend, const std::vector<isa::Param> &params, CaseData &data,
                        const std::function<void(std::span<const KernelArg>)> &launch);

} // namespace hologram::conformance
