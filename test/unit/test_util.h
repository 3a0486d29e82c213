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

} // namespace hologram::test
