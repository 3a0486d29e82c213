// The SPIR-V lowering's math within the SPEC's bounds: f32 through f64 evaluations where
// GLSL.std.450 or OpenCL.std fall short, the exact f32 fma (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::pow2(Id n) -> Id {
  Id bits =
      op(Op::OpShiftLeftLogical, u64t(),
         {op(Op::OpIAdd, u64t(), {op(Op::OpConvertFToS, u64t(), {n}), cu64(1023)}), cu32(52)});
  return bitcast(f64t(), bits);
}

auto KernelLowering::exp64(Id t) -> Id {
  Id tc = glsl(f64t(), GLSLstd450FClamp, {t, d(-708.0), d(708.0)});
  Id n = glsl(f64t(), GLSLstd450Floor, {fadd(fmul(tc, d(1.4426950408889634074)), d(0.5))});
  // Cody-Waite: ln2 = hi + lo with hi's low bits zero, so n * hi is exact.
  Id r = fsub(fsub(tc, fmul(n, d(std::bit_cast<double>(uint64_t{0x3FE62E42FEE00000})))),
              fmul(n, d(std::bit_cast<double>(uint64_t{0x3DEA39EF35793C76}))));
  std::vector<double> c(14);
  double f = 1;
  for (int i = 0; i < 14; ++i) {
    c[static_cast<size_t>(i)] = 1.0 / f;
    f *= i + 1;
  }
  Id p = fmul(horner(r, c), pow2(n));
  p = dsel(fgt(t, d(708.0)), d(INFINITY), p);
  p = dsel(flt(t, d(-708.0)), d(0.0), p);
  return dsel(isnan(t), t, p);
}

auto KernelLowering::erf64(Id x) -> Id {
  Id a = glsl(f64t(), GLSLstd450FMin, {glsl(f64t(), GLSLstd450FAbs, {x}), d(6.0)});
  Id x2 = fmul(a, a);
  Id twice = fmul(x2, d(2.0));
  Id sum_var = b_.local_variable(f64t()), term_var = b_.local_variable(f64t()),
     n_var = b_.local_variable(f64t());
  store(sum_var, a);
  store(term_var, a);
  store(n_var, d(3.0));
  Id n = 0, term = 0, sum = 0;
  structured_loop(
      [&] {
        n = load(f64t(), n_var);
        term = load(f64t(), term_var);
        sum = load(f64t(), sum_var);
        // Up to 200 terms; stop once a term no longer changes the sum.
        return land(flt(n, d(403.0)), fgt(term, fmul(sum, d(1e-17))));
      },
      [&] {
        Id next = fdiv(fmul(term, twice), n);
        store(term_var, next);
        store(sum_var, fadd(sum, next));
        store(n_var, fadd(n, d(2.0)));
      });
  Id r = fmul(fmul(d(1.1283791670955126), exp64(op(Op::OpFNegate, f64t(), {x2}))),
              load(f64t(), sum_var));
  r = dsel(flt(a, d(6.0)), glsl(f64t(), GLSLstd450FMin, {r, d(1.0)}), d(1.0));
  r = dsel(signbit(Type::F64, x), op(Op::OpFNegate, f64t(), {r}), r);
  return dsel(isnan(x), x, r);
}

auto KernelLowering::is_integral(Id v) -> Id {
  return op(Op::OpFOrdEqual, boolt(), {glsl(f64t(), GLSLstd450Floor, {v}), v});
}

auto KernelLowering::pow64(Id x, Id y) -> Id {
  Id ax = glsl(f64t(), GLSLstd450FAbs, {x});
  Id r = exp64(fmul(y, log64(ax)));
  Id y_int = is_integral(y);
  Id y_odd = land(y_int, lnot(is_integral(fmul(y, d(0.5)))));
  Id negative = signbit(Type::F64, x);
  r = dsel(land(negative, y_odd), op(Op::OpFNegate, f64t(), {r}), r);
  // A finite negative base to a finite non-integral power has no real value.
  Id finite_neg = land(flt(x, d(0.0)), lnot(op(Op::OpIsInf, boolt(), {x})));
  r = dsel(land(finite_neg, land(lnot(y_int), lnot(op(Op::OpIsInf, boolt(), {y})))), d(NAN), r);
  // |x| = 1 to an infinite power is 1 (log gives 0 * inf otherwise).
  r = dsel(land(op(Op::OpFOrdEqual, boolt(), {ax, d(1.0)}), op(Op::OpIsInf, boolt(), {y})), d(1.0),
           r);
  r = dsel(lor(isnan(x), isnan(y)), d(NAN), r);
  Id one =
      lor(op(Op::OpFOrdEqual, boolt(), {y, d(0.0)}), op(Op::OpFOrdEqual, boolt(), {x, d(1.0)}));
  return dsel(one, d(1.0), r);
}

auto KernelLowering::atan64(Id t) -> Id {
  Id big = fgt(t, d(1.0));
  Id u = dsel(big, fdiv(d(1.0), t), t);
  for (int i = 0; i < 2; ++i)
    u = fdiv(u, fadd(d(1.0), glsl(f64t(), GLSLstd450Sqrt, {fadd(d(1.0), fmul(u, u))})));
  std::vector<double> c;
  for (int k = 0; k < 14; ++k) c.push_back((k % 2 ? -1.0 : 1.0) / (2 * k + 1));
  Id a = fmul(d(4.0), fmul(u, horner(fmul(u, u), c)));
  return dsel(big, fsub(d(1.5707963267948966), a), a);
}

auto KernelLowering::atan2_64(Id y, Id x) -> Id {
  Id ay = glsl(f64t(), GLSLstd450FAbs, {y}), ax = glsl(f64t(), GLSLstd450FAbs, {x});
  Id both_inf = land(op(Op::OpIsInf, boolt(), {y}), op(Op::OpIsInf, boolt(), {x}));
  Id both_zero =
      land(op(Op::OpFOrdEqual, boolt(), {ay, d(0.0)}), op(Op::OpFOrdEqual, boolt(), {ax, d(0.0)}));
  Id t = dsel(both_inf, d(1.0), dsel(both_zero, d(0.0), fdiv(ay, ax)));
  Id a = atan64(t);
  a = dsel(signbit(Type::F64, x), fsub(d(3.141592653589793), a), a);
  a = dsel(signbit(Type::F64, y), op(Op::OpFNegate, f64t(), {a}), a);
  return dsel(lor(isnan(x), isnan(y)), d(NAN), a);
}

auto KernelLowering::trig_f32(MathOpcode o, Id v) -> Id {
  Id ax = glsl(f64t(), GLSLstd450FAbs, {v});
  // Small: k = nearest(ax * 2/pi), r = ax - k pi/2.
  Id k = glsl(f64t(), GLSLstd450Floor, {fadd(fmul(ax, d(0.6366197723675814)), d(0.5))});
  Id r_small = fsub(ax, fmul(k, d(0x1.921fb54000000p+0)));
  r_small = fsub(r_small, fmul(k, d(0x1.10b4612000000p-30)));
  r_small = fsub(r_small, fmul(k, d(-0x1.676733a000000p-60)));
  r_small = fsub(r_small, fmul(k, d(-0x1.d1fc8f8cbb5bfp-89)));
  Id q_small = fsub(k, fmul(d(4.0), glsl(f64t(), GLSLstd450Floor, {fmul(k, d(0.25))})));
  // Large: the window of 2/pi that matters, starting at bit e - 1.
  Id bits = bitcast(u64t(), ax);
  Id e = op(Op::OpISub, u64t(),
            {op(Op::OpShiftRightLogical, u64t(), {bits, cu32(52)}), cu64(1023 + 23)});
  Id m = op(Op::OpBitwiseOr, u64t(),
            {op(Op::OpShiftRightLogical, u64t(),
                {op(Op::OpBitwiseAnd, u64t(), {bits, cu64(0xFFFFFFFFFFFFFull)}), cu32(29)}),
             cu64(1u << 23)});
  Id idx = op(Op::OpISub, u64t(), {e, cu64(2)}); // e >= 2 on this path
  Id first = ine(op(Op::OpShiftRightLogical, u64t(), {idx, cu32(6)}), cu64(0));
  Id sh = to32(op(Op::OpBitwiseAnd, u64t(), {idx, cu64(63)}));
  const uint64_t T[4] = {0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
                         0xfe5163abdebbc561ull};
  Id wa = sel(u64t(), first, cu64(T[1]), cu64(T[0]));
  Id wb = sel(u64t(), first, cu64(T[2]), cu64(T[1]));
  Id wc = sel(u64t(), first, cu64(T[3]), cu64(T[2]));
  Id back = op(Op::OpBitwiseAnd, u32t(), {op(Op::OpISub, u32t(), {cu32(64), sh}), cu32(63)});
  Id some = ine(sh, cu32(0));
  auto join = [&](Id hi, Id lo) {
    return op(Op::OpBitwiseOr, u64t(),
              {op(Op::OpShiftLeftLogical, u64t(), {hi, sh}),
               sel(u64t(), some, op(Op::OpShiftRightLogical, u64t(), {lo, back}), cu64(0))});
  };
  Id w_hi = join(wa, wb), w_lo = join(wb, wc);
  Id mask32 = cu64(0xFFFFFFFFull);
  Id a0 = op(Op::OpIMul, u64t(), {m, op(Op::OpBitwiseAnd, u64t(), {w_lo, mask32})});
  Id a1 = op(Op::OpIMul, u64t(), {m, op(Op::OpShiftRightLogical, u64t(), {w_lo, cu32(32)})});
  Id mid = op(Op::OpIAdd, u64t(),
              {op(Op::OpShiftRightLogical, u64t(), {a0, cu32(32)}),
               op(Op::OpBitwiseAnd, u64t(), {a1, mask32})});
  Id p_lo = op(Op::OpBitwiseOr, u64t(),
               {op(Op::OpBitwiseAnd, u64t(), {a0, mask32}),
                op(Op::OpShiftLeftLogical, u64t(), {mid, cu32(32)})});
  Id carry = op(Op::OpIAdd, u64t(),
                {op(Op::OpShiftRightLogical, u64t(), {a1, cu32(32)}),
                 op(Op::OpShiftRightLogical, u64t(), {mid, cu32(32)})});
  Id p_hi = op(Op::OpIAdd, u64t(), {op(Op::OpIMul, u64t(), {m, w_hi}), carry});
  Id q_big = op(Op::OpConvertUToF, f64t(), {op(Op::OpShiftRightLogical, u64t(), {p_hi, cu32(62)})});
  Id f = fadd(fmul(op(Op::OpConvertUToF, f64t(),
                      {op(Op::OpBitwiseAnd, u64t(), {p_hi, cu64((uint64_t{1} << 62) - 1)})}),
                   d(0x1p-62)),
              fmul(op(Op::OpConvertUToF, f64t(), {p_lo}), d(0x1p-126)));
  Id up = op(Op::OpFOrdGreaterThanEqual, boolt(), {f, d(0.5)});
  f = dsel(up, fsub(f, d(1.0)), f);
  q_big = dsel(up, fadd(q_big, d(1.0)), q_big);
  q_big = dsel(op(Op::OpFOrdEqual, boolt(), {q_big, d(4.0)}), d(0.0), q_big);
  Id r_big = fmul(f, d(1.5707963267948966));
  Id big = op(Op::OpFOrdGreaterThanEqual, boolt(), {ax, d(0x1p25)});
  Id r = dsel(big, r_big, r_small), q = dsel(big, q_big, q_small);

  Id r2 = fmul(r, r);
  std::vector<double> sc, cc;
  double fs = 1, fc = 1;
  for (int i = 0; i < 12; ++i) {
    sc.push_back((i % 2 ? -1.0 : 1.0) / fs); // 1/(2i+1)!
    cc.push_back((i % 2 ? -1.0 : 1.0) / fc); // 1/(2i)!
    fs *= (2 * i + 2) * (2 * i + 3);
    fc *= (2 * i + 1) * (2 * i + 2);
  }
  Id sn = fmul(r, horner(r2, sc)), cs = horner(r2, cc);
  auto is_q = [&](double n) { return op(Op::OpFOrdEqual, boolt(), {q, d(n)}); };
  auto neg = [&](Id x) { return op(Op::OpFNegate, f64t(), {x}); };
  Id res;
  if (o == MathOpcode::Cos) {
    res = dsel(is_q(0), cs, dsel(is_q(1), neg(sn), dsel(is_q(2), neg(cs), sn)));
  } else {
    Id odd = lor(is_q(1), is_q(3));
    res = o == MathOpcode::Sin
              ? dsel(is_q(0), sn, dsel(is_q(1), cs, dsel(is_q(2), neg(sn), neg(cs))))
              : dsel(odd, neg(fdiv(cs, sn)), fdiv(sn, cs));
    res = dsel(signbit(Type::F64, v), neg(res), res);
  }
  Id bad = lor(isnan(v), op(Op::OpIsInf, boolt(), {v}));
  return dsel(bad, d(NAN), res);
}

auto KernelLowering::expm1_64(Id t) -> Id {
  std::vector<double> c(18);
  double f = 1;
  c[0] = 0;
  for (int i = 1; i < 18; ++i) {
    f *= i;
    c[static_cast<size_t>(i)] = 1.0 / f;
  }
  Id small = flt(glsl(f64t(), GLSLstd450FAbs, {t}), d(0.25));
  return dsel(small, horner(t, c), fsub(exp64(t), d(1.0)));
}

auto KernelLowering::log64(Id x) -> Id {
  Id bits = bitcast(u64t(), x);
  Id e = op(Op::OpISub, u64t(),
            {op(Op::OpBitwiseAnd, u64t(),
                {op(Op::OpShiftRightLogical, u64t(), {bits, cu32(52)}), cu64(0x7ff)}),
             cu64(1022)});
  Id m = bitcast(f64t(), op(Op::OpBitwiseOr, u64t(),
                            {op(Op::OpBitwiseAnd, u64t(), {bits, cu64(0x800FFFFFFFFFFFFFull)}),
                             cu64(uint64_t{1022} << 52)}));
  Id ef = op(Op::OpConvertSToF, f64t(), {e});
  // m in [0.5, 1): bring it to [sqrt(1/2), sqrt(2)).
  Id low = flt(m, d(0.70710678118654752440));
  m = dsel(low, fmul(m, d(2.0)), m);
  ef = dsel(low, fsub(ef, d(1.0)), ef);
  Id s = fdiv(fsub(m, d(1.0)), fadd(m, d(1.0)));
  Id s2 = fmul(s, s);
  std::vector<double> c;
  for (int k = 0; k < 12; ++k) c.push_back(2.0 / (2 * k + 1));
  Id lm = fmul(s, horner(s2, c));
  Id r = fadd(fmul(ef, d(std::bit_cast<double>(uint64_t{0x3FE62E42FEE00000}))),
              fadd(lm, fmul(ef, d(std::bit_cast<double>(uint64_t{0x3DEA39EF35793C76})))));
  r = dsel(op(Op::OpFOrdEqual, boolt(), {x, d(0.0)}), d(-INFINITY), r);
  r = dsel(op(Op::OpIsInf, boolt(), {x}), x, r);
  return dsel(lor(flt(x, d(0.0)), isnan(x)), d(NAN), r);
}

auto KernelLowering::math(MathOpcode o, Type t, Id x) -> Id {
  Id ty = rep(t);
  // GLSL.std.450 has no f64 transcendentals and neither has erf.
  if (o_.fast_math && t != Type::F64 && o != MathOpcode::Erf) {
    switch (o) {
    case MathOpcode::Sqrt: return glsl(ty, GLSLstd450Sqrt, {x});
    case MathOpcode::Rsqrt: return glsl(ty, GLSLstd450InverseSqrt, {x});
    case MathOpcode::Exp: return glsl(ty, GLSLstd450Exp, {x});
    case MathOpcode::Exp2: return glsl(ty, GLSLstd450Exp2, {x});
    case MathOpcode::Log: return glsl(ty, GLSLstd450Log, {x});
    case MathOpcode::Log2: return glsl(ty, GLSLstd450Log2, {x});
    case MathOpcode::Log10:
      return op(Op::OpFMul, ty, {glsl(ty, GLSLstd450Log2, {x}), cf32(0.30102999566f)});
    case MathOpcode::Sin: return glsl(ty, GLSLstd450Sin, {x});
    case MathOpcode::Cos: return glsl(ty, GLSLstd450Cos, {x});
    case MathOpcode::Tan: return glsl(ty, GLSLstd450Tan, {x});
    case MathOpcode::Tanh: return glsl(ty, GLSLstd450Tanh, {x});
    case MathOpcode::Sigmoid: {
      Id e = glsl(ty, GLSLstd450Exp, {op(Op::OpFNegate, ty, {x})});
      return op(Op::OpFDiv, ty, {cf32(1.0f), op(Op::OpFAdd, ty, {cf32(1.0f), e})});
    }
    case MathOpcode::Erf:
    case MathOpcode::Pow:
    case MathOpcode::Atan2: break; // erf has no GLSL twin; pow and atan2 are binary()'s
    }
  }
  // f64 to the SPEC's 1 ulp in double-double (math64.h); the device library's f32 kernels
  // use the f64 evaluations below (~1e-15 relative), which their f32 results need, and are
  // faster. Its f64 kernels (map.exp.f64, gelu.f64) need the 1-ulp functions.
  if (t == Type::F64 && !f32_library_) return f64_math(o, x);
  if (o == MathOpcode::Sin || o == MathOpcode::Cos || o == MathOpcode::Tan) {
    if (t == Type::F64) throw Unsupported("f64 trigonometry in the device library");
    return op(Op::OpFConvert, f32t(), {trig_f32(o, op(Op::OpFConvert, f64t(), {x}))});
  }
  Id v = t == Type::F64 ? x : op(Op::OpFConvert, f64t(), {x});
  Id r = 0;
  switch (o) {
  case MathOpcode::Erf: r = erf64(v); break;
  case MathOpcode::Sqrt: r = glsl(f64t(), GLSLstd450Sqrt, {v}); break;
  case MathOpcode::Rsqrt: r = fdiv(d(1.0), glsl(f64t(), GLSLstd450Sqrt, {v})); break;
  case MathOpcode::Exp: r = exp64(v); break;
  case MathOpcode::Exp2: {
    Id n = glsl(f64t(), GLSLstd450Floor,
                {fadd(glsl(f64t(), GLSLstd450FClamp, {v, d(-1022.0), d(1023.0)}), d(0.5))});
    Id frac = fmul(fsub(v, n), d(0.69314718055994530942));
    r = fmul(exp64(frac), pow2(n));
    r = dsel(fgt(v, d(1023.0)), d(INFINITY), dsel(flt(v, d(-1022.0)), d(0.0), r));
    r = dsel(isnan(v), v, r);
    break;
  }
  case MathOpcode::Log: r = log64(v); break;
  case MathOpcode::Log2: r = fmul(log64(v), d(1.44269504088896340736)); break;
  case MathOpcode::Log10: r = fmul(log64(v), d(0.43429448190325182765)); break;
  case MathOpcode::Tanh: {
    Id a = glsl(f64t(), GLSLstd450FAbs, {v});
    Id em = expm1_64(fmul(d(2.0), glsl(f64t(), GLSLstd450FMin, {a, d(20.0)})));
    Id th = fdiv(em, fadd(em, d(2.0)));
    th = dsel(fgt(a, d(20.0)), d(1.0), th);
    r = dsel(signbit(Type::F64, v), op(Op::OpFNegate, f64t(), {th}), th);
    r = dsel(isnan(v), v, r);
    break;
  }
  case MathOpcode::Sin:
  case MathOpcode::Cos:
  case MathOpcode::Tan: // handled above
  case MathOpcode::Pow:
  case MathOpcode::Atan2: // binary()'s
    throw std::logic_error("spirv: math() on a function it does not evaluate");
  case MathOpcode::Sigmoid: { // saturates to exactly 0 when e^-x exceeds the f32 range
    Id e = exp64(op(Op::OpFNegate, f64t(), {v}));
    r = fdiv(d(1.0), fadd(d(1.0), e));
    if (t != Type::F64) r = dsel(fgt(e, d(3.4028234663852886e38)), d(0.0), r);
    r = dsel(isnan(v), v, r);
    break;
  }
  }
  return t == Type::F64 ? r : op(Op::OpFConvert, f32t(), {r});
}

auto KernelLowering::fma(Type t, Id a, Id b, Id c) -> Id {
  Id ty = rep(t);
  if (o_.fast_math || gemm_library_ || fma_rounds_once()) return glsl(ty, GLSLstd450Fma, {a, b, c});
  const bool wide = t == Type::F64;
  info_.exact_fma = true;
  Id fn = b_.shared_global(wide ? "fma.f64" : "fma.f32", [&] {
    Id id = b_.fresh();
    Id device_rounds_once = fma_rounds_once_here(t);
    b_.aside([&] {
      b_.begin_function(ty, b_.t_function(ty, {ty, ty, ty}), id);
      Id pa = b_.function_param(ty), pb = b_.function_param(ty), pc = b_.function_param(ty);
      b_.begin_block(b_.fresh());
      // The driver folds the constant when it builds the pipeline and keeps one side.
      Id exact = wide ? fma_f64_exact(pa, pb, pc) : fma_f32_exact(pa, pb, pc);
      b_.terminate(Op::OpReturnValue,
                   {sel(ty, device_rounds_once, glsl(ty, GLSLstd450Fma, {pa, pb, pc}), exact)});
      b_.end_function();
    });
    b_.name(id, wide ? "__hg_fma_f64" : "__hg_fma_f32");
    return id;
  });
  return b_.op(Op::OpFunctionCall, ty, {fn, a, b, c});
}

auto KernelLowering::f64_product_error(Id a, Id c, Id p, const std::function<Id()> &split_error)
    -> Id {
  Id fused = glsl(f64t(), GLSLstd450Fma, {a, c, op(Op::OpFNegate, f64t(), {p})});
  if (fma_rounds_once()) return fused;
  // As the exact fma: the driver folds the constant when it builds the pipeline. (One
  // statement each: the ids come out in one order whatever the compiler's order of evaluation.)
  Id rounds_once = fma_rounds_once_here(Type::F64);
  Id split = split_error();
  return sel(f64t(), rounds_once, fused, split);
}

auto KernelLowering::f64_math(MathOpcode fn, Id x, Id y) -> Id {
  if (!fma_rounds_once()) info_.exact_fma = true;
  return call_f64_math(b_, *this, fn, x, y);
}

auto KernelLowering::frem(Type t, Id a, Id c) -> Id {
  Id ty = rep(t);
  if (frem_is_exact()) return exact(op(Op::OpFRem, ty, {a, c}));
  const bool d = t == Type::F64;
  Id fn = b_.shared_global(d ? "fmod.f64" : "fmod.f32", [&] {
    Id id = b_.fresh();
    b_.aside([&] {
      b_.begin_function(ty, b_.t_function(ty, {ty, ty}), id);
      Id pa = b_.function_param(ty), pc = b_.function_param(ty);
      b_.begin_block(b_.fresh());
      b_.terminate(Op::OpReturnValue, {fmod_exact(t, pa, pc)});
      b_.end_function();
    });
    b_.name(id, d ? "__hg_fmod_f64" : "__hg_fmod_f32");
    return id;
  });
  return b_.op(Op::OpFunctionCall, ty, {fn, a, c});
}

auto KernelLowering::split_float(bool wide, Id magnitude) -> std::pair<Id, Id> {
  const uint32_t m = wide ? 52 : 23;
  Id it = wide ? u64t() : u32t();
  auto k = [&](uint64_t v) { return wide ? cu64(v) : cu32(static_cast<uint32_t>(v)); };
  Id e = op(Op::OpShiftRightLogical, it, {magnitude, k(m)});
  Id sub = ieq(e, k(0));
  Id frac = op(Op::OpBitwiseAnd, it, {magnitude, k((uint64_t{1} << m) - 1)});
  return {sel(it, sub, k(1), e),
          sel(it, sub, frac, op(Op::OpBitwiseOr, it, {frac, k(uint64_t{1} << m)}))};
}

auto KernelLowering::fmod_exact(Type t, Id a, Id c) -> Id {
  const bool d = t == Type::F64;
  const uint32_t m = d ? 52 : 23, step = d ? 11 : 40;
  Id it = d ? u64t() : u32t();
  auto k = [&](uint64_t v) { return d ? cu64(v) : cu32(static_cast<uint32_t>(v)); };
  auto band = [&](Id x, Id y) { return op(Op::OpBitwiseAnd, it, {x, y}); };
  auto bor = [&](Id x, Id y) { return op(Op::OpBitwiseOr, it, {x, y}); };
  auto ult = [&](Id x, Id y) { return op(Op::OpULessThan, boolt(), {x, y}); };
  Id ua = bitcast(it, a), uc = bitcast(it, c);
  const uint64_t sign_bit = uint64_t{1} << (d ? 63 : 31), inf = d ? 0x7ff0000000000000 : 0x7f800000;
  Id sign = band(ua, k(sign_bit)), ax = band(ua, k(sign_bit - 1)), ay = band(uc, k(sign_bit - 1));
  // NaN for a NaN, an infinite x or a zero y; x itself where |x| < |y| (an infinite y too).
  Id nan = lor(lnot(ult(ax, k(inf))), lor(ult(k(inf), ay), ieq(ay, k(0))));
  Id keep = lor(nan, ult(ax, ay));
  auto [ex, mx] = split_float(d, ax);
  auto [ey, my] = split_float(d, ay);
  auto wide = [&](Id v) { return d ? v : widen_to_64(false, v); };
  Id divisor = sel(u64t(), keep, cu64(1), wide(my));
  Id r = b_.local_variable(u64t()), n = b_.local_variable(u64t());
  b_.store_local(r, op(Op::OpUMod, u64t(), {wide(mx), divisor}));
  b_.store_local(n, sel(u64t(), keep, cu64(0), wide(op(Op::OpISub, it, {ex, ey}))));
  structured_loop(
      [&] { return op(Op::OpUGreaterThan, boolt(), {b_.load_local(u64t(), n), cu64(0)}); },
      [&] {
        Id left = b_.load_local(u64t(), n);
        Id s = sel(u64t(), op(Op::OpULessThan, boolt(), {left, cu64(step)}), left, cu64(step));
        Id shifted = op(Op::OpShiftLeftLogical, u64t(), {b_.load_local(u64t(), r), s});
        b_.store_local(r, op(Op::OpUMod, u64t(), {shifted, divisor}));
        b_.store_local(n, op(Op::OpISub, u64t(), {left, s}));
      });
  Id rem64 = b_.load_local(u64t(), r);
  // Rebuilt: rem 2^(ey - bias - m), normal where its top bit lands on an exponent of 1 or more.
  Id rem = d ? rem64 : to32(rem64);
  Id top = d ? op(Op::OpUConvert, u64t(), {msb64(rem64)}) : glsl(u32t(), GLSLstd450FindUMsb, {rem});
  // biased = ey + top - m, as a signed value (top <= m, ey >= 1).
  Id biased = op(Op::OpISub, it, {op(Op::OpIAdd, it, {ey, top}), k(m)});
  Id normal = op(Op::OpSGreaterThan, boolt(), {biased, k(0)});
  Id frac = band(op(Op::OpShiftLeftLogical, it, {rem, op(Op::OpISub, it, {k(m), top})}),
                 k((uint64_t{1} << m) - 1));
  Id normal_bits = op(Op::OpIAdd, it, {op(Op::OpShiftLeftLogical, it, {biased, k(m)}), frac});
  Id sub_bits = op(Op::OpShiftLeftLogical, it, {rem, op(Op::OpISub, it, {ey, k(1)})});
  Id bits = sel(it, ieq(rem, k(0)), k(0), sel(it, normal, normal_bits, sub_bits));
  Id result = bitcast(rep(t), bor(bits, sign));
  result = sel(rep(t), keep, a, result);
  return sel(rep(t), nan, cfloat(t, std::numeric_limits<double>::quiet_NaN()), result);
}

auto KernelLowering::fma_f32_exact(Id a, Id b, Id c) -> Id {
  // a·b is exact in f64; s = a·b + c rounded to odd in f64 then rounds to f32 once: s when
  // the two-sum's error is 0 (or NaN, where s is infinite or NaN), else the odd one of s and
  // its neighbour towards the exact sum, which is nearer zero when err's sign is not s's.
  Id p = fmul(op(Op::OpFConvert, f64t(), {a}), op(Op::OpFConvert, f64t(), {b}));
  Id cd = op(Op::OpFConvert, f64t(), {c});
  Id s = fadd(p, cd);
  Id bb = fsub(s, p);
  Id err = fadd(fsub(p, fsub(s, bb)), fsub(cd, bb));
  Id bits = bitcast(u64t(), s);
  Id nearer_zero = op(Op::OpShiftRightLogical, u64t(), // err's sign is not s's
                      {op(Op::OpBitwiseXor, u64t(), {bits, bitcast(u64t(), err)}), cu32(63)});
  Id inexact = op(Op::OpFOrdNotEqual, boolt(), {err, d(0.0)});
  return op(Op::OpFConvert, f32t(),
            {bitcast(f64t(), odd_bits(u64t(), bits, inexact, nearer_zero))});
}

auto KernelLowering::fma_f64_exact(Id a, Id b, Id c) -> Id {
  const Id t = u64t();
  auto k = [&](uint64_t v) { return cu64(v); };
  auto add = [&](Id x, Id y) { return op(Op::OpIAdd, t, {x, y}); };
  auto sub = [&](Id x, Id y) { return op(Op::OpISub, t, {x, y}); };
  auto mul = [&](Id x, Id y) { return op(Op::OpIMul, t, {x, y}); };
  auto band = [&](Id x, Id y) { return op(Op::OpBitwiseAnd, t, {x, y}); };
  auto bor = [&](Id x, Id y) { return op(Op::OpBitwiseOr, t, {x, y}); };
  // Shifts by an amount taken mod 64, so that a lane whose select drops the result still
  // computes a defined value.
  auto shl = [&](Id x, Id n) { return op(Op::OpShiftLeftLogical, t, {x, band(n, k(63))}); };
  auto shr = [&](Id x, Id n) { return op(Op::OpShiftRightLogical, t, {x, band(n, k(63))}); };
  auto ult = [&](Id x, Id y) { return op(Op::OpULessThan, boolt(), {x, y}); };
  auto slt = [&](Id x, Id y) { return op(Op::OpSLessThan, boolt(), {x, y}); };
  auto usel = [&](Id c0, Id x, Id y) { return sel(t, c0, x, y); };
  struct U128 {
    Id hi, lo;
  };
  auto sel128 = [&](Id c0, U128 x, U128 y) {
    return U128{usel(c0, x.hi, y.hi), usel(c0, x.lo, y.lo)};
  };
  auto nonzero = [&](U128 x) { return ine(bor(x.hi, x.lo), k(0)); };
  auto msb128 = [&](U128 x) { // of a non-zero value, as a u64 in [0, 127]
    return usel(ine(x.hi, k(0)), add(to64(msb64(x.hi)), k(64)), to64(msb64(x.lo)));
  };
  // x << n for n in [0, 127].
  auto shl128 = [&](U128 x, Id n) {
    Id big = ult(k(63), n), m = band(n, k(63));
    Id carried = usel(ieq(m, k(0)), k(0), shr(x.lo, sub(k(64), m)));
    return U128{usel(big, shl(x.lo, m), bor(shl(x.hi, m), carried)), usel(big, k(0), shl(x.lo, m))};
  };
  // x >> n for any n >= 0, and whether a set bit was shifted out.
  auto shr128 = [&](U128 x, Id n) {
    Id gone = ult(k(127), n), big = ult(k(63), n), m = band(n, k(63));
    Id low_mask = sub(shl(k(1), m), k(1));
    Id carried = usel(ieq(m, k(0)), k(0), shl(x.hi, sub(k(64), m)));
    U128 r{usel(big, k(0), shr(x.hi, m)), usel(big, shr(x.hi, m), bor(shr(x.lo, m), carried))};
    Id lost_small = ine(band(x.lo, low_mask), k(0));
    Id lost_big = lor(ine(x.lo, k(0)), ine(band(x.hi, low_mask), k(0)));
    Id lost = op(Op::OpSelect, boolt(), {big, lost_big, lost_small});
    return std::pair{sel128(gone, U128{k(0), k(0)}, r),
                     op(Op::OpSelect, boolt(), {gone, nonzero(x), lost})};
  };

  const uint64_t sign_bit = uint64_t{1} << 63, inf = 0x7ff0000000000000, quiet = uint64_t{1} << 51;
  Id ua = bitcast(t, a), ub = bitcast(t, b), uc = bitcast(t, c);
  Id ma = band(ua, k(sign_bit - 1)), mb = band(ub, k(sign_bit - 1)), mc = band(uc, k(sign_bit - 1));
  Id sp = band(op(Op::OpBitwiseXor, t, {ua, ub}), k(sign_bit)), sc = band(uc, k(sign_bit));

  // The special cases, in integers: NaNs propagate (quieted, a's first), inf * 0 and
  // inf - inf are NaN, an infinite product or c is the result, and a zero product leaves c
  // (-0 only when both are -0).
  Id an = ult(k(inf), ma), bn = ult(k(inf), mb), cn = ult(k(inf), mc);
  Id ai = ieq(ma, k(inf)), bi = ieq(mb, k(inf)), ci = ieq(mc, k(inf));
  Id az = ieq(ma, k(0)), bz = ieq(mb, k(0)), cz = ieq(mc, k(0));
  Id pinf = lor(ai, bi);
  Id invalid = lor(lor(land(ai, bz), land(bi, az)), land(land(pinf, ci), ine(sp, sc)));
  Id nan = lor(lor(an, bn), lor(cn, invalid));
  Id nan_bits = usel(an, bor(ua, k(quiet)),
                     usel(bn, bor(ub, k(quiet)), usel(cn, bor(uc, k(quiet)), k(inf | quiet))));
  Id special = usel(pinf, bor(sp, k(inf)),
                    usel(ci, uc, usel(cz, band(sp, sc), uc))); // ci, or a zero product
  Id is_special = lor(nan, lor(lor(pinf, ci), lor(az, bz)));

  // Finite operands, a and b non-zero: value = m 2^(e - 1075), subnormals with e = 1.
  auto [ea, fa] = split_float(true, ma);
  auto [eb, fb] = split_float(true, mb);
  auto [ec, fc] = split_float(true, mc);
  // The product's 106 bits from 32-bit halves (fa, fb < 2^53, so mid < 2^54).
  Id a0 = band(fa, k(0xffffffff)), a1 = shr(fa, k(32));
  Id b0 = band(fb, k(0xffffffff)), b1 = shr(fb, k(32));
  Id p00 = mul(a0, b0), mid = add(mul(a0, b1), mul(a1, b0));
  Id plo = add(p00, shl(mid, k(32)));
  Id phi = add(add(mul(a1, b1), shr(mid, k(32))), usel(ult(plo, p00), k(1), k(0)));
  // Both addends with their highest bit at 126 (bit 127 takes the sum's carry); exponents
  // are of the lowest bit, signed in a u64.
  U128 p{phi, plo};
  Id p_shift = sub(k(126), msb128(p));
  p = shl128(p, p_shift);
  Id ep = sub(sub(add(ea, eb), k(2150)), p_shift);
  Id c_msb = to64(msb64(fc));
  U128 cv{usel(cz, k(0), shl(fc, sub(k(62), c_msb))), k(0)};
  Id e_c = usel(cz, k(static_cast<uint64_t>(-100000)), sub(sub(ec, k(1075)), sub(k(126), c_msb)));
  // x is the addend of larger magnitude, y is shifted right to x's exponent (with a sticky
  // bit: at least 20 bits lie between the sum's rounding bit and it).
  Id p_first = lor(
      slt(e_c, ep),
      land(ieq(e_c, ep), lor(ult(cv.hi, p.hi), land(ieq(cv.hi, p.hi), lnot(ult(p.lo, cv.lo))))));
  U128 x = sel128(p_first, p, cv), y = sel128(p_first, cv, p);
  Id ex = usel(p_first, ep, e_c), ey = usel(p_first, e_c, ep);
  Id sx = usel(p_first, sp, sc), sy = usel(p_first, sc, sp);
  auto [ys, y_lost] = shr128(y, sub(ex, ey));
  ys.lo = bor(ys.lo, usel(y_lost, k(1), k(0)));
  Id lo_sum = add(x.lo, ys.lo);
  U128 sum{add(add(x.hi, ys.hi), usel(ult(lo_sum, x.lo), k(1), k(0))), lo_sum};
  Id lo_diff = sub(x.lo, ys.lo);
  U128 diff{sub(sub(x.hi, ys.hi), usel(ult(x.lo, ys.lo), k(1), k(0))), lo_diff};
  U128 s = sel128(ieq(sx, sy), sum, diff);
  // Rounded to nearest even at the result's lowest bit 2^l, l = max(msb + ex - 52, -1074);
  // bits = (l + 1074) 2^52 + q is the result for a normal q (2^52 <= q < 2^53), a subnormal
  // one (l = -1074), and a q that rounding carried to 2^53.
  Id l = add(add(msb128(s), ex), k(static_cast<uint64_t>(-52)));
  l = usel(slt(l, k(static_cast<uint64_t>(-1074))), k(static_cast<uint64_t>(-1074)), l);
  Id r = sub(l, ex);
  Id rounds = slt(k(0), r);
  auto [q1, lost] = shr128(s, usel(rounds, sub(r, k(1)), k(0)));
  Id half = ine(band(q1.lo, k(1)), k(0));
  Id q = bor(shr(q1.lo, k(1)), shl(q1.hi, k(63)));
  Id up = land(half, lor(lost, ine(band(q, k(1)), k(0))));
  q = add(q, usel(up, k(1), k(0)));
  q = usel(rounds, q, shl(s.lo, sub(k(0), r))); // exact: s < 2^53 here
  Id bits = add(shl(add(l, k(1074)), k(52)), q);
  bits = usel(ult(bits, k(inf)), bits, k(inf));
  Id general = usel(nonzero(s), bor(bits, sx), k(0)); // an exact 0 is +0
  return bitcast(f64t(), usel(nan, nan_bits, usel(is_special, special, general)));
}

} // namespace hologram::codegen::spirv
