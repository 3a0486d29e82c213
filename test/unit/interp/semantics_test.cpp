// A sweep over the instruction table: every arithmetic, logic and math instruction on every
// type it accepts, compared with independent C++ reference code on sample operands.
#include "test_util.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace hologram;
using namespace hologram::test;

namespace {

template <typename T> std::vector<T> samples() {
  if constexpr (std::is_floating_point_v<T>)
    return {T(0),
            T(-0.0),
            T(1.5),
            T(-2.25),
            T(1e3),
            T(0.1),
            std::numeric_limits<T>::infinity(),
            std::numeric_limits<T>::quiet_NaN()};
  else if constexpr (std::is_signed_v<T>)
    return {T(0),
            T(1),
            T(-1),
            T(7),
            T(-3),
            std::numeric_limits<T>::max(),
            std::numeric_limits<T>::min()};
  else
    return {T(0), T(1), T(7), T(200), std::numeric_limits<T>::max()};
}

template <typename T> bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
    if (a == b) return std::signbit(a) == std::signbit(b) || a != 0;
    return std::fabs(a - b) <= std::fabs(b) * 4 * std::numeric_limits<T>::epsilon();
  }
  return a == b;
}

template <typename T> T wrap(long double) = delete;

// Reference semantics for binary instructions, written independently of the interpreter.
template <typename T> std::optional<T> ref_binary(const std::string &op, T a, T b) {
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  if constexpr (std::is_integral_v<T>) {
    auto trunc = [](W v) {
      return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v)));
    };
    if (op == "add")
      return trunc(static_cast<W>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
    if (op == "sub")
      return trunc(static_cast<W>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)));
    if (op == "mul")
      return trunc(static_cast<W>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
    if (op == "div") {
      if (b == 0) return T(0);
      if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1)) return a;
      return static_cast<T>(static_cast<W>(a) / static_cast<W>(b));
    }
    if (op == "rem") {
      if (b == 0) return T(0);
      if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1)) return T(0);
      return static_cast<T>(static_cast<W>(a) % static_cast<W>(b));
    }
    if (op == "and") return static_cast<T>(a & b);
    if (op == "or") return static_cast<T>(a | b);
    if (op == "xor") return static_cast<T>(a ^ b);
    if (op == "min") return a < b ? a : b;
    if (op == "max") return a < b ? b : a;
  } else {
    if (op == "add") return a + b;
    if (op == "sub") return a - b;
    if (op == "mul") return a * b;
    if (op == "div") return a / b;
    if (op == "rem") return static_cast<T>(std::fmod(a, b));
    if (a == 0 && b == 0 && (op == "min" || op == "max")) // -0 orders below +0
      return (op == "min") == static_cast<bool>(std::signbit(a)) ? a : b;
    if (op == "min") return std::isnan(a) ? b : std::isnan(b) ? a : (b < a ? b : a);
    if (op == "max") return std::isnan(a) ? b : std::isnan(b) ? a : (a < b ? b : a);
    if (op == "pow")
      return static_cast<T>(std::pow(static_cast<long double>(a), static_cast<long double>(b)));
    if (op == "atan2")
      return static_cast<T>(std::atan2(static_cast<long double>(a), static_cast<long double>(b)));
  }
  return std::nullopt;
}

template <typename T> std::optional<T> ref_unary(const std::string &op, T a) {
  if constexpr (std::is_integral_v<T>) {
    if (op == "not") return static_cast<T>(~a);
    if (op == "neg")
      return static_cast<T>(
          static_cast<std::make_unsigned_t<T>>(0u - static_cast<std::make_unsigned_t<T>>(a)));
    if (op == "abs") {
      if constexpr (std::is_signed_v<T>)
        return a < 0 ? static_cast<T>(static_cast<std::make_unsigned_t<T>>(
                           0u - static_cast<std::make_unsigned_t<T>>(a)))
                     : a;
      return a;
    }
    if (op == "sign") return static_cast<T>(a > 0 ? 1 : (a < 0 ? -1 : 0));
  } else {
    using LD = long double;
    LD x = a;
    if (op == "neg") return -a;
    if (op == "abs") return std::fabs(a);
    if (op == "sign") return a > 0 ? T(1) : a < 0 ? T(-1) : a;
    if (op == "rcp") return T(1) / a;
    if (op == "floor") return std::floor(a);
    if (op == "ceil") return std::ceil(a);
    if (op == "round") return std::round(a);
    if (op == "trunc") return std::trunc(a);
    if (op == "exp") return static_cast<T>(std::exp(x));
    if (op == "exp2") return static_cast<T>(std::exp2(x));
    if (op == "log") return static_cast<T>(std::log(x));
    if (op == "log2") return static_cast<T>(std::log2(x));
    if (op == "log10") return static_cast<T>(std::log10(x));
    if (op == "sqrt") return static_cast<T>(std::sqrt(x));
    if (op == "rsqrt") return static_cast<T>(1 / std::sqrt(x));
    if (op == "sin") return static_cast<T>(std::sin(x));
    if (op == "cos") return static_cast<T>(std::cos(x));
    if (op == "tan") return static_cast<T>(std::tan(x));
    if (op == "tanh") return static_cast<T>(std::tanh(x));
    if (op == "erf") return static_cast<T>(std::erf(x));
    if (op == "sigmoid") {
      LD e = std::exp(-x);
      return e > std::numeric_limits<T>::max() ? T(0) : static_cast<T>(1 / (1 + e));
    }
  }
  return std::nullopt;
}

template <typename T> int sweep(const isa::OpcodeInfo &row) {
  std::string op(row.mnemonic);
  int checked = 0;
  if (row.signature == "dss") {
    for (T a : samples<T>())
      for (T b : samples<T>()) {
        auto want = ref_binary<T>(op, a, b);
        if (!want) continue;
        T got = binop<T>(op, a, b);
        EXPECT_TRUE(same(got, *want))
            << op << "." << tn(type_of<T>()) << "(" << lit(a) << ", " << lit(b)
            << ") = " << lit(got) << ", expected " << lit(*want);
        ++checked;
      }
  } else if (row.signature == "ds") {
    for (T a : samples<T>()) {
      auto want = ref_unary<T>(op, a);
      if (!want) continue;
      T got = unop<T>(op, a);
      EXPECT_TRUE(same(got, *want)) << op << "." << tn(type_of<T>()) << "(" << lit(a)
                                    << ") = " << lit(got) << ", expected " << lit(*want);
      ++checked;
    }
  }
  return checked;
}

} // namespace

TEST(Semantics, EveryArithmeticInstructionOnEveryAcceptedType) {
  int total = 0;
  for (const auto &row : isa::opcode_table()) {
    if (row.family != isa::OpFamily::Arith && row.family != isa::OpFamily::Logic &&
        row.family != isa::OpFamily::Math)
      continue;
    if (row.signature != "dss" && row.signature != "ds") continue;
    int covered = 0;
    for (int ti = 1; ti < isa::kNumTypes; ++ti) {
      Type t = static_cast<Type>(ti);
      if (!row.types.contains(t)) continue;
      int n = 0;
      switch (t) {
      case Type::I8: n = sweep<int8_t>(row); break;
      case Type::I16: n = sweep<int16_t>(row); break;
      case Type::I32: n = sweep<int32_t>(row); break;
      case Type::I64: n = sweep<int64_t>(row); break;
      case Type::U8: n = sweep<uint8_t>(row); break;
      case Type::U16: n = sweep<uint16_t>(row); break;
      case Type::U32: n = sweep<uint32_t>(row); break;
      case Type::U64: n = sweep<uint64_t>(row); break;
      case Type::F32: n = sweep<float>(row); break;
      case Type::F64: n = sweep<double>(row); break;
      case Type::BF16:
      case Type::F16:
      case Type::None:
      case Type::Pred: break;
      }
      EXPECT_GT(n, 0) << row.mnemonic << "." << tn(t) << " has no reference in the sweep";
      covered += n;
    }
    total += covered;
  }
  EXPECT_GT(total, 1000);
}
