// Runs every corpus case on every runner and compares with the case's C++ reference.
// HOLOGRAM_REQUIRE_BACKENDS (e.g. "cpu,vulkan,opencl") names runners that must be available:
// a required runner that cannot start fails the suite instead of being skipped.
#include "cpu_runner.h"
#include "device_runner.h"
#include "harness.h"
#include "hologram/runtime/cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
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

/// The optimisation levels the corpus runs at: as written, and through the -O2 pipeline.
constexpr unsigned kOptLevels[] = {0, 2};

/// Compiled corpus files, by path and -O level (each is compiled once).
const driver::CompiledInput &compiled(const std::string &file, unsigned opt_level) {
  static std::map<std::pair<std::string, unsigned>, driver::CompiledInput> cache;
  auto it = cache.find({file, opt_level});
  if (it != cache.end()) return it->second;
  std::string path = std::string(HOLOGRAM_CONFORMANCE_DIR) + "/" + file;
  auto kind = driver::kind_from_extension(path);
  DiagnosticEngine diags;
  diags.set_warnings_as_errors(true);
  driver::FrontendOptions fo;
  fo.opt_level = opt_level;
  auto in = kind ? driver::compile_input(path, *kind, fo, diags) : std::nullopt;
  if (!in) throw std::runtime_error("cannot compile " + path + ":\n" + diags.to_string());
  return cache.emplace(std::pair{file, opt_level}, std::move(*in)).first->second;
}

std::string format_value(Type t, const std::byte *p) {
  std::ostringstream os;
  switch (t) {
  case Type::F32: {
    float f;
    std::memcpy(&f, p, 4);
    os.precision(9);
    os << f;
    break;
  }
  case Type::F64: {
    double f;
    std::memcpy(&f, p, 8);
    os.precision(17);
    os << f;
    break;
  }
  case Type::U8: os << static_cast<unsigned>(*reinterpret_cast<const uint8_t *>(p)); break;
  case Type::I32: os << *reinterpret_cast<const int32_t *>(p); break;
  case Type::BF16:
  case Type::F16:
  case Type::I16:
  case Type::I64:
  case Type::I8:
  case Type::None:
  case Type::Pred:
  case Type::U16:
  case Type::U32:
  case Type::U64: os << *reinterpret_cast<const uint32_t *>(p); break;
  }
  return os.str();
}

/// Compares one output; returns "" or a description of the first mismatches.
std::string compare(const Check &check, Type type, std::span<const std::byte> got,
                    std::span<const std::byte> want) {
  unsigned size = isa::type_size(type);
  size_t n = std::min(got.size() / size, check.count);
  std::vector<size_t> order_g(n), order_w(n);
  for (size_t i = 0; i < n; ++i) order_g[i] = order_w[i] = i;
  auto value = [&](std::span<const std::byte> s, size_t i) { return s.data() + i * size; };
  if (check.unordered) {
    auto by_value = [&](std::span<const std::byte> s) {
      return [&, s](size_t a, size_t b) {
        if (type == Type::F32) {
          float x, y;
          std::memcpy(&x, value(s, a), 4);
          std::memcpy(&y, value(s, b), 4);
          return x < y;
        }
        return std::memcmp(value(s, a), value(s, b), size) < 0;
      };
    };
    std::sort(order_g.begin(), order_g.end(), by_value(got));
    std::sort(order_w.begin(), order_w.end(), by_value(want));
  }
  std::ostringstream errors;
  int shown = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::byte *g = value(got, order_g[i]), *w = value(want, order_w[i]);
    bool ok;
    if (type == Type::F32) {
      float gf, wf;
      std::memcpy(&gf, g, 4);
      std::memcpy(&wf, w, 4);
      ok = ulp_distance(gf, wf) <= check.tol.ulps || std::fabs(double{gf} - wf) <= check.tol.abs;
    } else if (type == Type::F64) {
      double gd, wd;
      std::memcpy(&gd, g, 8);
      std::memcpy(&wd, w, 8);
      ok = ulp_distance(gd, wd) <= check.tol.ulps || std::fabs(gd - wd) <= check.tol.abs;
    } else {
      ok = std::memcmp(g, w, size) == 0;
    }
    if (!ok && shown++ < 5)
      errors << "  " << check.name << "[" << order_g[i] << "] = " << format_value(type, g)
             << ", expected " << format_value(type, w) << "\n";
  }
  return errors.str();
}

/// The schedules of a run as "gemm:packed, softmax:rows".
std::string keys_of(const std::set<std::string> &keys) {
  std::string s;
  for (const auto &k : keys) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

/// Read-only inputs must come back bit for bit: a fast path that writes a `read` buffer (as
/// the CPU gemm once overwrote B) fails here whatever the outputs say.
void expect_read_only_unchanged(const Case &c, const Runner &runner, const isa::Kernel &kernel,
                                const CaseData &given, const CaseData &got) {
  for (const auto &p : kernel.params) {
    if (p.kind == isa::ParamKind::Scalar || p.access != isa::Access::Read) continue;
    const auto before = given.arrays.find(p.name), after = got.arrays.find(p.name);
    if (before == given.arrays.end() || after == got.arrays.end()) continue;
    EXPECT_TRUE(before->second.bytes == after->second.bytes)
        << c.name << " on " << runner.name() << ": read-only parameter %" << p.name
        << " changed during the launch";
  }
}

/// The schedules the run took must be exactly those the case names for this kind of backend.
void expect_paths(const Case &c, const Runner &runner) {
  const std::set<std::string> &want = runner.kind() == RunnerKind::Cpu ? c.cpu_paths
                                      : runner.kind() == RunnerKind::Device
                                          ? c.device_paths
                                          : std::set<std::string>{};
  if (want.empty()) return;
  std::set<std::string> got;
  for (const auto &[key, count] : runner.last_paths()) got.insert(key);
  EXPECT_EQ(got, want) << c.name << " on " << runner.name() << " took " << keys_of(got)
                       << ", expected " << keys_of(want);
}

/// One test: (case, runner, -O level index).
using Param = std::tuple<size_t, size_t, size_t>;
class Conformance : public ::testing::TestWithParam<Param> {};

TEST_P(Conformance, MatchesReference) {
  static const auto cases = all_cases();
  static const auto runners = make_runners();
  const Case &c = cases[std::get<0>(GetParam())];
  Runner &runner = *runners[std::get<1>(GetParam())];
  const auto &in = compiled(c.file, kOptLevels[std::get<2>(GetParam())]);
  const isa::Kernel *kernel =
      c.kernel.empty() ? &in.module.kernels.at(0) : in.module.find_kernel(c.kernel);
  ASSERT_NE(kernel, nullptr) << "no kernel " << c.kernel << " in " << c.file;

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
    std::string diff;
    // "cK" names class K of a circuit's boundary pool, unless the case has an array so named.
    if (!data.arrays.contains(check.name) && check.name.size() > 1 && check.name[0] == 'c' &&
        std::isdigit(static_cast<unsigned char>(check.name[1]))) {
      uint32_t k = static_cast<uint32_t>(std::stoul(check.name.substr(1)));
      auto bytes = [&](CaseData &d) {
        return std::span<const std::byte>(d.boundary.data() + uint64_t{k} * atlas::kClassBytes,
                                          atlas::kClassBytes);
      };
      diff = compare(check, Type::F32, bytes(data), bytes(expected));
    } else {
      auto &got = data.arrays.at(check.name);
      diff = compare(check, got.type, got.bytes, expected.arrays.at(check.name).bytes);
    }
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
