// See library.h. Partitioning keeps one definition of each operation's semantics (the
// interpreter's): a range of rows or elements is the same operation on shorter arrays, so
// each thread runs the reference on its range. A range's arrays start at its first element
// and keep the whole buffer's end, so a range fits exactly when the whole operation does;
// when any range fails, the whole operation reruns alone to report the reference's error.
// Operands are read by their names in the instruction table (Operands<Op>), never by position.
#include "library.h"

#include "library_operands.h"

#include "gemm_kernel.h"
#include "hologram/isa/attention_operands.h"
#include "hologram/isa/elementwise.h"
#include "hologram/isa/gemm_operands.h"
#include "hologram/isa/numeric.h"
#include "hologram/support/unreachable.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <optional>
#include <type_traits>

namespace hologram::runtime {

namespace library {

std::vector<interp::ArgValue> values_of(const isa::Kernel &k, std::span<const CpuArg> args) {
  std::vector<interp::ArgValue> v;
  for (size_t i = 0; i < k.params.size(); ++i) {
    std::span<std::byte> mem(static_cast<std::byte *>(args[i].data), args[i].size);
    v.push_back(k.params[i].kind == isa::ParamKind::Scalar ? interp::ArgValue::scalar(args[i].bits)
                : k.params[i].kind == isa::ParamKind::Pool ? interp::ArgValue::pool(mem)
                                                           : interp::ArgValue::buffer(mem));
  }
  return v;
}

uint64_t parts_of(uint64_t n, uint64_t grain) {
  const uint64_t threads = std::max(1u, cpu_threads());
  const uint64_t parts = std::clamp<uint64_t>(n / std::max<uint64_t>(grain, 1), 1, threads * 4);
  // Equal parts are equal shares only in a multiple of the threads: 5 parts on 2 threads are
  // 3 against 2 (a transformer's 288-row gemvs); 4 are 2 each.
  return parts > threads ? parts - parts % threads : parts;
}

void ranges(uint64_t n, uint64_t grain, const std::function<void(uint64_t, uint64_t)> &body) {
  const uint64_t parts = parts_of(n, grain);
  parallel_for(parts, [&](size_t p) { body(n * p / parts, n * (p + 1) / parts); });
}

uint64_t combine(const isa::Instruction &in, uint64_t a, uint64_t b) {
  auto op = static_cast<isa::ReduceOp>(in.sub);
  auto fold = [&](auto x, auto y) -> decltype(x) {
    using T = decltype(x);
    switch (op) {
    case isa::ReduceOp::Add:
      if constexpr (std::is_integral_v<T>)
        return isa::wrap_add(x, y);
      else
        return x + y;
    case isa::ReduceOp::Mul:
      if constexpr (std::is_integral_v<T>)
        return isa::wrap_mul(x, y);
      else
        return x * y;
    case isa::ReduceOp::Min:
      if constexpr (std::is_floating_point_v<decltype(x)>)
        return std::fmin(x, y);
      else
        return std::min(x, y);
    case isa::ReduceOp::Max:
      if constexpr (std::is_floating_point_v<decltype(x)>)
        return std::fmax(x, y);
      else
        return std::max(x, y);
    }
    return x;
  };
  switch (in.type) {
  case isa::Type::F32: return isa::f32_bits(fold(isa::bits_to_f32(a), isa::bits_to_f32(b)));
  case isa::Type::F64: return isa::f64_bits(fold(isa::bits_to_f64(a), isa::bits_to_f64(b)));
  case isa::Type::I8:
    return static_cast<uint8_t>(fold(static_cast<int8_t>(a), static_cast<int8_t>(b)));
  case isa::Type::I16:
    return static_cast<uint16_t>(fold(static_cast<int16_t>(a), static_cast<int16_t>(b)));
  case isa::Type::I32:
    return static_cast<uint32_t>(fold(static_cast<int32_t>(a), static_cast<int32_t>(b)));
  case isa::Type::I64:
    return static_cast<uint64_t>(fold(static_cast<int64_t>(a), static_cast<int64_t>(b)));
  case isa::Type::U8:
    return static_cast<uint8_t>(fold(static_cast<uint8_t>(a), static_cast<uint8_t>(b)));
  case isa::Type::U16:
    return static_cast<uint16_t>(fold(static_cast<uint16_t>(a), static_cast<uint16_t>(b)));
  case isa::Type::U32:
    return static_cast<uint32_t>(fold(static_cast<uint32_t>(a), static_cast<uint32_t>(b)));
  case isa::Type::BF16:
  case isa::Type::F16:
  case isa::Type::None:
  case isa::Type::Pred:
  case isa::Type::U64: return fold(a, b);
  }
  unreachable_enum("Type");
}

template <typename T> RangeFn elementwise_range(const Operands &o) {
  using enum isa::Opcode;
  using isa::LaunchOpcode;
  const uint64_t n = o.reg(isa::element_count_register(o.in));
  for (size_t pos : isa::chain_buffer_operands(o.in))
    if (!o.holds<T>(pos, n)) return {};
  const int level = o.level;
  // f32 exp, sigmoid and silu are evaluated in f32 vectors (docs/isa.md gives their bounds);
  // the others in f64 vectors rounded once, as the reference evaluates them.
  auto unary = [&](size_t dst, size_t src, MapKind kind) -> RangeFn {
    T *y = o.data<T>(dst);
    const T *x = o.data<T>(src);
    return
        [=](uint64_t lo, uint64_t hi) { HG_LEVEL_CALL(level, map, kind, x + lo, y + lo, hi - lo); };
  };
  switch (isa::as_launch(o.in.op)) {
  case LaunchOpcode::Map:
    return unary(at<Map>("dst"), at<Map>("src"), map_kind(static_cast<isa::MapUnaryOp>(o.in.sub)));
  case LaunchOpcode::Silu: return unary(at<Silu>("y"), at<Silu>("x"), MapKind::Silu);
  case LaunchOpcode::Gelu: return unary(at<Gelu>("y"), at<Gelu>("x"), MapKind::Gelu);
  case LaunchOpcode::GeluTanh:
    return unary(at<GeluTanh>("y"), at<GeluTanh>("x"), MapKind::GeluTanh);
  case LaunchOpcode::Map2: {
    T *y = o.data<T>(at<Map2>("dst"));
    const T *a = o.data<T>(at<Map2>("a")), *b = o.data<T>(at<Map2>("b"));
    const auto kind = static_cast<MapKind2>(o.in.sub);
    return [=](uint64_t lo, uint64_t hi) {
      HG_LEVEL_CALL(level, map2, kind, a + lo, b + lo, y + lo, hi - lo);
    };
  }
  case LaunchOpcode::Axpy: {
    T *y = o.data<T>(at<Axpy>("y"));
    const T *x = o.data<T>(at<Axpy>("x"));
    const T alpha = o.scalar<T>(at<Axpy>("alpha"));
    return [=](uint64_t lo, uint64_t hi) {
      HG_LEVEL_CALL(level, axpy, y + lo, x + lo, hi - lo, alpha);
    };
  }
  case LaunchOpcode::ReduceAll:
  case LaunchOpcode::Gemm:
  case LaunchOpcode::Gemv:
  case LaunchOpcode::BatchedGemm:
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax:
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm:
  case LaunchOpcode::Rope:
  case LaunchOpcode::Attention:
  case LaunchOpcode::Conv2d:
  case LaunchOpcode::Dot: return {}; // not element-wise
  }
  unreachable_enum("LaunchOpcode");
}
template RangeFn elementwise_range<float>(const Operands &o);
template RangeFn elementwise_range<double>(const Operands &o);

RangeFn map_then_map2_range(const Operands &first, const Operands &second) {
  using enum isa::Opcode;
  if (first.in.type != isa::Type::F32 || second.in.type != isa::Type::F32 || second.in.op != Map2)
    return {};
  MapKind kind{};
  size_t dst = 0, src = 0;
  if (first.in.op == Map) {
    kind = map_kind(static_cast<isa::MapUnaryOp>(first.in.sub));
    dst = at<Map>("dst");
    src = at<Map>("src");
  } else if (first.in.op == Silu) {
    kind = MapKind::Silu;
    dst = at<Silu>("y");
    src = at<Silu>("x");
  } else {
    return {};
  }
  // The map's output is one of the map2's operands; the other is b.
  const size_t a_pos = at<Map2>("a"), b_pos = at<Map2>("b");
  auto is_t = [&](size_t pos) {
    return second.in.operands[pos].kind == isa::OperandKind::Param &&
           second.in.operands[pos].index == first.in.operands[dst].index;
  };
  if (!is_t(a_pos) && !is_t(b_pos)) return {};
  const bool map_first = is_t(a_pos);
  const uint64_t n = first.reg(isa::element_count_register(first.in));
  for (size_t pos : isa::chain_buffer_operands(first.in))
    if (!first.holds<float>(pos, n)) return {};
  for (size_t pos : isa::chain_buffer_operands(second.in))
    if (!second.holds<float>(pos, n)) return {};
  const auto op2 = static_cast<MapKind2>(second.in.sub);
  const float *x = first.data<float>(src), *b = second.data<float>(map_first ? b_pos : a_pos);
  float *t = first.data<float>(dst), *y = second.data<float>(at<Map2>("dst"));
  const int level = first.level;
  // Whether the level kernel has this pair: asked with no elements, it writes nothing.
  if (!HG_LEVEL_CALL(level, map_then_map2, kind, x, t, op2, b, map_first, y, 0)) return {};
  return [=](uint64_t lo, uint64_t hi) {
    HG_LEVEL_CALL(level, map_then_map2, kind, x + lo, t + lo, op2, b + lo, map_first, y + lo,
                  hi - lo);
  };
}

} // namespace library

namespace {

using namespace library;
using isa::LaunchOpcode;
using isa::Opcode;

/// What the runtime needs to run one whole-launch instruction, and what it reports back: the
/// schedule that ran (Backend::library_path_counts) and the instruction's result.
struct OpRun {
  const isa::Kernel &k;
  Operands ops;
  uint64_t &result;
  std::string_view path = "reference";

  [[nodiscard]] const isa::Instruction &in() const { return ops.in; }
};

/// The reference implementation over the whole operation.
Status run_reference(OpRun &r) {
  r.path = "reference";
  return interp::run_launch_instruction(r.k, r.in(), values_of(r.k, r.ops.args), r.ops.reg,
                                        r.result);
}

/// How an operation without a vectorised schedule (integer maps, reductions other than a
/// float sum, f64 rows) splits: over `count` units of `unit` elements (a register operand, or
/// 1) of the buffers `offsets`.
struct Split {
  size_t count = 0;
  std::optional<size_t> unit; ///< rows: the operand holding elements per row
  std::vector<size_t> offsets;
  bool reduces = false; ///< partial results combine (reduce_all)
};

template <Opcode Op> Split rows_split() {
  return Split{at<Op>("rows"), at<Op>("cols"), {at<Op>("y"), at<Op>("x")}, false};
}

std::optional<Split> split_of(const isa::Instruction &in) {
  using enum Opcode;
  switch (isa::as_launch(in.op)) {
  case LaunchOpcode::Map:
    return Split{at<Map>("n"), std::nullopt, {at<Map>("dst"), at<Map>("src")}, false};
  case LaunchOpcode::Map2:
    return Split{
        at<Map2>("n"), std::nullopt, {at<Map2>("dst"), at<Map2>("a"), at<Map2>("b")}, false};
  case LaunchOpcode::ReduceAll:
    return Split{at<ReduceAll>("n"), std::nullopt, {at<ReduceAll>("src")}, true};
  case LaunchOpcode::Softmax: return rows_split<Softmax>();
  case LaunchOpcode::LogSoftmax: return rows_split<LogSoftmax>();
  case LaunchOpcode::RmsNorm: return rows_split<RmsNorm>();
  case LaunchOpcode::LayerNorm: return rows_split<LayerNorm>();
  case LaunchOpcode::Gemm:
  case LaunchOpcode::Gemv:
  case LaunchOpcode::BatchedGemm:
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh:
  case LaunchOpcode::Rope:
  case LaunchOpcode::Attention:
  case LaunchOpcode::Conv2d:
  case LaunchOpcode::Dot:
  case LaunchOpcode::Axpy: return std::nullopt;
  }
  unreachable_enum("LaunchOpcode");
}

Status run_split(OpRun &r, const Split &s) {
  const auto &ops = r.in().operands;
  const std::span<const CpuArg> args = r.ops.args;
  const uint64_t count = r.ops.u(s.count);
  const uint64_t unit = s.unit ? r.ops.u(*s.unit) : 1;
  const uint64_t elem = isa::type_size(r.in().type);
  // Ranges of at least 16K elements, at most 4 per thread.
  const uint64_t min_units = std::max<uint64_t>(1, 16384 / std::max<uint64_t>(unit, 1));
  const uint64_t parts =
      std::min<uint64_t>(uint64_t{cpu_threads()} * 4, std::max<uint64_t>(1, count / min_units));
  if (parts <= 1) return run_reference(r);
  std::vector<uint64_t> partial(parts);
  std::atomic<bool> failed{false};
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = count * p / parts, hi = count * (p + 1) / parts;
    std::vector<CpuArg> sub(args.begin(), args.end());
    std::vector<bool> moved(sub.size());
    for (size_t o : s.offsets) {
      // Each parameter once: an operation in place names one for its output and its input.
      if (ops[o].kind != isa::OperandKind::Param || moved[ops[o].index]) continue;
      moved[ops[o].index] = true;
      auto &a = sub[ops[o].index];
      const uint64_t skip = std::min(a.size, lo * unit * elem);
      a.data = static_cast<std::byte *>(a.data) + skip;
      a.size -= skip;
    }
    auto sub_reg = [&](isa::Reg reg) {
      return reg == ops[s.count].index ? hi - lo : r.ops.reg(reg);
    };
    if (!interp::run_launch_instruction(r.k, r.in(), values_of(r.k, sub), sub_reg, partial[p]))
      failed = true;
  });
  if (failed) return run_reference(r); // the reference's own error for the whole operation
  r.path = "split";
  if (s.reduces) {
    r.result = partial[0];
    for (uint64_t p = 1; p < parts; ++p) r.result = combine(r.in(), r.result, partial[p]);
  }
  return {};
}

/// gemm and batched_gemm through the packed kernel; anything the reference refuses (leading
/// dimensions, extents) runs the reference, which reports it with the reference's rules.
template <typename T> Status run_gemm(OpRun &r) {
  const Operands &o = r.ops;
  const isa::GemmOperands op = isa::gemm_operands(o.in, o.reg);
  GemmArgs<T> g;
  g.m = op.m;
  g.n = op.n;
  g.k = op.k;
  g.alpha = scalar_of<T>(op.alpha_bits);
  g.beta = scalar_of<T>(op.beta_bits);
  g.lda = op.lda;
  g.ldb = op.ldb;
  g.ldc = op.ldc;
  g.trans_a = op.trans_a;
  g.trans_b = op.trans_b;
  const uint64_t batch = op.batch, sa = op.stride_a, sb = op.stride_b, sc = op.stride_c;
  const uint64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const uint64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  if (batch == 0 || g.m == 0 || g.n == 0) {
    r.path = "empty";
    return {};
  }
  if (g.lda < a_cols || g.ldb < b_cols || g.ldc < g.n) return run_reference(r);
  auto extent = [&](uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride) -> Wide {
    return rows == 0 ? 0 : Wide{batch - 1} * stride + Wide{rows - 1} * ld + cols;
  };
  if (!o.holds<T>(op.c, extent(g.m, g.n, g.ldc, sc)) ||
      !o.holds<T>(op.a, extent(a_rows, a_cols, g.lda, sa)) ||
      !o.holds<T>(op.b, extent(b_rows, b_cols, g.ldb, sb)))
    return run_reference(r);
  const T *A = o.data<T>(op.a);
  const T *B = o.data<T>(op.b);
  T *C = o.data<T>(op.c);
  for (uint64_t b = 0; b < batch; ++b) {
    g.a = A + b * sa;
    g.b = B + b * sb;
    g.c = C + b * sc;
    cpu_gemm(g, o.level);
  }
  r.path = "packed";
  return {};
}

} // namespace

int library_level(std::string_view features) {
  auto has = [&](std::string_view f) {
    for (size_t at = features.find(f); at != std::string_view::npos; at = features.find(f, at + 1))
      if ((at == 0 || features[at - 1] == ',') &&
          (at + f.size() == features.size() || features[at + f.size()] == ','))
        return true;
    return false;
  };
  if (has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl")) return 4;
  if (has("avx2") && has("fma")) return 3;
  return 2;
}

void cpu_gemm(const GemmArgs<float> &g, int level) {
  HG_LEVEL_CALL(level, gemm, g);
}
void cpu_gemm(const GemmArgs<double> &g, int level) {
  HG_LEVEL_CALL(level, gemm, g);
}

float cpu_sum(const float *x, const float *y, uint64_t n, int level) {
  return HG_LEVEL_CALL(level, sum, x, y, n);
}
double cpu_sum(const double *x, const double *y, uint64_t n, int level) {
  return HG_LEVEL_CALL(level, sum, x, y, n);
}

namespace {

/// softmax, log_softmax, rmsnorm and layernorm of f32 rows: f32 vectors with compensated sums,
/// within the bounds of docs/isa.md (library_accuracy.h); rows spread over the thread pool.
template <Opcode Op> const char *fast_rows(const Operands &o) {
  constexpr bool softmax = Op == Opcode::Softmax || Op == Opcode::LogSoftmax;
  constexpr bool layer = Op == Opcode::LayerNorm;
  const uint64_t rows = o.u(at<Op>("rows")), cols = o.u(at<Op>("cols"));
  const Wide all = Wide{rows} * cols;
  if (!o.holds<float>(at<Op>("y"), all) || !o.holds<float>(at<Op>("x"), all)) return nullptr;
  float *y = o.data<float>(at<Op>("y"));
  const float *x = o.data<float>(at<Op>("x"));
  const float *gamma = nullptr, *beta = nullptr;
  double eps = 0;
  if constexpr (!softmax) {
    if (!o.holds<float>(at<Op>("gamma"), cols)) return nullptr;
    gamma = o.data<float>(at<Op>("gamma"));
    eps = o.scalar<float>(at<Op>("eps"));
  }
  if constexpr (layer) {
    if (!o.holds<float>(at<Op>("beta"), cols)) return nullptr;
    beta = o.data<float>(at<Op>("beta"));
  }
  // The norms write y once, after their last read of x: where x and y together outgrow the
  // cache, y streams (non-temporal stores; docs/design.md), unless it shares memory with x.
  [[maybe_unused]] bool streaming = false;
  if constexpr (!softmax) {
    const uint64_t bytes = rows * cols * sizeof(float), limit = cpu_stream_bytes();
    const bool apart = y + rows * cols <= x || x + rows * cols <= y;
    streaming = limit != 0 && 2 * bytes >= limit && apart;
  }
  ranges(rows, 16384 / std::max<uint64_t>(cols, 1), [&](uint64_t lo, uint64_t hi) {
    if constexpr (softmax)
      HG_LEVEL_CALL(o.level, softmax_rows, x + lo * cols, y + lo * cols, hi - lo, cols,
                    Op == Opcode::LogSoftmax);
    else
      HG_LEVEL_CALL(o.level, norm_rows, x + lo * cols, y + lo * cols, gamma, beta, hi - lo, cols,
                    eps, layer, streaming);
  });
  return "rows";
}

/// rope of f32/f64 rows, vectorised and spread over the thread pool.
template <typename T> const char *fast_rope(const Operands &o) {
  constexpr Opcode Op = Opcode::Rope;
  const uint64_t rows = o.u(at<Op>("rows")), dim = o.u(at<Op>("dim")), half = dim / 2;
  if (dim % 2 || !o.holds<T>(at<Op>("y"), Wide{rows} * dim) ||
      !o.holds<T>(at<Op>("x"), Wide{rows} * dim) || !o.holds<T>(at<Op>("cos"), Wide{rows} * half) ||
      !o.holds<T>(at<Op>("sin"), Wide{rows} * half))
    return nullptr;
  T *y = o.data<T>(at<Op>("y"));
  const T *x = o.data<T>(at<Op>("x")), *cs = o.data<T>(at<Op>("cos")),
          *sn = o.data<T>(at<Op>("sin"));
  ranges(rows, 16384 / std::max<uint64_t>(dim, 1), [&](uint64_t lo, uint64_t hi) {
    HG_LEVEL_CALL(o.level, rope_rows, y + lo * dim, x + lo * dim, cs + lo * half, sn + lo * half,
                  hi - lo, dim);
  });
  return "vector";
}

/// gemv: rows as vectorised dot products, or, transposed, as a one-row GEMM.
template <typename T> const char *fast_gemv(const Operands &o) {
  constexpr Opcode Op = Opcode::Gemv;
  const uint64_t m = o.u(at<Op>("M")), n = o.u(at<Op>("N")), lda = o.u(at<Op>("lda"));
  const T alpha = o.scalar<T>(at<Op>("alpha")), beta = o.scalar<T>(at<Op>("beta"));
  const bool trans = o.flag(at<Op>("transA"));
  const uint64_t rows = trans ? n : m, cols = trans ? m : n;
  if (lda < n || !o.holds<T>(at<Op>("y"), rows) || !o.holds<T>(at<Op>("x"), cols) ||
      !o.holds<T>(at<Op>("A"), m ? Wide{m - 1} * lda + n : 0))
    return nullptr;
  T *y = o.data<T>(at<Op>("y"));
  const T *A = o.data<T>(at<Op>("A")), *x = o.data<T>(at<Op>("x"));
  if (trans) {
    cpu_gemm(GemmArgs<T>{.m = 1,
                         .n = n,
                         .k = m,
                         .alpha = alpha,
                         .beta = beta,
                         .a = x,
                         .lda = m,
                         .b = A,
                         .ldb = lda,
                         .c = y,
                         .ldc = n},
             o.level);
    return "gemm";
  }
  // Parts of at least 16384 elements of A. Up to a part of 131072 elements (512 KiB of f32)
  // per thread, one part per thread: gemv_rows reads a part by quarters, and the longer the
  // quarters the faster (a transformer's 768 x 288 f32 on two threads of the AVX2 EPYC,
  // 2026-11-29: 20-22 GB/s in 8 parts, 25-31 in 2). Beyond that, more parts for balance.
  const uint64_t threads = std::max(1u, cpu_threads()), share = m / threads;
  const uint64_t big = 131072 / std::max<uint64_t>(n, 1);
  const uint64_t grain =
      share >= big ? big : std::max<uint64_t>(16384 / std::max<uint64_t>(n, 1), share);
  ranges(m, grain, [&](uint64_t lo, uint64_t hi) {
    // Dots of a block of rows, then y's update; gemv_rows reads the block's rows by quarters
    // (64-row streams).
    constexpr uint64_t kBlock = 256;
    T dots[kBlock];
    for (uint64_t i0 = lo; i0 < hi; i0 += kBlock) {
      const uint64_t count = std::min(kBlock, hi - i0);
      HG_LEVEL_CALL(o.level, gemv_rows, A + i0 * lda, lda, x, count, n, dots);
      for (uint64_t r = 0; r < count; ++r)
        y[i0 + r] = alpha * dots[r] + (beta == T{0} ? T{0} : beta * y[i0 + r]);
    }
  });
  return "dot";
}

/// f32 attention of one query row (decoding: each new token against a KV cache). The positions
/// are split between the threads; each part reads its key rows, then its value rows, once and
/// in order, all the heads at each position (decode_scores, decode_values), not once per head
/// at a stride. The scale is folded into the query; the softmax of each head's scores is the
/// library's f32 row kernel, between the two passes; the parts' weighted sums of the values
/// are added in part order. Every key is seen (a causal mask hides none from the last query).
const char *decode_attention(const Operands &o, const isa::AttentionOperands &a, uint64_t kv_rows) {
  const uint64_t sk = a.seq_k, d = a.head_dim, heads = a.heads;
  const float scale = scalar_of<float>(a.scale_bits);
  float *out = o.data<float>(a.out);
  const float *Q = o.data<float>(a.q), *K = o.data<float>(a.k), *V = o.data<float>(a.v);
  thread_local std::vector<float> q, p, partial;
  thread_local std::vector<uint64_t> kv;
  q.resize(heads * d);
  p.resize(heads * sk);
  kv.resize(heads);
  for (uint64_t h = 0; h < heads; ++h) {
    kv[h] = a.kv_offset(h);
    const float *qh = Q + h * a.q_head_stride;
    for (uint64_t c = 0; c < d; ++c) q[h * d + c] = qh[c] * scale;
  }
  // Parts of at least 32 positions, one per thread. The parts run on other threads, so they
  // take the calling thread's thread_local arrays by pointer (a thread_local named in the
  // lambda would be the running thread's own).
  const uint64_t threads = std::max(1u, cpu_threads());
  const uint64_t parts = parts_of(sk, std::max<uint64_t>((sk + threads - 1) / threads, 32));
  partial.resize(parts > 1 ? parts * heads * d : 0);
  const float *qs = q.data();
  const uint64_t *offsets = kv.data();
  float *scores = p.data(), *sums = partial.data();
  auto first = [&](uint64_t i) { return sk * i / parts; };
  parallel_for(parts, [&](size_t i) {
    const uint64_t lo = first(i), hi = first(i + 1);
    HG_LEVEL_CALL(o.level, decode_scores, K + lo * kv_rows, kv_rows, offsets, qs, heads, d, hi - lo,
                  scores + lo, sk);
  });
  HG_LEVEL_CALL(o.level, softmax_rows, scores, scores, heads, sk, false);
  if (parts == 1) {
    HG_LEVEL_CALL(o.level, decode_values, V, kv_rows, offsets, scores, sk, heads, d, sk, out,
                  a.q_head_stride);
    return "decode";
  }
  parallel_for(parts, [&](size_t i) {
    const uint64_t lo = first(i), hi = first(i + 1);
    HG_LEVEL_CALL(o.level, decode_values, V + lo * kv_rows, kv_rows, offsets, scores + lo, sk,
                  heads, d, hi - lo, sums + i * heads * d, d);
  });
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t c = 0; c < d; ++c) {
      float sum = sums[h * d + c];
      for (uint64_t i = 1; i < parts; ++i) sum += sums[(i * heads + h) * d + c];
      out[h * a.q_head_stride + c] = sum;
    }
  return "decode";
}

/// Boundaries 0 = b_0 < b_1 < ... < b_k = n (k <= parts) of rows [0, n) in blocks whose
/// largest work, rows · width(the block's last row), is as small as it can be: width never
/// falls as rows grow (a causal block's last row sees the most keys), so each block is found
/// by bisection on its end, and the limit on the work by bisection on that.
template <typename Width>
std::vector<uint64_t> balanced_blocks(uint64_t n, uint64_t parts, const Width &width) {
  if (parts <= 1 || n <= 1) return {0, n};
  auto blocks_within = [&](uint64_t limit) {
    std::vector<uint64_t> b{0};
    while (b.back() < n) {
      const uint64_t lo = b.back();
      uint64_t first = lo + 1, last = n; // the block's end: one row at least
      while (first < last) {
        const uint64_t mid = last - (last - first) / 2;
        if ((mid - lo) * width(mid - 1) <= limit)
          first = mid;
        else
          last = mid - 1;
      }
      b.push_back(first);
    }
    return b;
  };
  uint64_t lo = 1, hi = n * std::max<uint64_t>(width(n - 1), 1); // all rows in one block
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (blocks_within(mid).size() - 1 <= parts)
      hi = mid;
    else
      lo = mid + 1;
  }
  return blocks_within(lo);
}

/// attention: per query head, scores by GEMM (Q Kᵀ scale, against the head's key/value head),
/// softmax rows (f32 rows without a mask by the softmax kernel over the keys each query sees;
/// otherwise masked rows in f64 with vector exp), then the output by GEMM (P V). Q, K, V and out
/// are read and written at their strides, so rows of heads side by side (a KV cache) need no
/// copy.
template <typename T> const char *fast_attention(const Operands &o) {
  const isa::AttentionOperands a = isa::attention_operands(o.in, o.reg);
  if (!a.problem().empty()) return nullptr; // the reference reports it
  const uint64_t sq = a.seq_q, sk = a.seq_k, d = a.head_dim;
  if (!o.holds<T>(a.out, a.q_extent()) || !o.holds<T>(a.q, a.q_extent()) ||
      !o.holds<T>(a.k, a.kv_extent()) || !o.holds<T>(a.v, a.kv_extent()) ||
      !o.holds<T>(a.mask, a.empty() ? 0 : Wide{sq} * sk))
    return nullptr;
  if (a.empty()) return "empty";
  const T scale = scalar_of<T>(a.scale_bits);
  T *out = o.data<T>(a.out);
  const T *Q = o.data<T>(a.q), *K = o.data<T>(a.k), *V = o.data<T>(a.v);
  const T *mask = o.data<T>(a.mask);
  // A row stride only matters between rows; a single row takes the dense one.
  const uint64_t q_rows = sq > 1 ? a.q_row_stride : d, kv_rows = sk > 1 ? a.kv_row_stride : d;
  if (q_rows < d || kv_rows < d) return nullptr; // rows that overlap: the reference's loops
  if constexpr (std::is_same_v<T, float>)
    if (sq == 1 && sk > 0 && !mask) return decode_attention(o, a, kv_rows);
  const uint64_t shift = sk - std::min(sk, sq);
  // The keys query row i sees: all of them, or (causal) those up to its own position.
  auto seen = [&](uint64_t i) { return a.causal ? std::min(sk, i + shift + 1) : sk; };
  // Each head's query rows in as many blocks as make the tasks (heads times blocks) a multiple
  // of the threads, so that each thread gets as many (one block a head where the threads
  // divide the heads), one task each: a launch is one fork and join, each task's GEMMs on its
  // own thread (a parallel_for inside a task runs there). A block computes the scores of the
  // keys its last row sees, so its work is its rows times that width, which balanced_blocks
  // makes about equal.
  const uint64_t threads = std::max(1u, cpu_threads());
  const uint64_t parts = std::min<uint64_t>(threads / std::gcd(threads, a.heads), sq);
  const std::vector<uint64_t> cut = balanced_blocks(sq, parts, seen);
  const uint64_t blocks = cut.size() - 1;
  parallel_for(a.heads * blocks, [&](size_t task) {
    const uint64_t h = task / blocks, lo = cut[task % blocks], hi = cut[task % blocks + 1];
    T *out_h = out + h * a.q_head_stride + lo * q_rows;
    const uint64_t kv = a.kv_offset(h), width = seen(hi - 1);
    if (width == 0) {
      for (uint64_t i = lo; i < hi; ++i) std::fill_n(out_h + (i - lo) * q_rows, d, T{0});
      return;
    }
    // Its own, not kept past the launch: a long unmasked head's block is megabytes.
    std::vector<T> block((hi - lo) * width);
    cpu_gemm(GemmArgs<T>{.trans_b = true,
                         .m = hi - lo,
                         .n = width,
                         .k = d,
                         .alpha = scale,
                         .a = Q + h * a.q_head_stride + lo * q_rows,
                         .lda = q_rows,
                         .b = K + kv,
                         .ldb = kv_rows,
                         .c = block.data(),
                         .ldc = width},
             o.level);
    bool done = false;
    if constexpr (std::is_same_v<T, float>) {
      if (!mask) {
        // f32 rows (the softmax library kernel, within its stated bound) over the keys a
        // query may see; the rest of the row is 0.
        for (uint64_t i = lo; i < hi; ++i) {
          float *si = block.data() + (i - lo) * width;
          HG_LEVEL_CALL(o.level, softmax_rows, si, si, 1, seen(i), false);
          std::fill(si + seen(i), si + width, 0.0f);
        }
        done = true;
      }
    }
    if (!done) {
      thread_local std::vector<double> row;
      row.resize(width);
      for (uint64_t i = lo; i < hi; ++i) {
        T *si = block.data() + (i - lo) * width;
        double mx = -std::numeric_limits<double>::infinity();
        for (uint64_t j = 0; j < width; ++j) {
          double v = double{si[j]} + (mask ? double{mask[i * sk + j]} : 0.0);
          if (j >= seen(i)) v = -std::numeric_limits<double>::infinity();
          row[j] = v;
          mx = std::fmax(mx, v);
        }
        if (std::isinf(mx)) { // every score masked: the reference's output row is 0
          std::fill(si, si + width, T{0});
          continue;
        }
        for (auto &v : row) v -= mx;
        HG_LEVEL_CALL(o.level, map, map_kind(isa::MapUnaryOp::Exp), row.data(), row.data(), width);
        double sum = 0;
        for (double v : row) sum += v;
        for (uint64_t j = 0; j < width; ++j) si[j] = static_cast<T>(sum > 0 ? row[j] / sum : 0.0);
      }
    }
    // The block's output rows = P V, P its softmax rows.
    cpu_gemm(GemmArgs<T>{.m = hi - lo,
                         .n = d,
                         .k = width,
                         .a = block.data(),
                         .lda = width,
                         .b = V + kv,
                         .ldb = kv_rows,
                         .c = out_h,
                         .ldc = q_rows},
             o.level);
  });
  return "gemm";
}

/// conv2d (NCHW): per image, the patches are unrolled (im2col) and multiplied by the weights
/// with the GEMM; the bias is added after.
template <typename T> const char *fast_conv2d(const Operands &o) {
  constexpr Opcode Op = Opcode::Conv2d;
  const uint64_t N = o.u(at<Op>("N")), C = o.u(at<Op>("C")), H = o.u(at<Op>("H")),
                 W = o.u(at<Op>("W")), K = o.u(at<Op>("K")), KH = o.u(at<Op>("KH")),
                 KW = o.u(at<Op>("KW")), stride = o.u(at<Op>("stride")), pad = o.u(at<Op>("pad"));
  const Wide ph = Wide{H} + 2 * Wide{pad}, pw = Wide{W} + 2 * Wide{pad};
  if (stride == 0 || ph < KH || pw < KW || ph >= (Wide{1} << 40) || pw >= (Wide{1} << 40))
    return nullptr; // the reference reports it
  const uint64_t OH = static_cast<uint64_t>((ph - KH) / stride + 1);
  const uint64_t OW = static_cast<uint64_t>((pw - KW) / stride + 1);
  const Wide patch = Wide{C} * KH * KW, pixels = Wide{OH} * OW;
  if (!o.holds<T>(at<Op>("out"), Wide{N} * K * pixels) ||
      !o.holds<T>(at<Op>("in"), Wide{N} * C * H * W) ||
      !o.holds<T>(at<Op>("weight"), Wide{K} * patch) || !o.holds<T>(at<Op>("bias"), K) ||
      patch * pixels > (Wide{1} << 31))
    return nullptr;
  T *out = o.data<T>(at<Op>("out"));
  const T *img = o.data<T>(at<Op>("in")), *w = o.data<T>(at<Op>("weight")),
          *bias = o.data<T>(at<Op>("bias"));
  const uint64_t P = static_cast<uint64_t>(patch), Q = static_cast<uint64_t>(pixels);
  std::vector<T> cols(P * Q);
  for (uint64_t n = 0; n < N; ++n) {
    ranges(P, 1, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t r = lo; r < hi; ++r) {
        const uint64_t c = r / (KH * KW), ky = r / KW % KH, kx = r % KW;
        for (uint64_t oy = 0; oy < OH; ++oy)
          for (uint64_t ox = 0; ox < OW; ++ox) {
            const int64_t iy = static_cast<int64_t>(oy * stride + ky) - static_cast<int64_t>(pad);
            const int64_t ix = static_cast<int64_t>(ox * stride + kx) - static_cast<int64_t>(pad);
            const bool inside =
                iy >= 0 && ix >= 0 && iy < static_cast<int64_t>(H) && ix < static_cast<int64_t>(W);
            cols[r * Q + oy * OW + ox] =
                inside ? img[((n * C + c) * H + static_cast<uint64_t>(iy)) * W +
                             static_cast<uint64_t>(ix)]
                       : T{0};
          }
      }
    });
    cpu_gemm(GemmArgs<T>{.m = K,
                         .n = Q,
                         .k = P,
                         .a = w,
                         .lda = P,
                         .b = cols.data(),
                         .ldb = Q,
                         .c = out + n * K * Q,
                         .ldc = Q},
             o.level);
    if (bias)
      for (uint64_t k = 0; k < K; ++k)
        for (uint64_t q = 0; q < Q; ++q) out[(n * K + k) * Q + q] += bias[k];
  }
  return "im2col";
}

/// The vectorised schedule of a float library op; the name of the schedule that ran, or null
/// when the op has none for T (or its arrays are too short, which the reference reports).
template <typename T> const char *fast_library(const Operands &o) {
  using enum Opcode;
  switch (isa::as_launch(o.in.op)) {
  case LaunchOpcode::Map:
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh:
  case LaunchOpcode::Map2:
  case LaunchOpcode::Axpy: {
    const RangeFn range = elementwise_range<T>(o);
    if (!range) return nullptr;
    ranges(o.reg(isa::element_count_register(o.in)), 16384, range);
    return "vector";
  }
  case LaunchOpcode::Rope: return fast_rope<T>(o);
  case LaunchOpcode::Gemv: return fast_gemv<T>(o);
  case LaunchOpcode::Attention: return fast_attention<T>(o);
  case LaunchOpcode::Conv2d: return fast_conv2d<T>(o);
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax:
  case LaunchOpcode::RmsNorm:
  case LaunchOpcode::LayerNorm:
    if constexpr (!std::is_same_v<T, float>) return nullptr;
    if (o.in.op == Softmax) return fast_rows<Softmax>(o);
    if (o.in.op == LogSoftmax) return fast_rows<LogSoftmax>(o);
    if (o.in.op == RmsNorm) return fast_rows<RmsNorm>(o);
    return fast_rows<LayerNorm>(o);
  case LaunchOpcode::ReduceAll:
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm:
  case LaunchOpcode::Dot: return nullptr;
  }
  unreachable_enum("LaunchOpcode");
}

/// reduce_all.add and dot of floats: vectorised ranges over the thread pool. nullopt when
/// the arrays are too short (the reference then reports it).
template <typename T, Opcode Op> std::optional<uint64_t> fast_sum(const Operands &o) {
  constexpr bool is_dot = Op == Opcode::Dot;
  const size_t xs = is_dot ? at<Opcode::Dot>("x") : at<Opcode::ReduceAll>("src");
  const uint64_t n = o.u(at<Op>("n"));
  if (!o.holds<T>(xs, n)) return std::nullopt;
  const T *x = o.data<T>(xs);
  const T *y = nullptr;
  if constexpr (is_dot) {
    if (!o.holds<T>(at<Op>("y"), n)) return std::nullopt;
    y = o.data<T>(at<Op>("y"));
  }
  const uint64_t parts = parts_of(n, 65536);
  std::vector<T> partial(parts);
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    partial[p] = cpu_sum(x + lo, y ? y + lo : nullptr, hi - lo, o.level);
  });
  T total = 0;
  for (T v : partial) total += v;
  if constexpr (std::is_same_v<T, float>)
    return isa::f32_bits(total);
  else
    return isa::f64_bits(total);
}

template <typename T> Status run_float_op(OpRun &r) {
  using enum Opcode;
  const Operands &o = r.ops;
  switch (isa::as_launch(o.in.op)) {
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm: return run_gemm<T>(r);
  case LaunchOpcode::Dot:
  case LaunchOpcode::ReduceAll: {
    if (o.in.op == ReduceAll && o.in.sub != static_cast<uint8_t>(isa::ReduceOp::Add)) break;
    auto sum = o.in.op == Dot ? fast_sum<T, Dot>(o) : fast_sum<T, ReduceAll>(o);
    if (!sum) return run_reference(r);
    r.result = *sum;
    r.path = "vector";
    return {};
  }
  case LaunchOpcode::Map:
  case LaunchOpcode::Map2:
  case LaunchOpcode::Gemv:
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax:
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm:
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh:
  case LaunchOpcode::Rope:
  case LaunchOpcode::Attention:
  case LaunchOpcode::Conv2d:
  case LaunchOpcode::Axpy:
    if (const char *path = fast_library<T>(o)) {
      r.path = path;
      return {};
    }
    break;
  }
  if (auto s = split_of(o.in)) return run_split(r, *s);
  return run_reference(r);
}

} // namespace

Status run_cpu_launch_op(const isa::Kernel &k, const isa::Instruction &in,
                         std::span<const CpuArg> args, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result, const CpuLibraryEnv &env) {
  if (!in.info().launch_level())
    return {ErrorCode::LaunchFailed,
            "'" + std::string(in.info().mnemonic) + "' is not a whole-launch operation"};
  OpRun r{k, Operands{in, args, reg, env.level}, result};
  Status st;
  if (in.type == isa::Type::F32)
    st = run_float_op<float>(r);
  else if (in.type == isa::Type::F64)
    st = run_float_op<double>(r);
  else if (auto s = split_of(in))
    st = run_split(r, *s);
  else
    st = run_reference(r);
  if (env.paths && st) env.paths->count(in.op, r.path);
  return st;
}

} // namespace hologram::runtime
