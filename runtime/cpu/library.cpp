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

namespace hologram::runtime {

namespace {

using isa::Opcode;

/// How an operation splits: over `count` (the register operand `count_op`) units of `unit`
/// elements of the buffers `offset_ops`.
struct Split {
  size_t count_op = 0;
  size_t unit_op = SIZE_MAX; ///< register operand holding elements per unit (rows: cols)
  std::vector<size_t> offset_ops;
  bool reduces = false; ///< partial results combine (reduce_all, dot)
};

std::optional<Split> split_of(const isa::Instruction &in) {
  switch (in.op) {
  case Opcode::Map: return Split{2, SIZE_MAX, {0, 1}, false};
  case Opcode::Map2: return Split{3, SIZE_MAX, {0, 1, 2}, false};
  case Opcode::Silu:
  case Opcode::Gelu:
  case Opcode::GeluTanh: return Split{2, SIZE_MAX, {0, 1}, false};
  case Opcode::Axpy: return Split{2, SIZE_MAX, {0, 1}, false};
  case Opcode::ReduceAll: return Split{2, SIZE_MAX, {1}, true};
  case Opcode::Dot: return Split{3, SIZE_MAX, {1, 2}, true};
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
  auto op = in.op == Opcode::Dot ? isa::ReduceOp::Add : static_cast<isa::ReduceOp>(in.sub);
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
  const int level = gemm_level();
  level == 4 ? gemm_v4::gemm(g) : level == 3 ? gemm_v3::gemm(g) : gemm_v2::gemm(g);
}
void cpu_gemm(const GemmArgs<double> &g) {
  const int level = gemm_level();
  level == 4 ? gemm_v4::gemm(g) : level == 3 ? gemm_v3::gemm(g) : gemm_v2::gemm(g);
}

float cpu_sum(const float *x, const float *y, uint64_t n) {
  const int level = gemm_level();
  return level == 4   ? gemm_v4::sum(x, y, n)
         : level == 3 ? gemm_v3::sum(x, y, n)
                      : gemm_v2::sum(x, y, n);
}
double cpu_sum(const double *x, const double *y, uint64_t n) {
  const int level = gemm_level();
  return level == 4   ? gemm_v4::sum(x, y, n)
         : level == 3 ? gemm_v3::sum(x, y, n)
                      : gemm_v2::sum(x, y, n);
}

namespace {

/// softmax, log_softmax, rmsnorm and layernorm of f32 rows: vectorised per row (f64 vector
/// exp and sums, as the reference computes in f64), rows spread over the thread pool.
/// false when an array is too short (the reference then reports it).
bool fast_rows(const isa::Instruction &in, std::span<const CpuArg> args,
               const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const bool softmax = in.op == Opcode::Softmax || in.op == Opcode::LogSoftmax;
  const bool layer = in.op == Opcode::LayerNorm;
  const size_t rows_op = softmax ? 2 : layer ? 4 : 3;
  const uint64_t rows = reg(ops[rows_op].index), cols = reg(ops[rows_op + 1].index);
  __extension__ typedef unsigned __int128 Wide;
  auto holds = [&](size_t op, Wide elems) {
    return ops[op].kind != isa::OperandKind::Param ||
           Wide{args[ops[op].index].size} >= elems * sizeof(float);
  };
  const Wide all = Wide{rows} * cols;
  if (!holds(0, all) || !holds(1, all)) return false;
  if (!softmax && (!holds(2, cols) || (layer && !holds(3, cols)))) return false;
  auto data = [&](size_t op) -> float * {
    return ops[op].kind == isa::OperandKind::Param ? static_cast<float *>(args[ops[op].index].data)
                                                   : nullptr;
  };
  float *y = data(0);
  const float *x = data(1), *gamma = softmax ? nullptr : data(2);
  const float *beta = layer ? data(3) : nullptr;
  const double eps = softmax ? 0.0 : isa::bits_to_f32(reg(ops[rows_op + 2].index));
  const uint64_t parts = std::clamp<uint64_t>(rows * cols / 16384, 1, uint64_t{cpu_threads()} * 4);
  const int level = gemm_level();
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = rows * p / parts, hi = rows * (p + 1) / parts;
    const float *xr = x + lo * cols;
    float *yr = y + lo * cols;
    if (softmax) {
      const bool log = in.op == Opcode::LogSoftmax;
      level == 4   ? gemm_v4::softmax_rows(xr, yr, hi - lo, cols, log)
      : level == 3 ? gemm_v3::softmax_rows(xr, yr, hi - lo, cols, log)
                   : gemm_v2::softmax_rows(xr, yr, hi - lo, cols, log);
    } else {
      level == 4   ? gemm_v4::norm_rows(xr, yr, gamma, beta, hi - lo, cols, eps, layer)
      : level == 3 ? gemm_v3::norm_rows(xr, yr, gamma, beta, hi - lo, cols, eps, layer)
                   : gemm_v2::norm_rows(xr, yr, gamma, beta, hi - lo, cols, eps, layer);
    }
  });
  return true;
}

/// map, map2, silu, gelu and gelu_tanh of f32/f64: vectorised (SLEEF f64 vectors, rounded
/// once, as the reference evaluates them) and spread over the thread pool. false when an
/// array is too short (the reference then reports it).
template <typename T>
bool fast_map(const isa::Instruction &in, std::span<const CpuArg> args,
              const std::function<uint64_t(isa::Reg)> &reg) {
  const auto &ops = in.operands;
  const bool binary = in.op == Opcode::Map2;
  const uint64_t n = reg(ops[binary ? 3 : 2].index);
  const size_t arrays = binary ? 3 : 2;
  for (size_t i = 0; i < arrays; ++i)
    if (args[ops[i].index].size / sizeof(T) < n) return false;
  T *y = static_cast<T *>(args[ops[0].index].data);
  const T *a = static_cast<const T *>(args[ops[1].index].data);
  const T *b = binary ? static_cast<const T *>(args[ops[2].index].data) : nullptr;
  MapKind kind = MapKind::Silu;
  if (in.op == Opcode::Map) kind = static_cast<MapKind>(in.sub);
  if (in.op == Opcode::Gelu) kind = MapKind::Gelu;
  if (in.op == Opcode::GeluTanh) kind = MapKind::GeluTanh;
  const auto kind2 = static_cast<MapKind2>(in.sub);
  const int level = gemm_level();
  const uint64_t parts = std::clamp<uint64_t>(n / 16384, 1, uint64_t{cpu_threads()} * 4);
  parallel_for(parts, [&](size_t p) {
    const uint64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    if (binary) {
      level == 4   ? gemm_v4::map2(kind2, a + lo, b + lo, y + lo, hi - lo)
      : level == 3 ? gemm_v3::map2(kind2, a + lo, b + lo, y + lo, hi - lo)
                   : gemm_v2::map2(kind2, a + lo, b + lo, y + lo, hi - lo);
    } else {
      level == 4   ? gemm_v4::map(kind, a + lo, y + lo, hi - lo)
      : level == 3 ? gemm_v3::map(kind, a + lo, y + lo, hi - lo)
                   : gemm_v2::map(kind, a + lo, y + lo, hi - lo);
    }
  });
  return true;
}

/// reduce_all.add and dot of floats: vectorised ranges over the thread pool. nullopt when
/// the arrays are too short (the reference then reports it).
template <typename T>
std::optional<uint64_t> fast_sum(const isa::Instruction &in, std::span<const CpuArg> args,
                                 const std::function<uint64_t(isa::Reg)> &reg) {
  const bool is_dot = in.op == Opcode::Dot;
  const auto &ops = in.operands;
  const uint64_t n = reg(ops[is_dot ? 3 : 2].index);
  const CpuArg &xa = args[ops[1].index];
  const CpuArg *ya = is_dot ? &args[ops[2].index] : nullptr;
  if (xa.size / sizeof(T) < n || (ya && ya->size / sizeof(T) < n)) return std::nullopt;
  const T *x = static_cast<const T *>(xa.data);
  const T *y = ya ? static_cast<const T *>(ya->data) : nullptr;
  const uint64_t parts = std::clamp<uint64_t>(n / 65536, 1, uint64_t{cpu_threads()} * 4);
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
  const bool float_sum =
      in.op == Opcode::Dot ||
      (in.op == Opcode::ReduceAll && in.sub == static_cast<uint8_t>(isa::ReduceOp::Add));
  if (float_sum && (in.type == isa::Type::F32 || in.type == isa::Type::F64)) {
    auto r = in.type == isa::Type::F32 ? fast_sum<float>(in, args, reg)
                                       : fast_sum<double>(in, args, reg);
    if (r) {
      result = *r;
      return {};
    }
  }
  if (in.op == Opcode::Gemm || in.op == Opcode::BatchedGemm) {
    if (in.type == isa::Type::F32) return run_gemm<float>(k, in, args, reg, result);
    if (in.type == isa::Type::F64) return run_gemm<double>(k, in, args, reg, result);
  }
  const bool rows = in.op == Opcode::Softmax || in.op == Opcode::LogSoftmax ||
                    in.op == Opcode::RmsNorm || in.op == Opcode::LayerNorm;
  if (rows && in.type == isa::Type::F32 && fast_rows(in, args, reg)) return {};
  const bool maps = in.op == Opcode::Map || in.op == Opcode::Map2 || in.op == Opcode::Silu ||
                    in.op == Opcode::Gelu || in.op == Opcode::GeluTanh;
  if (maps && in.type == isa::Type::F32 && fast_map<float>(in, args, reg)) return {};
  if (maps && in.type == isa::Type::F64 && fast_map<double>(in, args, reg)) return {};
  if (auto s = split_of(in)) return run_split(k, in, args, reg, result, *s);
  return interp::run_launch_instruction(k, in, values_of(k, args), reg, result);
}

} // namespace hologram::runtime
