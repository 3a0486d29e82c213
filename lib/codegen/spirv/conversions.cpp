// The SPIR-V lowering's conversions (SPEC §3.4): every pair of types; float to int truncates
// and saturates, NaN gives 0; f16 and bf16 through f32 with rounding to odd (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::convert(Type dt, Type st, Id v) -> Id {
  if (dt == st) return v;
  if (is_int(st) && is_int(dt)) {
    if (is64(st) && !is64(dt)) return normalize(dt, to32(v));
    if (!is64(st) && is64(dt)) return widen_to_64(is_signed_int(st), v);
    return normalize(dt, v);
  }
  if (st == Type::F16 || st == Type::BF16) return convert(dt, Type::F32, small_to_f32(st, v));
  if (dt == Type::F16 || dt == Type::BF16) {
    Id f = is_float(st) ? (st == Type::F64 ? f64_to_f32_odd(v) : v) : int_to_f32_odd(st, v);
    return f32_to_small(dt, bitcast(u32t(), f));
  }
  if (is_float(st) && is_float(dt)) return op(Op::OpFConvert, rep(dt), {v});
  if (is_int(st)) // int -> float, correctly rounded
    return op(is_signed_int(st) ? Op::OpConvertSToF : Op::OpConvertUToF, rep(dt), {v});
  return float_to_int(dt, st, v);
}

auto KernelLowering::widen_to_64(bool is_signed, Id v) -> Id {
  Id wide = op(Op::OpUConvert, u64t(), {v});
  if (!is_signed) return wide;
  return op(Op::OpShiftRightArithmetic, u64t(),
            {op(Op::OpShiftLeftLogical, u64t(), {wide, cu64(32)}), cu64(32)});
}

auto KernelLowering::msb64(Id v) -> Id {
  Id hi = to32(op(Op::OpShiftRightLogical, u64t(), {v, cu32(32)}));
  return sel(u32t(), ine(hi, cu32(0)),
             op(Op::OpIAdd, u32t(), {glsl(u32t(), GLSLstd450FindUMsb, {hi}), cu32(32)}),
             glsl(u32t(), GLSLstd450FindUMsb, {to32(v)}));
}

auto KernelLowering::float_to_int(Type dt, Type st, Id v) -> Id {
  unsigned bits = type_bits(dt);
  bool s = is_signed_int(dt);
  Id ft = rep(st);
  Id it = is64(dt) ? u64t() : u32t();
  unsigned conv_bits = is64(dt) ? 64 : 32;
  // 2^(bits-1) for signed, 2^bits for unsigned: the first value above the range.
  double hi = std::ldexp(1.0, static_cast<int>(s ? bits - 1 : bits));
  double lo = s ? -hi : 0.0;
  uint64_t max_bits =
      s ? (uint64_t{1} << (bits - 1)) - 1 : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
  uint64_t min_bits = s ? ~uint64_t{0} << (bits - 1) : 0;
  Id maxc = conv_bits == 64 ? cu64(max_bits) : cu32(static_cast<uint32_t>(max_bits));
  Id minc = conv_bits == 64 ? cu64(min_bits) : cu32(static_cast<uint32_t>(min_bits));
  // Clamp into range before converting (an out-of-range conversion is undefined).
  Id safe = sel(ft, isnan(v), cfloat(st, 0.0), v);
  Id too_big = op(Op::OpFOrdGreaterThanEqual, boolt(), {safe, cfloat(st, hi)});
  Id too_small =
      op(s ? Op::OpFOrdLessThanEqual : Op::OpFOrdLessThan, boolt(), {safe, cfloat(st, lo)});
  Id in_range = sel(ft, lor(too_big, too_small), cfloat(st, 0.0), safe);
  Id r = op(s ? Op::OpConvertFToS : Op::OpConvertFToU, it, {in_range});
  r = sel(it, too_big, maxc, sel(it, too_small, minc, r));
  return normalize(dt, r);
}

auto KernelLowering::small_to_f32(Type st, Id h) -> Id {
  if (st == Type::BF16) return bitcast(f32t(), op(Op::OpShiftLeftLogical, u32t(), {h, cu32(16)}));
  auto u = [&](Op o, Id a, Id c) { return op(o, u32t(), {a, c}); };
  Id sign = u(Op::OpShiftLeftLogical, u(Op::OpBitwiseAnd, h, cu32(0x8000)), cu32(16));
  Id e = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, h, cu32(10)), cu32(0x1f));
  Id m = u(Op::OpBitwiseAnd, h, cu32(0x3ff));
  Id normal = u(Op::OpBitwiseOr, u(Op::OpShiftLeftLogical, u(Op::OpIAdd, e, cu32(112)), cu32(23)),
                u(Op::OpShiftLeftLogical, m, cu32(13)));
  Id special = u(Op::OpBitwiseOr, sel(u32t(), ine(m, cu32(0)), cu32(0x7fc00000), cu32(0x7f800000)),
                 u(Op::OpShiftLeftLogical, m, cu32(13)));
  // Subnormal: m * 2^-24, exact in f32.
  Id sub =
      bitcast(u32t(), exact(op(Op::OpFMul, f32t(),
                               {op(Op::OpConvertUToF, f32t(), {m}), cf32(std::ldexp(1.0f, -24))})));
  Id mag = sel(u32t(), ieq(e, cu32(0)), sub, sel(u32t(), ieq(e, cu32(31)), special, normal));
  return bitcast(f32t(), u(Op::OpBitwiseOr, mag, sign));
}

auto KernelLowering::f32_to_small(Type dt, Id x) -> Id {
  auto u = [&](Op o, Id a, Id c) { return op(o, u32t(), {a, c}); };
  Id sign = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, x, cu32(16)), cu32(0x8000));
  Id a = u(Op::OpBitwiseAnd, x, cu32(0x7fffffff));
  Id is_nan = op(Op::OpUGreaterThan, boolt(), {a, cu32(0x7f800000)});
  Id mag;
  if (dt == Type::BF16) {
    Id lsb = u(Op::OpBitwiseAnd, u(Op::OpShiftRightLogical, a, cu32(16)), cu32(1));
    mag = u(Op::OpShiftRightLogical, u(Op::OpIAdd, a, u(Op::OpIAdd, cu32(0x7fff), lsb)), cu32(16));
    mag = sel(u32t(), is_nan, cu32(0x7fc0), mag);
  } else {
    Id e = op(Op::OpISub, u32t(), {u(Op::OpShiftRightLogical, a, cu32(23)), cu32(127)}); // signed
    Id m = u(Op::OpBitwiseAnd, a, cu32(0x7fffff));
    // Normal range: e >= -14.
    Id base = u(Op::OpBitwiseOr, u(Op::OpShiftLeftLogical, u(Op::OpIAdd, e, cu32(15)), cu32(10)),
                u(Op::OpShiftRightLogical, m, cu32(13)));
    Id rb = u(Op::OpBitwiseAnd, m, cu32(0x1fff));
    Id up = lor(op(Op::OpUGreaterThan, boolt(), {rb, cu32(0x1000)}),
                land(ieq(rb, cu32(0x1000)), ine(u(Op::OpBitwiseAnd, base, cu32(1)), cu32(0))));
    Id normal = u(Op::OpIAdd, base, sel(u32t(), up, cu32(1), cu32(0)));
    normal =
        sel(u32t(), op(Op::OpUGreaterThan, boolt(), {normal, cu32(0x7c00)}), cu32(0x7c00), normal);
    // Subnormal range: shift the full mantissa right by -e-1 (14..24 for e in -15..-25).
    Id full = u(Op::OpBitwiseOr, m, cu32(0x800000));
    Id sh = op(Op::OpISub, u32t(), {cu32(0xffffffffu), e}); // -e-1
    sh = glsl(u32t(), GLSLstd450UMin, {sh, cu32(31)});
    Id q = u(Op::OpShiftRightLogical, full, sh);
    Id rem =
        u(Op::OpBitwiseAnd, full, u(Op::OpISub, u(Op::OpShiftLeftLogical, cu32(1), sh), cu32(1)));
    Id half = u(Op::OpShiftLeftLogical, cu32(1), u(Op::OpISub, sh, cu32(1)));
    Id up2 = lor(op(Op::OpUGreaterThan, boolt(), {rem, half}),
                 land(ieq(rem, half), ine(u(Op::OpBitwiseAnd, q, cu32(1)), cu32(0))));
    Id sub = u(Op::OpIAdd, q, sel(u32t(), up2, cu32(1), cu32(0)));
    Id es = bitcast(u32t(), e);
    Id is_normal = op(Op::OpSGreaterThanEqual, boolt(), {es, cu32(static_cast<uint32_t>(-14))});
    Id is_tiny = op(Op::OpSLessThan, boolt(), {es, cu32(static_cast<uint32_t>(-25))});
    Id is_big = op(Op::OpSGreaterThan, boolt(), {es, cu32(15)});
    mag = sel(u32t(), is_normal, normal, sel(u32t(), is_tiny, cu32(0), sub));
    mag = sel(u32t(), is_big, cu32(0x7c00), mag); // also infinity
    mag = sel(u32t(), is_nan, cu32(0x7e00), mag);
  }
  return u(Op::OpBitwiseOr, sign, mag);
}

auto KernelLowering::f64_to_f32_odd(Id d) -> Id {
  Id r = op(Op::OpFConvert, f32t(), {d});
  Id back = op(Op::OpFConvert, f64t(), {r});
  Id inexact = op(Op::OpFOrdNotEqual, boolt(), {back, d}); // false for NaN
  Id away = op(Op::OpFOrdGreaterThan, boolt(),
               {glsl(f64t(), GLSLstd450FAbs, {back}), glsl(f64t(), GLSLstd450FAbs, {d})});
  return bitcast(
      f32t(), odd_bits(u32t(), bitcast(u32t(), r), inexact, sel(u32t(), away, cu32(1), cu32(0))));
}

auto KernelLowering::odd_bits(Id type, Id bits, Id inexact, Id nearer_zero) -> Id {
  Id one = type == u64t() ? cu64(1) : cu32(1);
  Id odd = op(Op::OpBitwiseOr, type, {op(Op::OpISub, type, {bits, nearer_zero}), one});
  return sel(type, inexact, odd, bits);
}

auto KernelLowering::int_to_f32_odd(Type st, Id v) -> Id {
  bool s = is_signed_int(st);
  if (!is64(st)) { // 32-bit registers: promote to 64 and share the code
    v = widen_to_64(s, v);
    st = s ? Type::I64 : Type::U64;
  }
  Id neg = s ? op(Op::OpSLessThan, boolt(), {v, cu64(0)}) : b_.c_bool(false);
  Id mag = sel(u64t(), neg, op(Op::OpSNegate, u64t(), {v}), v);
  Id msb = msb64(mag);
  Id big = op(Op::OpUGreaterThan, boolt(), {mag, cu64((uint64_t{1} << 24) - 1)});
  Id n = sel(u32t(), big, op(Op::OpISub, u32t(), {msb, cu32(23)}), cu32(0));
  Id mask = op(Op::OpISub, u64t(), {op(Op::OpShiftLeftLogical, u64t(), {cu64(1), n}), cu64(1)});
  Id sticky = ine(op(Op::OpBitwiseAnd, u64t(), {mag, mask}), cu64(0));
  Id kept =
      op(Op::OpBitwiseOr, u64t(),
         {op(Op::OpShiftRightLogical, u64t(), {mag, n}), sel(u64t(), sticky, cu64(1), cu64(0))});
  Id f = op(Op::OpConvertUToF, f32t(), {kept}); // exact: at most 24 significant bits
  f = glsl(f32t(), GLSLstd450Ldexp, {f, n});
  return sel(f32t(), neg, op(Op::OpFNegate, f32t(), {f}), f);
}

} // namespace hologram::codegen::spirv
