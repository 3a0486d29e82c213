// The SPIR-V lowering of the Atlas instructions (SPEC §4): class arithmetic on (h2, d, l),
// neighbours, mirrors, resonance and phase (kernel_lowering.h).
#include "flavours.h"

namespace hologram::codegen::spirv {

auto KernelLowering::in_range(Id v, uint32_t limit, uint32_t which) -> Id {
  record_if(op(Op::OpUGreaterThanEqual, boolt(), {v, cu32(limit)}), spirv_status::AtlasRange, which,
            to64(v), 0);
  return glsl(u32t(), GLSLstd450UMin, {v, cu32(limit - 1)});
}

auto KernelLowering::coords(Id c) -> Coords {
  Id r = op(Op::OpUMod, u32t(), {c, cu32(24)});
  return {op(Op::OpUDiv, u32t(), {c, cu32(24)}), op(Op::OpUDiv, u32t(), {r, cu32(8)}),
          op(Op::OpUMod, u32t(), {r, cu32(8)})};
}

auto KernelLowering::class_of(Id h2, Id d, Id l) -> Id {
  return op(Op::OpIAdd, u32t(),
            {op(Op::OpIAdd, u32t(),
                {op(Op::OpIMul, u32t(), {h2, cu32(24)}), op(Op::OpIMul, u32t(), {d, cu32(8)})}),
             l});
}

auto KernelLowering::mirror_d(Id d) -> Id {
  return sel(u32t(), ieq(d, cu32(0)), cu32(0), op(Op::OpISub, u32t(), {cu32(3), d}));
}

auto KernelLowering::neighbour(Id c, uint64_t k) -> Id {
  Coords x = coords(c);
  auto mod = [&](Id v, uint32_t m) { return op(Op::OpUMod, u32t(), {v, cu32(m)}); };
  auto add = [&](Id v, uint32_t n) { return op(Op::OpIAdd, u32t(), {v, cu32(n)}); };
  Id flat = ieq(x.d, cu32(0));
  Id v[5] = {class_of(mod(add(x.h2, 1), 4), x.d, x.l), class_of(mod(add(x.h2, 3), 4), x.d, x.l),
             class_of(x.h2, x.d, mod(add(x.l, 1), 8)), class_of(x.h2, x.d, mod(add(x.l, 7), 8)),
             sel(u32t(), flat, cu32(0xffff), class_of(x.h2, mirror_d(x.d), x.l))};
  // An optimal sorting network for five values (nine comparators).
  constexpr std::pair<int, int> kNet[] = {{0, 1}, {3, 4}, {2, 4}, {2, 3}, {1, 4},
                                          {0, 3}, {0, 2}, {1, 3}, {1, 2}};
  for (auto [a, b] : kNet) {
    Id lo = glsl(u32t(), GLSLstd450UMin, {v[a], v[b]});
    Id hi = sel(u32t(), op(Op::OpULessThan, boolt(), {v[a], v[b]}), v[b], v[a]);
    v[a] = lo;
    v[b] = hi;
  }
  return sel(u32t(), flat, v[k % 4], v[k % 5]);
}

auto KernelLowering::atlas_op(AtlasOpcode which, const Instruction &inst) -> void {
  const Type t = inst.type;
  switch (which) {
  case AtlasOpcode::ClsGet: {
    Id byte = in_range(src(inst, 1), 256, 2);
    auto bits = [&](uint32_t shift, uint32_t mask) {
      return op(Op::OpBitwiseAnd, u32t(),
                {op(Op::OpShiftRightLogical, u32t(), {byte, cu32(shift)}), cu32(mask)});
    };
    Id d = op(Op::OpUMod, u32t(), {bits(4, 3), cu32(3)});
    return dst(inst, class_of(bits(6, 3), d, bits(1, 7)));
  }
  case AtlasOpcode::Mirror: {
    Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
    return dst(inst, class_of(x.h2, mirror_d(x.d), x.l));
  }
  case AtlasOpcode::UnityTest: {
    Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
    return dst(inst, land(ieq(x.d, cu32(0)), ieq(x.l, cu32(0))));
  }
  case AtlasOpcode::NbrCount: {
    Coords x = coords(in_range(src(inst, 1), atlas::kNumClasses, 0));
    return dst(inst, sel(u32t(), ieq(x.d, cu32(0)), cu32(4), cu32(5)));
  }
  case AtlasOpcode::NbrGet:
    return dst(inst,
               neighbour(in_range(src(inst, 1), atlas::kNumClasses, 0), inst.operands[2].imm));
  case AtlasOpcode::NbrLd:
  case AtlasOpcode::NbrSt: {
    bool ld = inst.op == Opcode::NbrLd;
    Id c = in_range(src(inst, ld ? 1 : 0), atlas::kNumClasses, 0);
    Id n = neighbour(c, inst.operands[ld ? 2 : 1].imm);
    Id within = src(inst, ld ? 3 : 2);
    if (o_.bounds_check) { // the class window
      Id end = op(Op::OpIAdd, u64t(), {within, cu64(type_size(t))});
      record_region_if(op(Op::OpUGreaterThan, boolt(), {end, cu64(atlas::kClassBytes)}),
                       spirv_status::OutOfBounds,
                       op(Op::OpIAdd, u32t(), {n, cu32(spirv_status::kClassWindows)}), within,
                       type_size(t));
    }
    Id value = ld ? 0 : src(inst, 3);
    pending_offset_ = op(Op::OpIAdd, u64t(),
                         {op(Op::OpIMul, u64t(), {to64(n), cu64(atlas::kClassBytes)}), within});
    Address a{AddrBase::Boundary, 0, kPendingReg, 1, 0};
    if (ld)
      dst(inst, load_mem(inst, a, t));
    else
      store_mem(inst, a, t, value);
    pending_offset_ = 0;
    return;
  }
  case AtlasOpcode::ResAccum: {
    Id c = in_range(src(inst, 0), atlas::kNumClasses, 0);
    Id v = src(inst, 1);
    b_.capability(spv::Capability::Int64Atomics);
    features_.insert("int64_atomics");
    cas_loop(atlas_word(c), cu32(static_cast<uint32_t>(spv::Scope::Device)), u64t(),
             [&](Id old) { return bitcast(u64t(), fadd(bitcast(f64t(), old), v)); });
    return;
  }
  case AtlasOpcode::PhaseGet: return dst(inst, phase());
  case AtlasOpcode::PhaseAdv: {
    b_.capability(spv::Capability::Int64Atomics);
    features_.insert("int64_atomics");
    uint64_t k = inst.operands[0].imm % atlas::kPhaseModulus;
    cas_loop(atlas_word(cu32(atlas::kNumClasses)), cu32(static_cast<uint32_t>(spv::Scope::Device)),
             u64t(), [&](Id old) {
               return op(Op::OpUMod, u64t(),
                         {op(Op::OpIAdd, u64t(), {old, cu64(k)}), cu64(atlas::kPhaseModulus)});
             });
    return;
  }
  case AtlasOpcode::BoundMap: {
    Id c = in_range(src(inst, 1), atlas::kNumClasses, 0);
    Id p = in_range(src(inst, 2), atlas::kPagesPerClass, 1);
    Id b = in_range(src(inst, 3), atlas::kBytesPerPage, 2);
    Id off = op(Op::OpIAdd, u64t(),
                {op(Op::OpIAdd, u64t(),
                    {op(Op::OpIMul, u64t(), {to64(c), cu64(atlas::kClassBytes)}),
                     op(Op::OpIMul, u64t(), {to64(p), cu64(atlas::kBytesPerPage)})}),
                 to64(b)});
    return dst(inst, off);
  }
  }
}

} // namespace hologram::codegen::spirv
