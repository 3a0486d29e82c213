// How the SPIR-V backends run a whole-launch instruction: the device library kernels it
// launches (spirv_library.h in the code generator writes them; their names, parameters and
// block sizes are the contract in codegen/spirv_abi.h), with what geometry and arguments, and
// how large its buffers must be. Planned on the host with the values of the instruction's
// registers.
#include "library_plan.h"

#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/accesses.h"
#include "hologram/isa/attention_operands.h"
#include "hologram/isa/gemm_operands.h"
#include "hologram/isa/opcode.h"
#include "hologram/support/unreachable.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <tuple>

namespace hologram::runtime {

namespace {

using namespace isa;
using codegen::spirv_library::kMinReduceBlocks;
using codegen::spirv_library::kReduceLaneElements;
using codegen::spirv_library::kRowBlock;
using codegen::spirv_library::kTile;

constexpr uint64_t kHuge = std::numeric_limits<uint64_t>::max();

uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a != 0 && b > kHuge / a) return kHuge;
  return a * b;
}
uint64_t add_sat(uint64_t a, uint64_t b) {
  return a > kHuge - b ? kHuge : a + b;
}
uint64_t ceil_div(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0);
}

struct Planner {
  const Kernel &k;
  const Instruction &inst;
  const std::function<uint64_t(Reg)> &reg;
  const LibraryDevice &device;
  LibraryPlan &plan;

  // Operands by the names of the instruction table (opcodes.def), never by position.
  const Operand &operand(std::string_view name) const { return operand_named(inst, name); }
  uint64_t u(std::string_view name) const { return reg(operand(name).index); }
  uint64_t imm(std::string_view name) const { return operand(name).imm; }
  bool present(std::string_view name) const { return operand(name).kind == OperandKind::Param; }
  uint32_t param(std::string_view name) const { return operand(name).index; }
  /// A T register as an f64 (the kernels take T scalars as f64).
  uint64_t as_f64(std::string_view name) const { return bits_as_f64(u(name)); }
  /// The bits of a T value as those of an f64.
  uint64_t bits_as_f64(uint64_t bits) const {
    double v = inst.type == Type::F32
                   ? static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)))
                   : std::bit_cast<double>(bits);
    return std::bit_cast<uint64_t>(v);
  }

  /// The device library kernel of `inst` (spirv_library_kernel), spelled once per thread for
  /// each opcode, sub-operation and type: plans are made at every launch.
  const std::string &kernel_name() const {
    thread_local std::map<std::tuple<Opcode, uint8_t, Type>, std::string> names;
    const auto key = std::tuple{inst.op, inst.sub, inst.type};
    auto it = names.find(key);
    if (it == names.end()) it = names.emplace(key, codegen::spirv_library_kernel(inst)).first;
    return it->second;
  }

  void need(std::string_view name, uint64_t elements) {
    plan.extents.push_back({param(name), elements, name});
  }
  static LibraryArg p(uint32_t param) { return {LibraryArg::Kind::Param, param, Type::None, 0}; }
  LibraryArg buf(std::string_view name) const { return p(param(name)); }
  static LibraryArg scratch(uint32_t s) { return {LibraryArg::Kind::Scratch, s, Type::None, 0}; }
  static LibraryArg u64(uint64_t v) { return {LibraryArg::Kind::Scalar, 0, Type::U64, v}; }
  static LibraryArg u32(uint64_t v) { return {LibraryArg::Kind::Scalar, 0, Type::U32, v}; }
  static LibraryArg f64(uint64_t bits) { return {LibraryArg::Kind::Scalar, 0, Type::F64, bits}; }

  Status fail(const std::string &msg) const { return {ErrorCode::LaunchFailed, msg}; }

  /// One lane per item, blocks of 256.
  Status per_item(const std::string &kernel, uint64_t items, std::vector<LibraryArg> args) {
    if (items == 0) return {};
    uint64_t blocks = ceil_div(items, kRowBlock);
    if (blocks > std::numeric_limits<uint32_t>::max())
      return fail("the operation has too many elements for one launch (" + std::to_string(items) +
                  ")");
    LaunchConfig l;
    l.grid = {static_cast<uint32_t>(blocks), 1, 1};
    l.block = {kRowBlock, 1, 1};
    plan.launches.push_back({kernel, l, std::move(args)});
    plan.schedule = "per-item";
    return {};
  }
  /// One block of 256 lanes per row.
  Status per_row(const std::string &kernel, uint64_t rows, std::vector<LibraryArg> args) {
    if (rows == 0) return {};
    if (rows > std::numeric_limits<uint32_t>::max())
      return fail("the operation has too many rows for one launch (" + std::to_string(rows) + ")");
    LaunchConfig l;
    l.grid = {static_cast<uint32_t>(rows), 1, 1};
    l.block = {kRowBlock, 1, 1};
    plan.launches.push_back({kernel, l, std::move(args)});
    plan.schedule = "row-block";
    return {};
  }
  /// Two stages over n elements of `src` into scratch `result` (one element).
  void two_stage(const std::string &first, std::vector<LibraryArg> first_args, uint64_t n,
                 const std::string &second, unsigned partial_size) {
    uint64_t blocks = std::clamp<uint64_t>(ceil_div(n, uint64_t{kRowBlock} * kReduceLaneElements),
                                           1, std::max(device.reduce_blocks, kMinReduceBlocks));
    auto partial = static_cast<uint32_t>(plan.scratch.size());
    // Each block of the first stage writes its partial, the second stage the result.
    plan.scratch.push_back({blocks * partial_size, false});
    auto result = static_cast<uint32_t>(plan.scratch.size());
    plan.scratch.push_back({partial_size, false});
    LaunchConfig l;
    l.grid = {static_cast<uint32_t>(blocks), 1, 1};
    l.block = {kRowBlock, 1, 1};
    first_args.insert(first_args.begin(), scratch(partial));
    first_args.push_back(u64(n));
    plan.launches.push_back({first, l, std::move(first_args)});
    LaunchConfig one;
    one.grid = {1, 1, 1};
    one.block = {kRowBlock, 1, 1};
    plan.launches.push_back({second, one, {scratch(result), scratch(partial), u64(blocks)}});
    plan.has_result = true;
    plan.result_scratch = result;
    plan.schedule = "two-stage";
  }

  /// gemm and batched_gemm, operands by their names in the instruction table.
  Status gemm() {
    const GemmOperands g = gemm_operands(inst, reg);
    const uint64_t batch = g.batch, M = g.m, N = g.n, K = g.k, lda = g.lda, ldb = g.ldb,
                   ldc = g.ldc, sa = g.stride_a, sb = g.stride_b, sc = g.stride_c;
    const bool ta = g.trans_a, tb = g.trans_b;
    if (batch == 0 || M == 0 || N == 0) return {};
    uint64_t a_rows = ta ? K : M, a_cols = ta ? M : K, b_rows = tb ? N : K, b_cols = tb ? K : N;
    if (lda < a_cols || ldb < b_cols || ldc < N)
      return fail("gemm leading dimensions are smaller than the rows they describe");
    auto extent = [&](uint64_t rows, uint64_t cols, uint64_t ld, uint64_t stride) -> uint64_t {
      return rows == 0 ? 0
                       : add_sat(add_sat(mul_sat(batch - 1, stride), mul_sat(rows - 1, ld)), cols);
    };
    need("C", extent(M, N, ldc, sc));
    need("A", extent(a_rows, a_cols, lda, sa));
    need("B", extent(b_rows, b_cols, ldb, sb));
    // f32's wide tiles where the device allows them, once C has one for each compute unit:
    // fewer would leave units idle, where the narrow tiles, a quarter the size, still spread
    // over them.
    using codegen::spirv_library::kGemmNarrow;
    using codegen::spirv_library::kGemmWide;
    const uint64_t wide_tiles =
        mul_sat(mul_sat(ceil_div(N, kGemmWide.tile()), ceil_div(M, kGemmWide.tile())), batch);
    const auto shape =
        inst.type == Type::F32 && device.wide_gemm && wide_tiles >= device.compute_units
            ? kGemmWide
            : kGemmNarrow;
    uint64_t gx = ceil_div(N, shape.tile()), gy = ceil_div(M, shape.tile());
    if (gx > UINT32_MAX || gy > UINT32_MAX || batch > UINT32_MAX)
      return fail("gemm is too large for one launch");
    LaunchConfig l;
    l.grid = {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), static_cast<uint32_t>(batch)};
    l.block = {kTile, kTile, 1};
    plan.launches.push_back(
        {codegen::spirv_library_gemm_kernel(inst.type, shape),
         l,
         {buf("C"), buf("A"), buf("B"), u64(M), u64(N), u64(K), f64(bits_as_f64(g.alpha_bits)),
          f64(bits_as_f64(g.beta_bits)), u64(lda), u64(ldb), u64(ldc), u64(sa), u64(sb), u64(sc),
          u32(ta), u32(tb)}});
    plan.schedule = "tiled";
    return {};
  }

  Status run() {
    if (!inst.info().launch_level()) return fail("not a whole-launch operation");
    switch (as_launch(inst.op)) {
    case LaunchOpcode::Map:
    case LaunchOpcode::Map2: {
      bool two = inst.op == Opcode::Map2;
      uint64_t n = u("n");
      for (std::string_view b : two ? std::vector<std::string_view>{"dst", "a", "b"}
                                    : std::vector<std::string_view>{"dst", "src"})
        need(b, n);
      std::vector<LibraryArg> args{buf("dst"), buf(two ? "a" : "src")};
      if (two) args.push_back(buf("b"));
      args.push_back(u64(n));
      return per_item(kernel_name(), n, args);
    }
    case LaunchOpcode::ReduceAll: {
      uint64_t n = u("n");
      need("src", n);
      const std::string &name = kernel_name(); // both stages: one kernel, two modes
      two_stage(name, {buf("src")}, n, name, type_size(inst.type));
      plan.result_type = inst.type;
      return {};
    }
    case LaunchOpcode::Dot: {
      uint64_t n = u("n");
      need("x", n);
      need("y", n);
      static const std::string sum_f64 =
          codegen::spirv_library_reduce_kernel(ReduceOp::Add, Type::F64);
      two_stage(kernel_name(), {buf("x"), buf("y")}, n, sum_f64, 8);
      plan.result_type = Type::F64;
      return {};
    }
    case LaunchOpcode::Gemm:
    case LaunchOpcode::BatchedGemm: return gemm();
    case LaunchOpcode::Gemv: {
      uint64_t m = u("M"), n = u("N"), lda = u("lda");
      bool tr = imm("transA");
      uint64_t rows = tr ? n : m, cols = tr ? m : n;
      need("y", rows);
      need("A", m ? add_sat(mul_sat(m - 1, lda), n) : 0);
      need("x", cols);
      return per_item(kernel_name(), rows,
                      {buf("y"), buf("A"), buf("x"), u64(rows), u64(cols), f64(as_f64("alpha")),
                       f64(as_f64("beta")), u64(lda), u32(tr)});
    }
    case LaunchOpcode::Softmax:
    case LaunchOpcode::LogSoftmax: {
      uint64_t rows = u("rows"), cols = u("cols");
      need("y", mul_sat(rows, cols));
      need("x", mul_sat(rows, cols));
      return per_row(
          kernel_name(), rows,
          {buf("y"), buf("x"), u64(rows), u64(cols), u32(inst.op == Opcode::LogSoftmax ? 1 : 0)});
    }
    case LaunchOpcode::LayerNorm:
    case LaunchOpcode::RmsNorm: {
      bool ln = inst.op == Opcode::LayerNorm;
      uint64_t rows = u("rows"), cols = u("cols");
      need("y", mul_sat(rows, cols));
      need("x", mul_sat(rows, cols));
      bool gamma = present("gamma"), beta = ln && present("beta");
      if (gamma) need("gamma", cols);
      if (beta) need("beta", cols);
      // An absent gamma or beta reads the input instead (its first `cols` elements exist
      // whenever a row does) and is not used.
      uint32_t flags = (ln ? 1u : 0u) | (gamma ? 2u : 0u) | (beta ? 4u : 0u);
      return per_row(kernel_name(), rows,
                     {buf("y"), buf("x"), buf(gamma ? "gamma" : "x"), buf(beta ? "beta" : "x"),
                      u64(rows), u64(cols), f64(as_f64("eps")), u32(flags)});
    }
    case LaunchOpcode::Silu:
    case LaunchOpcode::Gelu:
    case LaunchOpcode::GeluTanh: {
      uint64_t n = u("n");
      need("y", n);
      need("x", n);
      uint32_t kind = inst.op == Opcode::Silu ? 0 : inst.op == Opcode::Gelu ? 1 : 2;
      return per_item(kernel_name(), n, {buf("y"), buf("x"), u64(n), u32(kind)});
    }
    case LaunchOpcode::Rope: {
      uint64_t rows = u("rows"), dim = u("dim"), half = dim / 2;
      if (dim % 2) return fail("rope needs an even dimension, got " + std::to_string(dim));
      need("y", mul_sat(rows, dim));
      need("x", mul_sat(rows, dim));
      need("cos", mul_sat(rows, half));
      need("sin", mul_sat(rows, half));
      uint64_t pairs = mul_sat(rows, half);
      return per_item(kernel_name(), pairs,
                      {buf("y"), buf("x"), buf("cos"), buf("sin"), u64(pairs), u64(half)});
    }
    case LaunchOpcode::Attention: {
      const AttentionOperands a = attention_operands(inst, reg);
      if (auto why = a.problem(); !why.empty()) return fail(why);
      const uint64_t sq = a.seq_q, sk = a.seq_k, d = a.head_dim;
      need("out", a.q_extent());
      need("Q", a.q_extent());
      need("K", a.kv_extent());
      need("V", a.kv_extent());
      if (a.has_mask && !a.empty()) need("mask", mul_sat(sq, sk));
      uint64_t rows = mul_sat(a.heads, sq);
      uint64_t scores = mul_sat(mul_sat(rows, sk), 8);
      if (a.empty()) return {};
      if (scores == kHuge) return fail("attention is too large for one launch");
      auto s = static_cast<uint32_t>(plan.scratch.size());
      plan.scratch.push_back({std::max<uint64_t>(scores, 8)});
      uint32_t flags = (a.causal ? 1u : 0u) | (a.has_mask ? 2u : 0u);
      return per_item(kernel_name(), rows,
                      {buf("out"), buf("Q"), buf("K"), buf("V"), buf(a.has_mask ? "mask" : "Q"),
                       scratch(s), u64(rows), u64(sq), u64(sk), u64(d), u64(a.group()),
                       u64(a.q_head_stride), u64(a.q_row_stride), u64(a.kv_head_stride),
                       u64(a.kv_row_stride), f64(bits_as_f64(a.scale_bits)), u32(flags)});
    }
    case LaunchOpcode::Conv2d: {
      uint64_t N = u("N"), C = u("C"), H = u("H"), W = u("W"), K = u("K"), KH = u("KH"),
               KW = u("KW"), stride = u("stride"), pad = u("pad");
      if (stride == 0) return fail("conv2d stride must be positive");
      uint64_t ph = add_sat(H, mul_sat(2, pad)), pw = add_sat(W, mul_sat(2, pad));
      if (ph < KH || pw < KW || ph >= (uint64_t{1} << 62) || pw >= (uint64_t{1} << 62))
        return fail("conv2d sizes are out of range (a kernel larger than the padded input, or "
                    "a huge input)");
      uint64_t OH = (ph - KH) / stride + 1, OW = (pw - KW) / stride + 1;
      uint64_t total = mul_sat(mul_sat(mul_sat(N, K), OH), OW);
      need("out", total);
      need("in", mul_sat(mul_sat(mul_sat(N, C), H), W));
      need("weight", mul_sat(mul_sat(mul_sat(K, C), KH), KW));
      bool bias = present("bias");
      if (bias) need("bias", K);
      return per_item(kernel_name(), total,
                      {buf("out"), buf("in"), buf("weight"), buf(bias ? "bias" : "weight"),
                       u64(total), u64(C), u64(H), u64(W), u64(K), u64(KH), u64(KW), u64(stride),
                       u64(pad), u64(OH), u64(OW), u32(bias)});
    }
    case LaunchOpcode::Axpy: {
      uint64_t n = u("n");
      need("y", n);
      need("x", n);
      LibraryArg alpha{LibraryArg::Kind::Scalar, 0, inst.type, u("alpha")};
      return per_item(kernel_name(), n, {buf("y"), buf("x"), u64(n), alpha});
    }
    }
    unreachable_enum("LaunchOpcode");
  }
};

} // namespace

std::map<uint32_t, uint32_t> results_stored_on_device(const Kernel &kernel) {
  const auto n = static_cast<uint32_t>(kernel.insts.size());
  std::vector<bool> labelled(n + 1, false);
  for (const Label &l : kernel.labels)
    if (l.target <= n) labelled[l.target] = true;
  std::vector<RegAccess> accesses;
  std::vector<uint32_t> reads(kNumSlots, 0);
  for (const Instruction &inst : kernel.insts) {
    instruction_uses(inst, accesses);
    for (const RegAccess &a : accesses) ++reads[slot_of(a)];
  }
  auto touches = [&](const std::vector<RegAccess> &list, Reg r) {
    return std::ranges::any_of(list, [&](const RegAccess &a) { return !a.pred && a.reg == r; });
  };
  std::map<uint32_t, uint32_t> stored;
  for (uint32_t i = 0; i < n; ++i) {
    const Instruction &red = kernel.insts[i];
    if (!red.info().reduces()) continue; // reduce_all, dot (the table's R flag)
    const Reg r = operand_named(red, "result").index;
    if (reads[r] != 1) continue;
    for (uint32_t j = i + 1; j < n && !labelled[j]; ++j) {
      const Instruction &s = kernel.insts[j];
      instruction_uses(s, accesses);
      if (touches(accesses, r)) {
        const Address &at = s.operands[0].addr;
        if (s.op == Opcode::St && !s.guard.present && s.type == red.type &&
            s.operands[0].kind == OperandKind::Addr && at.base == AddrBase::Param &&
            at.index != r && s.operands[1].kind == OperandKind::Reg && s.operands[1].index == r)
          stored.emplace(i, j);
        break;
      }
      instruction_defs(s, accesses);
      if (s.info().ends_block() || touches(accesses, r)) break;
    }
  }
  return stored;
}

Status plan_library_op(const Kernel &kernel, const Instruction &inst,
                       const std::function<uint64_t(Reg)> &reg, const LibraryDevice &device,
                       LibraryPlan &plan) {
  plan = {};
  // At most this many of each in any plan: room made once, not grown one by one.
  plan.extents.reserve(6);
  plan.scratch.reserve(2);
  plan.launches.reserve(2);
  return Planner{kernel, inst, reg, device, plan}.run();
}

} // namespace hologram::runtime
