// Every benchmark row checks its result before it is timed (SPEC §14): a row's check runs its
// implementation once on fresh outputs and compares them with a reference computed in double
// precision; a mismatch stops the benchmark with a message naming the row. `--verify` runs
// every row's check without timing anything.
#pragma once

#include "tolerances.h"

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
