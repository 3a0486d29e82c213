// PrefixMasksPass: the shape of a chunk's prefix masks for x86 below AVX-512, after LLVM's
// optimiser.
#include "lowering.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Local.h>

#include <vector>

namespace hologram::codegen::detail {
namespace {

using llvm::Value;
namespace pm = llvm::PatternMatch;

/// Whether `v` is the constant vector 0, 1, ..., n - 1 of some integer type.
bool is_lane_numbers(Value *v) {
  auto *c = llvm::dyn_cast<llvm::ConstantDataVector>(v);
  if (!c || !c->getElementType()->isIntegerTy()) return false;
  for (unsigned i = 0; i < c->getNumElements(); ++i)
    if (c->getElementAsInteger(i) != i) return false;
  return true;
}

/// The count (i32) of prefix_mask's compare `mask`: the lane numbers below a count, in
/// either operand order (count > lanes, lanes < count); null for any other value.
Value *compared_count(Value *mask) {
  llvm::ICmpInst::Predicate cc{};
  Value *x = nullptr, *y = nullptr;
  if (!pm::match(mask, pm::m_ICmp(cc, pm::m_Value(x), pm::m_Value(y)))) return nullptr;
  Value *count = cc == llvm::ICmpInst::ICMP_UGT ? x : cc == llvm::ICmpInst::ICMP_ULT ? y : nullptr;
  if (!count || !is_lane_numbers(count == x ? y : x)) return nullptr;
  Value *scalar = llvm::getSplatValue(count);
  return scalar && scalar->getType()->isIntegerTy(32) ? scalar : nullptr;
}

/// Whether `mask` (a vector of i1) is a prefix of its lanes that count_of can count: a
/// compare of prefix_mask's, both of two prefixes, or all or none of the lanes.
bool is_prefix(Value *mask) {
  if (auto *c = llvm::dyn_cast<llvm::Constant>(mask))
    return c->isAllOnesValue() || c->isNullValue();
  Value *x = nullptr, *y = nullptr;
  if (pm::match(mask, pm::m_And(pm::m_Value(x), pm::m_Value(y))))
    return is_prefix(x) && is_prefix(y);
  return compared_count(mask) != nullptr;
}

/// The number of lanes (i32) of the prefix `mask` (is_prefix), built at b's insertion point.
Value *count_of(Value *mask, llvm::IRBuilder<> &b) {
  if (auto *c = llvm::dyn_cast<llvm::Constant>(mask)) {
    const auto lanes = llvm::cast<llvm::FixedVectorType>(mask->getType())->getNumElements();
    return b.getInt32(c->isAllOnesValue() ? lanes : 0);
  }
  Value *x = nullptr, *y = nullptr;
  if (pm::match(mask, pm::m_And(pm::m_Value(x), pm::m_Value(y))))
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, count_of(x, b), count_of(y, b));
  return compared_count(mask);
}

/// The lanes below `count` as a vector of `ty` (prefix_mask's compare).
Value *prefix(llvm::FixedVectorType *ty, Value *count, llvm::IRBuilder<> &b) {
  std::vector<llvm::Constant *> numbers;
  for (unsigned i = 0; i < ty->getNumElements(); ++i) numbers.push_back(b.getInt32(i));
  return b.CreateICmpULT(llvm::ConstantVector::get(numbers),
                         b.CreateVectorSplat(ty->getNumElements(), count));
}

/// The bits of the lanes below `count` as an integer of `n` bits (n at most 64): all ones
/// from n lanes on.
Value *prefix_bits(unsigned n, Value *count, llvm::IRBuilder<> &b) {
  Value *wide = b.CreateZExt(count, b.getInt64Ty());
  Value *below = b.CreateSub(b.CreateShl(b.getInt64(1), wide), b.getInt64(1));
  Value *all = b.CreateICmpUGE(count, b.getInt32(n));
  return b.CreateSelect(all, b.getIntN(n, ~uint64_t{0}), b.CreateTrunc(below, b.getIntNTy(n)));
}

bool is_mask(llvm::Type *t) {
  auto *v = llvm::dyn_cast<llvm::FixedVectorType>(t);
  return v && v->getElementType()->isIntegerTy(1) && v->getNumElements() <= 64;
}

bool lacks_mask_registers(const llvm::Function &f) {
  const llvm::Attribute features = f.getFnAttribute("target-features");
  return !features.isValid() || !features.getValueAsString().contains("+avx512f");
}

} // namespace

llvm::PreservedAnalyses PrefixMasksPass::run(llvm::Function &f, llvm::FunctionAnalysisManager &) {
  if (!lacks_mask_registers(f)) return llvm::PreservedAnalyses::all();
  llvm::SmallVector<llvm::WeakTrackingVH> replaced;
  llvm::IRBuilder<> b(f.getContext());
  // Both of two prefixes are one compare with the smaller count, and a prefix's bits (the
  // test of whether every lane or none runs, the bits a page's rare way reads) come from its
  // count in scalar arithmetic, not from the lanes' sign bits packed into bytes.
  auto by_counts = [&] {
    for (llvm::BasicBlock &bb : f) {
      for (llvm::Instruction &inst : bb) {
        auto *cast = llvm::dyn_cast<llvm::BitCastInst>(&inst);
        const bool both = is_mask(inst.getType()) && inst.getOpcode() == llvm::Instruction::And;
        const bool bits = cast && is_mask(cast->getSrcTy()) && cast->getDestTy()->isIntegerTy();
        Value *mask = bits ? cast->getOperand(0) : &inst;
        if (!(both || bits) || inst.use_empty() || !is_prefix(mask)) continue;
        b.SetInsertPoint(&inst);
        Value *count = count_of(mask, b);
        const auto lanes = llvm::cast<llvm::FixedVectorType>(mask->getType())->getNumElements();
        inst.replaceAllUsesWith(
            bits ? prefix_bits(lanes, count, b)
                 : prefix(llvm::cast<llvm::FixedVectorType>(inst.getType()), count, b));
        replaced.emplace_back(&inst);
      }
    }
  };
  by_counts();
  // A phi of prefixes (the partial chunk's mask, where the chunk that straddles the bound
  // and the span's last chunk meet) becomes a phi of their counts and one compare after it;
  // then that compare's bits too come from its count.
  std::vector<llvm::PHINode *> phis;
  for (llvm::BasicBlock &bb : f)
    for (llvm::PHINode &phi : bb.phis())
      if (is_mask(phi.getType()) && llvm::all_of(phi.incoming_values(), is_prefix))
        phis.push_back(&phi);
  for (llvm::PHINode *phi : phis) {
    b.SetInsertPoint(phi);
    llvm::PHINode *count = b.CreatePHI(b.getInt32Ty(), phi->getNumIncomingValues());
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      llvm::BasicBlock *pred = phi->getIncomingBlock(i);
      b.SetInsertPoint(pred->getTerminator());
      count->addIncoming(count_of(phi->getIncomingValue(i), b), pred);
    }
    b.SetInsertPoint(phi->getParent(), phi->getParent()->getFirstInsertionPt());
    phi->replaceAllUsesWith(prefix(llvm::cast<llvm::FixedVectorType>(phi->getType()), count, b));
    replaced.emplace_back(phi);
  }
  if (!phis.empty()) by_counts();
  if (replaced.empty()) return llvm::PreservedAnalyses::all();
  // With what only they used (the compares they replace).
  llvm::RecursivelyDeleteTriviallyDeadInstructions(replaced);
  return llvm::PreservedAnalyses::none();
}

} // namespace hologram::codegen::detail
