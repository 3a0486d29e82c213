// The x86 lowering of the Atlas instructions (SPEC §4): class arithmetic from constant
// tables, checked class ranges, resonance and phase (kernel_lowering.h).
#include "kernel_lowering.h"

namespace hologram::codegen::detail {

V KernelLowering::table_lookup(const std::vector<uint32_t> &table, V index,
                               const std::string &name) {
  auto &g = tables_[name];
  if (!g) g = constant_table(m_, table, name);
  // Clamp the index so inactive lanes never read outside the table.
  const auto last = static_cast<uint32_t>(table.size() - 1);
  return lift({index}, [&](auto &v) -> Value * {
    Value *i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v[0],
                                        llvm::ConstantInt::get(v[0]->getType(), last));
    Value *p = b_.CreateGEP(i32(), g,
                            {b_.CreateZExt(i, v[0]->getType()->isVectorTy() ? vec(i64()) : i64())});
    if (!v[0]->getType()->isVectorTy()) return b_.CreateLoad(i32(), p);
    return b_.CreateMaskedGather(vec(i32()), p, llvm::Align(4), splat(b_.getTrue()));
  });
}

void KernelLowering::check_class(V c) {
  V bad = lift({c}, [&](auto &v) {
    return b_.CreateICmpUGE(v[0], llvm::ConstantInt::get(v[0]->getType(), atlas::kNumClasses));
  });
  fail_if(active(bad.v), HG_CPU_ERR_CLASS_RANGE, cur_, c.v);
}

V KernelLowering::class_lookup(const Instruction &inst, const std::string &name,
                               uint32_t (*f)(uint32_t)) {
  V c = src(inst, 1, Type::U32);
  check_class(c);
  std::vector<uint32_t> table(atlas::kNumClasses);
  for (uint32_t x = 0; x < atlas::kNumClasses; ++x) table[x] = f(x);
  return table_lookup(table, c, name);
}

void KernelLowering::emit_atlas(const Instruction &inst) {
  const auto &ops = inst.operands;
  auto table = [](auto f, uint32_t n) {
    std::vector<uint32_t> t(n);
    for (uint32_t i = 0; i < n; ++i) t[i] = f(i);
    return t;
  };
  auto neighbour_k = [&](uint64_t k) {
    return table(
        [k](uint32_t c) {
          auto n = atlas::neighbours(c);
          return n.items[k % n.count];
        },
        atlas::kNumClasses);
  };
  switch (as_family<AtlasOpcode>(inst.op)) {
  case AtlasOpcode::ClsGet: {
    V x = src(inst, 1, Type::U32);
    V bad = lift({x}, [&](auto &v) {
      return b_.CreateICmpUGT(v[0], llvm::ConstantInt::get(v[0]->getType(), 255));
    });
    fail_if(active(bad.v), HG_CPU_ERR_CLS_BYTE, cur_, x.v);
    set(inst, 0, Type::U32,
        table_lookup(table([](uint32_t b) { return atlas::byte_to_class(b); }, 256), x,
                     "class_of_byte"));
    return;
  }
  case AtlasOpcode::Mirror:
    set(inst, 0, Type::U32, class_lookup(inst, "mirror", atlas::mirror));
    return;
  case AtlasOpcode::UnityTest: {
    V u = class_lookup(inst, "unity", [](uint32_t x) { return uint32_t{atlas::is_unity(x)}; });
    set_pred(ops[0].index, lift({u}, [&](auto &v) {
               return b_.CreateICmpNE(v[0], llvm::Constant::getNullValue(v[0]->getType()));
             }));
    return;
  }
  case AtlasOpcode::NbrCount:
    set(inst, 0, Type::U32,
        class_lookup(inst, "degree", [](uint32_t x) { return atlas::neighbours(x).count; }));
    return;
  case AtlasOpcode::NbrGet: {
    V c = src(inst, 1, Type::U32);
    check_class(c);
    set(inst, 0, Type::U32,
        table_lookup(neighbour_k(ops[2].imm), c, "neighbour" + std::to_string(ops[2].imm)));
    return;
  }
  case AtlasOpcode::NbrLd:
  case AtlasOpcode::NbrSt: {
    const bool is_ld = inst.op == Opcode::NbrLd;
    const Type t = inst.type;
    V c = src(inst, is_ld ? 1 : 0, Type::U32);
    check_class(c);
    uint64_t k = ops[is_ld ? 2 : 1].imm;
    V n = table_lookup(neighbour_k(k), c, "neighbour" + std::to_string(k));
    V off = get(ops[is_ld ? 3 : 2].index, Type::U64);
    // The neighbour's class window: bounds are the window; the offset is from the pool start.
    Access acc; // within the pool once within the window
    acc.base = boundary();
    acc.limit = u64c(atlas::kBoundaryPoolBytes);
    acc.region = HG_CPU_REGION_BOUNDARY;
    V window = lift({n}, [&](auto &v) {
      return b_.CreateMul(b_.CreateZExt(v[0], v[0]->getType()->isVectorTy() ? vec(i64()) : i64()),
                          llvm::ConstantInt::get(v[0]->getType()->isVectorTy() ? vec(i64()) : i64(),
                                                 atlas::kClassBytes));
    });
    if (opts_.bounds_check) {
      Access in_window;
      in_window.off = off;
      in_window.limit = u64c(atlas::kClassBytes);
      in_window.regions = lift({n}, [&](auto &v) {
        return b_.CreateSub(llvm::ConstantInt::get(v[0]->getType(),
                                                   static_cast<uint32_t>(HG_CPU_REGION_CLASS_BASE)),
                            v[0]);
      });
      check_bounds(in_window, type_size(t));
    }
    acc.off = lift({window, off}, [&](auto &v) { return b_.CreateAdd(v[0], v[1]); });
    if (is_ld)
      set(inst, 0, t, load(t, acc));
    else
      store(t, acc, src(inst, 3, t));
    return;
  }
  case AtlasOpcode::ResAccum: {
    V c = src(inst, 0, Type::U32);
    check_class(c);
    V v = src(inst, 1, Type::F64);
    Value *res = load_field(abi_.launch, launch_, LResonance, ptr());
    for_each_active_lane([&](unsigned j) {
      Value *p = b_.CreateGEP(b_.getDoubleTy(), res, {b_.CreateZExt(lane_of(c, j), i64())});
      b_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, p, lane_of(v, j), llvm::MaybeAlign(8),
                         llvm::AtomicOrdering::Monotonic);
    });
    return;
  }
  case AtlasOpcode::PhaseGet:
    set(inst, 0, Type::U32, {load_field(abi_.launch, launch_, LPhase, i32()), true});
    return;
  case AtlasOpcode::PhaseAdv: {
    // Every active lane adds its amount (SPEC §4); the runtime applies the sum at the end.
    Value *mask = lane_mask();
    Value *lanes = b_.CreateZExt(
        b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, b_.CreateBitCast(mask, b_.getIntNTy(w_))),
        i64());
    Value *p = load_field(abi_.launch, launch_, LPhaseAdv, ptr());
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, p, b_.CreateMul(lanes, u64c(ops[0].imm)),
                       llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
    return;
  }
  case AtlasOpcode::BoundMap: {
    V c = src(inst, 1, Type::U32), p = src(inst, 2, Type::U32), by = src(inst, 3, Type::U32);
    check_class(c);
    auto ge = [&](V x, uint32_t n) {
      return lift({x}, [&](auto &v) {
        return b_.CreateICmpUGE(v[0], llvm::ConstantInt::get(v[0]->getType(), n));
      });
    };
    fail_if(active(ge(p, atlas::kPagesPerClass).v), HG_CPU_ERR_PAGE_RANGE, cur_, p.v);
    fail_if(active(ge(by, atlas::kBytesPerPage).v), HG_CPU_ERR_BYTE_RANGE, cur_, by.v);
    V r = lift({c, p, by}, [&](auto &v) {
      llvm::Type *t64 =
          v[0]->getType()->isVectorTy() ? static_cast<llvm::Type *>(vec(i64())) : i64();
      auto z = [&](Value *x) { return b_.CreateZExt(x, t64); };
      return b_.CreateAdd(
          b_.CreateAdd(b_.CreateMul(z(v[0]), llvm::ConstantInt::get(t64, atlas::kClassBytes)),
                       b_.CreateMul(z(v[1]), llvm::ConstantInt::get(t64, atlas::kBytesPerPage))),
          z(v[2]));
    });
    set(inst, 0, Type::U64, r);
    return;
  }
  }
}

} // namespace hologram::codegen::detail
