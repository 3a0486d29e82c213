// See library.h. Partitioning keeps one definition of each operation's semantics (the
// interpreter's): a range of rows or elements is the same operation on shorter arrays, so
// each thread runs the reference on its range. A range's arrays start at its first element
// and keep the whole buffer's end, so a range fits exactly when the whole operation does;
// when any range fails, the whole operation reruns alone to report the reference's error.
#include "library.h"

#include "gemm_kernel.h"
#include "hologram/isa/numeric.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>

/// Calls fn of the x86 level the CPU runs (gemm_kernel.cpp is built once per level).
#define HG_LEVEL_CALL(fn, ...)                                                                     \
  (gemm_level() == 4   ? gemm_v4::fn(__VA_ARGS__)                                                  \
   : gemm_level() == 3 ? gemm_v3::fn(__VA_ARGS__)                                                  \
                       : gemm_v2::fn(__VA_ARGS__))

namespace hologram::runtime {

int gemm_level();

namespace {

using isa::Opcode;

/// How an operation without a vectorised schedule (integer maps, reductions other than a
/// float sum, f64 rows) splits: over `count` (the register operand `count_op`) units of `unit`
/// elements of the buffers `offset_ops`.
struct Split {
  size_t count_op = 0;
  size_t unit_op = SIZE_MAX; ///< register operand holding elements per unit (rows: cols)
  std::vector<size_t> offset_ops;
  bool reduces = false; ///< partial results combine (reduce_all)
};

std::optional<Split> split_of(const isa::Instruction &in) {
  switch (in.op) {
  case Opcode::Map: return Split{2, SIZE_MAX, {0, 1}, false};
  case Opcode::Map2: return Split{3, SIZE_MAX, {0, 1, 2}, false};
  case Opcode::ReduceAll: return Split{2, SIZE_MAX, {1}, true};
  case Opcode::Softmax:
  case Opcode::LogSoftmax: return Split{2, 3, {0, 1}, false};
  case Opcode::RmsNorm: return Split{3, 4, {0, 1}, false};
  case Opcode::LayerNorm: return Split{4, 5, {0, 1}, false};
  default: return std::nullopt;
  }
}

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

/// Combines partial results of a reduction of type t.
uint64_t combine(const isa::Instruction &in, uint64_t a, uint64_t b) {
  auto op = static_cast<isa::ReduceOp>(in.sub);
  auto fold = [&](auto x, auto y) -> decltype(x) {
    switch (op) {
    case isa::ReduceOp::Add: return static_cast<decltype(x)>(x + y);
    case isa::ReduceOp::Mul: return static_cast<decltype(x)>(x * y);
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
  default: return fold(a, b);
  }
}

Status run_split(const isa::Kernel &k, const isa::Instruction &in, std::span<const CpuArg> args,
                 const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result, const Split &s) {
  const auto &ops = in.operands;
  const uint64_t count = reg(ops[s.count_op].index);
  const uint64_t unit = s.unit_op == SIZE_MAX ? 1 : reg(ops[s.unit_op].index);
  const uint64_t elem = isa::type_size(in.type);
  // Ranges of at least 16K elements, at most 4 per thread.
  const uint64_t min_units = std::max<uint64_t>(1, 16384 / std::max<uint64_t>(unit, 1));
  const uint64_t parts =
      std::min<uint64_t>(uint64_t{cpu_threads()} * 4, std::max<uint64_t>(1, count / min_units));
  auto whole = [&] {
    return interp::run_launch_instruction(k, in, values_of(k, args), reg, result);
  };
  if (parts <= 1) return whole();
  std::vector<uint64_t> partial(parts);
  std::atomic<bool> failed{false};
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = count * p / parts, hi = count * (p + 1) / parts;
    std::vector<CpuArg> sub(args.begin(), args.end());
    for (size_t o : s.offset_ops) {
      if (ops[o].kind != isa::OperandKind::Param) continue;
      auto &a = sub[ops[o].index];
      const uint64_t skip = std::min(a.size, lo * unit * elem);
      a.data = static_cast<std::byte *>(a.data) + skip;
      a.size -= skip;
    }
    auto sub_reg = [&](isa::Reg r) { return r == ops[s.count_op].index ? hi - lo : reg(r); };
    if (!interp::run_launch_instruction(k, in, values_of(k, sub), sub_reg, partial[p]))
      failed = true;
  });
  if (failed) return whole(); // the reference's own error for the whole operation
  if (s.reduces) {
    result = partial[0];
    for (uint64_t p = 1; p < parts; ++p) result = combine(in, result, partial[p]);
  }
  return {};
}

template <typename T> T scalar_of(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>)
    return isa::bits_to_f32(bits);
  else
    return isa::bits_to_f64(bits);
}

/// gemm through the packed kernel, once the reference's checks pass on an empty run.
template <typename T>
Status run_gemm(const isa::Kernel &k, const isa::Instruction &in, std::span<const CpuArg> args,
                const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result) {
  const auto &ops = in.operands;
  const bool batched = in.op == Opcode::BatchedGemm;
  const size_t base = batched ? 4 : 3;
  const uint64_t batch = batched ? reg(ops[3].index) : 1;
  GemmArgs<T> g;
  g.m = reg(ops[base].index);
  g.n = reg(ops[base + 1].index);
  g.k = reg(ops[base + 2].index);
  g.alpha = scalar_of<T>(reg(ops[base + 3].index));
  g.beta = scalar_of<T>(reg(ops[base + 4].index));
  g.lda = reg(ops[base + 5].index);
  g.ldb = reg(ops[base + 6].index);
  g.ldc = reg(ops[base + 7].index);
  uint64_t sa = 0, sb = 0, sc = 0;
  if (batched) {
    sa = reg(ops[base + 8].index);
    sb = reg(ops[base + 9].index);
    sc = reg(ops[base + 10].index);
  }
  g.trans_a = ops[batched ? 15 : 11].imm != 0;
  g.trans_b = ops[batched ? 16 : 12].imm != 0;
  // Anything the reference would refuse (leading dimensions, extents) runs the reference,
  // which reports it; the rules are the reference's.
  const uint64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const uint64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  if (batch == 0 || g.m == 0 || g.n == 0) return {};
  if (g.lda < a_cols || g.ldb < b_cols || g.ldc < g.n)
    return interp::run_launch_instruction(k, in, values_of(k, args), reg, result);
  __extension__ typedef unsigned __int128 Wide;
  auto extent = [&](uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride) -> Wide {
    return rows == 0 ? 0 : Wide{batch - 1} * stride + Wide{rows - 1} * ld + cols;
  };
  auto fits = [&](size_t op, Wide elems) {
    return Wide{args[ops[op].index].size} >= elems * sizeof(T);
  };
  if (!fits(2, extent(g.m, g.n, g.ldc, sc)) || !fits(0, extent(a_rows, a_cols, g.lda, sa)) ||
      !fits(1, extent(b_rows, b_cols, g.ldb, sb)))
    return interp::run_launch_instruction(k, in, values_of(k, args), reg, result);
  auto *A = static_cast<const T *>(args[ops[0].index].data);
  auto *B = static_cast<const T *>(args[ops[1].index].data);
  auto *C = static_cast<T *>(args[ops[2].index].data);
  for (uint64_t b = 0; b < batch; ++b) {
    g.a = A + b * sa;
    g.b = B + b * sb;
    g.c = C + b * sc;
    cpu_gemm(g);
  }
  return {};
}

} // namespace

int gemm_level() {
  static const int level = cpu_has_feature("avx512f") && cpu_has_feature("avx512bw") &&
                                   cpu_has_feature("avx512dq") && cpu_has_feature("avx512vl")
                               ? 4
                           : cpu_has_feature("avx2") && cpu_has_feature("fma") ? 3
                                                                               : 2;
  return level;
}

void cpu_gemm(const GemmArgs<float> &g) {
  HG_LEVEL_CALL(gemm, g);
}
void cpu_gemm(const GemmArgs<double> &g) {
  HG_LEVEL_CALL(gemm, g);
}

float cpu_sum(const float *x, const float *y, uint64_t n) {
  return HG_LEVEL_CALL(sum, x, y, n);
}
double cpu_sum(const double *x, const double *y, uint64_t n) {
  return HG_LEVEL_CALL(sum, x, y, n);
}

namespace {

/// Ranges of [0, n) for the thread pool: at least `grain` units each, at most 4 per thread.
uint64_t parts_of(uint64_t n, uint64_t grain) {
  return std::clamp<uint64_t>(n / std::max<uint64_t>(grain, 1), 1, uint64_t{cpu_threads()} * 4);
}

/// Runs body(lo, hi) over ranges of [0, n) on the thread pool.
void ranges(uint64_t n, uint64_t grain, const std::function<void(uint64_t, uint64_t)> &body) {
  const uint64_t parts = parts_of(n, grain);
  parallel_for(parts, [&](size_t p) { body(n * p / parts, n * (p + 1) / parts); });
}

__extension__ typedef unsigned __int128 Wide;

/// Whether operand `op` (a buffer or an absent `none`) holds `elems` elements of T.
template <typename T>
bool holds(const isa::Instruction &in, std::span<const CpuArg> args, size_t op, Wide elems) {
  const auto &o = in.operands[op];
  return o.kind != isa::OperandKind::Param || Wide{args[o.index].size} >= elems * sizeof(T);
}
template <typename T>
T *data_of(const isa::Instruction &in, std::span<const CpuArg> args, size_t op) {
  const auto &o = in.operands[op];
  return o.kind == isa::OperandKind::Param ? static_cast<T *>(args[o.index].data) : nullptr;
}

/// softmax, log_softmax, rmsnorm and layernorm of f32 rows: vectorised per row (f64 vector
/// exp and sums, as the reference computes in f64), rows spread over the thread pool.
bool fast_rows(const isa::Instruction &in, std::span<const CpuArg> args,
               const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const bool softmax = in.op == Opcode::Softmax || in.op == Opcode::LogSoftmax;
  const bool layer = in.op == Opcode::LayerNorm;
  const size_t rows_op = softmax ? 2 : layer ? 4 : 3;
  const uint64_t rows = reg(ops[rows_op].index), cols = reg(ops[rows_op + 1].index);
  const Wide all = Wide{rows} * cols;
  if (!holds<float>(in, args, 0, all) || !holds<float>(in, args, 1, all)) return false;
  if (!softmax && (!holds<float>(in, args, 2, cols) || (layer && !holds<float>(in, args, 3, cols))))
    return false;
  float *y = data_of<float>(in, args, 0);
  const float *x = data_of<float>(in, args, 1),
              *gamma = softmax ? nullptr : data_of<float>(in, args, 2);
  const float *beta = layer ? data_of<float>(in, args, 3) : nullptr;
  const double eps = softmax ? 0.0 : isa::bits_to_f32(reg(ops[rows_op + 2].index));
  const bool log = in.op == Opcode::LogSoftmax;
  ranges(rows, 16384 / std::max<uint64_t>(cols, 1), [&](uint64_t lo, uint64_t hi) {
    if (softmax)
      HG_LEVEL_CALL(softmax_rows, x + lo * cols, y + lo * cols, hi - lo, cols, log);
    else
      HG_LEVEL_CALL(norm_rows, x + lo * cols, y + lo * cols, gamma, beta, hi - lo, cols, eps,
                    layer);
  });
  return true;
}

/// map, map2, silu, gelu, gelu_tanh, axpy and rope of f32/f64: vectorised (f64 vectors
/// rounded once, as the reference evaluates them) and spread over the thread pool.
template <typename T>
bool fast_elementwise(const isa::Instruction &in, std::span<const CpuArg> args,
                      const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  if (in.op == Opcode::Rope) {
    const uint64_t rows = reg(ops[4].index), dim = reg(ops[5].index), half = dim / 2;
    if (dim % 2 || !holds<T>(in, args, 0, Wide{rows} * dim) ||
        !holds<T>(in, args, 1, Wide{rows} * dim) || !holds<T>(in, args, 2, Wide{rows} * half) ||
        !holds<T>(in, args, 3, Wide{rows} * half))
      return false;
    T *y = data_of<T>(in, args, 0);
    const T *x = data_of<T>(in, args, 1), *cs = data_of<T>(in, args, 2),
            *sn = data_of<T>(in, args, 3);
    ranges(rows, 16384 / std::max<uint64_t>(dim, 1), [&](uint64_t lo, uint64_t hi) {
      HG_LEVEL_CALL(rope_rows, y + lo * dim, x + lo * dim, cs + lo * half, sn + lo * half, hi - lo,
                    dim);
    });
    return true;
  }
  const bool binary = in.op == Opcode::Map2;
  const uint64_t n = reg(ops[binary ? 3 : 2].index);
  for (size_t i = 0; i < (binary ? 3u : 2u); ++i)
    if (!holds<T>(in, args, i, n)) return false;
  T *y = data_of<T>(in, args, 0);
  const T *a = data_of<T>(in, args, 1);
  const T *b = binary ? data_of<T>(in, args, 2) : nullptr;
  if (in.op == Opcode::Axpy) {
    const T alpha = scalar_of<T>(reg(ops[3].index));
    ranges(n, 16384,
           [&](uint64_t lo, uint64_t hi) { HG_LEVEL_CALL(axpy, y + lo, a + lo, hi - lo, alpha); });
    return true;
  }
  MapKind kind = MapKind::Silu;
  if (in.op == Opcode::Map) kind = map_kind(static_cast<isa::MapUnaryOp>(in.sub));
  if (in.op == Opcode::Gelu) kind = MapKind::Gelu;
  if (in.op == Opcode::GeluTanh) kind = MapKind::GeluTanh;
  const auto kind2 = static_cast<MapKind2>(in.sub);
  ranges(n, 16384, [&](uint64_t lo, uint64_t hi) {
    if (binary)
      HG_LEVEL_CALL(map2, kind2, a + lo, b + lo, y + lo, hi - lo);
    else
      HG_LEVEL_CALL(map, kind, a + lo, y + lo, hi - lo);
  });
  return true;
}

/// gemv: rows as vectorised dot products, or, transposed, as a one-row GEMM.
template <typename T>
bool fast_gemv(const isa::Instruction &in, std::span<const CpuArg> args,
               const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const uint64_t m = reg(ops[3].index), n = reg(ops[4].index), lda = reg(ops[7].index);
  const T alpha = scalar_of<T>(reg(ops[5].index)), beta = scalar_of<T>(reg(ops[6].index));
  const bool trans = ops[8].imm != 0;
  const uint64_t rows = trans ? n : m, cols = trans ? m : n;
  if (lda < n || !holds<T>(in, args, 0, rows) || !holds<T>(in, args, 2, cols) ||
      !holds<T>(in, args, 1, m ? Wide{m - 1} * lda + n : 0))
    return false;
  T *y = data_of<T>(in, args, 0);
  const T *A = data_of<T>(in, args, 1), *x = data_of<T>(in, args, 2);
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
                         .ldc = n});
    return true;
  }
  ranges(m, 16384 / std::max<uint64_t>(n, 1), [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      T acc = cpu_sum(A + i * lda, x, n);
      y[i] = alpha * acc + (beta == T{0} ? T{0} : beta * y[i]);
    }
  });
  return true;
}

/// attention: per head, scores by GEMM (Q Kᵀ scale), masked softmax rows in f64 with vector
/// exp, then the output by GEMM (P V).
template <typename T>
bool fast_attention(const isa::Instruction &in, std::span<const CpuArg> args,
                    const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const uint64_t heads = reg(ops[5].index), sq = reg(ops[6].index), sk = reg(ops[7].index),
                 d = reg(ops[8].index);
  const T scale = scalar_of<T>(reg(ops[9].index));
  const bool causal = ops[10].imm != 0;
  if (!holds<T>(in, args, 0, Wide{heads} * sq * d) ||
      !holds<T>(in, args, 1, Wide{heads} * sq * d) ||
      !holds<T>(in, args, 2, Wide{heads} * sk * d) ||
      !holds<T>(in, args, 3, Wide{heads} * sk * d) || !holds<T>(in, args, 4, Wide{sq} * sk))
    return false;
  T *out = data_of<T>(in, args, 0);
  const T *Q = data_of<T>(in, args, 1), *K = data_of<T>(in, args, 2), *V = data_of<T>(in, args, 3);
  const T *mask = data_of<T>(in, args, 4);
  if (sq == 0 || d == 0 || heads == 0) return true;
  std::vector<T> scores(sq * std::max<uint64_t>(sk, 1));
  const uint64_t shift = sk - std::min(sk, sq);
  for (uint64_t h = 0; h < heads; ++h) {
    if (sk == 0) {
      std::fill(out + h * sq * d, out + (h + 1) * sq * d, T{0});
      continue;
    }
    cpu_gemm(GemmArgs<T>{.trans_b = true,
                         .m = sq,
                         .n = sk,
                         .k = d,
                         .alpha = scale,
                         .a = Q + h * sq * d,
                         .lda = d,
                         .b = K + h * sk * d,
                         .ldb = d,
                         .c = scores.data(),
                         .ldc = sk});
    ranges(sq, 16384 / sk, [&](uint64_t lo, uint64_t hi) {
      thread_local std::vector<double> row;
      row.resize(sk);
      for (uint64_t i = lo; i < hi; ++i) {
        T *si = scores.data() + i * sk;
        double mx = -std::numeric_limits<double>::infinity();
        for (uint64_t j = 0; j < sk; ++j) {
          double v = double{si[j]} + (mask ? double{mask[i * sk + j]} : 0.0);
          if (causal && j > i + shift) v = -std::numeric_limits<double>::infinity();
          row[j] = v;
          mx = std::fmax(mx, v);
        }
        if (std::isinf(mx)) { // every score masked: the reference's output row is 0
          std::fill(si, si + sk, T{0});
          continue;
        }
        for (auto &v : row) v -= mx;
        HG_LEVEL_CALL(map, map_kind(isa::MapUnaryOp::Exp), row.data(), row.data(), sk);
        double sum = 0;
        for (double v : row) sum += v;
        for (uint64_t j = 0; j < sk; ++j) si[j] = static_cast<T>(sum > 0 ? row[j] / sum : 0.0);
      }
    });
    cpu_gemm(GemmArgs<T>{.m = sq,
                         .n = d,
                         .k = sk,
                         .a = scores.data(),
                         .lda = sk,
                         .b = V + h * sk * d,
                         .ldb = d,
                         .c = out + h * sq * d,
                         .ldc = d});
  }
  return true;
}

/// conv2d (NCHW): per image, the patches are unrolled (im2col) and multiplied by the weights
/// with the GEMM; the bias is added after.
template <typename T>
bool fast_conv2d(const isa::Instruction &in, std::span<const CpuArg> args,
                 const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const uint64_t N = reg(ops[4].index), C = reg(ops[5].index), H = reg(ops[6].index),
                 W = reg(ops[7].index), K = reg(ops[8].index), KH = reg(ops[9].index),
                 KW = reg(ops[10].index), stride = reg(ops[11].index), pad = reg(ops[12].index);
  const Wide ph = Wide{H} + 2 * Wide{pad}, pw = Wide{W} + 2 * Wide{pad};
  if (stride == 0 || ph < KH || pw < KW || ph >= (Wide{1} << 40) || pw >= (Wide{1} << 40))
    return false; // the reference reports it
  const uint64_t OH = static_cast<uint64_t>((ph - KH) / stride + 1);
  const uint64_t OW = static_cast<uint64_t>((pw - KW) / stride + 1);
  const Wide patch = Wide{C} * KH * KW, pixels = Wide{OH} * OW;
  if (!holds<T>(in, args, 0, Wide{N} * K * pixels) || !holds<T>(in, args, 1, Wide{N} * C * H * W) ||
      !holds<T>(in, args, 2, Wide{K} * patch) || !holds<T>(in, args, 3, K) ||
      patch * pixels > (Wide{1} << 31))
    return false;
  T *out = data_of<T>(in, args, 0);
  const T *img = data_of<T>(in, args, 1), *w = data_of<T>(in, args, 2),
          *bias = data_of<T>(in, args, 3);
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
                         .ldc = Q});
    if (bias)
      for (uint64_t k = 0; k < K; ++k)
        for (uint64_t q = 0; q < Q; ++q) out[(n * K + k) * Q + q] += bias[k];
  }
  return true;
}

template <typename T>
bool fast_library(const isa::Instruction &in, std::span<const CpuArg> args,
                  const std::function<uint64_t(isa::Reg)> &reg) {
  switch (in.op) {
  case Opcode::Map:
  case Opcode::Map2:
  case Opcode::Silu:
  case Opcode::Gelu:
  case Opcode::GeluTanh:
  case Opcode::Axpy:
  case Opcode::Rope: return fast_elementwise<T>(in, args, reg);
  case Opcode::Gemv: return fast_gemv<T>(in, args, reg);
  case Opcode::Attention: return fast_attention<T>(in, args, reg);
  case Opcode::Conv2d: return fast_conv2d<T>(in, args, reg);
  case Opcode::Softmax:
  case Opcode::LogSoftmax:
  case Opcode::RmsNorm:
  case Opcode::LayerNorm:
    if constexpr (std::is_same_v<T, float>) return fast_rows(in, args, reg);
    return false;
  default: return false;
  }
}

/// reduce_all.add and dot of floats: vectorised ranges over the thread pool. nullopt when
/// the arrays are too short (the reference then reports it).
template <typename T>
std::optional<uint64_t> fast_sum(const isa::Instruction &in, std::span<const CpuArg> args,
                                 const std::function<uint64_t(isa::Reg)> &reg) {
  const bool is_dot = in.op == Opcode::Dot;
  const auto &ops = in.operands;
  const uint64_t n = reg(ops[is_dot ? 3 : 2].index);
  if (!holds<T>(in, args, 1, n) || (is_dot && !holds<T>(in, args, 2, n))) return std::nullopt;
  const T *x = data_of<T>(in, args, 1);
  const T *y = is_dot ? data_of<T>(in, args, 2) : nullptr;
  const uint64_t parts = parts_of(n, 65536);
  std::vector<T> partial(parts);
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    partial[p] = cpu_sum(x + lo, y ? y + lo : nullptr, hi - lo);
  });
  T total = 0;
  for (T v : partial) total += v;
  if constexpr (std::is_same_v<T, float>)
    return isa::f32_bits(total);
  else
    return isa::f64_bits(total);
}

} // namespace

Status run_cpu_launch_op(const isa::Kernel &k, const isa::Instruction &in,
                         std::span<const CpuArg> args, const std::function<uint64_t(isa::Reg)> &reg,
                         uint64_t &result) {
  const bool f32 = in.type == isa::Type::F32, f64 = in.type == isa::Type::F64;
  if (in.op == Opcode::Gemm || in.op == Opcode::BatchedGemm) {
    if (f32) return run_gemm<float>(k, in, args, reg, result);
    if (f64) return run_gemm<double>(k, in, args, reg, result);
  }
  const bool float_sum =
      in.op == Opcode::Dot ||
      (in.op == Opcode::ReduceAll && in.sub == static_cast<uint8_t>(isa::ReduceOp::Add));
  if (float_sum && (f32 || f64)) {
    auto r = f32 ? fast_sum<float>(in, args, reg) : fast_sum<double>(in, args, reg);
    if (r) {
      result = *r;
      return {};
    }
  }
  if (f32 && fast_library<float>(in, args, reg)) return {};
  if (f64 && fast_library<double>(in, args, reg)) return {};
  if (auto s = split_of(in)) return run_split(k, in, args, reg, result, *s);
  return interp::run_launch_instruction(k, in, values_of(k, args), reg, result);
}

} // namespace hologram::runtime
