// The conformance harness: cases (a kernel or circuit from the corpus, a launch, generated
// inputs, and expected outputs computed by independent C++ reference code) and runners (one
// per backend). Every case runs on every runner; the interpreter is the first runner, and the
// compiled backends join through the same interface.
#pragma once

#include "hologram/driver/driver.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/atlas.h"
#include "hologram/runtime/backend.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
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

struct Case {
  std::string name;
  std::string file;   ///< relative to test/conformance
  std::string kernel; ///< empty: the only kernel
  LaunchConfig launch;
  std::function<void(CaseData &)> inputs;
  /// Turns a copy of the inputs into the expected outputs, and may tighten tolerances.
  std::function<void(CaseData &, std::vector<Check> &)> reference;
  std::vector<Check> checks;
  /// The schedules ("gemm:packed") the compiled CPU backend must take for the case's
  /// whole-launch operations, and no others (Backend::library_path_counts); empty: not checked.
  std::set<std::string> cpu_paths;
  /// The same for the Vulkan and OpenCL backends ("gemm:tiled").
  std::set<std::string> device_paths;
};

/// What kind of backend a runner drives: which of a case's expected schedules apply to it.
enum class RunnerKind { Interpreter, Cpu, Device };

/// A backend that can run corpus programs.
class Runner {
public:
  virtual ~Runner() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  virtual Status run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) = 0;
  /// Why this runner cannot run `kernel` yet ("" when it can): the test is then skipped,
  /// visibly, with this reason.
  virtual std::string unsupported(const isa::Kernel &) { return ""; }
  [[nodiscard]] virtual RunnerKind kind() const = 0;
  /// The schedules whole-launch operations took in the last run().
  [[nodiscard]] virtual LibraryPathCounts last_paths() const { return {}; }
};

/// The reference interpreter.
class InterpRunner final : public Runner {
public:
  [[nodiscard]] std::string name() const override { return "interp"; }
  [[nodiscard]] RunnerKind kind() const override { return RunnerKind::Interpreter; }
  Status run(const isa::Kernel &kernel, const LaunchConfig &launch, CaseData &data) override;
};

/// Copies a case's arrays, scalars and boundary pool into `backend`, calls `launch` with the
/// arguments, and copies the arrays and the boundary pool back.
Status run_with_backend(Backend &backend, const isa::Kernel &kernel, CaseData &data,
                        const std::function<void(std::span<const KernelArg>)> &launch);

/// Every case of the corpus.
std::vector<Case> all_cases();
/// The cases for the rules of SPEC §3.4 (semantics_cases.cpp).
void semantics_cases(std::vector<Case> &out);
/// Library operations with sizes as parameters (semantics_cases.cpp).
void library_cases(std::vector<Case> &out);
/// Whole-launch operations in shapes that reach every schedule of every backend
/// (fast_path_cases.cpp).
void fast_path_cases(std::vector<Case> &out);

/// Deterministic inputs (xorshift; the same on every platform).
class Random {
public:
  explicit Random(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return s_;
  }
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) / static_cast<float>(1ull << 24);
  }
  std::vector<float> floats(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (auto &x : v) x = uniform(lo, hi);
    return v;
  }

private:
  uint64_t s_;
};

/// ULP distance between two floats (0 for equal values and for two NaNs).
uint64_t ulp_distance(float a, float b);
uint64_t ulp_distance(double a, double b);

} // namespace hologram::conformance
