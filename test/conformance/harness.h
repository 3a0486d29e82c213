// The conformance harness: cases (a kernel or circuit from the corpus, a launch, generated
// inputs, and expected outputs computed by independent C++ reference code) and runners (one
// per backend). Every case runs on every runner; the interpreter is the first runner, and the
// compiled backends join through the same interface.
#pragma once

#include "case_data.h"
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

/// Every case of the corpus.
std::vector<Case> all_cases();
/// The optimisation levels the corpus runs at: as written, and through the -O2 pipeline.
inline constexpr unsigned kOptLevels[] = {0, 2};
/// Corpus file `file` (relative to test/conformance) compiled at `opt_level`, once per
/// process; throws when it does not compile.
const driver::CompiledInput &compiled(const std::string &file, unsigned opt_level);
/// The kernel case `c` runs, from its file compiled at `opt_level`; throws when there is none.
const isa::Kernel &case_kernel(const Case &c, unsigned opt_level);
/// Writes every case at every level of kOptLevels to `dir` (case_file.h): the bundles of
/// their kernels for every target, inputs and expected outputs. Progress and errors go to
/// standard error; 0 on success, 1 when anything could not be written.
int export_corpus(const std::string &dir);
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

} // namespace hologram::conformance
