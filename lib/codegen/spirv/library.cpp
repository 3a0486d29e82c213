// The device library of the SPIR-V backends: whole-launch instructions as kernels written in
// the Atlas ISA (instantiated per element type). The runtime plans their launches
// (runtime/core/library_plan.cpp).
//
// Schedules: gemm and batched_gemm give a block of 16x16 lanes a 64x64 tile of C, each lane
// 4x4 elements accumulated in registers of the element type over panels of A and B staged in
// shared memory; softmax, log_softmax, layernorm and rmsnorm give each row one block of 256
// lanes that reduce in shared memory; reduce_all and dot reduce in two stages (16 blocks per
// compute unit of the device, at least 256, then one); the others give each output element (or
// row, for gemv and attention) one lane. Other sums and products are accumulated in f64 and
// rounded once, like the reference implementations. docs/isa.md states each one's error bound.
#include "hologram/codegen/spirv_library.h"

#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/diagnostics.h"
#include "hologram/support/unreachable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace hologram::codegen {

namespace {

using namespace isa;

using spirv_library::kRowBlock;

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The text of a file of library/ (embedded at build time from library/*.hasm).
std::string_view library_text(std::string_view name) {
  struct File {
    std::string_view name, text;
  };
  static constexpr File kFiles[] = {
#include "spirv_library_texts.inc"
  };
  for (const auto &f : kFiles)
    if (f.name == name) return f.text;
  return {}; // fails to parse, naming the kernel (the build's check instantiates every one)
}

/// library/tree.hasm: a reduction over the block's lanes of `val` into `out`.
std::string tree(const std::string &label, const std::string &op, const std::string &type,
                 const std::string &val, const std::string &out) {
  std::string t(library_text("tree"));
  t = replace_all(t, "@L_", "@" + label + "_");
  t = replace_all(t, "$TY", type);
  t = replace_all(t, "$VAL", val);
  t = replace_all(t, "$OUT", out);
  return replace_all(t, "$OP", op);
}

std::string tree_setup(unsigned size) {
  return "  cvt.u64.u32    r90, %lane.x\n  mov.imm.u64    r94, " + std::to_string(size) +
         "\n  mul.u64        r90, r90, r94\n  mov.imm.u32    r97, 1\n  mov.imm.u32    r98, 0\n";
}

// ---------------------------------------------------------------------------------------------
// Instantiation

bool is_float_type(Type t) {
  return t == Type::F32 || t == Type::F64;
}

/// The reduction's identity, as ISA literal text.
std::string identity(ReduceOp op, Type t) {
  auto ints = [&](auto tag) -> std::string {
    using I = decltype(tag);
    switch (op) {
    case ReduceOp::Add: return "0";
    case ReduceOp::Mul: return "1";
    case ReduceOp::Min: return std::to_string(std::numeric_limits<I>::max());
    case ReduceOp::Max: return std::to_string(std::numeric_limits<I>::lowest());
    }
    return "0";
  };
  switch (t) {
  case Type::F32:
  case Type::F64:
    return op == ReduceOp::Add   ? "0.0"
           : op == ReduceOp::Mul ? "1.0"
           : op == ReduceOp::Min ? "inf"
                                 : "-inf";
  case Type::I8: return ints(int8_t{});
  case Type::U8: return ints(uint8_t{});
  case Type::I16: return ints(int16_t{});
  case Type::U16: return ints(uint16_t{});
  case Type::I32: return ints(int32_t{});
  case Type::U32: return ints(uint32_t{});
  case Type::I64: return ints(int64_t{});
  case Type::BF16:
  case Type::F16:
  case Type::None:
  case Type::Pred:
  case Type::U64: return ints(uint64_t{});
  }
  unreachable_enum("Type");
}

/// The instruction lines computing r3 from r2 (map) or from r2 and r4 (map2).
std::string map_body(const Instruction &inst) {
  std::string t(type_name(inst.type));
  auto line = [&](const std::string &m, const std::string &ops) {
    std::string mn = m + "." + t;
    mn.resize(std::max<size_t>(mn.size() + 1, 15), ' ');
    return "  " + mn + ops + "\n";
  };
  if (inst.op == Opcode::Map2) {
    auto op = static_cast<MapBinaryOp>(inst.sub);
    if (!is_float_type(inst.type) && (op == MapBinaryOp::Pow || op == MapBinaryOp::Atan2))
      return line("mov", "r3, r2"); // the reference leaves integers as they are
    return line(std::string(sub_name(SubKind::MapBinary, inst.sub)), "r3, r2, r4");
  }
  auto op = static_cast<MapUnaryOp>(inst.sub);
  std::string name(sub_name(SubKind::MapUnary, inst.sub));
  if (op == MapUnaryOp::Relu) {
    // x > 0 ? x : 0, and NaN stays NaN.
    std::string zero = is_float_type(inst.type) ? "0.0" : "0";
    std::string s = line("mov.imm", "r5, " + zero) + line("setgt", "p1, r2, r5");
    if (is_float_type(inst.type))
      s += line("setneu", "p2, r2, r2") + "  por            p1, p1, p2\n";
    return s + line("sel", "r3, p1, r2, r5");
  }
  if (!is_float_type(inst.type) && op != MapUnaryOp::Abs && op != MapUnaryOp::Neg)
    return line("mov", "r3, r2");
  return line(name, "r3, r2");
}

std::string kernel_text(std::string_view tmpl, Type t) {
  std::string s = replace_all(std::string(tmpl), "$TY", std::string(type_name(t)));
  return replace_all(s, "$SZ", std::to_string(type_size(t)));
}

std::string with_trees(std::string s, unsigned size, const std::string &type) {
  s = replace_all(s, "$SETUP", tree_setup(size));
  s = replace_all(s, "$TREE_MAX", tree("tmax", "max", type, "r10", "r15"));
  s = replace_all(s, "$TREE_SUM", tree("tsum", "add", type, "r20", "r21"));
  s = replace_all(s, "$TREE_MEAN", tree("tmean", "add", type, "r10", "r15"));
  return replace_all(s, "$TREE_SQ", tree("tsq", "add", type, "r20", "r21"));
}

/// library/gemm.hasm for element type `t`: the lane's 4x4 accumulators are r100..r115
/// (row i, column j at r100 + 4i + j), its values of A r120..r123, of B r124..r127; each
/// accumulator is stored by a library/gemm_store.hasm fragment.
std::string gemm_text(Type t) {
  using spirv_library::kGemmPerLane;
  using spirv_library::kTile;
  const std::string ty(type_name(t));
  const unsigned size = type_size(t);
  // f32 rows are padded by one element: lanes storing down a panel's column then fall in
  // different banks. f64 panels stay unpadded, so both fit the 16 KiB every Vulkan device has.
  const unsigned row = (kTile * kGemmPerLane + (t == Type::F32 ? 1 : 0)) * size;
  const unsigned panel = kTile * row;
  std::string zero, fmas, stores;
  for (unsigned i = 0; i < kGemmPerLane; ++i)
    for (unsigned j = 0; j < kGemmPerLane; ++j) {
      const std::string acc = "r" + std::to_string(100 + 4 * i + j);
      zero += "  mov." + ty + "        " + acc + ", r31\n";
      fmas += "  fma." + ty + "        " + acc + ", r" + std::to_string(120 + i) + ", r" +
              std::to_string(124 + j) + ", " + acc + "\n";
      std::string store(library_text("gemm_store"));
      store = replace_all(store, "@L_", "@c" + std::to_string(i) + std::to_string(j) + "_");
      store = replace_all(store, "$DI", std::to_string(kTile * i));
      store = replace_all(store, "$DJ", std::to_string(kTile * j));
      stores += replace_all(store, "$ACC", acc);
    }
  std::string s(library_text("gemm"));
  s = replace_all(s, "$SHARED", std::to_string(2 * panel));
  s = replace_all(s, "$BPANEL", std::to_string(panel));
  s = replace_all(s, "$ROW", std::to_string(row));
  s = replace_all(s, "$ZERO\n", zero);
  s = replace_all(s, "$FMAS\n", fmas);
  return kernel_text(replace_all(s, "$STORES\n", stores), t);
}

/// The name and text of the kernel(s) an instruction launches.
struct Needed {
  std::string name, text;
};

void needed(const Instruction &inst, std::vector<Needed> &out) {
  Type t = inst.type;
  auto add = [&](const std::string &name, std::string text) {
    out.push_back({name, std::move(text)});
  };
  auto reduce = [&](ReduceOp op, Type rt) {
    std::string rn(type_name(rt));
    std::string opn(reduce_op_name(op));
    std::string s = kernel_text(library_text("reduce"), rt);
    s = replace_all(s, "$OP", opn);
    s = replace_all(s, "$IDENTITY", identity(op, rt));
    s = replace_all(s, "$SHARED", std::to_string(kRowBlock * type_size(rt)));
    s = replace_all(s, "$SETUP", tree_setup(type_size(rt)));
    s = replace_all(s, "$TREE", tree("tr", opn, rn, "r10", "r15"));
    add(spirv_library_reduce_kernel(op, rt), s);
  };
  switch (as_launch(inst.op)) {
  case LaunchOpcode::Map:
  case LaunchOpcode::Map2: {
    bool two = inst.op == Opcode::Map2;
    std::string opn(sub_name(two ? SubKind::MapBinary : SubKind::MapUnary, inst.sub));
    std::string s =
        replace_all(kernel_text(two ? library_text("map2") : library_text("map"), t), "$OP", opn);
    add(spirv_library_kernel(inst), replace_all(s, "$BODY", map_body(inst)));
    return;
  }
  case LaunchOpcode::ReduceAll: reduce(static_cast<ReduceOp>(inst.sub), t); return;
  case LaunchOpcode::Dot:
    add(spirv_library_kernel(inst),
        replace_all(replace_all(kernel_text(library_text("dot"), t), "$SETUP", tree_setup(8)),
                    "$TREE", tree("tr", "add", "f64", "r10", "r15")));
    reduce(ReduceOp::Add, Type::F64);
    return;
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm: add(spirv_library_kernel(inst), gemm_text(t)); return;
  case LaunchOpcode::Gemv:
    add(spirv_library_kernel(inst), kernel_text(library_text("gemv"), t));
    return;
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax:
    add(spirv_library_kernel(inst), with_trees(kernel_text(library_text("softmax"), t), 8, "f64"));
    return;
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm:
    add(spirv_library_kernel(inst), with_trees(kernel_text(library_text("norm"), t), 8, "f64"));
    return;
  case LaunchOpcode::Silu:
  case LaunchOpcode::Gelu:
  case LaunchOpcode::GeluTanh:
    add(spirv_library_kernel(inst), kernel_text(library_text("act"), t));
    return;
  case LaunchOpcode::Rope:
    add(spirv_library_kernel(inst), kernel_text(library_text("rope"), t));
    return;
  case LaunchOpcode::Attention:
    add(spirv_library_kernel(inst), kernel_text(library_text("attention"), t));
    return;
  case LaunchOpcode::Conv2d:
    add(spirv_library_kernel(inst), kernel_text(library_text("conv2d"), t));
    return;
  case LaunchOpcode::Axpy:
    add(spirv_library_kernel(inst), kernel_text(library_text("axpy"), t));
    return;
  }
}

/// Parsed and verified library kernels by name. The texts are ours and the build compiles
/// every instantiation (spirv_library_all, hologram-spirv-library-check), so a failure here
/// is a bug in hologram: Internal, naming the kernel.
Expected<Kernel> parse_library_kernel(const std::string &name, const std::string &text) {
  static std::mutex mutex;
  static std::map<std::string, Kernel> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) {
    DiagnosticEngine diags;
    auto m = parse_module(text, "<spirv library " + name + ">", diags);
    if (!m || !verify_module(*m, diags) || m->kernels.size() != 1)
      return Status{ErrorCode::Internal, "the SPIR-V library kernel " + name +
                                             " does not verify:\n" + diags.to_string()};
    it = cache.emplace(name, m->kernels[0]).first;
  }
  return it->second;
}

/// Adds the kernels `inst` launches that `seen` does not name yet, in first use order.
Status add_instruction_kernels(const Instruction &inst, std::set<std::string> &seen,
                               std::vector<Kernel> &out) {
  std::vector<Needed> kernels;
  needed(inst, kernels);
  for (const auto &n : kernels) {
    if (!seen.insert(n.name).second) continue;
    auto kernel = parse_library_kernel(n.name, n.text);
    if (!kernel) return kernel.status();
    out.push_back(std::move(*kernel));
  }
  return Status::ok();
}

/// Adds the device kernels of whole-launch kernel `k`'s instructions that `seen` does not
/// name yet.
Status add_kernels_of(const std::string &source, const Kernel &k, std::set<std::string> &seen,
                      std::vector<Kernel> &out) {
  for (const auto &inst : k.insts) {
    const auto &info = inst.info();
    if (!info.launch_level()) {
      // The scalar part runs on the host, which reaches device memory only through the
      // whole-launch instructions.
      // ld/st through buffer parameters become copies from and to the device.
      bool param_access = (inst.op == Opcode::Ld || inst.op == Opcode::St) &&
                          inst.operands[inst.op == Opcode::Ld ? 1 : 0].addr.base == AddrBase::Param;
      if (!param_access && ((info.flags & (kFlagReadsMemory | kFlagWritesMemory)) != 0 ||
                            info.family == OpFamily::Pool || info.family == OpFamily::Atlas))
        return kernel_error(ErrorCode::InvalidProgram, source, k, inst.loc,
                            "'" + std::string(info.mnemonic) +
                                "' in a whole-launch kernel is not supported by the SPIR-V back "
                                "end (the kernel's own code runs on the host, beside its library "
                                "operations)");
      continue;
    }
    if (inst.type == Type::F16 || inst.type == Type::BF16)
      return kernel_error(ErrorCode::InvalidProgram, source, k, inst.loc,
                          "'" + std::string(info.mnemonic) + "' on a storage type");
    if (auto st = add_instruction_kernels(inst, seen, out); !st) return st;
  }
  return Status::ok();
}

} // namespace

Expected<std::vector<Kernel>> spirv_library_kernels(const Module &module) {
  std::set<std::string> seen;
  std::vector<Kernel> out;
  for (const auto &k : module.kernels)
    if (k.is_launch_level())
      if (auto st = add_kernels_of(module.source_name, k, seen, out); !st) return st;
  return out;
}

Expected<std::vector<Kernel>> spirv_library_all() {
  std::vector<Kernel> out;
  std::set<std::string> seen;
  for (const auto &row : opcode_table()) {
    if (!row.launch_level()) continue;
    for (int t = 0; t < kNumTypes; ++t) {
      auto type = static_cast<Type>(t);
      if (!row.types.contains(type) || types::kStorage.contains(type)) continue;
      for (unsigned sub = 0; sub < std::max(1u, sub_count(row.sub)); ++sub) {
        Instruction inst;
        inst.op = row.opcode;
        inst.type = type;
        inst.sub = static_cast<uint8_t>(sub);
        if (auto st = add_instruction_kernels(inst, seen, out); !st) return st;
      }
    }
  }
  return out;
}

} // namespace hologram::codegen
