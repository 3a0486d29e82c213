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
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>
#include <tuple>

using namespace hologram;
using namespace hologram::conformance;

namespace {

/// One runner of this build: its name, and how to start it. Names come first and cost nothing;
/// a runner starts at its first test, so a process that runs one interpreter case does not load
/// the Vulkan and OpenCL drivers (each ctest test is a process of its own).
struct RunnerSlot {
  std::string name;
  std::function<std::unique_ptr<Runner>(std::string &error)> start;
};

std::function<std::unique_ptr<Runner>(std::string &)> device(const char *backend,
                                                             const char *name) {
  return [backend, name](std::string &error) -> std::unique_ptr<Runner> {
    return DeviceRunner::start(backend, error, name);
  };
}

std::function<std::unique_ptr<Runner>(std::string &)> cpu_level(const char *level,
                                                                bool checked = false) {
  return [level, checked](std::string &) -> std::unique_ptr<Runner> {
    return std::make_unique<CpuRunner>(level, checked);
  };
}

const std::vector<RunnerSlot> &runner_slots() {
  static const std::vector<RunnerSlot> slots = [] {
    std::vector<RunnerSlot> all;
    all.push_back({"interp", [](std::string &) -> std::unique_ptr<Runner> {
                     return std::make_unique<InterpRunner>();
                   }});
    // Every x86 level this machine can run, each forced through the dispatcher; x86-64-v4 code
    // that cannot run here is covered by the assembly golden tests.
    const char *best = "x86-64-v2";
    all.push_back({"cpu_v2", cpu_level(best)});
    if (runtime::cpu_has_feature("avx2") && runtime::cpu_has_feature("fma"))
      all.push_back({"cpu_v3", cpu_level(best = "x86-64-v3")});
    if (runtime::cpu_has_feature("avx512f") && runtime::cpu_has_feature("avx512bw") &&
        runtime::cpu_has_feature("avx512dq") && runtime::cpu_has_feature("avx512vl"))
      all.push_back({"cpu_v4", cpu_level(best = "x86-64-v4")});
    // The best of them with every access checked (-fbounds-check): no case may trip a check.
    all.push_back({"cpu_checked", cpu_level(best, true)});
    // The CPU backend compiling each kernel at run time (execute_program through
    // Hologram::jit). Vulkan and OpenCL are named explicitly so CPU-class drivers (lavapipe,
    // PoCL) count.
    all.push_back({"cpu_jit", device("cpu", "cpu_jit")});
    all.push_back({"vulkan", device("vulkan", "vulkan")});
    all.push_back({"opencl", device("opencl", "opencl")});
    return all;
  }();
  return slots;
}

/// The group of a runner and -O level, e.g. "cpu_v4_O2": the end of each of its cases' test
/// names, and one ctest test (--list-groups, discover.cmake), so both must spell it alike.
std::string group_name(const RunnerSlot &slot, unsigned opt_level) {
  return slot.name + "_O" + std::to_string(opt_level);
}

/// Whether a backend name of HOLOGRAM_REQUIRE_BACKENDS names the runner: "cpu" names the
/// compiled CPU runners (cpu_v2, cpu_v3, ..., cpu_jit).
bool names(const std::string &backend, const std::string &runner) {
  return !backend.empty() && (runner == backend || runner.starts_with(backend + "_"));
}

/// The backend names of HOLOGRAM_REQUIRE_BACKENDS (none when it is unset).
std::vector<std::string> required_backends() {
  std::vector<std::string> out;
  const char *env = std::getenv("HOLOGRAM_REQUIRE_BACKENDS");
  std::stringstream ss(env ? env : "");
  for (std::string name; std::getline(ss, name, ',');)
    if (!name.empty()) out.push_back(name);
  return out;
}

bool required(const std::string &runner) {
  const auto backends = required_backends();
  return std::any_of(backends.begin(), backends.end(),
                     [&](const std::string &backend) { return names(backend, runner); });
}

/// The runner of slot `i`, started at the first call; nullptr with `error` set when it cannot
/// start (every later call gives the same answer).
Runner *runner(size_t i, std::string &error) {
  struct Started {
    std::unique_ptr<Runner> runner;
    std::string error;
  };
  static std::map<size_t, Started> started;
  auto it = started.find(i);
  if (it == started.end()) {
    Started s;
    s.runner = runner_slots()[i].start(s.error);
    it = started.emplace(i, std::move(s)).first;
  }
  error = it->second.error;
  return it->second.runner.get();
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
  const Case &c = cases[std::get<0>(GetParam())];
  const RunnerSlot &slot = runner_slots()[std::get<1>(GetParam())];
  std::string error;
  Runner *started = runner(std::get<1>(GetParam()), error);
  // A runner this environment requires fails each of its cases; any other is skipped.
  if (!started && required(slot.name)) FAIL() << slot.name << " cannot start: " << error;
  // ctest marks a group that prints this as skipped (discover.cmake).
  if (!started) GTEST_SKIP() << slot.name << " is not available here (not required): " << error;
  Runner &runner = *started;
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
  size_t ncases = all_cases().size(), nrunners = runner_slots().size();
  for (size_t o = 0; o < std::size(kOptLevels); ++o)
    for (size_t r = 0; r < nrunners; ++r)
      for (size_t i = 0; i < ncases; ++i) params.emplace_back(i, r, o);
  return params;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Conformance, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param> &p) {
                           static const auto cases = all_cases();
                           return cases[std::get<0>(p.param)].name + "_" +
                                  group_name(runner_slots()[std::get<1>(p.param)],
                                             kOptLevels[std::get<2>(p.param)]);
                         });

TEST(ConformanceCorpus, RequiredBackendsAreAvailable) {
  for (const std::string &backend : required_backends()) {
    bool named = false;
    for (size_t i = 0; i < runner_slots().size(); ++i)
      if (names(backend, runner_slots()[i].name)) {
        named = true;
        std::string error;
        EXPECT_NE(runner(i, error), nullptr)
            << "HOLOGRAM_REQUIRE_BACKENDS names '" << backend << "', and runner "
            << runner_slots()[i].name << " cannot start: " << error;
      }
    EXPECT_TRUE(named) << "HOLOGRAM_REQUIRE_BACKENDS names '" << backend
                       << "', which this build has no runner for";
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
  // hologram-conformance --list-groups: one line per runner and -O level, the ctest tests
  // (test/conformance/discover.cmake): "cpu_v4_O2" runs every case whose name ends in it.
  if (argc == 2 && std::string_view(argv[1]) == "--list-groups") {
    for (const RunnerSlot &slot : runner_slots())
      for (unsigned level : kOptLevels) std::printf("%s\n", group_name(slot, level).c_str());
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
