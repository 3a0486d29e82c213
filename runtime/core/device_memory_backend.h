// The base of every backend whose buffers live in device memory (Vulkan, OpenCL, CUDA), with
// how they run whole-launch kernels: the kernel's scalar code on the host (the interpreter),
// each whole-launch instruction as the launches of device library kernels its plan makes.
#pragma once

#include "handle_table.h"
#include "host_atlas.h"
#include "idle_list.h"
#include "launch_args.h"
#include "library_paths.h"
#include "library_plan.h"
#include "spirv_status.h"

#include "hologram/interp/interpreter.h"

#include "hologram/codegen/spirv_abi.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace hologram::runtime {

/// What every backend whose buffers live in device memory shares (Vulkan, OpenCL, CUDA):
/// buffers, views and pools in handle tables, the copies with their range checks, the boundary
/// pool in device memory and the Atlas state copied in and out around the launches that use it.
/// `Memory` is the backend's device allocation, or a view of one: `size`, `write(offset, bytes)`,
/// `read(offset, bytes)`.
template <typename Memory> class DeviceMemoryBackend : public HostAtlasBackend {
public:
  BufferHandle allocate_buffer(uint64_t bytes) override {
    return {buffers_.insert(allocate(bytes, "buffer"))};
  }
  void free_buffer(BufferHandle b) override { buffers_.remove(b.id); }
  void copy_to_buffer(BufferHandle b, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(buffers_, "buffer", b.id, offset, data);
  }
  void copy_from_buffer(BufferHandle b, uint64_t offset, std::span<std::byte> out) override {
    copy_out(buffers_, "buffer", b.id, offset, out);
  }
  uint64_t buffer_size(BufferHandle b) override { return buffers_.get(b.id)->size; }
  BufferHandle create_sub_buffer(BufferHandle parent, uint64_t offset, uint64_t bytes) override {
    auto p = buffers_.get(parent.id);
    bytes = view_bytes(parent.id, p->size, offset, bytes, view_alignment());
    return {buffers_.insert(view(p, offset, bytes))};
  }
  HostBuffer wrap_host_memory(std::span<std::byte> memory) override {
    if (memory.empty() || !memory.data())
      throw Error(ErrorCode::InvalidArgument, "cannot wrap host memory of 0 bytes");
    bool shared = false;
    auto m = wrap(memory, shared);
    return {{buffers_.insert(std::move(m))}, shared};
  }

  PoolHandle allocate_pool(uint64_t bytes) override {
    return {pools_.insert(allocate(bytes, "pool"))};
  }
  void free_pool(PoolHandle p) override { pools_.remove(p.id); }
  void copy_to_pool(PoolHandle p, uint64_t offset, std::span<const std::byte> data) override {
    copy_in(pools_, "pool", p.id, offset, data);
  }
  void copy_from_pool(PoolHandle p, uint64_t offset, std::span<std::byte> out) override {
    copy_out(pools_, "pool", p.id, offset, out);
  }
  uint64_t pool_size(PoolHandle p) override { return pools_.get(p.id)->size; }

  LibraryPathCounts library_path_counts() const override { return paths_.snapshot(); }

  // The boundary pool lives in device memory, where kernels with class addresses use it.
  void copy_to_boundary(uint64_t offset, std::span<const std::byte> data) override {
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, data.size(), "a copy");
    boundary()->write(offset, data);
  }
  void copy_from_boundary(uint64_t offset, std::span<std::byte> out) override {
    check_range("the boundary pool", 0, atlas::kBoundaryPoolBytes, offset, out.size(), "a copy");
    boundary()->read(offset, out);
  }

protected:
  /// Status buffers that earlier launches left zero (nothing went wrong): a launch takes one or
  /// makes one, and gives it back when it reports nothing (allocating device memory on every
  /// launch costs a GPU driver tens of µs). At most as many as launches ever ran at once.
  IdleList<std::shared_ptr<Memory>> idle_status_;

  /// The Atlas state (SPEC §4) of one launch: kernels that read the phase or touch the state
  /// buffer run one at a time, under the Atlas lock, with resonance and phase copied in and
  /// out around them.
  struct AtlasLaunch {
    std::unique_lock<std::mutex> lock;
    bool state = false; ///< binds the state buffer (spirv_status::kAtlasWords u64 words)
    uint32_t phase = 0; ///< the phase at launch start
    std::vector<uint64_t> words;
  };
  /// `state`: the kernel reads or writes the state buffer; `phase`: it reads the phase.
  AtlasLaunch begin_atlas(bool state, bool phase) {
    AtlasLaunch a;
    a.state = state;
    if (!a.state && !phase) return a;
    a.lock = std::unique_lock(atlas_mutex_);
    interp::AtlasState &atlas = atlas_state();
    a.phase = atlas.phase;
    if (a.state) {
      a.words.assign(codegen::spirv_status::kAtlasWords, 0);
      std::memcpy(a.words.data(), atlas.resonance.data(), sizeof(atlas.resonance));
    }
    return a;
  }
  /// After a launch that finished: the resonance it accumulated, the phase it advanced.
  void end_atlas(AtlasLaunch &a) {
    if (!a.state) return;
    interp::AtlasState &atlas = atlas_state();
    std::memcpy(atlas.resonance.data(), a.words.data(), sizeof(atlas.resonance));
    atlas.phase =
        static_cast<uint32_t>((atlas.phase + a.words[atlas::kNumClasses]) % atlas::kPhaseModulus);
  }

  /// A zero-filled device allocation of `bytes` (the device's limits checked).
  virtual std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) = 0;
  /// The bytes [offset, offset + bytes) of `parent` (checked against it and the alignment).
  virtual std::shared_ptr<Memory> view(const std::shared_ptr<Memory> &parent, uint64_t offset,
                                       uint64_t bytes) = 0;
  /// A buffer over host memory: used in place (`shared` set) or a copy of it.
  virtual std::shared_ptr<Memory> wrap(std::span<std::byte> memory, bool &shared) = 0;
  /// DeviceInfo::view_alignment.
  [[nodiscard]] virtual uint64_t view_alignment() const = 0;
  /// Copies `bytes` bytes from byte `from_offset` of `from` to byte `to_offset` of `to` on the
  /// device, after the launches this thread issued before and before those it issues after.
  virtual void copy_on_device(Memory &from, uint64_t from_offset, Memory &to, uint64_t to_offset,
                              uint64_t bytes) = 0;
  /// Zero-fills scratch an earlier plan gave back, before any later launch or copy reads it,
  /// and after every earlier launch on any thread that may still use it.
  virtual void zero_scratch(Memory &m) {
    const std::vector<std::byte> zeros(m.size);
    m.write(0, zeros);
  }
  /// Whether a lane's values stay in registers across a barrier. GPUs and lavapipe keep them;
  /// PoCL's CPU devices run a work-group as loops over its lanes, split at each barrier, and
  /// keep what lives across one in memory, where gemm's wide tiles (64 accumulators a lane)
  /// ran at half the narrow ones' speed (docs/performance.md).
  [[nodiscard]] virtual bool keeps_registers_across_barriers() const { return true; }

  /// The memory of a buffer argument: its buffer, or a view of it.
  std::shared_ptr<Memory> buffer_arg(const KernelArg &a) {
    auto m = buffers_.get(a.handle);
    if (!a.is_view()) return m;
    return view(m, a.offset, arg_view_bytes(a, m->size, view_alignment()));
  }
  /// The size of a buffer argument (a view's size for a view).
  uint64_t arg_bytes(const KernelArg &a) {
    return arg_view_bytes(a, buffers_.get(a.handle)->size, view_alignment());
  }
  /// The bytes of the memory of argument `i` of a launch of `k`: its pool's, or its buffer's.
  uint64_t param_bytes(const isa::Kernel &k, std::span<const KernelArg> args, size_t i) {
    return k.params[i].kind == isa::ParamKind::Pool ? pools_.get(args[i].handle)->size
                                                    : arg_bytes(args[i]);
  }
  /// Throws the failure that the status words `w` of a launch of `k` record, if any
  /// (spirv_status.h); `source` is the file of the kernel's lines ("" when not known).
  void report_status(const isa::Kernel &k, std::string_view source, const LaunchConfig &launch,
                     std::span<const KernelArg> args, uint64_t shared_bytes,
                     const uint32_t (&w)[codegen::spirv_status::kWords],
                     const std::string &backend) {
    if (w[0] == codegen::spirv_status::Ok) return;
    report_spirv_status(
        {k, source, launch, [&](size_t i) { return param_bytes(k, args, i); }, shared_bytes}, w,
        backend);
  }
  /// The boundary pool in device memory, made on first use.
  std::shared_ptr<Memory> boundary() {
    std::lock_guard lock(boundary_mutex_);
    if (!boundary_) boundary_ = allocate(atlas::kBoundaryPoolBytes, "boundary pool");
    return boundary_;
  }

  /// The device library kernels of a module (entry points named codegen::kSpirvLibraryPrefix),
  /// by name.
  template <typename Program>
  using Library = std::map<std::string, std::shared_ptr<Program>, std::less<>>;
  /// A whole-launch kernel: its scalar code for the host, the device library kernels of its
  /// module that its instructions launch.
  template <typename Program> struct HostProgram {
    isa::Kernel kernel;
    std::shared_ptr<const Library<Program>> library;
    std::string where; ///< the module, in messages
    /// results_stored_on_device(kernel): reductions whose result goes from the device straight
    /// to where a store puts it.
    std::map<uint32_t, uint32_t> stored_on_device = results_stored_on_device(kernel);
  };

  /// One whole-launch instruction's plan as it runs: its scratch, given back at the end, and
  /// its last launch where that one is held back for the store that takes its result.
  template <typename Program> struct PlanRun {
    DeviceMemoryBackend &b;
    LibraryPlan plan;
    std::vector<BufferHandle> scratch;
    std::shared_ptr<Program> held; ///< the held-back launch's kernel, if one is held back
    LaunchConfig held_launch;
    std::vector<KernelArg> held_args; ///< its first writes the result (plan.result_scratch)

    explicit PlanRun(DeviceMemoryBackend &backend) : b(backend) {}
    PlanRun(const PlanRun &) = delete;
    PlanRun &operator=(const PlanRun &) = delete;
    ~PlanRun() {
      for (auto h : scratch) b.give_back_scratch(h);
    }
    /// The result register's bits (`type` the instruction's), read back from the device.
    uint64_t result(isa::Type type) {
      if (!plan.has_result) return 0;
      uint64_t bits = 0;
      b.copy_from_buffer(
          scratch[plan.result_scratch], 0,
          std::as_writable_bytes(std::span(&bits, 1)).first(isa::type_size(plan.result_type)));
      if (plan.result_type == isa::Type::F64 && type == isa::Type::F32)
        bits = std::bit_cast<uint32_t>(static_cast<float>(std::bit_cast<double>(bits)));
      return bits;
    }
  };

  template <typename Program> using PlanRuns = std::vector<std::unique_ptr<PlanRun<Program>>>;

  /// A whole-launch kernel: its code runs once on the host (the interpreter), each
  /// whole-launch instruction as the device launches of its plan.
  /// `run(program, launch, args)` runs one launch of a device library kernel.
  /// `ran` receives the plans that ran, each with its scratch: the scratch goes back to the
  /// cache when they are destroyed, which a backend whose launches may still be running on
  /// return (CUDA) does after it has waited for them.
  template <typename Program, typename Run>
  void run_host(const HostProgram<Program> &hp, const LaunchConfig &launch,
                std::span<const KernelArg> args, Run &&run, PlanRuns<Program> &ran) {
    std::vector<interp::ArgValue> iargs;
    iargs.reserve(args.size());
    for (const auto &a : args)
      iargs.push_back(a.kind == KernelArg::Kind::Scalar ? interp::ArgValue::scalar(a.bits)
                      : a.kind == KernelArg::Kind::Pool ? interp::ArgValue::pool({})
                                                        : interp::ArgValue::buffer({}));
    // Reductions whose last launch waits for the store that takes their result, by that
    // store's index (HostProgram::stored_on_device).
    std::map<uint32_t, PlanRun<Program> *> held;
    interp::InterpOptions opts;
    opts.verify = false;
    opts.launch_op = [&](uint32_t pc, const isa::Instruction &inst,
                         const std::function<uint64_t(isa::Reg)> &reg, uint64_t &result) {
      try {
        auto store = hp.stored_on_device.find(pc);
        PlanRun<Program> &r =
            run_library_op(hp, inst, reg, args, run, store != hp.stored_on_device.end(), ran);
        if (r.held) {
          paths_.count(inst.op, "result-on-device");
          held[store->second] = &r;
          result = 0; // only that store reads it, and it stores from the device
        } else {
          result = r.result(inst.type);
        }
      } catch (const Error &e) {
        return Status{e.code(), e.what()};
      }
      return Status::ok();
    };
    opts.param_memory = [&](uint32_t pc, bool store, unsigned p, uint64_t offset, unsigned size,
                            uint64_t &bits) {
      auto span = std::as_writable_bytes(std::span(&bits, 1)).first(size);
      try {
        // A view's element `offset` is its buffer's at view offset + `offset`: no sub-buffer
        // is made for one scalar access.
        const KernelArg &a = args[p];
        auto m = buffers_.get(a.handle);
        const uint64_t bytes = arg_view_bytes(a, m->size, view_alignment());
        if (offset > bytes || size > bytes - offset)
          return Status{ErrorCode::OutOfBounds,
                        "out-of-bounds access to %" + hp.kernel.params[p].name + ": offset " +
                            std::to_string(offset) + ", size " + std::to_string(size) +
                            ", but it holds " + std::to_string(bytes) + " bytes"};
        if (auto h = store ? held.find(pc) : held.end(); h != held.end()) {
          PlanRun<Program> &r = *h->second;
          held.erase(h);
          store_result(r, a, *m, a.offset + offset, size, run);
        } else if (store) {
          m->write(a.offset + offset, span);
        } else {
          m->read(a.offset + offset, span);
        }
      } catch (const Error &e) {
        return Status{e.code(), e.what()};
      }
      return Status::ok();
    };
    std::lock_guard lock(atlas_mutex_);
    if (auto st = interp::run_kernel(hp.kernel, launch, iargs, atlas_state(), opts); !st)
      throw Error(st.code(), st.message());
  }

  /// Runs the plan of `inst`, added to `ran` before its first launch (its scratch must outlive
  /// them even when a later one fails); with `hold_result`, its last launch waits in the
  /// PlanRun where that launch writes the result register's value, of the instruction's type,
  /// and nothing else (a reduction's second stage).
  template <typename Program, typename Run>
  PlanRun<Program> &run_library_op(const HostProgram<Program> &hp, const isa::Instruction &inst,
                                   const std::function<uint64_t(isa::Reg)> &reg,
                                   std::span<const KernelArg> args, Run &run, bool hold_result,
                                   PlanRuns<Program> &ran) {
    LibraryDevice device;
    device.reduce_blocks = reduce_blocks();
    device.compute_units = compute_units();
    device.wide_gemm = keeps_registers_across_barriers();
    PlanRun<Program> *r = ran.emplace_back(std::make_unique<PlanRun<Program>>(*this)).get();
    LibraryPlan &plan = r->plan;
    if (auto st = plan_library_op(hp.kernel, inst, reg, device, plan); !st)
      throw Error(st.code(), st.message());
    for (const auto &e : plan.extents) {
      const auto &p = hp.kernel.params[e.param];
      uint64_t size = isa::type_size(p.type), bytes = arg_bytes(args[e.param]);
      bool huge = e.elements > bytes / size;
      if (huge || e.elements * size > bytes)
        throw Error(ErrorCode::OutOfBounds,
                    std::string(e.role) + " %" + p.name + " needs " +
                        (e.elements == UINT64_MAX ? std::string("more than 2^64")
                                                  : std::to_string(e.elements) + " elements") +
                        ", but the buffer holds " + std::to_string(bytes) + " bytes");
    }
    // The plan's scratch, from the cache of those earlier plans gave back.
    r->scratch.reserve(plan.scratch.size());
    for (const LibraryScratch &s : plan.scratch) r->scratch.push_back(take_scratch(s));
    for (const auto &l : plan.launches) {
      std::vector<KernelArg> kargs;
      kargs.reserve(l.args.size());
      for (const auto &a : l.args)
        kargs.push_back(a.kind == LibraryArg::Kind::Param ? args[a.index]
                        : a.kind == LibraryArg::Kind::Scratch
                            ? KernelArg::buffer(r->scratch[a.index])
                            : KernelArg::scalar(a.type, a.bits));
      auto lib = hp.library->find(l.kernel);
      if (lib == hp.library->end())
        throw Error(ErrorCode::InvalidModule,
                    hp.where + " has no device library kernel '" + l.kernel + "' for '" +
                        std::string(inst.info().mnemonic) + "' of kernel '" + hp.kernel.name + "'");
      const auto &prog = lib->second;
      check_launch_args(prog->kernel, kargs, [&](const KernelArg &a) { return arg_bytes(a); });
      const bool last = &l == &plan.launches.back();
      if (hold_result && last && plan.has_result && plan.result_type == inst.type &&
          !l.args.empty() && l.args[0].kind == LibraryArg::Kind::Scratch &&
          l.args[0].index == plan.result_scratch) {
        r->held = prog;
        r->held_launch = l.launch;
        r->held_args = std::move(kargs);
      } else {
        run(*prog, l.launch, kargs);
      }
    }
    paths_.count(inst.op, plan.schedule);
    return *r;
  }

  /// The held-back launch of `r`, its result going to byte `at` of buffer `to` (argument `a`):
  /// written there through a view where the device allows one at that byte, else written to
  /// its scratch and copied there on the device.
  template <typename Program, typename Run>
  void store_result(PlanRun<Program> &r, const KernelArg &a, Memory &to, uint64_t at, unsigned size,
                    Run &run) {
    if (at % view_alignment() == 0) {
      r.held_args[0] = KernelArg::buffer({a.handle}, at, size);
      check_launch_args(r.held->kernel, r.held_args,
                        [&](const KernelArg &x) { return arg_bytes(x); });
      run(*r.held, r.held_launch, r.held_args);
      return;
    }
    run(*r.held, r.held_launch, r.held_args);
    copy_on_device(*buffers_.get(r.scratch[r.plan.result_scratch].id), 0, to, at, size);
  }

  /// The most blocks of a reduction's first stage: kReduceBlocksPerUnit per compute unit, so
  /// that a large GPU has a block on every unit many times over (loads in flight are what
  /// such a reduction waits for), at least kMinReduceBlocks.
  uint32_t reduce_blocks() {
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(compute_units() * codegen::spirv_library::kReduceBlocksPerUnit,
                             codegen::spirv_library::kMinReduceBlocks, uint64_t{1} << 16));
  }
  /// DeviceInfo::compute_units, asked of the device once.
  uint64_t compute_units() {
    uint64_t units = compute_units_.load(std::memory_order_relaxed);
    if (units == 0) {
      units = std::max<uint64_t>(1, device_info().compute_units);
      compute_units_.store(units, std::memory_order_relaxed);
    }
    return units;
  }

  /// Scratch for a library plan, as a buffer: memory an earlier plan gave back where there is
  /// some of that size (zeroed again where the plan needs zeros), else a new allocation.
  BufferHandle take_scratch(const LibraryScratch &need) {
    const uint64_t bytes = need.bytes;
    std::shared_ptr<Memory> m;
    {
      std::lock_guard lock(scratch_mutex_);
      if (auto it = scratch_cache_.find(bytes); it != scratch_cache_.end()) {
        m = std::move(it->second);
        scratch_cache_.erase(it);
      }
    }
    if (m) {
      if (need.zeroed) zero_scratch(*m);
    } else {
      m = allocate(bytes, "library scratch");
    }
    return {buffers_.insert(std::move(m))};
  }
  /// Keeps a plan's scratch for the next plan (small ones, a few of them), else frees it.
  void give_back_scratch(BufferHandle h) {
    std::shared_ptr<Memory> m = buffers_.get(h.id);
    buffers_.remove(h.id);
    std::lock_guard lock(scratch_mutex_);
    if (m->size <= kCachedScratchBytes && scratch_cache_.size() < kCachedScratches)
      scratch_cache_.emplace(m->size, std::move(m));
  }

  HandleTable<Memory> buffers_{"buffer"};
  HandleTable<Memory> pools_{"pool"};

  LibraryPathCounter paths_;

private:
  static void copy_in(HandleTable<Memory> &t, const char *what, uint64_t id, uint64_t offset,
                      std::span<const std::byte> data) {
    auto m = t.get(id);
    check_range(what, id, m->size, offset, data.size(), "a copy");
    m->write(offset, data);
  }
  static void copy_out(HandleTable<Memory> &t, const char *what, uint64_t id, uint64_t offset,
                       std::span<std::byte> out) {
    auto m = t.get(id);
    check_range(what, id, m->size, offset, out.size(), "a copy");
    m->read(offset, out);
  }

  std::mutex boundary_mutex_;
  std::shared_ptr<Memory> boundary_;
  /// Scratch the device library's plans gave back, by size: allocating and freeing device
  /// memory for each whole-launch instruction costs more than the small kernels it feeds.
  static constexpr uint64_t kCachedScratchBytes = uint64_t{1} << 20;
  static constexpr size_t kCachedScratches = 16;
  std::atomic<uint64_t> compute_units_{0};
  std::mutex scratch_mutex_;
  std::multimap<uint64_t, std::shared_ptr<Memory>> scratch_cache_;
};

} // namespace hologram::runtime
