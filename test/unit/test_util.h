// Helpers for unit tests: parse a program from text, run single-kernel programs on the
// interpreter, and build one-instruction programs from typed operands.
#pragma once

#include "hologram/interp/interpreter.h"
#include "hologram/isa/builder.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/runtime/error.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace hologram::test {

/// y[i] = a * x[i] + y[i] for lanes i < n; reads and writes nothing else.
inline constexpr const char *kSaxpy = R"(.kernel saxpy
.param %x : buffer<f32> read
.param %y : buffer<f32> readwrite
.param %a : f32
.param %n : u64
  param.u64 r1, %n
  setge.u64 p0, %gid, r1
  bra p0 @done
  param.f32 r2, %a
  ld.f32 r3, [%x + %gid*4]
  ld.f32 r4, [%y + %gid*4]
  mad.f32 r5, r2, r3, r4
  st.f32 [%y + %gid*4], r5
@done:
  exit
)";

/// out[0] = the sum of x[0..n): a whole-launch kernel (reduce_all runs as the backend's
/// library op, its result stored by the kernel's own code).
inline constexpr const char *kTotal = R"(.kernel total
.param %x : buffer<f32> read
.param %out : buffer<f32> write
.param %n : u64
  param.u64          r0, %n
  reduce_all.add.f32 r1, %x, r0
  mov.imm.u64        r2, 0
  st.f32             [%out + r2*4], r1
)";

using isa::Type;

/// Reads a file of the source tree (path relative to the repository root).
inline std::optional<std::string> read_file_for_test(const std::string &rel) {
  std::ifstream in(std::string(HOLOGRAM_SOURCE_DIR) + "/" + rel);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The error code `f` throws (Ok when it throws nothing), and its message in `message`.
template <typename F> ErrorCode code_of(F &&f, std::string *message = nullptr) {
  try {
    f();
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.code();
  }
  return ErrorCode::Ok;
}

inline isa::Module parse_ok(const std::string &text) {
  DiagnosticEngine d;
  auto m = isa::parse_module(text, "test.hasm", d);
  EXPECT_TRUE(m.has_value()) << d.to_string();
  return m ? *m : isa::Module{};
}

/// Parses and verifies; returns the diagnostics text ("" if the program is valid).
inline std::string verify_text(const std::string &text) {
  DiagnosticEngine d;
  auto m = isa::parse_module(text, "test.hasm", d);
  if (!m) return d.to_string();
  isa::verify_module(*m, d);
  return d.to_string();
}

template <typename T> constexpr Type type_of() {
  if constexpr (std::is_same_v<T, int8_t>)
    return Type::I8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return Type::I16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return Type::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return Type::I64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return Type::U8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return Type::U16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return Type::U32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return Type::U64;
  else if constexpr (std::is_same_v<T, float>)
    return Type::F32;
  else
    return Type::F64;
}

template <typename T> uint64_t bits_of(T v) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<uint32_t>(v);
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<uint64_t>(v);
  else
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
}

/// The seed of a randomised test: `base`, plus the value of HOLOGRAM_TEST_SEED where that is
/// set, so that a campaign by hand explores other programs than CI's (docs/testing.md).
inline uint32_t random_seed(uint32_t base) {
  const char *e = std::getenv("HOLOGRAM_TEST_SEED");
  return e ? base + static_cast<uint32_t>(std::strtoul(e, nullptr, 10)) : base;
}
/// The number of trials of a randomised test: `n`, times HOLOGRAM_TEST_RANDOM_SCALE where that
/// is set (a longer campaign by hand; CI runs `n`).
inline int random_trials(int n) {
  const char *e = std::getenv("HOLOGRAM_TEST_RANDOM_SCALE");
  const long scale = e ? std::strtol(e, nullptr, 10) : 1;
  return scale > 1 ? static_cast<int>(n * scale) : n;
}

/// Whether two floats have the same bits, any two NaNs counting as the same.
template <typename T> bool same_bits_or_nans(T x, T y) {
  return std::isnan(x) ? std::isnan(y) : bits_of(x) == bits_of(y);
}

template <typename T> std::string lit(T v) {
  return isa::format_literal(type_of<T>(), bits_of(v));
}
inline std::string tn(Type t) {
  return std::string(isa::type_name(t));
}

/// Runs kernel `name` (or the first) of `text` with the given arguments; asserts success.
inline Status run_text(const std::string &text, const LaunchConfig &launch,
                       std::vector<interp::ArgValue> args, interp::AtlasState *atlas = nullptr,
                       interp::InterpOptions opts = {}) {
  DiagnosticEngine d;
  auto m = isa::parse_module(text, "test.hasm", d);
  if (!m) return {ErrorCode::InvalidProgram, d.to_string()};
  interp::AtlasState local;
  return interp::run_kernel(m->kernels.at(0), launch, args, atlas ? *atlas : local, opts);
}

/// Runs a single-lane kernel whose only parameter is `%out : buffer<OutT>` (n elements).
template <typename OutT>
std::vector<OutT> run_out(const std::string &body, size_t n = 1, interp::InterpOptions opts = {}) {
  std::string text =
      ".kernel t\n.param %out : buffer<" + tn(type_of<OutT>()) + "> readwrite\n" + body;
  std::vector<OutT> out(n);
  auto st = run_text(text, {}, {interp::ArgValue::buffer_of(out)}, nullptr, opts);
  EXPECT_TRUE(st.is_ok()) << st.message() << "\nprogram:\n" << text;
  return out;
}

/// `OP.T r3, a, b` evaluated on the interpreter.
template <typename T> T binop(const std::string &op, T a, T b) {
  std::string t = tn(type_of<T>());
  return run_out<T>("  mov.imm." + t + " r1, " + lit(a) + "\n  mov.imm." + t + " r2, " + lit(b) +
                    "\n  " + op + "." + t + " r3, r1, r2\n  st." + t + " [%out], r3\n")[0];
}
template <typename T> T unop(const std::string &op, T a) {
  std::string t = tn(type_of<T>());
  return run_out<T>("  mov.imm." + t + " r1, " + lit(a) + "\n  " + op + "." + t + " r3, r1\n  st." +
                    t + " [%out], r3\n")[0];
}
template <typename T> T ternop(const std::string &op, T a, T b, T c) {
  std::string t = tn(type_of<T>());
  return run_out<T>("  mov.imm." + t + " r1, " + lit(a) + "\n  mov.imm." + t + " r2, " + lit(b) +
                    "\n  mov.imm." + t + " r4, " + lit(c) + "\n  " + op + "." + t +
                    " r3, r1, r2, r4\n  st." + t + " [%out], r3\n")[0];
}
template <typename D, typename S> D cvt(S v) {
  std::string d = tn(type_of<D>()), s = tn(type_of<S>());
  return run_out<D>("  mov.imm." + s + " r1, " + lit(v) + "\n  cvt." + d + "." + s +
                    " r2, r1\n  st." + d + " [%out], r2\n")[0];
}
template <typename T> bool cmp(const std::string &cc, T a, T b) {
  std::string t = tn(type_of<T>());
  return run_out<uint32_t>("  mov.imm." + t + " r1, " + lit(a) + "\n  mov.imm." + t + " r2, " +
                           lit(b) + "\n  set" + cc + "." + t +
                           " p0, r1, r2\n  mov.imm.u32 r3, 1\n  mov.imm.u32 r4, 0\n"
                           "  sel.u32 r5, p0, r3, r4\n  st.u32 [%out], r5\n")[0] != 0;
}

/// One random i32 operation of three registers that `reg` picks: "  OP.i32 rD, rA, rB\n".
template <typename Reg> std::string random_i32_op(std::mt19937 &rng, Reg &reg) {
  const char *ops[] = {"add", "sub", "mul", "xor", "min", "max"};
  return std::string("  ") + ops[rng() % 6] + ".i32 " + reg() + ", " + reg() + ", " + reg() + "\n";
}

/// The address of a lane's k-th element of %y in the random kernels below: each lane owns
/// eight, element k·lanes + %gid for k = 0..7.
inline std::string lane_slot(uint32_t lanes, uint32_t k) {
  return "[%y + %gid*4 + " + std::to_string(4 * lanes * k) + "]";
}

/// A random kernel of i32 arithmetic per lane with if-then regions: `bra` on a lane-varying
/// predicate over one to four instructions (arithmetic, loads, stores), the shape the x86 back
/// end runs under a mask without its dispatcher and the Vulkan one folds into the block in
/// front when it is pure; sometimes a branch to the next instruction,
/// or one over a region the dispatcher must schedule (a second branch inside it).
inline std::string random_if_then_kernel(std::mt19937 &rng, uint32_t lanes) {
  auto reg = [&] { return "r" + std::to_string(2 + rng() % 6); };
  auto arith = [&] { return random_i32_op(rng, reg); };
  auto slot = [&](uint32_t k) { return lane_slot(lanes, k); };
  std::string s = ".kernel k\n.param %x : buffer<i32> read\n.param %y : buffer<i32> readwrite\n"
                  "  ld.i32 r2, [%x + %gid*4]\n";
  for (int r = 3; r <= 7; ++r)
    s += "  mov.imm.i32 r" + std::to_string(r) + ", " + std::to_string(int(rng() % 200) - 100) +
         "\n  add.i32 r" + std::to_string(r) + ", r" + std::to_string(r) + ", r2\n";
  const int regions = 2 + static_cast<int>(rng() % 6);
  for (int k = 0; k < regions; ++k) {
    for (int i = static_cast<int>(rng() % 3); i > 0; --i) s += arith();
    const std::string label = "@L" + std::to_string(k);
    s += "  setlt.i32 p" + std::to_string(k % 4) + ", " + reg() + ", " + reg() + "\n";
    s += std::string("  bra ") + (rng() % 2 ? "!" : "") + "p" + std::to_string(k % 4) + " " +
         label + "\n";
    const int body = static_cast<int>(rng() % 5); // 0: a branch to the next instruction
    for (int i = 0; i < body; ++i) {
      switch (rng() % 4) {
      case 0: s += "  ld.i32 " + reg() + ", [%x + %gid*4]\n"; break;
      case 1: s += "  st.i32 " + slot(6 + rng() % 2) + ", " + reg() + "\n"; break;
      default: s += arith();
      }
    }
    if (body > 0 && rng() % 5 == 0) // a branch inside: the dispatcher's case
      s += "  setgt.i32 p3, " + reg() + ", " + reg() + "\n  bra p3 " + label + "\n" + arith();
    s += label + ":\n";
  }
  for (int r = 2; r <= 7; ++r)
    s += "  st.i32 " + slot(static_cast<uint32_t>(r - 2)) + ", r" + std::to_string(r) + "\n";
  return s + "  exit\n";
}

/// A random kernel of i32 arithmetic per lane in nested loops (up to three deep) with
/// lane-varying trip counts: each loop tests its counter at the top, and its body may continue
/// (a branch back to its header), break (to the block after it, or after the loop around it),
/// end the lane (`exit`), store, or hold another loop. Every loop counts down before anything
/// else, so each ends. The structurisers' case: exits and back edges in the middle of a body.
inline std::string random_loop_kernel(std::mt19937 &rng, uint32_t lanes) {
  auto reg = [&] { return "r" + std::to_string(3 + rng() % 5); };
  auto arith = [&] { return random_i32_op(rng, reg); };
  auto slot = [&](uint32_t k) { return lane_slot(lanes, k); };
  auto pred = [&] { return "p" + std::to_string(rng() % 4); };
  auto test = [&](const std::string &p) {
    return "  setlt.i32 " + p + ", " + reg() + ", " + reg() + "\n";
  };
  std::string s = ".kernel k\n.param %x : buffer<i32> read\n.param %y : buffer<i32> readwrite\n"
                  "  ld.i32 r2, [%x + %gid*4]\n  mov.imm.i32 r1, 1\n  mov.imm.i32 r0, 0\n";
  for (int r = 3; r <= 7; ++r)
    s += "  mov.imm.i32 r" + std::to_string(r) + ", " + std::to_string(int(rng() % 200) - 100) +
         "\n  add.i32 r" + std::to_string(r) + ", r" + std::to_string(r) + ", r2\n";
  int next = 0;
  std::function<void(int, const std::string &)> loop = [&](int depth, const std::string &outer) {
    const std::string k = std::to_string(next++), head = "@H" + k, end = "@E" + k;
    const std::string c = "r" + std::to_string(10 + depth), mask = std::to_string(1 + rng() % 7);
    s += "  mov.imm.i32 r9, " + mask + "\n  and.i32 " + c + ", " + reg() + ", r9\n";
    s += head + ":\n  setle.i32 p4, " + c + ", r0\n  bra p4 " + end + "\n  sub.i32 " + c + ", " +
         c + ", r1\n";
    const int items = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < items; ++i) {
      const std::string p = pred();
      switch (rng() % 8) {
      case 0: s += test(p) + "  bra " + p + " " + head + "\n"; break; // continue
      case 1: s += test(p) + "  bra " + p + " " + end + "\n"; break;  // break
      case 2:
        if (!outer.empty()) s += test(p) + "  bra " + p + " " + outer + "\n"; // break twice
        break;
      case 3:
        if (depth < 2) loop(depth + 1, end);
        break;
      case 4: {
        const std::string skip = "@S" + std::to_string(next++);
        s += test(p) + "  bra " + p + " " + skip + "\n  st.i32 " + slot(6) + ", " + reg() +
             "\n  exit\n" + skip + ":\n";
        break;
      }
      case 5: s += "  st.i32 " + slot(7) + ", " + reg() + "\n"; break;
      default: s += arith();
      }
    }
    s += "  bra " + head + "\n" + end + ":\n" + arith();
  };
  const int loops = 1 + static_cast<int>(rng() % 3);
  for (int l = 0; l < loops; ++l) loop(0, "");
  for (int r = 2; r <= 7; ++r)
    s += "  st.i32 " + slot(static_cast<uint32_t>(r - 2)) + ", r" + std::to_string(r) + "\n";
  return s + "  exit\n";
}

/// The element types of random_typed_kernel's buffers, in the order of its parameters: the ten
/// numeric types that have arithmetic, then f16 and bf16 (storage only).
inline const std::vector<Type> &random_kernel_types() {
  static const std::vector<Type> types = {Type::I8,  Type::I16, Type::I32, Type::I64,
                                          Type::U8,  Type::U16, Type::U32, Type::U64,
                                          Type::F32, Type::F64, Type::F16, Type::BF16};
  return types;
}
/// Each lane's elements of each buffer of random_typed_kernel: six it may read; at the end
/// it writes its registers of that type over the last four (one for f16 and bf16).
inline constexpr uint32_t kRandomKernelSlots = 6;

/// Bits of a random value of type t, often one at an edge: 0, ±1, the limits, for floats
/// ±0, infinities, NaN, the smallest subnormal, halves (rounding) and values past the range of
/// the integers (saturating conversions).
inline uint64_t random_value_bits(std::mt19937 &rng, Type t) {
  const uint64_t r = (uint64_t{rng()} << 32) | rng();
  if (t == Type::F16 || t == Type::BF16) { // any 16 bits: subnormals, infinities, NaNs too
    const uint64_t edges[] = {0x0000, 0x8000, 0x0001, 0x7c00, 0xfc00, 0x7f80, 0xff80, 0x3c00};
    return rng() % 4 ? r & 0xffff : edges[rng() % std::size(edges)];
  }
  if (t == Type::F32 || t == Type::F64) {
    const double edges[] = {0.0,    -0.0,  1.0,    -1.0,   0.5,     2.5,     -2.5,
                            1e10,   3e9,   -3e9,   1.9e19, -1e20,   65504.0, 1e-40,
                            -1e-45, 127.5, -128.5, 255.5,  32767.5, 1.0e300, -1.0e-310};
    double v = 0;
    switch (rng() % 4) {
    case 0: v = edges[rng() % std::size(edges)]; break;
    case 1: v = std::numeric_limits<double>::infinity() * (rng() % 2 ? 1 : -1); break;
    case 2: v = static_cast<double>(static_cast<int32_t>(rng() % 2001) - 1000) / 8; break;
    default:
      v = std::ldexp(static_cast<double>(static_cast<int32_t>(rng())) / 0x1p31,
                     static_cast<int>(rng() % 80) - 40);
    }
    if (rng() % 12 == 0) v = std::numeric_limits<double>::quiet_NaN();
    if (t == Type::F64) return std::bit_cast<uint64_t>(v);
    return std::bit_cast<uint32_t>(static_cast<float>(v));
  }
  const unsigned bits = static_cast<unsigned>(type_size(t)) * 8;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t min = isa::is_signed_int(t) ? uint64_t{1} << (bits - 1) : 0;
  const uint64_t edges[] = {0, 1, mask, min, min - 1, 2, mask - 1, 7, 31, 33, 64, 65};
  switch (rng() % 3) {
  case 0: return edges[rng() % std::size(edges)] & mask;
  case 1: return static_cast<uint64_t>(static_cast<int64_t>(rng() % 41) - 20) & mask;
  default: return r & mask;
  }
}

/// A random straight-line kernel over every numeric type (SPEC §3.4's exact rules: integer
/// arithmetic that wraps, division by zero, MIN / -1, shifts modulo the width, float arithmetic
/// with its NaNs, minNum/maxNum, fma and mad, rounding, saturating conversions between every
/// pair of types, f16/bf16 through f32, compares and selects). Parameter j is
/// `buffer<random_kernel_types()[j]>`; lane g reads elements 6g to 6g + 5 of each, and writes
/// its registers of that type to 6g + 2 on. No transcendentals (their results may differ
/// within their ulp bounds). With `immediates` false, a register gets a new value by a load of
/// one of its lane's elements instead of `mov.imm`, so that no value is a constant of the code:
/// the device drivers' own constant folding breaks SPEC §3.4 (lavapipe of Mesa 22.3 makes
/// x · 0 zero and 0 / x +0 for a constant 0, whatever x, and folds y - y to that 0; PoCL 3.1
/// drops the store of floor of a constant NaN), which is not the back end's to test.
inline std::string random_typed_kernel(std::mt19937 &rng, int length, bool immediates = true) {
  const std::vector<Type> &types = random_kernel_types();
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto name = [](Type t) { return std::string(isa::type_name(t)); };
  // Registers of type index t: r(8 + 4t) .. r(8 + 4t + 3); f16 r48, bf16 r49.
  auto reg = [&](size_t t) {
    return "r" + std::to_string(t < 10 ? 8 + 4 * t + pick(4) : 48 + (t - 10));
  };
  auto pred = [&] { return "p" + std::to_string(pick(4)); };
  std::string s = ".kernel k\n";
  for (size_t t = 0; t < types.size(); ++t)
    s += ".param %b" + std::to_string(t) + " : buffer<" + name(types[t]) + "> readwrite\n";
  s += "  mov.imm.u64 r1, " + std::to_string(kRandomKernelSlots) +
       "\n  mul.u64 r2, %gid, r1\n  mov.imm.u64 r1, 1\n  add.u64 r3, r2, r1\n";
  auto addr = [&](size_t t, const std::string &index, uint32_t plus) {
    return "[%b" + std::to_string(t) + " + " + index + "*" + std::to_string(type_size(types[t])) +
           " + " + std::to_string(plus * type_size(types[t])) + "]";
  };
  for (size_t t = 0; t < 10; ++t) {
    const std::string T = name(types[t]), base = std::to_string(8 + 4 * t);
    s += "  ld." + T + " r" + base + ", " + addr(t, "r2", 0) + "\n";
    s += "  ld." + T + " r" + std::to_string(8 + 4 * t + 1) + ", " + addr(t, "r3", 0) + "\n";
    for (uint32_t k = 2; k < 4; ++k)
      s += immediates ? "  mov.imm." + T + " r" + std::to_string(8 + 4 * t + k) + ", " +
                            isa::format_literal(types[t], random_value_bits(rng, types[t])) + "\n"
                      : "  ld." + T + " r" + std::to_string(8 + 4 * t + k) + ", " +
                            addr(t, "r2", k) + "\n";
  }
  s += "  ld.f16 r48, " + addr(10, "r2", 0) + "\n  ld.bf16 r49, " + addr(11, "r2", 0) + "\n";
  s += "  setlt.i32 p0, r16, r17\n  setne.f32 p1, r40, r41\n  pnot p2, p0\n  por p3, p0, p1\n";
  static const char *kIntCc[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  static const char *kFloatCc[] = {"eq",  "ne",  "lt",  "le",  "gt",  "ge",
                                   "equ", "neu", "ltu", "leu", "gtu", "geu"};
  static const char *kIntBinary[] = {"add", "sub", "mul", "div", "rem", "min",
                                     "max", "and", "or",  "xor", "shl", "shr"};
  static const char *kIntUnary[] = {"abs", "neg", "not", "sign"};
  static const char *kFloatBinary[] = {"add", "sub", "mul", "div", "rem", "min", "max"};
  static const char *kFloatUnary[] = {"abs",   "neg",  "rcp",   "sign",
                                      "floor", "ceil", "round", "trunc"};
  static const char *kFloatTernary[] = {"mad", "fma", "fms", "clamp", "lerp"};
  for (int i = 0; i < length; ++i) {
    const size_t t = pick(10);
    const bool fl = t >= 8;
    const std::string T = name(types[t]), d = reg(t);
    switch (pick(10)) {
    case 0:
    case 1:
    case 2: {
      const std::string op = fl ? kFloatBinary[pick(std::size(kFloatBinary))]
                                : kIntBinary[pick(std::size(kIntBinary))];
      // Shift amounts are u32 registers (index 6).
      const std::string b = op == "shl" || op == "shr" ? reg(6) : reg(t);
      s += "  " + op + "." + T + " " + d + ", " + reg(t) + ", " + b + "\n";
      break;
    }
    case 3:
      s += "  " +
           std::string(fl ? kFloatUnary[pick(std::size(kFloatUnary))]
                          : kIntUnary[pick(std::size(kIntUnary))]) +
           "." + T + " " + d + ", " + reg(t) + "\n";
      break;
    case 4: {
      std::string op =
          fl ? kFloatTernary[pick(std::size(kFloatTernary))] : (pick(2) ? "mad" : "clamp");
      s += "  " + op + "." + T + " " + d + ", " + reg(t) + ", " + reg(t) + ", " + reg(t) + "\n";
      break;
    }
    case 5:
    case 6: { // a conversion from another type
      const size_t from = pick(10);
      s += "  cvt." + T + "." + name(types[from]) + " " + d + ", " + reg(from) + "\n";
      break;
    }
    case 7: {
      const std::string p = pred();
      s += "  set" + std::string(fl ? kFloatCc[pick(12)] : kIntCc[pick(6)]) + "." + T + " " + p +
           ", " + reg(t) + ", " + reg(t) + "\n  sel." + T + " " + d + ", " + p + ", " + reg(t) +
           ", " + reg(t) + "\n";
      break;
    }
    case 8: // f16 and bf16 through f32
      if (pick(2))
        s += pick(2) ? "  cvt.f16.f32 r48, " + reg(8) + "\n"
                     : "  cvt.bf16.f32 r49, " + reg(8) + "\n";
      else
        s += "  cvt.f32.f16 " + reg(8) + ", r48\n  cvt.f32.bf16 " + reg(8) + ", r49\n";
      break;
    default:
      s += immediates ? "  mov.imm." + T + " " + d + ", " +
                            isa::format_literal(types[t], random_value_bits(rng, types[t])) + "\n"
                      : "  ld." + T + " " + d + ", " +
                            addr(t, "r2", static_cast<uint32_t>(pick(kRandomKernelSlots))) + "\n";
    }
  }
  for (size_t t = 0; t < 10; ++t)
    for (uint32_t k = 0; k < 4; ++k)
      s += "  st." + name(types[t]) + " " + addr(t, "r2", 2 + k) + ", r" +
           std::to_string(8 + 4 * t + k) + "\n";
  s += "  st.f16 " + addr(10, "r2", 2) + ", r48\n  st.bf16 " + addr(11, "r2", 2) + ", r49\n";
  return s + "  exit\n";
}

} // namespace hologram::test
