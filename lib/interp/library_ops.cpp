// Reference implementations of the whole-launch operations: map, map2, reduce_all and the
// library ops of SPEC §3.8. Straightforward loops in double-free, single-rounding style: the
// interpreter is the oracle, not the fast path.
#include "hologram/isa/attention_operands.h"
#include "hologram/isa/gemm_operands.h"
#include "machine.h"
#include "semantics.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace hologram::interp::detail {

namespace {

using namespace isa;

template <typename T> struct Ops {
  const Instruction &inst;
  const LaunchView &view;
  const std::function<uint64_t(Reg)> &reg;

  // Operands by the names of the instruction table (opcodes.def), never by position.
  const Operand &operand(std::string_view name) const { return operand_named(inst, name); }
  uint64_t u(std::string_view name) const { return reg(operand(name).index); }
  T s(std::string_view name) const { return sem::from_bits<T>(reg(operand(name).index)); }
  uint64_t imm(std::string_view name) const { return operand(name).imm; }
  bool present(std::string_view name) const { return operand(name).kind == OperandKind::Param; }
  Status arr(std::string_view name, Count n, T *&out) const {
    return view.array(operand(name).index, n, out, std::string(name).c_str());
  }

  static T unary_map(MapUnaryOp op, T x) {
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
      case MapUnaryOp::Abs: return std::fabs(x);
      case MapUnaryOp::Neg: return -x;
      case MapUnaryOp::Sqrt: return sem::math(MathOpcode::Sqrt, x, x);
      case MapUnaryOp::Rsqrt: return sem::math(MathOpcode::Rsqrt, x, x);
      case MapUnaryOp::Rcp: return T{1} / x;
      case MapUnaryOp::Exp: return sem::math(MathOpcode::Exp, x, x);
      case MapUnaryOp::Exp2: return sem::math(MathOpcode::Exp2, x, x);
      case MapUnaryOp::Log: return sem::math(MathOpcode::Log, x, x);
      case MapUnaryOp::Log2: return sem::math(MathOpcode::Log2, x, x);
      case MapUnaryOp::Log10: return sem::math(MathOpcode::Log10, x, x);
      case MapUnaryOp::Sin: return sem::math(MathOpcode::Sin, x, x);
      case MapUnaryOp::Cos: return sem::math(MathOpcode::Cos, x, x);
      case MapUnaryOp::Tan: return sem::math(MathOpcode::Tan, x, x);
      case MapUnaryOp::Tanh: return sem::math(MathOpcode::Tanh, x, x);
      case MapUnaryOp::Sigmoid: return sem::math(MathOpcode::Sigmoid, x, x);
      case MapUnaryOp::Erf: return sem::math(MathOpcode::Erf, x, x);
      case MapUnaryOp::Relu: return x > 0 ? x : (std::isnan(x) ? x : T{0});
      case MapUnaryOp::Floor: return std::floor(x);
      case MapUnaryOp::Ceil: return std::ceil(x);
      case MapUnaryOp::Round: return std::round(x);
      case MapUnaryOp::Trunc: return std::trunc(x);
      }
    } else {
      switch (op) {
      case MapUnaryOp::Abs:
        if constexpr (std::is_signed_v<T>) return x < 0 ? sem::wrap_sub(T{0}, x) : x;
        return x;
      case MapUnaryOp::Neg: return sem::wrap_sub(T{0}, x);
      case MapUnaryOp::Relu: return x > 0 ? x : T{0};
      case MapUnaryOp::Ceil:
      case MapUnaryOp::Cos:
      case MapUnaryOp::Erf:
      case MapUnaryOp::Exp:
      case MapUnaryOp::Exp2:
      case MapUnaryOp::Floor:
      case MapUnaryOp::Log:
      case MapUnaryOp::Log10:
      case MapUnaryOp::Log2:
      case MapUnaryOp::Rcp:
      case MapUnaryOp::Round:
      case MapUnaryOp::Rsqrt:
      case MapUnaryOp::Sigmoid:
      case MapUnaryOp::Sin:
      case MapUnaryOp::Sqrt:
      case MapUnaryOp::Tan:
      case MapUnaryOp::Tanh:
      case MapUnaryOp::Trunc: return x;
      }
    }
    return x;
  }

  static T binary_map(MapBinaryOp op, T a, T b) {
    switch (op) {
    case MapBinaryOp::Add:
      if constexpr (std::is_integral_v<T>)
        return sem::wrap_add(a, b);
      else
        return a + b;
    case MapBinaryOp::Sub:
      if constexpr (std::is_integral_v<T>)
        return sem::wrap_sub(a, b);
      else
        return a - b;
    case MapBinaryOp::Mul:
      if constexpr (std::is_integral_v<T>)
        return sem::wrap_mul(a, b);
      else
        return a * b;
    case MapBinaryOp::Div:
      if constexpr (std::is_integral_v<T>)
        return sem::int_div(a, b);
      else
        return a / b;
    case MapBinaryOp::Min: return sem::num_min(a, b);
    case MapBinaryOp::Max: return sem::num_max(a, b);
    case MapBinaryOp::Pow:
      if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(std::pow(double{a}, double{b}));
      else
        return a;
    case MapBinaryOp::Atan2:
      if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(std::atan2(double{a}, double{b}));
      else
        return a;
    }
    return a;
  }

  static T reduce(ReduceOp op, T acc, T v) {
    switch (op) {
    case ReduceOp::Add:
      if constexpr (std::is_integral_v<T>)
        return sem::wrap_add(acc, v);
      else
        return acc + v;
    case ReduceOp::Mul:
      if constexpr (std::is_integral_v<T>)
        return sem::wrap_mul(acc, v);
      else
        return acc * v;
    case ReduceOp::Min: return sem::num_min(acc, v);
    case ReduceOp::Max: return sem::num_max(acc, v);
    }
    return acc;
  }

  Status run(uint64_t &result) {
    switch (family_of(inst.op)) {
    case OpFamily::HigherOrder:
      return run_higher_order(as_family<HigherOrderOpcode>(inst.op), result);
    case OpFamily::Library:
      if constexpr (std::is_floating_point_v<T>)
        return run_library(as_family<LibraryOpcode>(inst.op), result);
      return {ErrorCode::LaunchFailed, "library operation on a non-float type"};
    case OpFamily::Move:
    case OpFamily::Arith:
    case OpFamily::Logic:
    case OpFamily::Control:
    case OpFamily::Sync:
    case OpFamily::Atomic:
    case OpFamily::Atlas:
    case OpFamily::Reduce:
    case OpFamily::Math:
    case OpFamily::Pool: break;
    }
    return {ErrorCode::LaunchFailed, "not a whole-launch operation"};
  }

  Status run_higher_order(HigherOrderOpcode which, uint64_t &result) {
    switch (which) {
    case HigherOrderOpcode::Map: {
      uint64_t n = u("n");
      T *dst, *src;
      if (auto st = arr("dst", n, dst); !st) return st;
      if (auto st = arr("src", n, src); !st) return st;
      for (uint64_t i = 0; i < n; ++i)
        dst[i] = unary_map(static_cast<MapUnaryOp>(inst.sub), src[i]);
      return {};
    }
    case HigherOrderOpcode::Map2: {
      uint64_t n = u("n");
      T *dst, *a, *b;
      if (auto st = arr("dst", n, dst); !st) return st;
      if (auto st = arr("a", n, a); !st) return st;
      if (auto st = arr("b", n, b); !st) return st;
      for (uint64_t i = 0; i < n; ++i)
        dst[i] = binary_map(static_cast<MapBinaryOp>(inst.sub), a[i], b[i]);
      return {};
    }
    case HigherOrderOpcode::ReduceAll: {
      uint64_t n = u("n");
      T *src;
      if (auto st = arr("src", n, src); !st) return st;
      auto op = static_cast<ReduceOp>(inst.sub);
      T acc{};
      switch (op) {
      case ReduceOp::Add: acc = T{0}; break;
      case ReduceOp::Mul: acc = T{1}; break;
      case ReduceOp::Min:
        acc = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                   : std::numeric_limits<T>::max();
        break;
      case ReduceOp::Max:
        acc = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                   : std::numeric_limits<T>::lowest();
        break;
      }
      for (uint64_t i = 0; i < n; ++i) acc = reduce(op, acc, src[i]);
      result = sem::to_bits(acc);
      return {};
    }
    }
    return {};
  }

  Status run_library(LibraryOpcode op, uint64_t &result) {
    switch (op) {
    case LibraryOpcode::Gemm:
    case LibraryOpcode::BatchedGemm: return gemm_of();
    case LibraryOpcode::Gemv: {
      uint64_t m = u("M"), n = u("N"), lda = u("lda");
      bool tr = imm("transA");
      uint64_t rows = tr ? n : m, cols = tr ? m : n; // y has `rows` elements, x has `cols`
      T *y, *A, *x;
      T alpha = s("alpha"), beta = s("beta");
      if (auto st = arr("y", rows, y); !st) return st;
      if (auto st = arr("A", m ? sat_add(prod(m - 1, lda), n) : 0, A); !st) return st;
      if (auto st = arr("x", cols, x); !st) return st;
      for (uint64_t i = 0; i < rows; ++i) {
        T acc = 0;
        for (uint64_t j = 0; j < cols; ++j) acc += (tr ? A[j * lda + i] : A[i * lda + j]) * x[j];
        y[i] = alpha * acc + (beta == T{0} ? T{0} : beta * y[i]);
      }
      return {};
    }
    case LibraryOpcode::Softmax:
    case LibraryOpcode::LogSoftmax: {
      uint64_t rows = u("rows"), cols = u("cols");
      T *y, *x;
      if (auto st = arr("y", prod(rows, cols), y); !st) return st;
      if (auto st = arr("x", prod(rows, cols), x); !st) return st;
      for (uint64_t r = 0; r < rows; ++r) {
        const T *xr = x + r * cols;
        T *yr = y + r * cols;
        T mx = -std::numeric_limits<T>::infinity();
        for (uint64_t c = 0; c < cols; ++c) mx = std::fmax(mx, xr[c]);
        double sum = 0;
        for (uint64_t c = 0; c < cols; ++c) sum += std::exp(double{xr[c]} - double{mx});
        for (uint64_t c = 0; c < cols; ++c) {
          double d = double{xr[c]} - double{mx};
          yr[c] =
              static_cast<T>(inst.op == Opcode::Softmax ? std::exp(d) / sum : d - std::log(sum));
        }
      }
      return {};
    }
    case LibraryOpcode::LayerNorm:
    case LibraryOpcode::RmsNorm: {
      bool ln = inst.op == Opcode::LayerNorm;
      uint64_t rows = u("rows"), cols = u("cols");
      double eps = s("eps");
      T *y, *x, *gamma = nullptr, *beta = nullptr;
      if (auto st = arr("y", prod(rows, cols), y); !st) return st;
      if (auto st = arr("x", prod(rows, cols), x); !st) return st;
      if (present("gamma"))
        if (auto st = arr("gamma", cols, gamma); !st) return st;
      if (ln && present("beta"))
        if (auto st = arr("beta", cols, beta); !st) return st;
      for (uint64_t r = 0; r < rows; ++r) {
        const T *xr = x + r * cols;
        double mean = 0, sq = 0;
        if (ln) {
          for (uint64_t c = 0; c < cols; ++c) mean += xr[c];
          mean /= static_cast<double>(cols);
        }
        for (uint64_t c = 0; c < cols; ++c) sq += (xr[c] - mean) * (xr[c] - mean);
        double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
        for (uint64_t c = 0; c < cols; ++c) {
          double v = (xr[c] - mean) * inv;
          if (gamma) v *= gamma[c];
          if (beta) v += beta[c];
          y[r * cols + c] = static_cast<T>(v);
        }
      }
      return {};
    }
    case LibraryOpcode::Silu:
    case LibraryOpcode::Gelu:
    case LibraryOpcode::GeluTanh: {
      uint64_t n = u("n");
      T *y, *x;
      if (auto st = arr("y", n, y); !st) return st;
      if (auto st = arr("x", n, x); !st) return st;
      for (uint64_t i = 0; i < n; ++i) {
        double v = x[i], r;
        if (inst.op == Opcode::Silu)
          r = v * (v >= 0 ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v) / (1.0 + std::exp(v)));
        else if (inst.op == Opcode::Gelu)
          r = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        else
          r = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        y[i] = static_cast<T>(r);
      }
      return {};
    }
    case LibraryOpcode::Rope: {
      uint64_t rows = u("rows"), dim = u("dim"), half = dim / 2;
      T *y, *x, *cs, *sn;
      if (dim % 2)
        return {ErrorCode::LaunchFailed,
                "rope needs an even dimension, got " + std::to_string(dim)};
      if (auto st = arr("y", prod(rows, dim), y); !st) return st;
      if (auto st = arr("x", prod(rows, dim), x); !st) return st;
      if (auto st = arr("cos", prod(rows, half), cs); !st) return st;
      if (auto st = arr("sin", prod(rows, half), sn); !st) return st;
      for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t i = 0; i < half; ++i) {
          double x0 = x[r * dim + 2 * i], x1 = x[r * dim + 2 * i + 1];
          double c = cs[r * half + i], sv = sn[r * half + i];
          y[r * dim + 2 * i] = static_cast<T>(x0 * c - x1 * sv);
          y[r * dim + 2 * i + 1] = static_cast<T>(x0 * sv + x1 * c);
        }
      return {};
    }
    case LibraryOpcode::Attention: {
      const AttentionOperands a = attention_operands(inst, reg);
      if (auto why = a.problem(); !why.empty()) return {ErrorCode::LaunchFailed, why};
      const uint64_t sq = a.seq_q, sk = a.seq_k, d = a.head_dim;
      const double scale = sem::from_bits<T>(a.scale_bits);
      T *out, *Q, *K, *V, *mask = nullptr;
      if (auto st = arr("out", a.q_extent(), out); !st) return st;
      if (auto st = arr("Q", a.q_extent(), Q); !st) return st;
      if (auto st = arr("K", a.kv_extent(), K); !st) return st;
      if (auto st = arr("V", a.kv_extent(), V); !st) return st;
      if (a.has_mask && !a.empty())
        if (auto st = arr("mask", prod(sq, sk), mask); !st) return st;
      if (a.empty()) return {};
      std::vector<double> scores(sk);
      for (uint64_t h = 0; h < a.heads; ++h)
        for (uint64_t i = 0; i < sq; ++i) {
          const T *q = Q + h * a.q_head_stride + i * a.q_row_stride;
          const uint64_t kv = a.kv_offset(h);
          double mx = -std::numeric_limits<double>::infinity();
          for (uint64_t j = 0; j < sk; ++j) {
            const T *k = K + kv + j * a.kv_row_stride;
            double acc = 0;
            for (uint64_t c = 0; c < d; ++c) acc += double{q[c]} * k[c];
            double v = acc * scale + (mask ? double{mask[i * sk + j]} : 0.0);
            if (a.causal && j > i + (sk - std::min(sk, sq)))
              v = -std::numeric_limits<double>::infinity();
            scores[j] = v;
            mx = std::fmax(mx, v);
          }
          double sum = 0;
          for (auto &v : scores) sum += (v = std::isinf(mx) ? 0.0 : std::exp(v - mx));
          T *o = out + h * a.q_head_stride + i * a.q_row_stride;
          for (uint64_t c = 0; c < d; ++c) {
            double acc = 0;
            for (uint64_t j = 0; j < sk; ++j) acc += scores[j] * V[kv + j * a.kv_row_stride + c];
            o[c] = static_cast<T>(sum > 0 ? acc / sum : 0.0);
          }
        }
      return {};
    }
    case LibraryOpcode::Conv2d: {
      uint64_t N = u("N"), C = u("C"), H = u("H"), W = u("W"), K = u("K"), KH = u("KH"),
               KW = u("KW"), stride = u("stride"), pad = u("pad");
      if (stride == 0) return {ErrorCode::LaunchFailed, "conv2d stride must be positive"};
      Count padded_h = sat_add(H, prod(2, pad)), padded_w = sat_add(W, prod(2, pad));
      if (padded_h < KH || padded_w < KW || padded_h >= (Count{1} << 62) ||
          padded_w >= (Count{1} << 62))
        return {ErrorCode::LaunchFailed, "conv2d sizes are out of range (a kernel larger than the "
                                         "padded input, or a huge input)"};
      uint64_t OH = static_cast<uint64_t>((padded_h - KH) / stride + 1);
      uint64_t OW = static_cast<uint64_t>((padded_w - KW) / stride + 1);
      T *out, *in, *w, *bias = nullptr;
      if (auto st = arr("out", prod(N, K, OH, OW), out); !st) return st;
      if (auto st = arr("in", prod(N, C, H, W), in); !st) return st;
      if (auto st = arr("weight", prod(K, C, KH, KW), w); !st) return st;
      if (present("bias"))
        if (auto st = arr("bias", K, bias); !st) return st;
      for (uint64_t n = 0; n < N; ++n)
        for (uint64_t k = 0; k < K; ++k)
          for (uint64_t oy = 0; oy < OH; ++oy)
            for (uint64_t ox = 0; ox < OW; ++ox) {
              double acc = bias ? double{bias[k]} : 0.0;
              for (uint64_t c = 0; c < C; ++c)
                for (uint64_t ky = 0; ky < KH; ++ky)
                  for (uint64_t kx = 0; kx < KW; ++kx) {
                    int64_t iy = static_cast<int64_t>(oy * stride + ky) - static_cast<int64_t>(pad);
                    int64_t ix = static_cast<int64_t>(ox * stride + kx) - static_cast<int64_t>(pad);
                    if (iy < 0 || ix < 0 || iy >= static_cast<int64_t>(H) ||
                        ix >= static_cast<int64_t>(W))
                      continue;
                    acc += double{in[((n * C + c) * H + iy) * W + ix]} *
                           w[((k * C + c) * KH + ky) * KW + kx];
                  }
              out[((n * K + k) * OH + oy) * OW + ox] = static_cast<T>(acc);
            }
      return {};
    }
    case LibraryOpcode::Dot: {
      uint64_t n = u("n");
      T *x, *y;
      if (auto st = arr("x", n, x); !st) return st;
      if (auto st = arr("y", n, y); !st) return st;
      double acc = 0;
      for (uint64_t i = 0; i < n; ++i) acc += double{x[i]} * y[i];
      result = sem::to_bits(static_cast<T>(acc));
      return {};
    }
    case LibraryOpcode::Axpy: {
      uint64_t n = u("n");
      T alpha = s("alpha");
      T *y, *x;
      if (auto st = arr("y", n, y); !st) return st;
      if (auto st = arr("x", n, x); !st) return st;
      for (uint64_t i = 0; i < n; ++i) y[i] = std::fma(alpha, x[i], y[i]);
      return {};
    }
    }
    return {};
  }

  // C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b], row-major with leading dimensions.
  /// gemm and batched_gemm with their operands taken by name (gemm_operands.h).
  Status gemm_of() {
    const GemmOperands g = gemm_operands(inst, reg);
    return gemm(g.batch, g.m, g.n, g.k, sem::from_bits<T>(g.alpha_bits),
                sem::from_bits<T>(g.beta_bits), g.lda, g.ldb, g.ldc, g.stride_a, g.stride_b,
                g.stride_c, g.trans_a, g.trans_b);
  }

  Status gemm(uint64_t batch, uint64_t M, uint64_t N, uint64_t K, T alpha, T beta, uint64_t lda,
              uint64_t ldb, uint64_t ldc, uint64_t sa, uint64_t sb, uint64_t sc, bool ta, bool tb) {
    if (batch == 0 || M == 0 || N == 0) return {};
    uint64_t a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
    if (lda < a_cols || ldb < b_cols || ldc < N)
      return {ErrorCode::LaunchFailed,
              "gemm leading dimensions are smaller than the rows they describe"};
    T *C, *A, *B;
    auto extent = [&](uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride) -> Count {
      return rows == 0 ? 0 : sat_add(sat_add(prod(batch - 1, stride), prod(rows - 1, ld)), cols);
    };
    if (auto st = arr("C", extent(M, N, ldc, sc), C); !st) return st;
    if (auto st = arr("A", extent(a_rows, a_cols, lda, sa), A); !st) return st;
    if (auto st = arr("B", extent(b_rows, b_cols, ldb, sb), B); !st) return st;
    for (uint64_t b = 0; b < batch; ++b)
      for (uint64_t i = 0; i < M; ++i)
        for (uint64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (uint64_t k = 0; k < K; ++k) {
            double a = ta ? A[b * sa + k * lda + i] : A[b * sa + i * lda + k];
            double bv = tb ? B[b * sb + j * ldb + k] : B[b * sb + k * ldb + j];
            acc += a * bv;
          }
          T &c = C[b * sc + i * ldc + j];
          c = static_cast<T>(double{alpha} * acc + (beta == T{0} ? 0.0 : double{beta} * c));
        }
    return {};
  }
};

} // namespace

Status run_launch_op(const Instruction &inst, const LaunchView &view,
                     const std::function<uint64_t(Reg)> &reg, uint64_t &result) {
  return sem::with_type(inst.type, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint16_t>) {
      if (is_storage_only(inst.type))
        return {ErrorCode::LaunchFailed, "whole-launch operation on a storage type"};
    }
    Ops<T> ops{inst, view, reg};
    return ops.run(result);
  });
}

} // namespace hologram::interp::detail
