// A forward dataflow solver over the interprocedural CFG (a call flows into its callee, a
// `ret` to every return site), shared by the verifier's analyses. Internal to lib/isa.
#pragma once

#include "hologram/isa/cfg.h"

#include <deque>
#include <vector>

namespace hologram::isa::detail {

/// Computes the in-state of every block. `in[b]` starts as `bottom` except the entry block,
/// which starts as `entry_state`; `transfer(b, state)` applies block b; `join(into, from)`
/// merges and returns true when `into` changed. Every block is visited at least once when
/// `visit_all` is set (for analyses whose transfer depends on more than the in-state).
template <typename State, typename Transfer, typename Join>
std::vector<State> solve_forward(const Cfg &cfg, const State &bottom, const State &entry_state,
                                 Transfer &&transfer, Join &&join, bool visit_all = false) {
  const size_t n = cfg.blocks.size();
  std::vector<State> in(n, bottom);
  in[0] = entry_state;
  std::deque<uint32_t> work;
  std::vector<uint8_t> queued(n, 0);
  for (uint32_t b = 0; b < n; ++b)
    if (b == 0 || visit_all) {
      work.push_back(b);
      queued[b] = 1;
    }
  while (!work.empty()) {
    uint32_t b = work.front();
    work.pop_front();
    queued[b] = 0;
    State out = in[b];
    transfer(b, out);
    for (uint32_t s : cfg.flow_succs(b))
      if (join(in[s], out) && !queued[s]) {
        queued[s] = 1;
        work.push_back(s);
      }
  }
  return in;
}

} // namespace hologram::isa::detail
