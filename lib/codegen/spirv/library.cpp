// The device library of the SPIR-V backends: whole-launch instructions as kernels written in
// the Atlas ISA (instantiated per element type). The runtime plans their launches
// (runtime/core/library_plan.cpp).
//
// Schedules: gemm and batched_gemm give a block of 16x16 lanes a tile of C, each lane 4x4
// elements or (f32, kGemmWide) 8x8 accumulated in registers of the element type over panels of
// A and B staged in shared memory; softmax, log_softmax, layernorm and rmsnorm give each row one
// block of 256 lanes that reduce in shared memory; reduce_all and dot reduce in two stages (16
// blocks per compute unit of the device, at least 256, then one); the others give each output
// element (or row, for gemv and attention) one lane. Other sums and products are accumulated in f64
// and rounded once, like the reference implementations. docs/isa.md states each one's error bound.
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

/// A library text for element type t: $TY its name, $SZ its size in bytes.
std::string kernel_text(std::string_view tmpl, Type t) {
  std::string s = replace_all(std::string(tmpl), "$TY", std::string(type_name(t)));
  return replace_all(s, "$SZ", std::to_string(type_size(t)));
}

/// library/tree.hasm: a reduction over the block's lanes of `val` into `out`.
std::string tree(const std::string &label, const std::string &op, Type type, const std::string &val,
                 const std::string &out) {
  std::string t = kernel_text(library_text("tree"), type);
  t = replace_all(t, "@L_", "@" + label + "_");
  t = replace_all(t, "$VAL", val);
  t = replace_all(t, "$OUT", out);
  return replace_all(t, "$OP", op);
}

/// The registers library/tree.hasm needs.
std::string tree_setup() {
  return "  cvt.u64.u32    r90, %lane.x\n  mov.imm.u32    r97, 1\n  mov.imm.u32    r98, 0\n";
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

std::string with_trees(std::string s, Type type) {
  s = replace_all(s, "$SETUP", tree_setup());
  s = replace_all(s, "$TREE_MAX", tree("tmax", "max", type, "r10", "r15"));
  s = replace_all(s, "$TREE_SUM", tree("tsum", "add", type, "r20", "r21"));
  s = replace_all(s, "$TREE_MEAN", tree("tmean", "add", type, "r10", "r15"));
  return replace_all(s, "$TREE_SQ", tree("tsq", "add", type, "r20", "r21"));
}

/// library/softmax.hasm for element type `t`. f64 computes each term e^(x - max) in f64 and
/// divides it by the sum. f32 computes the term with f32's exp of the exact difference: x - max
/// rounded to f32 and its rounding error (TwoSum), e^s (1 + err), 0 where e^s is 0 (so that an
/// infinite difference's NaN error does not enter); the terms are summed in f64, and each
/// output is the term times 1/sum (in f64, rounded to f32). The f32 bound is in docs/isa.md.
std::string softmax_text(Type t) {
  std::string row_setup, term, sum_setup, scale;
  if (t == Type::F64) {
    term = "  cvt.f64.f64    r14, r13\n"
           "  sub.f64        r16, r14, r15\n"
           "  exp.f64        r17, r16\n";
    scale = "  div.f64        r24, r44, r21\n";
  } else {
    row_setup = "  cvt.f32.f64    r40, r15\n";
    term = "  sub.f32        r30, r13, r40\n" // s = x - max, rounded
           "  sub.f32        r31, r30, r13\n" // TwoSum(x, -max): b' = s - x
           "  sub.f32        r32, r30, r31\n"
           "  sub.f32        r32, r13, r32\n" // x - (s - b')
           "  add.f32        r33, r31, r40\n"
           "  sub.f32        r33, r32, r33\n" // err = (x - (s - b')) + (-max - b')
           "  exp.f32        r34, r30\n"
           "  fma.f32        r35, r34, r33, r34\n"
           "  mov.imm.f32    r36, 0.0\n"
           "  seteq.f32      p3, r34, r36\n"
           "  sel.f32        r35, p3, r36, r35\n"
           "  cvt.f64.f32    r17, r35\n";
    sum_setup = "  mov.imm.f64    r42, 1.0\n"
                "  div.f64        r42, r42, r21\n"
                "  cvt.f32.f64    r43, r42\n";
    scale = "  mul.f32        r24, r44, r43\n";
  }
  std::string s = kernel_text(library_text("softmax"), t);
  s = replace_all(s, "$ROW_SETUP\n", row_setup);
  s = replace_all(s, "$TERM\n", term);
  s = replace_all(s, "$SUM_SETUP\n", sum_setup);
  s = replace_all(s, "$SCALE\n", scale);
  s = replace_all(s, "$TERM_T", t == Type::F64 ? "r17" : "r35");
  return with_trees(s, Type::F64);
}

/// library/gemm.hasm for element type `t` in `shape`, each lane P x P elements of C: its
/// accumulators are r100.. (row i, column j at r100 + P i + j), its values of A r170.., of B
/// r180..; each accumulator is stored by a library/gemm_store.hasm fragment.
std::string gemm_text(Type t, const spirv_library::GemmShape &shape) {
  const unsigned per_lane = shape.per_lane, depth = shape.depth, tile = shape.tile();
  const std::string ty(type_name(t));
  const std::string sz = std::to_string(type_size(t));
  // f32 rows are padded by four elements: lanes storing down a panel's column (those loading
  // along K, `depth` of them a row) then fall in different banks. f64 panels stay unpadded, so
  // both fit the 16 KiB every Vulkan device has.
  const unsigned row = tile + (t == Type::F32 ? 4 : 0); // elements
  const unsigned panel = depth * row;
  auto reg = [](unsigned r) { return "r" + std::to_string(r); };
  std::string zero, loads, fmas, stores;
  // A step's loads: A's values at element r41 + 16 i, B's at r42 + 16 j (r44, r45 scratch).
  for (const auto &[base, first] : {std::pair{"r41", 170u}, std::pair{"r42", 180u}})
    for (unsigned i = 0; i < per_lane; ++i) {
      loads += "  mov.imm.u64    r45, " + std::to_string(spirv_library::kTile * i) + "\n";
      loads += "  add.u64        r44, " + std::string(base) + ", r45\n";
      loads += "  lds." + ty + "         " + reg(first + i) + ", [shared + r44*" + sz + "]\n";
    }
  // A panel's loads and stores: each lane takes `per_step` elements of each operand, rows (or
  // columns) `lanes_per_k` apart; A's at k r22 + r21 into r72.., B's at r22 + r24 into r76..
  const unsigned lanes_per_k = spirv_library::kTile * spirv_library::kTile / depth;
  const unsigned per_step = tile / lanes_per_k;
  std::string prefetch, panel_stores;
  struct Operand {
    const char *name, *k, *x, *base, *limit, *ld, *kmajor, *batch, *shared;
    unsigned first;
  };
  // A is k-major when transposed (p5), B when not (p6).
  for (const Operand &o :
       {Operand{"A", "r21", "r20", "r16", "r1", "r4", "p5, r36, r37", "r18", "r25", 72},
        Operand{"B", "r24", "r23", "r17", "r2", "r5", "p6, r37, r36", "r19", "r27", 76}}) {
    prefetch += "  add.u64        r32, r22, " + std::string(o.k) + "\n";
    prefetch += "  setlt.u64      p1, r32, r3\n";
    for (unsigned q = 0; q < per_step; ++q) {
      std::string load(library_text("gemm_load"));
      for (const auto &[from, to] : std::initializer_list<std::pair<const char *, std::string>>{
               {"$Q", std::to_string(lanes_per_k * q)},
               {"$X", o.x},
               {"$BASE", o.base},
               {"$LIMIT", o.limit},
               {"$LD", o.ld},
               {"$KMAJOR", o.kmajor},
               {"$BATCH", o.batch},
               {"$DST", reg(o.first + q)},
               {"$OP", o.name}})
        load = replace_all(load, from, to);
      prefetch += load;
      panel_stores += "  mov.imm.u64    r45, " + std::to_string(lanes_per_k * q) + "\n";
      panel_stores += "  add.u64        r44, " + std::string(o.shared) + ", r45\n";
      panel_stores +=
          "  sts." + ty + "         [shared + r44*" + sz + "], " + reg(o.first + q) + "\n";
    }
  }
  for (unsigned i = 0; i < per_lane; ++i)
    for (unsigned j = 0; j < per_lane; ++j) {
      const std::string acc = reg(100 + per_lane * i + j);
      zero += "  mov." + ty + "        " + acc + ", r31\n";
      fmas += "  fma." + ty + "        " + acc + ", " + reg(170 + i) + ", " + reg(180 + j) + ", " +
              acc + "\n";
      std::string store(library_text("gemm_store"));
      store = replace_all(store, "@L_", "@c" + std::to_string(i) + "_" + std::to_string(j) + "_");
      store = replace_all(store, "$DI", std::to_string(spirv_library::kTile * i));
      store = replace_all(store, "$DJ", std::to_string(spirv_library::kTile * j));
      stores += replace_all(store, "$ACC", acc);
    }
  std::string s(library_text("gemm"));
  s = replace_all(s, "$SHARED", std::to_string(2 * panel * type_size(t)));
  s = replace_all(s, "$BPANEL", std::to_string(panel));
  s = replace_all(s, "$ROW", std::to_string(row));
  s = replace_all(s, "$TILE", std::to_string(tile));
  s = replace_all(s, "$BK", std::to_string(depth));
  s = replace_all(s, "$LR", std::to_string(lanes_per_k));
  s = replace_all(s, "$PREFETCH\n", prefetch);
  s = replace_all(s, "$PANEL_STORES\n", panel_stores);
  s = replace_all(s, "$P", std::to_string(per_lane));
  s = replace_all(s, "$ZERO\n", zero);
  s = replace_all(s, "$LOADS", loads);
  s = replace_all(s, "$FMAS\n", fmas);
  s = replace_all(s, ".kernel __hg_gemm_$TY", ".kernel " + spirv_library_gemm_kernel(t, shape));
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
    std::string opn(reduce_op_name(op));
    std::string s = kernel_text(library_text("reduce"), rt);
    s = replace_all(s, "$OP", opn);
    s = replace_all(s, "$IDENTITY", identity(op, rt));
    s = replace_all(s, "$SHARED", std::to_string(kRowBlock * type_size(rt)));
    s = replace_all(s, "$SETUP", tree_setup());
    s = replace_all(s, "$TREE", tree("tr", opn, rt, "r10", "r15"));
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
        replace_all(replace_all(kernel_text(library_text("dot"), t), "$SETUP", tree_setup()),
                    "$TREE", tree("tr", "add", Type::F64, "r10", "r15")));
    reduce(ReduceOp::Add, Type::F64);
    return;
  case LaunchOpcode::Gemm:
  case LaunchOpcode::BatchedGemm:
    add(spirv_library_gemm_kernel(t, spirv_library::kGemmNarrow),
        gemm_text(t, spirv_library::kGemmNarrow));
    if (t == Type::F32)
      add(spirv_library_gemm_kernel(t, spirv_library::kGemmWide),
          gemm_text(t, spirv_library::kGemmWide));
    return;
  case LaunchOpcode::Gemv:
    add(spirv_library_kernel(inst), kernel_text(library_text("gemv"), t));
    return;
  case LaunchOpcode::Softmax:
  case LaunchOpcode::LogSoftmax: add(spirv_library_kernel(inst), softmax_text(t)); return;
  case LaunchOpcode::LayerNorm:
  case LaunchOpcode::RmsNorm:
    add(spirv_library_kernel(inst), with_trees(kernel_text(library_text("norm"), t), Type::F64));
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

LibraryLaunchBounds spirv_library_launch_bounds(std::string_view name) {
  // An NVIDIA SM has 65536 registers: two blocks of 256 lanes leave a lane 128 (the wide
  // shape's 64 accumulators), three leave 85 (the narrow shape's 16). Left alone, ptxas gave
  // either more than 128, so one block ran on an SM, a quarter of the warps it can hold, too
  // few to hide the latency of the shared loads.
  for (const auto &[shape, blocks] :
       {std::pair{spirv_library::kGemmWide, 2u}, std::pair{spirv_library::kGemmNarrow, 3u}})
    for (isa::Type t : {isa::Type::F32, isa::Type::F64})
      if (name == spirv_library_gemm_kernel(t, shape))
        return {{spirv_library::kTile, spirv_library::kTile, 1}, blocks};
  // The norms (a block of 256 lanes a row): eight blocks on an SM, as many lanes as it holds,
  // leave a lane 32 registers; ptxas gave them 34, so six blocks ran (rmsnorm 4% slower on an
  // H200). softmax needs 40: held to 32 it spills, and ran slower.
  for (isa::Type t : {isa::Type::F32, isa::Type::F64}) {
    isa::Instruction norm; // rmsnorm and layernorm share the kernel
    norm.op = isa::Opcode::RmsNorm;
    norm.type = t;
    if (name == spirv_library_kernel(norm)) return {{spirv_library::kRowBlock, 1, 1}, 8};
  }
  return {};
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
