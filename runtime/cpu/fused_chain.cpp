// Runs the whole-launch instructions that one call of generated code hands over: a single
// instruction, or an element-wise chain (hologram/isa/elementwise.h) fused range by range.
// A fused chain takes each range of a few KiB through every instruction while its arrays are
// in cache, so a chain of k operations reads and writes memory about once instead of k times.
// It is fused only when the launch's arrays give it the data effect of running the
// instructions one after another; otherwise they run one after another.
#include "library.h"

#include "gemm_kernel.h"
#include "hologram/isa/elementwise.h"
#include "library_operands.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <optional>

namespace hologram::runtime {

namespace {

using namespace library;

/// A register reader for `in`, whose operands' bits are regs[0], regs[1], ...
RegFn registers_of(const isa::Instruction &in, const uint64_t *regs) {
  return [&in, regs](isa::Reg r) -> uint64_t {
    for (size_t i = 0; i < in.operands.size(); ++i)
      if (in.operands[i].kind == isa::OperandKind::Reg && in.operands[i].index == r) return regs[i];
    return 0;
  };
}

/// The bytes of one array that a range of a fused chain covers: the few arrays of a chain stay
/// in the first-level cache from one instruction to the next. Measured on swiglu (silu then
/// map2.mul over 2^22 floats, out of cache; 2026-11-28, AVX-512, medians of alternating runs
/// at 1 thread): 2 KiB 1.44 ms against 8 KiB 1.88 (10 runs each), 2 KiB 1.42 against 4 KiB
/// 1.70 (8 runs each); 32 KiB took about 2.7 ms, and 1 KiB was slower than 2 again.
constexpr uint64_t kRangeBytes = 2048;

/// One instruction of a fused chain, ready to run on element ranges. `acc` carries a reducing
/// instruction's partial result over the ranges of one part; `first` says it has none yet.
using Step = std::function<void(uint64_t lo, uint64_t hi, uint64_t &acc, bool first)>;

/// The chain's instructions with their registers, and the launch's arguments.
struct Chain {
  const isa::Kernel &k;
  std::span<const isa::Instruction> insts;
  std::vector<RegFn> regs; ///< per instruction
  std::span<const CpuArg> args;
  uint64_t n = 0;
  uint64_t elem = 0; ///< bytes per element
  int level = 2;
};

/// Whether the chain may run range by range with the data effect of running its instructions
/// one after another: every array holds n elements, and of any two arrays of which one may be
/// written (its parameter is not read-only) both start at the same address or they do not
/// overlap. Element i then depends only on element i of what the instructions before it left.
bool fusible(const Chain &c) {
  if (c.n == 0) return false;
  std::vector<unsigned> params;
  for (const isa::Instruction &in : c.insts)
    for (size_t pos : isa::chain_buffer_operands(in)) {
      const unsigned p = in.operands[pos].index;
      if (Wide{c.args[p].size} < Wide{c.n} * c.elem) return false;
      if (std::find(params.begin(), params.end(), p) == params.end()) params.push_back(p);
    }
  const uint64_t bytes = c.n * c.elem;
  for (size_t i = 0; i < params.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const unsigned p = params[i], q = params[j];
      if (c.k.params[p].access == isa::Access::Read && c.k.params[q].access == isa::Access::Read)
        continue;
      const auto a = reinterpret_cast<uintptr_t>(c.args[p].data);
      const auto b = reinterpret_cast<uintptr_t>(c.args[q].data);
      if (a != b && a < b + bytes && b < a + bytes) return false;
    }
  return true;
}

/// Elements [lo, hi) of `in` by the reference implementation: its arrays start at element lo
/// and `n` reads hi - lo. The chain checked every array first, so a failure is a bug of ours.
Status reference_range(const Chain &c, size_t i, uint64_t lo, uint64_t hi, uint64_t &partial) {
  const isa::Instruction &in = c.insts[i];
  std::vector<CpuArg> sub(c.args.begin(), c.args.end());
  std::vector<bool> moved(sub.size());
  for (size_t pos : isa::chain_buffer_operands(in)) {
    const unsigned p = in.operands[pos].index;
    if (moved[p]) continue; // in place: one parameter for the output and an input
    moved[p] = true;
    sub[p].data = static_cast<std::byte *>(sub[p].data) + lo * c.elem;
    sub[p].size -= lo * c.elem;
  }
  const isa::Reg count = isa::element_count_register(in);
  auto reg = [&](isa::Reg r) { return r == count ? hi - lo : c.regs[i](r); };
  return interp::run_launch_instruction(c.k, in, values_of(c.k, sub), reg, partial);
}

/// The vectorised step of a float instruction, or nullopt where it has none (reductions other
/// than a sum and a dot product).
template <typename T> std::optional<Step> float_step(const Chain &c, size_t i) {
  const isa::Instruction &in = c.insts[i];
  const Operands o{in, c.args, c.regs[i], c.level};
  if (in.info().elementwise()) {
    RangeFn range = elementwise_range<T>(o);
    if (!range) return std::nullopt;
    return
        [range = std::move(range)](uint64_t lo, uint64_t hi, uint64_t &, bool) { range(lo, hi); };
  }
  const bool dot = in.op == isa::Opcode::Dot;
  if (!dot && static_cast<isa::ReduceOp>(in.sub) != isa::ReduceOp::Add) return std::nullopt;
  const T *x = o.data<T>(dot ? at<isa::Opcode::Dot>("x") : at<isa::Opcode::ReduceAll>("src"));
  const T *y = dot ? o.data<T>(at<isa::Opcode::Dot>("y")) : nullptr;
  const int level = c.level;
  return [=](uint64_t lo, uint64_t hi, uint64_t &acc, bool first) {
    const T s = cpu_sum(x + lo, y ? y + lo : nullptr, hi - lo, level);
    const T total = first ? s : scalar_of<T>(acc) + s;
    if constexpr (std::is_same_v<T, float>)
      acc = isa::f32_bits(total);
    else
      acc = isa::f64_bits(total);
  };
}

/// The step of instruction i: vectorised where it can be, else the reference on the range.
Step step_of(const Chain &c, size_t i, std::atomic<bool> &failed) {
  const isa::Instruction &in = c.insts[i];
  std::optional<Step> fast;
  if (in.type == isa::Type::F32) fast = float_step<float>(c, i);
  if (in.type == isa::Type::F64) fast = float_step<double>(c, i);
  if (fast) return std::move(*fast);
  const bool reduces = in.info().reduces();
  return [&c, i, reduces, &failed](uint64_t lo, uint64_t hi, uint64_t &acc, bool first) {
    uint64_t partial = 0;
    if (!reference_range(c, i, lo, hi, partial)) failed = true;
    if (reduces) acc = first ? partial : combine(c.insts[i], acc, partial);
  };
}

/// Runs a fusible chain: its parts spread over the thread pool, each part through every
/// instruction one range at a time. A last reducing instruction's partial results are combined
/// in order. Returns the reduction's value (0 when there is none), and in `paired` which
/// instructions ran in one pass with the next or the one before.
Status run_fused(const Chain &c, uint64_t &result, std::vector<bool> &paired) {
  std::atomic<bool> failed{false};
  std::vector<Step> steps;
  for (size_t i = 0; i < c.insts.size(); ++i) {
    // A map into an array that the next instruction, a map2, reads: one pass for both, which
    // reads the map2's other array while the map computes (SwiGLU's silu(x)·g).
    if (i + 1 < c.insts.size()) {
      const Operands first{c.insts[i], c.args, c.regs[i], c.level};
      const Operands second{c.insts[i + 1], c.args, c.regs[i + 1], c.level};
      if (RangeFn both = map_then_map2_range(first, second)) {
        steps.push_back(
            [both = std::move(both)](uint64_t lo, uint64_t hi, uint64_t &, bool) { both(lo, hi); });
        paired[i] = paired[i + 1] = true;
        ++i;
        continue;
      }
    }
    steps.push_back(step_of(c, i, failed));
  }
  const bool reduces = c.insts.back().info().reduces();
  const uint64_t range = std::max<uint64_t>(kRangeBytes / c.elem, 1);
  const uint64_t parts = parts_of(c.n, 16384);
  std::vector<uint64_t> partial(parts);
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = c.n * p / parts, hi = c.n * (p + 1) / parts;
    uint64_t acc = 0;
    for (uint64_t r = lo; r < hi; r += range) {
      const uint64_t end = std::min(hi, r + range);
      for (const Step &step : steps) step(r, end, acc, r == lo);
    }
    partial[p] = acc;
  });
  if (failed)
    return {ErrorCode::Internal,
            "a fused element-wise chain failed after its arrays were checked (a bug in "
            "hologram's CPU runtime: please report it)"};
  result = 0;
  if (reduces) {
    result = partial[0];
    for (uint64_t p = 1; p < parts; ++p) result = combine(c.insts.back(), result, partial[p]);
  }
  return {};
}

} // namespace

LaunchOpsOutcome run_cpu_launch_ops(const isa::Kernel &kernel, uint32_t first, uint32_t count,
                                    std::span<const CpuArg> args, const uint64_t *regs,
                                    uint64_t &result, const CpuLibraryEnv &env) {
  if (count == 0 || first > kernel.insts.size() || count > kernel.insts.size() - first)
    return {{ErrorCode::Internal, "generated code asked for whole-launch instructions " +
                                      std::to_string(first) + " +" + std::to_string(count) +
                                      " of a kernel of " + std::to_string(kernel.insts.size())},
            first};
  const std::span<const isa::Instruction> insts(kernel.insts.data() + first, count);
  Chain c{kernel, insts, {}, args};
  for (const isa::Instruction &in : insts) {
    c.regs.push_back(registers_of(in, regs));
    regs += in.operands.size();
  }
  if (count > 1) {
    c.n = c.regs[0](isa::element_count_register(insts[0]));
    c.elem = isa::type_size(insts[0].type);
    c.level = env.level;
    if (fusible(c)) {
      std::vector<bool> paired(count);
      Status st = run_fused(c, result, paired);
      if (st && env.paths)
        for (uint32_t i = 0; i < count; ++i)
          env.paths->count(insts[i].op, paired[i] ? "fused-pair" : "fused");
      return {std::move(st), first};
    }
  }
  for (uint32_t i = 0; i < count; ++i) {
    Status st = run_cpu_launch_op(kernel, insts[i], args, c.regs[i], result, env);
    if (!st) return {std::move(st), first + i};
  }
  return {};
}

} // namespace hologram::runtime
