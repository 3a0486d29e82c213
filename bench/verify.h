// Every benchmark row checks its result before it is timed (SPEC §14): a row's check runs its
// implementation once on fresh outputs and compares them with a reference computed in double
// precision; a mismatch stops the benchmark with a message naming the row. `--verify` runs
// every row's check without timing anything.
#pragma once

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

/// Expected values with a tolerance each: |got - want| <= tol.
struct Tolerances {
  std::vector<double> want, tol;
};

/// "" when every element of `got` is within tolerance of `expected`, else the first mismatches.
template <typename T>
inline std::string mismatches_of(const std::string &what, std::span<const T> got,
                                 const Tolerances &expected) {
  if (got.size() != expected.want.size())
    return what + ": " + std::to_string(got.size()) + " values, expected " +
           std::to_string(expected.want.size());
  std::string out;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = expected.want[i];
    if (std::fabs(g - w) <= expected.tol[i]) continue; // NaN never passes
    if (++bad <= 3) {
      char line[160];
      std::snprintf(line, sizeof line, "%s%s[%zu] = %.17g, expected %.17g (tolerance %.3g)",
                    out.empty() ? "" : "; ", what.c_str(), i, g, w, expected.tol[i]);
      out += line;
    }
  }
  if (bad > 3) out += "; " + std::to_string(bad - 3) + " more";
  return out;
}
inline std::string mismatches(const std::string &what, std::span<const float> got,
                              const Tolerances &expected) {
  return mismatches_of(what, got, expected);
}
inline std::string mismatches(const std::string &what, std::span<const double> got,
                              const Tolerances &expected) {
  return mismatches_of(what, got, expected);
}

/// One value against its reference.
inline std::string mismatch(const std::string &what, double got, double want, double tol) {
  if (std::fabs(got - want) <= tol) return "";
  char line[160];
  std::snprintf(line, sizeof line, "%s = %.9g, expected %.9g (tolerance %.3g)", what.c_str(), got,
                want, tol);
  return line;
}

/// A row's check: runs the row's implementation once and returns "" or what is wrong.
using RowCheck = std::function<std::string()>;

/// Every registered row's name and check, in registration order (for --verify).
inline std::vector<std::pair<std::string, RowCheck>> &row_checks() {
  static std::vector<std::pair<std::string, RowCheck>> rows;
  return rows;
}

/// Runs `check` for row `name`; prints the mismatch and exits with status 1 when it fails.
inline void verify_row(const std::string &name, const RowCheck &check) {
  if (std::string why = check(); !why.empty()) {
    std::fprintf(stderr, "bench: row %s gives wrong results: %s\n", name.c_str(), why.c_str());
    std::exit(1);
  }
}

/// Registers a row whose `check` runs once, before its first timed iteration; `setup` and
/// `teardown` run around each timing (thread counts).
inline void add_checked_row(
    const std::string &name, std::function<void()> body, RowCheck check, double bytes, double flops,
    std::function<void()> setup = [] {}, std::function<void()> teardown = [] {}) {
  row_checks().emplace_back(name, check);
  auto checked = std::make_shared<bool>(false);
  benchmark::RegisterBenchmark(
      name.c_str(),
      [=](benchmark::State &st) {
        setup();
        if (!*checked) {
          verify_row(name, check);
          *checked = true;
        }
        for (auto _ : st) body();
        if (bytes > 0) st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
        if (flops > 0)
          st.counters["FLOPS"] =
              benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
        teardown();
      })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

/// `--verify` in argv: runs every row's check, reports, and returns the exit status; -1 when
/// the flag is absent (benchmarks run as usual, each checking itself first).
inline int verify_only(int argc, char **argv) {
  bool wanted = false;
  for (int i = 1; i < argc; ++i) wanted |= std::string(argv[i]) == "--verify";
  if (!wanted) return -1;
  for (const auto &[name, check] : row_checks()) verify_row(name, check);
  std::printf("bench: %zu rows verified\n", row_checks().size());
  return 0;
}
