// Verifier rule family: control flow. Reducibility of every function's CFG, `ret` outside a
// called function, recursion, and the static call depth.
#include "verify_context.h"

#include <algorithm>
#include <functional>

namespace hologram::isa::detail {

namespace {

void check_reducible(VerifyContext &cx, uint32_t entry) {
  const Cfg &cfg = cx.cfg;
  auto idom = dominators(cfg, entry);
  // DFS; an edge to a block on the stack is a retreating edge and must target a dominator.
  std::vector<uint8_t> state(cfg.blocks.size(), 0); // 0 new, 1 on stack, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack{{entry, 0}};
  state[entry] = 1;
  while (!stack.empty()) {
    auto &[b, i] = stack.back();
    const auto &succs = cfg.blocks[b].succs;
    if (i < succs.size()) {
      uint32_t s = succs[i++];
      if (state[s] == 1 && !dominates(idom, s, b)) {
        uint32_t last = cfg.blocks[b].end ? cfg.blocks[b].end - 1 : 0;
        cx.error_at(last,
                    "irreducible control flow: this jump enters the loop at " +
                        cx.describe_block(s) + " without passing through its header",
                    {"every loop must be entered through one header block (SPEC §3.4)"});
        return;
      }
      if (state[s] == 0) {
        state[s] = 1;
        stack.push_back({s, 0});
      }
    } else {
      state[b] = 2;
      stack.pop_back();
    }
  }
}

} // namespace

void verify_control(VerifyContext &cx) {
  const Cfg &cfg = cx.cfg;
  const Kernel &k = cx.kernel;
  for (uint32_t entry : cfg.function_entries) check_reducible(cx, entry);

  // `ret` reachable from the kernel entry without a call.
  for (uint32_t b : reverse_post_order(cfg, 0))
    if (cfg.blocks[b].ends_in_ret) {
      cx.error_at(cfg.blocks[b].end - 1, "'ret' is reachable outside a called function",
                  {"the kernel body ends with 'exit'; 'ret' returns from a 'call'"});
      return;
    }

  // Call graph over functions; recursion and depth.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> calls(
      cfg.blocks.size()); // (callee, inst)
  for (uint32_t entry : cfg.function_entries)
    for (uint32_t b : reverse_post_order(cfg, entry))
      if (cfg.blocks[b].call_target != kNoBlock)
        calls[entry].push_back({cfg.blocks[b].call_target, cfg.blocks[b].end - 1});
  std::vector<uint8_t> state(cfg.blocks.size(), 0);
  std::vector<uint32_t> depth(cfg.blocks.size(), 0);
  bool failed = false;
  std::function<void(uint32_t)> visit = [&](uint32_t f) {
    state[f] = 1;
    uint32_t d = 0;
    for (auto [callee, inst] : calls[f]) {
      if (failed) return;
      if (state[callee] == 1) {
        cx.error_at(
            inst, "recursive call: " + cx.describe_block(callee) + " can reach this call to itself",
            {"calls use a per-lane return stack without frames; recursion is rejected"});
        failed = true;
        return;
      }
      if (state[callee] == 0) visit(callee);
      d = std::max(d, depth[callee] + 1);
    }
    depth[f] = d;
    state[f] = 2;
  };
  visit(0);
  if (!failed && depth[0] > cx.opts.max_call_depth)
    cx.error_kernel("kernel '" + k.name + "' nests calls " + std::to_string(depth[0]) +
                    " deep; the return stack holds " + std::to_string(cx.opts.max_call_depth));
}

} // namespace hologram::isa::detail
