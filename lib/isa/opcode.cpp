// The instruction table (built from opcodes.def) and the names of sub-operations.
#include "hologram/isa/opcode.h"

#include <array>

namespace hologram::isa {

namespace {
using namespace types;
constexpr uint8_t L = kFlagLaunchLevel, M = kFlagReadsMemory, S = kFlagWritesMemory;

constexpr std::array<OpcodeInfo, kNumOpcodes> kTable = {{
#define HG_OPCODE(id, mn, fam, types, sub, sig, flags)                                             \
  {Opcode::id, #id, mn, OpFamily::fam, types, SubKind::sub, sig, static_cast<uint8_t>(flags)},
#include "hologram/isa/opcodes.def"
#undef HG_OPCODE
}};

constexpr std::array<std::string_view, 12> kCmp = {"eq",  "ne",  "lt",  "le",  "gt",  "ge",
                                                   "equ", "neu", "ltu", "leu", "gtu", "geu"};
constexpr std::array<std::string_view, 4> kScope = {"thread", "block", "device", "system"};
constexpr std::array<std::string_view, 7> kAtomicNames = {"add", "min", "max", "and",
                                                          "or",  "xor", "xchg"};
constexpr std::array<std::string_view, 4> kReduce = {"add", "mul", "min", "max"};
constexpr std::array<std::string_view, 21> kMapUnary = {
    "abs", "neg", "sqrt", "rsqrt",   "rcp", "exp",  "exp2",  "log",  "log2",  "log10", "sin",
    "cos", "tan", "tanh", "sigmoid", "erf", "relu", "floor", "ceil", "round", "trunc"};
constexpr std::array<std::string_view, 8> kMapBinary = {"add", "sub", "mul", "div",
                                                        "min", "max", "pow", "atan2"};

std::span<const std::string_view> sub_names(SubKind kind) {
  switch (kind) {
  case SubKind::None: return {};
  case SubKind::Cmp: return kCmp;
  case SubKind::Scope: return kScope;
  case SubKind::AtomicOp: return kAtomicNames;
  case SubKind::ReduceOp: return kReduce;
  case SubKind::MapUnary: return kMapUnary;
  case SubKind::MapBinary: return kMapBinary;
  }
  return {};
}

// Operand names for instructions whose operand lists are long enough to need them.
constexpr std::array<std::string_view, 13> kGemmNames = {
    "C", "A", "B", "M", "N", "K", "alpha", "beta", "lda", "ldb", "ldc", "transA", "transB"};
constexpr std::array<std::string_view, 9> kGemvNames = {"y",     "A",    "x",   "M",     "N",
                                                        "alpha", "beta", "lda", "transA"};
constexpr std::array<std::string_view, 17> kBatchedGemmNames = {
    "C",   "A",   "B",   "batch",   "M",       "N",       "K",      "alpha", "beta",
    "lda", "ldb", "ldc", "strideA", "strideB", "strideC", "transA", "transB"};
constexpr std::array<std::string_view, 4> kRowsNames = {"y", "x", "rows", "cols"};
constexpr std::array<std::string_view, 7> kLayerNormNames = {"y",    "x",    "gamma", "beta",
                                                             "rows", "cols", "eps"};
constexpr std::array<std::string_view, 6> kRmsNormNames = {"y",    "x",    "gamma",
                                                           "rows", "cols", "eps"};
constexpr std::array<std::string_view, 3> kPointwiseNames = {"y", "x", "n"};
constexpr std::array<std::string_view, 6> kRopeNames = {"y", "x", "cos", "sin", "rows", "dim"};
constexpr std::array<std::string_view, 11> kAttentionNames = {
    "out", "Q", "K", "V", "mask", "heads", "seq_q", "seq_k", "head_dim", "scale", "causal"};
constexpr std::array<std::string_view, 13> kConvNames = {
    "out", "in", "weight", "bias", "N", "C", "H", "W", "K", "KH", "KW", "stride", "pad"};
constexpr std::array<std::string_view, 4> kDotNames = {"result", "x", "y", "n"};
constexpr std::array<std::string_view, 4> kAxpyNames = {"y", "x", "n", "alpha"};
constexpr std::array<std::string_view, 3> kMapNames = {"dst", "src", "n"};
constexpr std::array<std::string_view, 4> kMap2Names = {"dst", "a", "b", "n"};
constexpr std::array<std::string_view, 3> kReduceAllNames = {"result", "src", "n"};
} // namespace

std::span<const OpcodeInfo> opcode_table() {
  return kTable;
}
const OpcodeInfo &info(Opcode op) {
  return kTable[static_cast<size_t>(op)];
}

std::string_view cmp_name(CmpCode c) {
  return kCmp[static_cast<size_t>(c)];
}
std::string_view scope_name(FenceScope s) {
  return kScope[static_cast<size_t>(s)];
}
std::string_view atomic_op_name(AtomicOp a) {
  return kAtomicNames[static_cast<size_t>(a)];
}
std::string_view reduce_op_name(ReduceOp r) {
  return kReduce[static_cast<size_t>(r)];
}
std::string_view map_unary_name(MapUnaryOp m) {
  return kMapUnary[static_cast<size_t>(m)];
}
std::string_view map_binary_name(MapBinaryOp m) {
  return kMapBinary[static_cast<size_t>(m)];
}

std::string_view sub_name(SubKind kind, uint8_t value) {
  auto names = sub_names(kind);
  return value < names.size() ? names[value] : std::string_view{};
}

std::optional<uint8_t> parse_sub(SubKind kind, std::string_view s) {
  auto names = sub_names(kind);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return static_cast<uint8_t>(i);
  return std::nullopt;
}

unsigned sub_count(SubKind kind) {
  return static_cast<unsigned>(sub_names(kind).size());
}

std::span<const std::string_view> operand_names(Opcode op) {
  switch (op) {
  case Opcode::Gemm: return kGemmNames;
  case Opcode::Gemv: return kGemvNames;
  case Opcode::BatchedGemm: return kBatchedGemmNames;
  case Opcode::Softmax:
  case Opcode::LogSoftmax: return kRowsNames;
  case Opcode::LayerNorm: return kLayerNormNames;
  case Opcode::RmsNorm: return kRmsNormNames;
  case Opcode::Silu:
  case Opcode::Gelu:
  case Opcode::GeluTanh: return kPointwiseNames;
  case Opcode::Rope: return kRopeNames;
  case Opcode::Attention: return kAttentionNames;
  case Opcode::Conv2d: return kConvNames;
  case Opcode::Dot: return kDotNames;
  case Opcode::Axpy: return kAxpyNames;
  case Opcode::Map: return kMapNames;
  case Opcode::Map2: return kMap2Names;
  case Opcode::ReduceAll: return kReduceAllNames;
  default: return {};
  }
}

} // namespace hologram::isa
