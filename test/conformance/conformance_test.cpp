// Runs every corpus case on every runner and compares with the case's C++ reference.
// HOLOGRAM_REQUIRE_BACKENDS (e.g. "cpu,vulkan,opencl") names runners that must be available:
// a required runner that cannot start fails the suite instead of being skipped.
#include "cpu_runner.h"
#include "device_runner.h"
#include "harness.h"
#include "hologram/runtime/cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>
#include <tuple>

using namespace hologram;
using namespace hologram::conformance;

namespace {

/// Runners that could not start, with the reason.
std::map<std::string, std::string> &unavailable() {
  static std::map<std::string, std::string> reasons;
  return reasons;
}

std::vector<std::unique_ptr<Runner>> make_runners() {
  std::vector<std::unique_ptr<Runner>> runners;
  runners.push_back(std::make_unique<InterpRunner>());
  // Every x86 level this machine can run, each forced through the dispatcher; x86-64-v4 code
  // that cannot run here is covered by the assembly golden tests.
  runners.push_back(std::make_unique<CpuRunner>("x86-64-v2"));
  if (runtime::cpu_has_feature("avx2") && runtime::cpu_has_feature("fma"))
    runners.push_back(std::make_unique<CpuRunner>("x86-64-v3"));
  if (runtime::cpu_has_feature("avx512f") && runtime::cpu_has_feature("avx512bw") &&
      runtime::cpu_has_feature("avx512dq") && runtime::cpu_has_feature("avx512vl"))
    runners.push_back(std::make_unique<CpuRunner>("x86-64-v4"));
  // The CPU backend compiling each kernel at run time (execute_program through Hologram::jit).
  std::string error;
  if (auto jit = DeviceRunner::start("cpu", error, "cpu_jit"))
    runners.push_back(std::move(jit));
  else
    unavailable()["cpu_jit"] = error;
  // Vulkan and OpenCL, named explicitly so CPU-class drivers (lavapipe, PoCL) count; when one
  // cannot start, the suite says why and RequiredBackendsAreAvailable fails if the
  // environment requires it.
  for (const char *name : {"vulkan", "opencl"}) {
    if (auto device = DeviceRunner::start(name, error))
      runners.push_back(std::move(device));
    else
      unavailable()[name] = error;
  }
  return runners;
}

/// Read-only inputs must come back bit for bit: a fast path that writes a `read` buffer (as
/// the CPU gemm once overwrote B) fails here whatever the outputs say.
void expect_read_only_unchanged(const Case &c, const Runner &runner, const isa::Kernel &kernel,
                                const CaseData &given, const CaseData &got) {
  for (const auto &name : changed_read_only(kernel.params, given, got))
    ADD_FAILURE() << c.name << " on " << runner.name() << ": read-only parameter %" << name
                  << " changed during the launch";
}

/// The schedules the run took must be exactly those the case names for this kind of backend.
void expect_paths(const Case &c, const Runner &runner) {
  const std::set<std::string> &want = runner.kind() == RunnerKind::Cpu ? c.cpu_paths
                                      : runner.kind() == RunnerKind::Device
                                          ? c.device_paths
                                          : std::set<std::string>{};
  const std::string wrong = check_paths(want, runner.last_paths());
  EXPECT_TRUE(wrong.empty()) << c.name << " on " << runner.name() << " " << wrong;
}

/// One test: (case, runner, -O level index).
using Param = std::tuple<size_t, size_t, size_t>;
class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesReference) {
  static const auto cases = all_cases();
  static const auto runners = make_runners();
  const Case &c = cases[std::get<0>(GetParam())];
  Runner &runner = *runners[std::get<1>(GetParam())];
  const isa::Kernel *kernel = &case_kernel(c, kOptLevels[std::get<2>(GetParam())]);

  if (auto why = runner.unsupported(*kernel); !why.empty())
    GTEST_SKIP() << runner.name() << " cannot run this kernel yet: " << why;

  CaseData data;
  c.inputs(data);
  const CaseData given = data;
  CaseData expected = data;
  std::vector<Check> checks = c.checks;
  c.reference(expected, checks);

  auto st = runner.run(*kernel, c.launch, data);
  ASSERT_TRUE(st.is_ok()) << runner.name() << ": " << st.message();
  expect_read_only_unchanged(c, runner, *kernel, given, data);
  expect_paths(c, runner);
  for (const auto &check : checks) {
    const std::string diff = compare_check(check, data, expected);
    EXPECT_TRUE(diff.empty()) << c.name << " on " << runner.name() << ":\n" << diff;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> params;
  size_t ncases = all_cases().size(), nrunners = make_runners().size();
  for (size_t o = 0; o < std::size(kOptLevels); ++o)
    for (size_t r = 0; r < nrunners; ++r)
      for (size_t i = 0; i < ncases; ++i) params.emplace_back(i, r, o);
  return params;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Conformance, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param> &p) {
                           static const auto cases = all_cases();
                           static const auto runners = make_runners();
                           return cases[std::get<0>(p.param)].name + "_" +
                                  runners[std::get<1>(p.param)]->name() + "_O" +
                                  std::to_string(kOptLevels[std::get<2>(p.param)]);
                         });

TEST(ConformanceCorpus, RequiredBackendsAreAvailable) {
  const char *required = std::getenv("HOLOGRAM_REQUIRE_BACKENDS");
  if (!required) return;
  std::vector<std::string> have;
  for (const auto &r : make_runners()) have.push_back(r->name());
  std::stringstream ss(required);
  std::string name;
  while (std::getline(ss, name, ','))
    if (!name.empty()) {
      // "cpu" is satisfied by the compiled CPU runners (cpu_v2, cpu_v3, ...).
      bool found = std::any_of(have.begin(), have.end(), [&](const std::string &h) {
        return h == name || h.starts_with(name + "_");
      });
      auto why = unavailable().find(name);
      EXPECT_TRUE(found) << "HOLOGRAM_REQUIRE_BACKENDS names '" << name
                         << "', which this build cannot run"
                         << (why == unavailable().end() ? std::string() : ": " + why->second);
    }
}

TEST(ConformanceCorpus, JsonFilesMatchTheirPythonSources) {
  // The corpus JSON is generated from src/*.py by hologram-py2json; it must not drift.
  for (const char *stem : {"vector", "matrix", "quantum", "nn", "structure"}) {
    std::string dir = HOLOGRAM_CONFORMANCE_DIR;
    std::string cmd = std::string(HOLOGRAM_PYTHON) + " " + HOLOGRAM_SOURCE_DIR +
                      "/tools/hologram-py2json/hologram-py2json.py " + dir + "/src/" + stem +
                      ".py | cmp -s - " + dir + "/kernels/" + stem + ".json";
    EXPECT_EQ(std::system(cmd.c_str()), 0)
        << "kernels/" << stem
        << ".json is out of date: run tools/hologram-py2json/hologram-py2json.py "
        << "test/conformance/src/" << stem << ".py -o test/conformance/kernels/" << stem << ".json";
  }
}

} // namespace

int main(int argc, char **argv) {
  // hologram-conformance --export DIR: the corpus for hologram-conformance-run (case_file.h).
  if (argc >= 2 && std::string_view(argv[1]) == "--export") {
    if (argc != 3) {
      std::fprintf(stderr, "usage: %s --export DIR\n", argv[0]);
      return 2;
    }
    return export_corpus(argv[2]);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
