// f64 transcendentals for the SPIR-V back end within SPEC §3.4's bounds (1 ulp of the correctly
// rounded value; 4 for rsqrt and sigmoid). Neither GLSL.std.450 (no f64 transcendentals) nor
// OpenCL.std (3-4 ulp for double) is good enough, so each function is evaluated in
// double-double arithmetic (error-free sums and products) and rounded once. A product's error
// comes from an fma where the flavour's rounds once, and from Dekker's split of both factors
// where it may not (f64_product_error). Each function is written once per module and called.
#pragma once

#include "builder.h"
#include "hologram/isa/opcode.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <functional>

namespace hologram::codegen::spirv {

/// What the f64 functions ask of the module flavour they are written for (the kernel
/// lowering's, flavours.h).
class F64Flavour {
public:
  /// A GLSL.std.450 function (floor, sqrt) of f64 x in the flavour's extended instruction set.
  virtual Id f64_extended(GLSLstd450 fn, Id x) = 0;
  /// Keeps a driver from contracting `v` with its neighbours (Shader modules; nothing
  /// contracts a Kernel module's arithmetic).
  virtual void f64_no_contraction(Id v) = 0;
  /// The error of the product p = a*c, a*c - p (exact where neither factor's split overflows
  /// nor the error underflows): fma(a, c, -p) where the flavour's f64 fma rounds once, and
  /// `split_error` (Dekker's) where the device's may not.
  virtual Id f64_product_error(Id a, Id c, Id p, const std::function<Id()> &split_error) = 0;

protected:
  ~F64Flavour() = default;
};

/// Calls the module's f64 function for the transcendental `fn` (exp exp2 log log2 log10 sqrt
/// rsqrt sin cos tan tanh sigmoid erf, and pow and atan2 of x and y in C's operand order) in
/// the current block of `builder`, writing the function the first time a module asks for it.
Id call_f64_math(Builder &builder, class F64Flavour &flavour, isa::MathOpcode fn, Id x, Id y = 0);

} // namespace hologram::codegen::spirv
