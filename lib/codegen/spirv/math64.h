// f64 transcendentals for the SPIR-V back end within SPEC §3.4's bounds (1 ulp of the correctly
// rounded value; 4 for rsqrt and sigmoid). Neither GLSL.std.450 (no f64 transcendentals) nor
// OpenCL.std (3-4 ulp for double) is good enough, so each function is evaluated in
// double-double arithmetic (error-free sums and Dekker products, no fused multiply-add needed)
// and rounded once. Each function is written once per module and called.
#pragma once

#include "builder.h"
#include "hologram/isa/opcode.h"

namespace hologram::codegen::spirv {

/// Calls the module's f64 function for the transcendental `fn` (exp exp2 log log2 log10 sqrt
/// rsqrt sin cos tan tanh sigmoid erf, and pow and atan2 of x and y in C's operand order) in
/// the current block of `builder`, writing the function the first time a module asks for it.
/// `opencl`: the Kernel flavour (OpenCL.std, no NoContraction decorations).
Id call_f64_math(Builder &builder, bool opencl, isa::MathOpcode fn, Id x, Id y = 0);

} // namespace hologram::codegen::spirv
