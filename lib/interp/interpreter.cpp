// The reference interpreter: lanes, scheduling with real barriers, memory, and the execution
// of every non-whole-launch instruction. Whole-launch operations are in library_ops.cpp.
#include "hologram/interp/interpreter.h"

#include "hologram/isa/fault.h"
#include "hologram/isa/handles.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/unreachable.h"
#include "machine.h"
#include "semantics.h"

#include <algorithm>

namespace hologram::interp {

namespace {

using namespace isa;
using detail::Region;

constexpr unsigned kRegFile = 256 + kNumSpecials - 4; // r0..r255 plus the other specials
constexpr unsigned kMaxCallDepth = 64;
constexpr uint64_t kMaxLanesPerBlock = 65536;
constexpr uint64_t kMaxSharedBytes = uint64_t{256} << 20;
using handle::kOffsetMask;
using handle::kScratchTag;
using handle::kTagShift;

enum class LaneState : uint8_t { Running, AtBarrier, Exited };

struct Lane {
  std::array<uint64_t, kRegFile> regs{};
  std::array<bool, kNumPreds> preds{};
  uint32_t pc = 0;
  std::vector<uint32_t> stack;
  LaneState state = LaneState::Running;
  uint32_t barrier = 0;
  uint32_t lx = 0, ly = 0, lz = 0;
  uint64_t linear = 0; ///< global linear lane id
  std::vector<std::vector<std::byte>> scratch;
  std::vector<bool> scratch_live;
  std::vector<uint32_t> scratch_at; ///< the pool.alloc that made each allocation
};

class Machine {
public:
  Machine(const Kernel &k, const LaunchConfig &launch, std::span<const ArgValue> args,
          AtlasState &atlas, const InterpOptions &opts)
      : k_(k), launch_(launch), args_(args), atlas_(atlas), opts_(opts),
        phase_at_start_(atlas.phase % atlas::kPhaseModulus),
        addressed_(handle::addressed_params(k)) {
    params_.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      params_.push_back({args[i].memory.data(), args[i].memory.size(), Region::Kind::Param, i});
    }
    // Pre-resolve label targets.
    targets_.resize(k.labels.size());
    for (size_t i = 0; i < k.labels.size(); ++i) targets_[i] = k.labels[i].target;
  }

  Status run() {
    if (k_.is_launch_level()) return run_launch_level();
    const uint64_t blocks = launch_.grid.count();
    for (uint64_t b = 0; b < blocks; ++b)
      if (auto st = run_block(b); !st) return st;
    atlas_.phase = static_cast<uint32_t>((phase_at_start_ + phase_advance_) % atlas::kPhaseModulus);
    return {};
  }

private:
  // ------------------------------------------------------------------------------------------
  // Scheduling

  void init_lane(Lane &l, uint64_t block_linear, uint32_t bx, uint32_t by, uint32_t bz,
                 uint64_t lane_linear) {
    const Dim3 &B = launch_.block, &G = launch_.grid;
    l.lx = static_cast<uint32_t>(lane_linear % B.x);
    l.ly = static_cast<uint32_t>((lane_linear / B.x) % B.y);
    l.lz = static_cast<uint32_t>(lane_linear / (uint64_t{B.x} * B.y));
    l.linear = block_linear * B.count() + lane_linear;
    auto set = [&](Special s, uint64_t v) { l.regs[special_reg(s)] = v; };
    set(Special::LaneX, l.lx);
    set(Special::LaneY, l.ly);
    set(Special::LaneZ, l.lz);
    set(Special::BlockX, bx);
    set(Special::BlockY, by);
    set(Special::BlockZ, bz);
    set(Special::BdimX, B.x);
    set(Special::BdimY, B.y);
    set(Special::BdimZ, B.z);
    set(Special::GdimX, G.x);
    set(Special::GdimY, G.y);
    set(Special::GdimZ, G.z);
    set(Special::Gid, l.linear);
    set(Special::GidX, uint64_t{bx} * B.x + l.lx);
    set(Special::GidY, uint64_t{by} * B.y + l.ly);
    set(Special::GidZ, uint64_t{bz} * B.z + l.lz);
    set(Special::Gsize, launch_.total_lanes());
  }

  Status run_block(uint64_t b) {
    const Dim3 &G = launch_.grid;
    auto bx = static_cast<uint32_t>(b % G.x), by = static_cast<uint32_t>((b / G.x) % G.y),
         bz = static_cast<uint32_t>(b / (uint64_t{G.x} * G.y));
    const uint64_t n = launch_.block.count();
    lanes_.assign(n, Lane{});
    for (uint64_t i = 0; i < n; ++i) init_lane(lanes_[i], b, bx, by, bz, i);
    shared_.assign(uint64_t{k_.shared_bytes} + launch_.shared_memory, std::byte{0});
    while (true) {
      bool any_running = false;
      for (auto &lane : lanes_) {
        if (lane.state != LaneState::Running) continue;
        any_running = true;
        if (auto st = step(lane); !st) return st;
      }
      if (any_running) continue;
      // No lane can run: all exited, or the waiting ones are released together.
      const Lane *waiting = nullptr, *exited = nullptr;
      for (const auto &lane : lanes_) {
        if (lane.state == LaneState::AtBarrier) {
          if (waiting && waiting->barrier != lane.barrier)
            return fail(lane, lane.pc, ErrorCode::LaunchFailed,
                        "lanes of one block wait at different barriers (bar.sync " +
                            std::to_string(k_.insts[waiting->pc].operands[0].imm) + " at line " +
                            std::to_string(k_.insts[waiting->pc].loc.line) + ")");
          waiting = &lane;
        } else {
          exited = &lane;
        }
      }
      if (!waiting) return {};
      if (exited)
        return fail(*waiting, waiting->pc, ErrorCode::LaunchFailed,
                    "bar.sync is not reached by every lane of the block: lane " +
                        lane_coordinates(launch_, exited->linear) + " has exited");
      for (auto &lane : lanes_) {
        lane.state = LaneState::Running;
        ++lane.pc;
      }
    }
  }

  Status run_launch_level() {
    lanes_.clear(); // (no Lane is built to be copied: its registers are 2 KiB)
    lanes_.emplace_back();
    LaunchConfig one;
    std::swap(one, launch_);
    init_lane(lanes_[0], 0, 0, 0, 0, 0);
    std::swap(one, launch_);
    Lane &lane = lanes_[0];
    while (lane.state == LaneState::Running)
      if (auto st = step(lane); !st) return st;
    atlas_.phase = static_cast<uint32_t>((phase_at_start_ + phase_advance_) % atlas::kPhaseModulus);
    return {};
  }

  // ------------------------------------------------------------------------------------------
  // Errors

  Status fail(const Lane &l, uint32_t pc, ErrorCode code, const std::string &msg) const {
    return {code, fault_site(k_, opts_.source_name, launch_, l.linear, pc) + ": " + msg};
  }

  // ------------------------------------------------------------------------------------------
  // Memory

  std::string region_name(const Region &r) const {
    switch (r.kind) {
    case Region::Kind::Param: return parameter_region(k_, r.id);
    case Region::Kind::Shared: return "shared memory";
    case Region::Kind::Class: return class_region(r.id);
    case Region::Kind::Boundary: return boundary_pool_region();
    case Region::Kind::Scratch: return scratch_region(k_, r.id).first;
    }
    unreachable_enum("Region::Kind");
  }

  /// Resolves an address to a pointer for `size` bytes; pool_op selects pool-handle bases.
  Status resolve(Lane &l, const Address &a, uint64_t size, bool pool_op, std::byte *&out,
                 uint64_t count = 1) {
    Region r;
    // The offset in 128-bit arithmetic: an index that wraps around 2^64 is out of bounds,
    // not a way back into the buffer.
    __extension__ typedef __int128 Wide;
    Wide offset = a.disp;
    if (a.index != kNoReg) offset += static_cast<Wide>(l.regs[a.index]) * a.scale;
    switch (a.base) {
    case AddrBase::Param:
    case AddrBase::Pool: r = params_[a.base_id]; break;
    case AddrBase::Shared: r = {shared_.data(), shared_.size(), Region::Kind::Shared}; break;
    case AddrBase::Class:
      r = {atlas_.boundary.data() + uint64_t{a.base_id} * atlas::kClassBytes, atlas::kClassBytes,
           Region::Kind::Class, a.base_id};
      break;
    case AddrBase::Boundary:
      r = {atlas_.boundary.data(), atlas::kBoundaryPoolBytes, Region::Kind::Boundary};
      break;
    case AddrBase::Reg: {
      uint64_t v = l.regs[a.base_id];
      uint64_t tag = v >> kTagShift;
      offset += static_cast<Wide>(v & kOffsetMask);
      if (tag >= kScratchTag) {
        uint64_t id = tag - kScratchTag;
        if (id >= l.scratch.size() || !l.scratch_live[id])
          return fail(l, l.pc, ErrorCode::OutOfBounds,
                      "use of a freed or invalid scratch pool handle");
        r = {l.scratch[id].data(), l.scratch[id].size(), Region::Kind::Scratch, l.scratch_at[id]};
      } else if (tag >= 1 && tag <= params_.size() &&
                 std::ranges::binary_search(addressed_, static_cast<uint32_t>(tag - 1)) &&
                 (!pool_op || k_.params[tag - 1].kind == ParamKind::Pool)) {
        r = params_[tag - 1];
      } else {
        return fail(l, l.pc, ErrorCode::OutOfBounds, invalid_handle(k_, l.pc, v));
      }
      break;
    }
    }
    uint64_t bytes = size * count;
    if (offset < 0 || offset > static_cast<Wide>(r.size) ||
        bytes > r.size - static_cast<uint64_t>(offset)) {
      // Words every backend uses (the compiled ones compute modulo 2^64).
      std::string where = offset > static_cast<Wide>(~uint64_t{0})
                              ? "an offset beyond 2^64"
                              : access_offset(static_cast<uint64_t>(offset));
      return fail(l, l.pc, ErrorCode::OutOfBounds,
                  out_of_bounds_access(region_name(r), where, bytes, r.size));
    }
    out = r.data + static_cast<uint64_t>(offset);
    return {};
  }

  static uint64_t load(const std::byte *p, unsigned size) {
    uint64_t v = 0;
    std::memcpy(&v, p, size); // little-endian host
    return v;
  }
  static void store(std::byte *p, unsigned size, uint64_t v) { std::memcpy(p, &v, size); }

  // ------------------------------------------------------------------------------------------
  // Execution

  Status check_class(Lane &l, uint64_t c) {
    if (c >= atlas::kNumClasses)
      return fail(l, l.pc, ErrorCode::LaunchFailed,
                  "class " + std::to_string(c) + " is out of range (0..95)");
    return {};
  }

  /// ld/st through a buffer parameter with InterpOptions::param_memory.
  Status param_access(Lane &l, const Instruction &inst) {
    bool is_store = inst.op == Opcode::St;
    const Address &a = inst.operands[is_store ? 0 : 1].addr;
    __extension__ typedef __int128 Wide;
    Wide off = a.disp;
    if (a.index != kNoReg) off += static_cast<Wide>(l.regs[a.index]) * a.scale;
    if (off < 0 || off > static_cast<Wide>(~uint64_t{0}))
      return fail(l, l.pc, ErrorCode::OutOfBounds,
                  "out-of-bounds access to %" + k_.params[a.base_id].name);
    uint64_t bits = is_store ? l.regs[inst.operands[1].index] : 0;
    if (auto st = opts_.param_memory(l.pc, is_store, a.base_id, static_cast<uint64_t>(off),
                                     type_size(inst.type), bits);
        !st)
      return fail(l, l.pc, st.code(), st.message());
    if (!is_store) l.regs[inst.operands[0].index] = bits;
    return {};
  }

  Status step(Lane &l) {
    if (l.pc >= k_.insts.size()) {
      l.state = LaneState::Exited;
      return {};
    }
    if (opts_.max_steps && ++steps_ > opts_.max_steps)
      return fail(l, l.pc, ErrorCode::StepLimitExceeded,
                  "the launch ran more than " + std::to_string(opts_.max_steps) + " instructions");
    const Instruction &inst = k_.insts[l.pc];
    const auto &ops = inst.operands;
    auto &R = l.regs;
    auto reg = [&](size_t i) { return R[ops[i].index]; };
    auto setr = [&](size_t i, uint64_t v) { R[ops[i].index] = v; };
    const Type t = inst.type;
    uint32_t next = l.pc + 1;

    if (opts_.param_memory && (inst.op == Opcode::Ld || inst.op == Opcode::St) &&
        ops[inst.op == Opcode::Ld ? 1 : 0].addr.base == AddrBase::Param) {
      if (auto st = param_access(l, inst); !st) return st;
      l.pc = next;
      return {};
    }

    switch (inst.op) {
    // Data movement ---------------------------------------------------------------------------
    case Opcode::Ld:
    case Opcode::Lds:
    case Opcode::PoolLd: {
      std::byte *p;
      if (auto st = resolve(l, ops[1].addr, type_size(t), inst.info().pool_access(), p); !st)
        return st;
      setr(0, load(p, type_size(t)));
      break;
    }
    case Opcode::St:
    case Opcode::Sts:
    case Opcode::PoolSt: {
      std::byte *p;
      if (auto st = resolve(l, ops[0].addr, type_size(t), inst.info().pool_access(), p); !st)
        return st;
      store(p, type_size(t), reg(1));
      break;
    }
    case Opcode::Mov: setr(0, reg(1)); break;
    case Opcode::MovImm: setr(0, ops[1].imm); break;
    case Opcode::Cvt: setr(0, sem::convert(t, inst.type2, reg(1))); break;
    case Opcode::Param: setr(0, args_[ops[1].index].bits); break;
    case Opcode::Addr: setr(0, handle::param(ops[1].index)); break;

    // Arithmetic, logic and math ---------------------------------------------------------------
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::Mul:
    case Opcode::Div:
    case Opcode::Rem:
    case Opcode::Mad:
    case Opcode::Fma:
    case Opcode::Fms:
    case Opcode::Min:
    case Opcode::Max:
    case Opcode::Abs:
    case Opcode::Neg:
    case Opcode::Rcp:
    case Opcode::Clamp:
    case Opcode::Lerp:
    case Opcode::Sign:
    case Opcode::Floor:
    case Opcode::Ceil:
    case Opcode::Round:
    case Opcode::Trunc:
    case Opcode::And:
    case Opcode::Or:
    case Opcode::Xor:
    case Opcode::Not:
    case Opcode::Shl:
    case Opcode::Shr:
    case Opcode::Exp:
    case Opcode::Exp2:
    case Opcode::Log:
    case Opcode::Log2:
    case Opcode::Log10:
    case Opcode::Sqrt:
    case Opcode::Rsqrt:
    case Opcode::Sin:
    case Opcode::Cos:
    case Opcode::Tan:
    case Opcode::Tanh:
    case Opcode::Sigmoid:
    case Opcode::Erf:
    case Opcode::Pow:
    case Opcode::Atan2: {
      bool div_by_zero = false;
      setr(0, compute(l, inst, div_by_zero));
      if (div_by_zero && opts_.check_div)
        return fail(l, l.pc, ErrorCode::DivisionByZero, "integer division by zero");
      break;
    }
    case Opcode::Set:
      l.preds[ops[0].index] = sem::with_type(t, [&](auto tag) {
        using T = decltype(tag);
        return sem::compare(static_cast<CmpCode>(inst.sub), sem::from_bits<T>(reg(1)),
                            sem::from_bits<T>(reg(2)));
      });
      break;
    case Opcode::Sel: setr(0, l.preds[ops[1].index] ? reg(2) : reg(3)); break;
    case Opcode::PAnd:
      l.preds[ops[0].index] = l.preds[ops[1].index] && l.preds[ops[2].index];
      break;
    case Opcode::POr: l.preds[ops[0].index] = l.preds[ops[1].index] || l.preds[ops[2].index]; break;
    case Opcode::PNot: l.preds[ops[0].index] = !l.preds[ops[1].index]; break;

    // Control ------------------------------------------------------------------------------------
    case Opcode::Bra:
      if (!inst.guard.present || l.preds[inst.guard.pred] != inst.guard.negate)
        next = targets_[ops[0].index];
      break;
    case Opcode::Call:
      if (l.stack.size() >= kMaxCallDepth)
        return fail(l, l.pc, ErrorCode::LaunchFailed, "call depth exceeds 64");
      l.stack.push_back(next);
      next = targets_[ops[0].index];
      break;
    case Opcode::Ret:
      if (l.stack.empty())
        return fail(l, l.pc, ErrorCode::LaunchFailed, "'ret' with an empty return stack");
      next = l.stack.back();
      l.stack.pop_back();
      break;
    case Opcode::Loop: {
      auto c = static_cast<uint32_t>(reg(0));
      if (c > 0) {
        setr(0, c - 1);
        next = targets_[ops[1].index];
      }
      break;
    }
    case Opcode::Exit: l.state = LaneState::Exited; return {};

    // Synchronisation ----------------------------------------------------------------------------
    case Opcode::BarSync:
      l.state = LaneState::AtBarrier;
      l.barrier = static_cast<uint32_t>(ops[0].imm);
      return {}; // pc advances when the barrier releases
    case Opcode::MemFence:
      break; // lanes of the interpreter share one coherent memory

    // Atomics ------------------------------------------------------------------------------------
    case Opcode::Atom:
    case Opcode::AtomCas: {
      std::byte *p;
      unsigned size = type_size(t);
      if (auto st = resolve(l, ops[1].addr, size, false, p); !st) return st;
      uint64_t old = load(p, size), v = reg(2), nv = old;
      if (inst.op == Opcode::AtomCas) {
        nv = old == reg(2) ? reg(3) : old;
      } else {
        switch (static_cast<AtomicOp>(inst.sub)) {
        case AtomicOp::Add: nv = arith_bits(ArithOpcode::Add, t, old, v); break;
        case AtomicOp::Min: nv = arith_bits(ArithOpcode::Min, t, old, v); break;
        case AtomicOp::Max: nv = arith_bits(ArithOpcode::Max, t, old, v); break;
        case AtomicOp::And: nv = old & v; break;
        case AtomicOp::Or: nv = old | v; break;
        case AtomicOp::Xor: nv = old ^ v; break;
        case AtomicOp::Xchg: nv = v; break;
        }
      }
      store(p, size, nv);
      setr(0, old);
      break;
    }

    // Atlas --------------------------------------------------------------------------------------
    case Opcode::ClsGet:
      if (reg(1) > 255)
        return fail(l, l.pc, ErrorCode::LaunchFailed,
                    "cls.get takes a byte (0..255), got " + std::to_string(reg(1)));
      setr(0, atlas::byte_to_class(static_cast<uint32_t>(reg(1))));
      break;
    case Opcode::Mirror:
      if (auto st = check_class(l, reg(1)); !st) return st;
      setr(0, atlas::mirror(static_cast<uint32_t>(reg(1))));
      break;
    case Opcode::UnityTest:
      if (auto st = check_class(l, reg(1)); !st) return st;
      l.preds[ops[0].index] = atlas::is_unity(static_cast<uint32_t>(reg(1)));
      break;
    case Opcode::NbrCount:
      if (auto st = check_class(l, reg(1)); !st) return st;
      setr(0, atlas::neighbours(static_cast<uint32_t>(reg(1))).count);
      break;
    case Opcode::NbrGet: {
      if (auto st = check_class(l, reg(1)); !st) return st;
      auto n = atlas::neighbours(static_cast<uint32_t>(reg(1)));
      setr(0, n.items[ops[2].imm % n.count]);
      break;
    }
    case Opcode::NbrLd:
    case Opcode::NbrSt: {
      bool is_ld = inst.op == Opcode::NbrLd;
      uint64_t c = is_ld ? reg(1) : reg(0);
      if (auto st = check_class(l, c); !st) return st;
      auto n = atlas::neighbours(static_cast<uint32_t>(c));
      Address a;
      a.base = AddrBase::Class;
      a.base_id = static_cast<uint16_t>(n.items[ops[is_ld ? 2 : 1].imm % n.count]);
      a.index = ops[is_ld ? 3 : 2].index;
      std::byte *p;
      if (auto st = resolve(l, a, type_size(t), false, p); !st) return st;
      if (is_ld)
        setr(0, load(p, type_size(t)));
      else
        store(p, type_size(t), reg(3));
      break;
    }
    case Opcode::ResAccum:
      if (auto st = check_class(l, reg(0)); !st) return st;
      atlas_.resonance[reg(0)] += bits_to_f64(reg(1));
      break;
    case Opcode::PhaseGet: setr(0, phase_at_start_); break;
    case Opcode::PhaseAdv:
      phase_advance_ = (phase_advance_ + ops[0].imm) % atlas::kPhaseModulus;
      break;
    case Opcode::BoundMap:
      if (auto st = check_class(l, reg(1)); !st) return st;
      if (reg(2) >= atlas::kPagesPerClass)
        return fail(l, l.pc, ErrorCode::LaunchFailed,
                    "page " + std::to_string(reg(2)) + " is out of range (0..47)");
      if (reg(3) >= atlas::kBytesPerPage)
        return fail(l, l.pc, ErrorCode::LaunchFailed,
                    "byte " + std::to_string(reg(3)) + " is out of range (0..255)");
      setr(0, atlas::bound_map(static_cast<uint32_t>(reg(1)), static_cast<uint32_t>(reg(2)),
                               static_cast<uint32_t>(reg(3))));
      break;

    // Reductions ---------------------------------------------------------------------------------
    case Opcode::ReduceReg: {
      uint64_t acc = reduce_identity(static_cast<ReduceOp>(inst.sub), t);
      for (uint64_t k = 0; k < ops[2].imm; ++k)
        acc = fold(static_cast<ReduceOp>(inst.sub), t, acc, R[ops[1].index + k]);
      setr(0, acc);
      break;
    }
    case Opcode::ReduceMem: {
      uint64_t n = reg(2);
      unsigned size = type_size(t);
      std::byte *p = nullptr;
      if (n && n * size / n != size)
        return fail(l, l.pc, ErrorCode::OutOfBounds, "element count overflows");
      if (auto st = resolve(l, ops[1].addr, size, false, p, n); !st) return st;
      uint64_t acc = reduce_identity(static_cast<ReduceOp>(inst.sub), t);
      for (uint64_t k = 0; k < n; ++k)
        acc = fold(static_cast<ReduceOp>(inst.sub), t, acc, load(p + k * size, size));
      setr(0, acc);
      break;
    }

    // Pools --------------------------------------------------------------------------------------
    case Opcode::PoolAlloc: {
      uint64_t id = l.scratch.size();
      l.scratch.emplace_back(ops[1].imm, std::byte{0});
      l.scratch_live.push_back(true);
      l.scratch_at.push_back(l.pc);
      setr(0, handle::scratch(id));
      break;
    }
    case Opcode::PoolFree: {
      uint64_t tag = reg(0) >> kTagShift;
      uint64_t id = tag - kScratchTag;
      if (tag < kScratchTag || id >= l.scratch.size() || !l.scratch_live[id])
        return fail(l, l.pc, ErrorCode::LaunchFailed, "pool.free of an invalid or freed handle");
      l.scratch_live[id] = false;
      l.scratch[id].clear();
      l.scratch[id].shrink_to_fit();
      break;
    }

    // Whole-launch operations --------------------------------------------------------------------
    case Opcode::Map:
    case Opcode::Map2:
    case Opcode::ReduceAll:
    case Opcode::Gemm:
    case Opcode::Gemv:
    case Opcode::BatchedGemm:
    case Opcode::Softmax:
    case Opcode::LogSoftmax:
    case Opcode::LayerNorm:
    case Opcode::RmsNorm:
    case Opcode::Silu:
    case Opcode::Gelu:
    case Opcode::GeluTanh:
    case Opcode::Rope:
    case Opcode::Attention:
    case Opcode::Conv2d:
    case Opcode::Dot:
    case Opcode::Axpy: {
      detail::LaunchView view{k_, args_};
      uint64_t result = 0;
      auto read_reg = [&](Reg r) { return R[r]; };
      auto st = opts_.launch_op ? opts_.launch_op(l.pc, inst, read_reg, result)
                                : detail::run_launch_op(inst, view, read_reg, result);
      if (!st) return fail(l, l.pc, st.code(), st.message());
      if (inst.op == Opcode::ReduceAll || inst.op == Opcode::Dot) setr(0, result);
      break;
    }
    }
    l.pc = next;
    return {};
  }

  /// The value of an Arith, integer Logic or Math instruction on lane l's registers.
  static uint64_t compute(const Lane &l, const Instruction &inst, bool &div_by_zero) {
    const auto &ops = inst.operands;
    auto src = [&](size_t i) { return i < ops.size() ? l.regs[ops[i].index] : uint64_t{0}; };
    return sem::compute(inst, src(1), src(2), src(3), div_by_zero);
  }

  /// x op y for the arithmetic of reductions and atomics (integer division cannot occur).
  static uint64_t arith_bits(ArithOpcode op, Type t, uint64_t a, uint64_t b) {
    return sem::with_type(t, [&](auto tag) -> uint64_t {
      using T = decltype(tag);
      bool div_by_zero = false;
      return sem::to_bits(
          sem::arith(op, sem::from_bits<T>(a), sem::from_bits<T>(b), T{}, div_by_zero));
    });
  }

  uint64_t fold(ReduceOp op, Type t, uint64_t acc, uint64_t v) const {
    static constexpr ArithOpcode kOps[] = {ArithOpcode::Add, ArithOpcode::Mul, ArithOpcode::Min,
                                           ArithOpcode::Max};
    return arith_bits(kOps[static_cast<int>(op)], t, acc, v);
  }

  const Kernel &k_;
  LaunchConfig launch_;
  std::span<const ArgValue> args_;
  AtlasState &atlas_;
  const InterpOptions &opts_;
  std::vector<Region> params_;
  std::vector<uint32_t> targets_;
  std::vector<Lane> lanes_;
  std::vector<std::byte> shared_;
  uint64_t steps_ = 0;
  uint32_t phase_at_start_;
  uint64_t phase_advance_ = 0;
  std::vector<uint32_t> addressed_; ///< the parameters an `addr` names (handle::)
};

Status check_launch(const Kernel &k, const LaunchConfig &launch, std::span<const ArgValue> args) {
  auto bad = [&](const std::string &m) {
    return Status(ErrorCode::InvalidArgument, "kernel '" + k.name + "': " + m);
  };
  if (launch.grid.count() == 0 || launch.block.count() == 0)
    return bad("launch with a zero-size grid or block dimension");
  // The interpreter keeps every lane of a block (2 KiB of registers each) and its shared
  // memory in host memory at once.
  if (launch.block.count() > kMaxLanesPerBlock)
    return bad("a block of " + std::to_string(launch.block.count()) +
               " lanes; the interpreter runs at most " + std::to_string(kMaxLanesPerBlock) +
               " lanes per block");
  if (uint64_t{k.shared_bytes} + launch.shared_memory > kMaxSharedBytes)
    return bad(
        "shared memory of " + std::to_string(uint64_t{k.shared_bytes} + launch.shared_memory) +
        " bytes per block; the interpreter supports at most " + std::to_string(kMaxSharedBytes));
  if (args.size() != k.params.size())
    return bad("expects " + std::to_string(k.params.size()) + " argument(s), got " +
               std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const Param &p = k.params[i];
    auto want = p.kind == ParamKind::Buffer ? ArgValue::Kind::Buffer
                : p.kind == ParamKind::Pool ? ArgValue::Kind::Pool
                                            : ArgValue::Kind::Scalar;
    if (args[i].kind != want) {
      static constexpr const char *kNames[] = {"a buffer", "a pool", "a scalar"};
      return bad("argument " + std::to_string(i + 1) + " (%" + p.name + ") must be " +
                 kNames[static_cast<int>(want)] + ", got " +
                 kNames[static_cast<int>(args[i].kind)]);
    }
    if (want == ArgValue::Kind::Buffer && args[i].memory.size() % type_size(p.type) != 0)
      return bad("buffer %" + p.name + " holds " + std::to_string(args[i].memory.size()) +
                 " bytes, not a whole number of " + std::string(type_name(p.type)) + " elements");
  }
  return {};
}

} // namespace

Status run_launch_instruction(const Kernel &kernel, const Instruction &inst,
                              std::span<const ArgValue> args,
                              const std::function<uint64_t(Reg)> &reg, uint64_t &result) {
  detail::LaunchView view{kernel, args};
  return detail::run_launch_op(inst, view, reg, result);
}

Status run_kernel(const Kernel &kernel, const LaunchConfig &launch, std::span<const ArgValue> args,
                  AtlasState &atlas, const InterpOptions &opts) {
  if (opts.verify) {
    DiagnosticEngine diags;
    if (!verify_kernel(kernel, opts.source_name, diags))
      return {ErrorCode::InvalidProgram, diags.to_string()};
  }
  if (auto st = check_launch(kernel, launch, args); !st) return st;
  try {
    Machine m(kernel, launch, args, atlas, opts);
    return m.run();
  } catch (const std::bad_alloc &) {
    return {ErrorCode::OutOfMemory,
            "kernel '" + kernel.name + "': the interpreter ran out of memory"};
  }
}

} // namespace hologram::interp
