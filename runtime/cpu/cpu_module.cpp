// Loading, dispatch and launch of compiled CPU modules (see cpu_module.h).
#include "cpu_module.h"
#include "../core/bundle_file.h"
#include "../core/descriptor_module.h"
#include "../core/launch_args.h"
#include "../core/small_array.h"

#include "library.h"

#include "hologram/artifact/bundle.h"
#include "hologram/isa/atlas.h"
#include "hologram/isa/fault.h"
#include "hologram/isa/handles.h"
#include "hologram/isa/text.h"
#include "hologram/isa/type_dispatch.h"
#include "hologram/runtime/error.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cpuid.h>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

namespace hologram::runtime {

// The code generator mirrors these layouts in LLVM IR (lib/codegen/llvm, AbiTypes).
static_assert(sizeof(void *) == 8 && offsetof(hg_cpu_launch, grid) == 16 &&
              offsetof(hg_cpu_launch, boundary) == 40 && offsetof(hg_cpu_launch, phase) == 64 &&
              offsetof(hg_cpu_launch, launch_op) == 72 && offsetof(hg_cpu_launch, runtime) == 88 &&
              offsetof(hg_cpu_launch, stream_bytes) == 96 && sizeof(hg_cpu_launch) == 104);
static_assert(offsetof(hg_cpu_worker, error) == 32 && sizeof(hg_cpu_error) == 40);

namespace {

// ---------------------------------------------------------------------------------------------
// CPU features

struct FeatureBit {
  std::string_view name;
  unsigned leaf, subleaf, reg, bit; // reg: 0 eax, 1 ebx, 2 ecx, 3 edx
  int os;                           // 0 none, 1 ymm state, 2 zmm state
};

constexpr FeatureBit kFeatures[] = {
    {"sse2", 1, 0, 3, 26, 0},         {"sse3", 1, 0, 2, 0, 0},      {"ssse3", 1, 0, 2, 9, 0},
    {"sse4.1", 1, 0, 2, 19, 0},       {"sse4.2", 1, 0, 2, 20, 0},   {"popcnt", 1, 0, 2, 23, 0},
    {"movbe", 1, 0, 2, 22, 0},        {"fma", 1, 0, 2, 12, 1},      {"avx", 1, 0, 2, 28, 1},
    {"f16c", 1, 0, 2, 29, 1},         {"avx2", 7, 0, 1, 5, 1},      {"bmi", 7, 0, 1, 3, 0},
    {"bmi2", 7, 0, 1, 8, 0},          {"avx512f", 7, 0, 1, 16, 2},  {"avx512dq", 7, 0, 1, 17, 2},
    {"avx512cd", 7, 0, 1, 28, 2},     {"avx512bw", 7, 0, 1, 30, 2}, {"avx512vl", 7, 0, 1, 31, 2},
    {"lzcnt", 0x80000001, 0, 2, 5, 0}};

uint64_t xcr0() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; // no OSXSAVE
  uint32_t lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

// ---------------------------------------------------------------------------------------------
// Variant selection

std::mutex g_isa_mutex;
std::string g_isa_override;
bool g_isa_overridden = false;

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    if (comma > start) out.emplace_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// The x86-64 micro-architecture level of a variant (2, 3 or 4).
int level_of(const hg_cpu_module_desc &d, uint32_t v) {
  std::string_view name = d.variant_names[v];
  if (name.starts_with("x86-64-v") && name.size() == 9) return name[8] - '0';
  return d.variant_widths[v] >= 16 ? 4 : d.variant_widths[v] >= 8 ? 3 : 2;
}

std::vector<std::string> missing_features(const hg_cpu_module_desc &d, uint32_t v) {
  std::vector<std::string> missing;
  for (const auto &f : split(d.variant_features[v]))
    if (!cpu_has_feature(f)) missing.push_back(f);
  return missing;
}

std::string join(const std::vector<std::string> &v) {
  std::string out;
  for (const auto &s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

/// The dispatcher's decision for one module: the best variant this CPU runs, capped or
/// forced by the request; an Error that names the missing features when none can run.
uint32_t choose_variant(const hg_cpu_module_desc &d, const std::string &origin) {
  std::vector<uint32_t> order(d.num_variants);
  for (uint32_t v = 0; v < d.num_variants; ++v) order[v] = v;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return level_of(d, a) != level_of(d, b) ? level_of(d, a) > level_of(d, b) : a < b;
  });
  std::string request = requested_cpu_isa();
  std::string names;
  for (uint32_t v = 0; v < d.num_variants; ++v)
    names += std::string(v ? ", " : "") + d.variant_names[v];
  if (!request.empty()) {
    const auto [want, cap] = parse_cpu_isa_request(request);
    for (uint32_t v : order) {
      bool exact = want == d.variant_names[v];
      if (!exact && (cap == 0 || level_of(d, v) > cap)) continue;
      auto missing = missing_features(d, v);
      if (missing.empty()) return v;
      if (exact)
        throw Error(ErrorCode::BackendUnavailable,
                    "module '" + origin + "': variant " + want + " (requested by " +
                        (g_isa_overridden ? std::string("set_cpu_isa") : "HOLOGRAM_CPU_ISA") +
                        ") needs CPU features this machine lacks: " + join(missing));
    }
    throw Error(ErrorCode::BackendUnavailable, "module '" + origin +
                                                   "' has no variant at or below " + want +
                                                   " that this CPU runs (it has " + names + ")");
  }
  for (uint32_t v : order)
    if (missing_features(d, v).empty()) return v;
  uint32_t least = order.back();
  throw Error(ErrorCode::BackendUnavailable,
              "module '" + origin + "' cannot run on this CPU: its least demanding variant " +
                  d.variant_names[least] + " needs " + join(missing_features(d, least)));
}

// ---------------------------------------------------------------------------------------------
// Launch services for generated code

struct LaunchContext {
  const CpuModule *module;
  LibraryPathCounter *paths;
  std::mutex error_mutex;
  std::string op_error;
  ErrorCode op_code = ErrorCode::LaunchFailed;
};

/// The arguments of a running launch resolved to memory, from the generated code's view of
/// them (CpuArgPointers).
std::vector<CpuArg> args_of(const isa::Kernel &k, const hg_cpu_launch &launch) {
  std::vector<CpuArg> args(k.params.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (k.params[i].kind == isa::ParamKind::Scalar) {
      std::memcpy(&args[i].bits, launch.args[i], sizeof(uint64_t));
    } else {
      args[i].data = launch.args[i];
      args[i].size = launch.sizes[i];
    }
  }
  return args;
}

int32_t launch_op(const hg_cpu_launch *launch, uint32_t kernel, uint32_t first, uint32_t count,
                  const uint64_t *regs, uint64_t *result) {
  auto *cx = static_cast<LaunchContext *>(launch->runtime);
  const isa::Kernel &k = cx->module->isa().kernels.at(kernel);
  const std::vector<CpuArg> args = args_of(k, *launch);
  LaunchOpsOutcome out = run_cpu_launch_ops(k, first, count, args, regs, *result,
                                            CpuLibraryEnv{cx->module->library_level(), cx->paths});
  if (out.status) return 0;
  std::lock_guard lock(cx->error_mutex);
  cx->op_error = out.status.message();
  cx->op_code = out.status.code();
  return static_cast<int32_t>(out.failed - first + 1);
}

uint64_t convert(uint64_t bits, uint32_t dst, uint32_t src) {
  return isa::convert_bits(static_cast<isa::Type>(dst), static_cast<isa::Type>(src), bits);
}

std::string region_name(const isa::Kernel &k, int32_t region) {
  if (region >= 0 && static_cast<size_t>(region) < k.params.size())
    return isa::parameter_region(k, static_cast<size_t>(region));
  if (region == HG_CPU_REGION_SHARED) return "shared memory";
  if (region == HG_CPU_REGION_BOUNDARY) return isa::boundary_pool_region();
  return "memory";
}

/// A fault in generated code, in the words of every backend (hologram/isa/fault.h).
Error describe(const CpuModule &m, uint32_t kidx, const LaunchConfig &launch, const hg_cpu_error &e,
               LaunchContext &cx, uint64_t region_size) {
  const isa::Kernel &k = m.isa().kernels.at(kidx);
  std::ostringstream os;
  os << isa::fault_site(k, m.desc().source_name ? m.desc().source_name : "", launch, e.lane,
                        e.inst);
  os << ": ";
  ErrorCode code = ErrorCode::LaunchFailed;
  switch (e.kind) {
  case HG_CPU_ERR_DIV_ZERO:
    code = ErrorCode::DivisionByZero;
    os << "integer division by zero";
    break;
  case HG_CPU_ERR_OUT_OF_BOUNDS:
    code = ErrorCode::OutOfBounds;
    if (e.region == HG_CPU_REGION_HANDLE) {
      os << isa::invalid_handle(k, e.inst, e.value);
      break;
    }
    if (e.region <= HG_CPU_REGION_SCRATCH_BASE) {
      auto [name, bytes] = isa::scratch_region(
          k, isa::handle::allocation_site(k, uint64_t(HG_CPU_REGION_SCRATCH_BASE - e.region)));
      os << isa::out_of_bounds_access(name, isa::access_offset(e.value), e.size, bytes);
      break;
    }
    if (e.region <= HG_CPU_REGION_CLASS_BASE) { // a class window, nbr.ld's too
      os << isa::out_of_bounds_access(
          isa::class_region(uint64_t(HG_CPU_REGION_CLASS_BASE - e.region)),
          isa::access_offset(e.value), e.size, atlas::kClassBytes);
      break;
    }
    os << isa::out_of_bounds_access(region_name(k, e.region), isa::access_offset(e.value), e.size,
                                    region_size);
    break;
  case HG_CPU_ERR_CLASS_RANGE: os << "class " << e.value << " is out of range (0..95)"; break;
  case HG_CPU_ERR_PAGE_RANGE: os << "page " << e.value << " is out of range (0..47)"; break;
  case HG_CPU_ERR_BYTE_RANGE: os << "byte " << e.value << " is out of range (0..255)"; break;
  case HG_CPU_ERR_CLS_BYTE: os << "cls.get takes a byte (0..255), got " << e.value; break;
  case HG_CPU_ERR_CALL_DEPTH: os << "call depth exceeds 64"; break;
  case HG_CPU_ERR_RET_EMPTY: os << "'ret' with an empty return stack"; break;
  case HG_CPU_ERR_BARRIER_MISMATCH: os << "lanes of one block wait at different barriers"; break;
  case HG_CPU_ERR_BARRIER_EXITED:
    os << "bar.sync is not reached by every lane of the block: some lanes have exited";
    break;
  case HG_CPU_ERR_LAUNCH_OP:
    code = cx.op_code;
    os << cx.op_error;
    break;
  default: os << "fault " << e.kind; break;
  }
  return Error(code, os.str());
}

struct Workspace {
  std::vector<std::byte> shared, scratch;
};

} // namespace

bool cpu_has_feature(std::string_view feature) {
  // $HOLOGRAM_CPU_DISABLE=avx512f,avx2 makes features absent: it tests fallbacks on a machine
  // that has them.
  if (const char *disabled = std::getenv("HOLOGRAM_CPU_DISABLE"))
    for (const auto &d : split(disabled))
      if (d == feature) return false;
  static const uint64_t os = xcr0();
  for (const auto &f : kFeatures) {
    if (f.name != feature) continue;
    unsigned r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count(f.leaf, f.subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
    if (!(r[f.reg] & (1u << f.bit))) return false;
    if (f.os == 1) return (os & 0x6) == 0x6;
    if (f.os == 2) return (os & 0xe6) == 0xe6;
    return true;
  }
  return false; // unknown features are never assumed
}

void set_cpu_isa(std::string_view isa) {
  std::lock_guard lock(g_isa_mutex);
  g_isa_override = std::string(isa);
  g_isa_overridden = !isa.empty();
}

CpuIsaRequest parse_cpu_isa_request(std::string_view request) {
  CpuIsaRequest r;
  r.variant = request.size() == 2 && request[0] == 'v' ? "x86-64-" + std::string(request)
                                                       : std::string(request);
  if (r.variant.starts_with("x86-64-v") && r.variant.size() == 9) r.cap = r.variant[8] - '0';
  return r;
}

std::string requested_cpu_isa() {
  std::lock_guard lock(g_isa_mutex);
  if (g_isa_overridden) return g_isa_override;
  const char *env = std::getenv("HOLOGRAM_CPU_ISA");
  std::string v = env ? env : "";
  return v == "auto" || v == "native" ? "" : v;
}

namespace {

/// The largest data (or unified) cache Linux reports for cpu0 (sysfs), else 32 MiB. sysconf's
/// _SC_LEVEL3_CACHE_SIZE is not used: in virtual machines it reports the whole socket's cache.
uint64_t last_level_cache_bytes() {
  uint64_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream type(dir + "type"), size(dir + "size");
    std::string t, text;
    if (!(type >> t) || !(size >> text)) break;
    if (t == "Instruction") continue;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{}) continue;
    const std::string_view unit(end, text.data() + text.size() - end);
    const int shift = unit == "K"    ? 10
                      : unit == "M"  ? 20
                      : unit == "G"  ? 30
                      : unit.empty() ? 0
                                     : -1;
    if (shift >= 0) best = std::max(best, v << shift);
  }
  return best ? best : uint64_t{32} << 20;
}

constexpr uint64_t kStreamUnset = ~uint64_t{0};
std::atomic<uint64_t> g_stream_bytes{kStreamUnset};
/// The default from HOLOGRAM_CPU_STREAM_BYTES or the cache size, once known.
std::atomic<uint64_t> g_stream_default{kStreamUnset};

/// The default, read once (cpu_stream_bytes runs on every launch, and getenv scans the
/// environment); a malformed variable is an error on every launch.
[[gnu::noinline, gnu::cold]] uint64_t stream_bytes_default() {
  static const std::pair<uint64_t, std::string> from_env =
      []() -> std::pair<uint64_t, std::string> {
    const char *env = std::getenv("HOLOGRAM_CPU_STREAM_BYTES");
    if (!env) return {last_level_cache_bytes(), ""};
    uint64_t v = 0;
    const char *end = env + std::strlen(env);
    auto [stop, ec] = std::from_chars(env, end, v);
    if (ec != std::errc{} || stop != end || stop == env)
      return {0, std::string("HOLOGRAM_CPU_STREAM_BYTES='") + env +
                     "' is not a byte count (a decimal number; 0 turns non-temporal stores off)"};
    return {v, ""};
  }();
  if (!from_env.second.empty()) throw Error(ErrorCode::InvalidArgument, from_env.second);
  const uint64_t v = std::min(from_env.first, kStreamUnset - 1);
  g_stream_default.store(v, std::memory_order_relaxed);
  return v;
}

/// cpu_stream_bytes(), inlined into every launch.
[[gnu::always_inline]] inline uint64_t stream_bytes_now() {
  if (uint64_t v = g_stream_bytes.load(std::memory_order_relaxed); v != kStreamUnset) return v;
  if (uint64_t v = g_stream_default.load(std::memory_order_relaxed); v != kStreamUnset) return v;
  return stream_bytes_default();
}

} // namespace

uint64_t cpu_stream_bytes() {
  return stream_bytes_now();
}

void set_cpu_stream_bytes(std::optional<uint64_t> bytes) {
  g_stream_bytes = bytes ? std::min(*bytes, kStreamUnset - 1) : kStreamUnset;
}

std::shared_ptr<CpuModule> CpuModule::load_file(const std::string &path) {
  if (artifact::is_bundle_file(path)) return load_bundle(path);
  return open_shared_object(path, path, -1);
}

std::shared_ptr<CpuModule> CpuModule::open_shared_object(const std::string &dl_path,
                                                         const std::string &origin, int fd) {
  std::shared_ptr<CpuModule> m(new CpuModule);
  m->origin_ = origin;
  m->fd_ = fd;
  m->dl_ = dlopen(dl_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->dl_) {
    const char *why = dlerror();
    throw Error(ErrorCode::InvalidModule,
                "cannot load '" + origin + "': " + (why ? why : "dlopen failed"));
  }
  auto *desc = static_cast<const hg_cpu_module_desc *>(dlsym(m->dl_, "hologram_module"));
  if (!desc)
    throw Error(ErrorCode::InvalidModule,
                "'" + origin +
                    "' is not a hologram module (no 'hologram_module' symbol; make it "
                    "with hologram-cc --emit=shared or --emit=bundle)");
  m->init(desc);
  return m;
}

std::shared_ptr<CpuModule> CpuModule::load_bundle(const std::string &path) {
  artifact::Bundle bundle = read_bundle_file(path);
  const auto *cpu = bundle.find_payload(artifact::kPayloadCpu);
  if (!cpu) {
    std::string targets;
    for (const auto &t : bundle.options.targets) targets += (targets.empty() ? "" : ", ") + t;
    throw Error(ErrorCode::InvalidModule,
                "bundle '" + path + "' holds no code for the CPU backend (its targets: " + targets +
                    ")");
  }
  if (cpu->abi_version != HG_CPU_ABI_VERSION)
    throw Error(ErrorCode::InvalidModule,
                "bundle '" + path + "': its CPU payload uses CPU ABI version " +
                    std::to_string(cpu->abi_version) + "; this runtime implements version " +
                    std::to_string(HG_CPU_ABI_VERSION) + " (recompile it with this hologram-cc)");
  // dlopen needs a file: an anonymous in-memory one, open while the module is loaded so its
  // /proc path names no other module meanwhile.
  int fd = memfd_create("hologram-bundle", MFD_CLOEXEC);
  if (fd < 0)
    throw Error(ErrorCode::Internal, "memfd_create failed: " + std::string(strerror(errno)));
  for (size_t done = 0; done < cpu->bytes.size();) {
    ssize_t n = write(fd, cpu->bytes.data() + done, cpu->bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      throw Error(ErrorCode::Internal, "writing the CPU payload of '" + path + "' failed");
    }
    done += static_cast<size_t>(n);
  }
  auto m = open_shared_object("/proc/self/fd/" + std::to_string(fd), path, fd);
  if (!m->isa_.same_as(bundle.module))
    throw Error(ErrorCode::InvalidModule, "bundle '" + path +
                                              "': the kernels of its CPU payload differ from "
                                              "its ISA payload");
  return m;
}

std::shared_ptr<CpuModule> CpuModule::from_descriptor(const hg_cpu_module_desc *desc,
                                                      std::string origin,
                                                      std::shared_ptr<const void> owner) {
  if (!desc) throw Error(ErrorCode::InvalidArgument, "null module descriptor");
  std::shared_ptr<CpuModule> m(new CpuModule);
  m->owner_ = std::move(owner);
  m->origin_ = std::move(origin);
  m->init(desc);
  return m;
}

void CpuModule::init(const hg_cpu_module_desc *desc) {
  if (desc->abi_version != HG_CPU_ABI_VERSION)
    throw Error(ErrorCode::InvalidModule,
                "module '" + origin_ + "' was compiled for CPU ABI version " +
                    std::to_string(desc->abi_version) + "; this runtime implements version " +
                    std::to_string(HG_CPU_ABI_VERSION) + " (recompile it with this hologram-cc)");
  desc_ = desc;
  isa_ = decode_descriptor_module(*desc, "module '" + origin_ + "'");
  if (isa_.kernels.size() != desc->num_kernels)
    throw Error(ErrorCode::InvalidModule,
                "module '" + origin_ +
                    "' carries damaged kernel metadata: " + std::to_string(isa_.kernels.size()) +
                    " kernels for " + std::to_string(desc->num_kernels) + " entries");
  if (desc->num_variants == 0)
    throw Error(ErrorCode::InvalidModule, "module '" + origin_ + "' has no code variant");
  variant_ = choose_variant(*desc, origin_);
  lane_costs_ = std::make_unique<LaneCost[]>(desc->num_kernels);
  library_level_ = runtime::library_level(desc->variant_features[variant_]);
}

CpuModule::~CpuModule() {
  if (dl_) dlclose(dl_);
  if (fd_ >= 0) close(fd_);
}

uint32_t CpuModule::kernel_index(std::string_view name) const {
  for (uint32_t i = 0; i < isa_.kernels.size(); ++i)
    if (isa_.kernels[i].name == name) return i;
  std::string names;
  for (uint32_t i = 0; i < isa_.kernels.size(); ++i)
    names += (i ? ", " : "") + isa_.kernels[i].name;
  throw Error(ErrorCode::InvalidArgument, "module '" + origin_ + "' has no kernel '" +
                                              std::string(name) + "' (it has " + names + ")");
}

namespace {
/// Below this much single-thread work a launch runs on the calling thread: about twice what
/// sharing it costs. On vector_add 2^16 (2026-11-24, 2 cores), 7.8 us on one thread took
/// 5.2 us on two, so a launch pays about 1.3 us for a second thread that is awake (the pool's
/// workers spin a while after each job); one that sleeps joins late and the caller takes its
/// tasks meanwhile.
constexpr uint64_t kInlineWorkPicoseconds = 5'000'000; // 5 us
/// Below this much single-thread work a parallel launch is one task per thread, contiguous
/// shares of its blocks: the caller takes the first and the woken workers the others, the
/// same each time, so that a loop of such launches finds each share in the cache of the
/// thread that ran it last. Eight tasks a thread, claimed as each thread comes free, land on
/// another core from one launch to the next: vector_add 2^16 on 2 cores (2026-11-28, an
/// AVX2 EPYC, a harness alternating the two builds) took 7.7-7.9 us in 16 tasks, 6.0-7.0 in
/// 2. Above it the launch's data leaves the caches anyway, and more tasks balance a thread
/// that the system holds back.
constexpr uint64_t kShareWorkPicoseconds = 100'000'000; // 100 us
/// A kernel's lane cost is best measured on the calling thread: a parallel launch's time
/// holds the workers' wake-up, and its tasks' times the cache lines that move between cores
/// as tasks land on another core than last time, either of which would make a small launch
/// look dear enough to stay parallel. So a launch that is due for timing runs on the calling
/// thread if it is near the line between the two: under kProbeWorkPicoseconds of work at the
/// known cost (so a cost measured too high comes down again), or, before any cost is known,
/// at most kProbeLanes lanes. Any other goes parallel and times each of its tasks: the fastest
/// task's time a lane is the cost. (Until 2026-12-06 such launches went untimed, so a kernel
/// whose launches all had more than kProbeLanes lanes never had a cost and ran every launch
/// in eight tasks a thread: saxpy of 2^17 floats on 2 cores took 12.5 us a launch against 7.8
/// on one thread; and every 32nd launch of up to 40 us of work ran on one thread, which cost
/// saxpy of 2^18 floats on 2 threads 14.6-15.7 us a launch against 11.2-13.3 with this
/// bound, in a harness of its own.) One timing can at most quadruple the cost: a launch
/// preempted by the system, or a cold first one, does not send the next ones parallel for
/// long.
constexpr uint64_t kProbeLanes = uint64_t{1} << 16;
constexpr uint64_t kProbeWorkPicoseconds = 2 * kInlineWorkPicoseconds;
} // namespace

void launch_cpu_kernel(const CpuModule &m, uint32_t kidx, const LaunchConfig &config,
                       std::span<const CpuArg> args, interp::AtlasState *atlas,
                       LibraryPathCounter *paths) {
  const isa::Kernel &k = m.isa().kernels[kidx];
  SmallArray<void *, 16> pointers(args.size());
  SmallArray<uint64_t, 16> sizes(args.size()), bits(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    bits[i] = args[i].bits;
    pointers[i] = k.params[i].kind == isa::ParamKind::Scalar ? &bits[i] : args[i].data;
    sizes[i] = args[i].size;
  }
  launch_cpu_kernel(m, kidx, config, CpuArgPointers{pointers.data(), sizes.data()}, atlas, paths);
}

namespace {

/// One thread's time a lane for `lanes` lanes run since `started`, in picoseconds (at least 1).
uint64_t lane_picoseconds(std::chrono::steady_clock::time_point started, uint64_t lanes) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  return std::max<uint64_t>(1, static_cast<uint64_t>(ns) * 1000 / std::max<uint64_t>(1, lanes));
}

/// Runs the blocks of launch `p` in `tasks` tasks on the thread pool; returns whether a block
/// failed, with `fail` the error of the first block that did. Apart from run_cpu_launch, whose
/// one-task launches do without any of this.
/// Where `fastest` is given, each task is timed and `fastest` keeps the lowest time a lane
/// of any task, in picoseconds (untouched by a launch that fails).
[[gnu::noinline]] bool run_tasks(const PreparedCpuLaunch &p, uint64_t tasks, const hg_cpu_launch &L,
                                 const std::string &kernel_name, hg_cpu_error &fail,
                                 std::atomic<uint64_t> *fastest = nullptr) {
  const uint64_t blocks = p.blocks, lanes = p.lanes, shared = p.shared, scratch = p.scratch;
  std::mutex fail_mutex;
  uint64_t fail_block = UINT64_MAX;
  std::atomic<bool> any_failed{false};
  auto run = [&](size_t t) {
    if (any_failed.load(std::memory_order_relaxed)) return;
    hg_cpu_worker w{};
    if (p.workspace) {
      thread_local Workspace ws;
      if (ws.shared.size() < shared) ws.shared.resize(shared);
      if (ws.scratch.size() < scratch) ws.scratch.resize(scratch);
      w.shared = ws.shared.data();
      w.shared_size = shared;
      // Saved chunk states hold whole vectors: the generated code expects 64-byte
      // alignment (hg_cpu_scratch_bytes leaves room for it).
      auto base = reinterpret_cast<uintptr_t>(ws.scratch.data());
      auto aligned =
          (base + HG_CPU_SCRATCH_ALIGNMENT - 1) & ~uintptr_t{HG_CPU_SCRATCH_ALIGNMENT - 1};
      w.scratch = ws.scratch.data() + (aligned - base);
      w.scratch_size = scratch - (aligned - base);
    }
    // Task i starts at block floor(blocks * i / tasks), computed so that nothing overflows
    // (tasks is small; blocks * i may not fit in 64 bits).
    auto split = [&](uint64_t i) { return blocks / tasks * i + blocks % tasks * i / tasks; };
    const uint64_t first = tasks == 1 ? 0 : split(t), end = tasks == 1 ? blocks : split(t + 1);
    const auto started =
        fastest ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const bool task_failed = p.fn(&L, &w, first, end) != 0;
    if (fastest && !task_failed) {
      const uint64_t ps = lane_picoseconds(started, (end - first) * lanes);
      for (uint64_t seen = fastest->load(std::memory_order_relaxed);
           ps < seen && !fastest->compare_exchange_weak(seen, ps, std::memory_order_relaxed);) {
      }
    }
    if (task_failed) {
      any_failed = true;
      std::lock_guard lock(fail_mutex);
      uint64_t b = w.error.lane / lanes;
      if (b < fail_block) {
        fail_block = b;
        fail = w.error;
      }
    }
  };
  try {
    parallel_for(tasks, run);
  } catch (const std::bad_alloc &) {
    throw Error(ErrorCode::OutOfMemory,
                "kernel '" + kernel_name + "': out of memory for block scratch");
  }
  return any_failed.load();
}

/// What running a launch of kernel `kidx` needs, for a configuration that is valid.
PreparedCpuLaunch prepared(const CpuModule &m, uint32_t kidx, const LaunchConfig &launch) {
  const hg_cpu_kernel_desc &kd = m.desc().kernels[kidx];
  const uint32_t variant = m.variant();
  PreparedCpuLaunch p{launch, kd.variants[variant], launch.grid.count(), launch.block.count(), 0, 0,
                      false};
  p.shared = uint64_t{kd.shared_bytes} + launch.shared_memory;
  p.scratch = hg_cpu_scratch_bytes(&kd, variant, m.desc().variant_widths[variant], p.lanes);
  // A kernel with no shared memory, chunk state or pool memory runs without a workspace
  // (its code reads none: hg_cpu_scratch_bytes is then only the room for alignment).
  p.workspace = p.shared > 0 || p.scratch > HG_CPU_SCRATCH_ALIGNMENT;
  return p;
}

} // namespace

namespace {

/// How a launch runs: in how many tasks, and whether it is timed (on the calling thread when
/// one task runs it, else each task).
struct TaskChoice {
  uint64_t tasks;
  bool due;
};

/// Enough tasks to balance uneven blocks, few enough to keep per-task costs small; one thread
/// runs every block in one task. A launch whose whole work, at the lanes' measured cost, is
/// below what waking the workers costs runs on the calling thread. Every 32nd launch (and any
/// before a cost is known, and the one after a warm-up) is due for timing, which keeps the
/// cost current; one-block launches are not, nor launches while one thread runs every launch
/// (which uses no cost). Counts the launch.
[[gnu::always_inline]] inline TaskChoice
choose_tasks(const CpuModule &m, uint32_t kidx, const PreparedCpuLaunch &p, unsigned threads) {
  const uint64_t blocks = p.blocks;
  TaskChoice c{threads == 1 ? 1 : std::min<uint64_t>(blocks, uint64_t{threads} * 8), false};
  if (c.tasks > 1) {
    CpuModule::LaneCost &cost = m.lane_cost(kidx);
    const uint64_t known = cost.picoseconds.load(std::memory_order_relaxed);
    // The count is approximate (a load and a store, no read-modify-write on every launch):
    // threads launching the same kernel at once may lose counts, which only moves the next
    // timing.
    const uint32_t n = cost.launches.load(std::memory_order_relaxed);
    cost.launches.store(n + 1, std::memory_order_relaxed);
    const uint8_t state = cost.state.load(std::memory_order_relaxed);
    c.due = known == 0 || n % 32 == 0 || (state & CpuModule::LaneCost::kProbeNext);
    // The work at the known cost, saturated (a lane's cost times 2^62 lanes may overflow);
    // unbounded while no cost is known.
    const uint64_t total_lanes = blocks * p.lanes;
    uint64_t work = UINT64_MAX;
    if (known != 0 && __builtin_mul_overflow(known, total_lanes, &work)) work = UINT64_MAX;
    const bool probe =
        c.due && (known == 0 ? total_lanes <= kProbeLanes : work < kProbeWorkPicoseconds);
    if (work < kInlineWorkPicoseconds || probe)
      c.tasks = 1;
    else if (work < kShareWorkPicoseconds)
      c.tasks = std::min<uint64_t>(blocks, threads);
    // A probe right after a parallel launch finds part of its data in other cores' caches,
    // which would make it look dear enough to stay parallel (and one probe delayed by the
    // system would then keep it so): it runs untimed, and the next launch is the probe.
    const bool warm_up = probe && (state & CpuModule::LaneCost::kLastParallel);
    if (warm_up) c.due = false;
    const uint8_t next = (c.tasks > 1 ? CpuModule::LaneCost::kLastParallel : 0) |
                         (warm_up ? CpuModule::LaneCost::kProbeNext : 0);
    if (next != state) cost.state.store(next, std::memory_order_relaxed);
  }
  return c;
}

/// The error of a launch of kernel `kidx` whose blocks failed with `fail`.
[[gnu::noinline]] Error launch_failure(const CpuModule &m, uint32_t kidx,
                                       const PreparedCpuLaunch &p, const uint64_t *sizes,
                                       const hg_cpu_error &fail, LaunchContext &cx) {
  const isa::Kernel &k = m.isa().kernels[kidx];
  uint64_t region_size = 0;
  if (fail.region >= 0 && static_cast<size_t>(fail.region) < k.params.size())
    region_size = sizes[fail.region];
  else if (fail.region == HG_CPU_REGION_SHARED)
    region_size = p.shared;
  else if (fail.region == HG_CPU_REGION_BOUNDARY)
    region_size = atlas::kBoundaryPoolBytes;
  return describe(m, kidx, p.launch, fail, cx, region_size);
}

/// The launch record of `p`'s launches, all but its arguments and its streaming threshold.
hg_cpu_launch launch_record(uint32_t kidx, const PreparedCpuLaunch &p, const uint64_t *sizes,
                            LaunchContext *cx, uint64_t *phase_advance) {
  hg_cpu_launch L{};
  L.sizes = sizes;
  L.grid[0] = p.launch.grid.x;
  L.grid[1] = p.launch.grid.y;
  L.grid[2] = p.launch.grid.z;
  L.block[0] = p.launch.block.x;
  L.block[1] = p.launch.block.y;
  L.block[2] = p.launch.block.z;
  L.phase_advance = phase_advance;
  L.kernel = kidx;
  L.launch_op = launch_op;
  L.convert = convert;
  L.runtime = cx;
  return L;
}

/// Runs launch `p` in the tasks `choice` says, with record `L` (its arguments filled in);
/// throws the launch's error.
void run_chosen(const CpuModule &m, uint32_t kidx, const PreparedCpuLaunch &p, TaskChoice choice,
                const hg_cpu_launch &L, LaunchContext &cx) {
  // A launch of one task is timed whole, one of several by its fastest task.
  const bool timed_whole = choice.due && choice.tasks == 1;
  const auto started =
      timed_whole ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  hg_cpu_error fail; // written only when a launch fails
  bool failed = false;
  std::atomic<uint64_t> fastest{UINT64_MAX};
  if (choice.tasks == 1 && !p.workspace) {
    // The usual small launch: every block on this thread, and nothing to set up for it.
    hg_cpu_worker w{};
    failed = p.fn(&L, &w, 0, p.blocks) != 0;
    if (failed) fail = w.error;
  } else {
    failed = run_tasks(p, choice.tasks, L, m.isa().kernels[kidx].name, fail,
                       choice.due && !timed_whole ? &fastest : nullptr);
  }
  if (choice.due && !failed) {
    // Time per lane on one thread: of the whole launch, or of its fastest task.
    CpuModule::LaneCost &cost = m.lane_cost(kidx);
    const uint64_t known = cost.picoseconds.load(std::memory_order_relaxed);
    uint64_t ps = timed_whole ? lane_picoseconds(started, p.blocks * p.lanes)
                              : fastest.load(std::memory_order_relaxed);
    if (ps == UINT64_MAX) return; // no task was timed
    if (known != 0) ps = std::min(ps, known * 4);
    cost.picoseconds.store(ps, std::memory_order_relaxed);
  }
  if (failed) throw launch_failure(m, kidx, p, L.sizes, fail, cx);
}

/// The launch context of this thread's kept launches: a thread keeps one at a time, and runs
/// it on itself.
LaunchContext &kept_context(const CpuModule &m) {
  thread_local LaunchContext cx{nullptr, nullptr, {}, {}, ErrorCode::LaunchFailed};
  cx.module = &m;
  return cx;
}

/// run_kept_cpu_launch's launches that run in tasks or are due for timing (`failed` null), and
/// its failures (throws their error).
[[gnu::noinline]] void run_kept_otherwise(KeptCpuLaunch &kept, TaskChoice choice,
                                          const hg_cpu_error *failed) {
  auto &cx = *static_cast<LaunchContext *>(kept.record.runtime);
  try {
    if (failed)
      throw launch_failure(*kept.module, kept.kernel, kept.prepared, kept.record.sizes, *failed,
                           cx);
    run_chosen(*kept.module, kept.kernel, kept.prepared, choice, kept.record, cx);
  } catch (...) {
    // The context stays with the thread's next kept launch.
    cx.op_error.clear();
    cx.op_code = ErrorCode::LaunchFailed;
    throw;
  }
}

} // namespace

void run_cpu_launch(const CpuModule &m, uint32_t kidx, const PreparedCpuLaunch &p,
                    CpuArgPointers args, interp::AtlasState *atlas, LibraryPathCounter *paths) {
  LaunchContext cx{&m, paths, {}, {}, ErrorCode::LaunchFailed};
  uint64_t phase_advance = 0;
  // Stored one by one: GCC would otherwise spill `args` and read it back as one 16-byte
  // vector, a load that the two 8-byte stores cannot forward to (a stall on every launch).
  const uint64_t *sizes = args.sizes;
  asm("" : "+r"(sizes));
  hg_cpu_launch L = launch_record(kidx, p, sizes, &cx, &phase_advance);
  L.args = args.pointers;
  if (atlas) {
    L.boundary = reinterpret_cast<uint8_t *>(atlas->boundary.data());
    L.resonance = atlas->resonance.data();
    L.phase = atlas->phase % atlas::kPhaseModulus;
  }
  L.stream_bytes = stream_bytes_now();
  run_chosen(m, kidx, p, choose_tasks(m, kidx, p, std::max(1u, cpu_threads_now())), L, cx);
  if (atlas)
    atlas->phase = static_cast<uint32_t>((atlas->phase + phase_advance) % atlas::kPhaseModulus);
}

KeptCpuLaunch keep_cpu_launch(const CpuModule &m, uint32_t kidx, const PreparedCpuLaunch &p,
                              const uint64_t *sizes) {
  // No Atlas state: a kept launch is of a kernel that never touches it.
  return {&m, kidx, p, launch_record(kidx, p, sizes, &kept_context(m), nullptr)};
}

void run_kept_cpu_launch(KeptCpuLaunch &kept, void *const *args) {
  const PreparedCpuLaunch &p = kept.prepared;
  hg_cpu_launch &L = kept.record;
  L.args = args;
  L.stream_bytes = stream_bytes_now();
  const TaskChoice choice =
      choose_tasks(*kept.module, kept.kernel, p, std::max(1u, cpu_threads_now()));
  if (choice.tasks == 1 && !choice.due && !p.workspace) {
    // What run_chosen does for it, without the timing.
    hg_cpu_worker w{};
    if (p.fn(&L, &w, 0, p.blocks) != 0) run_kept_otherwise(kept, choice, &w.error);
  } else {
    run_kept_otherwise(kept, choice, nullptr);
  }
}

PreparedCpuLaunch prepare_cpu_launch(const CpuModule &m, uint32_t kidx,
                                     const LaunchConfig &config) {
  const hg_cpu_kernel_desc &kd = m.desc().kernels[kidx];
  const isa::Kernel &k = m.isa().kernels[kidx];
  LaunchConfig launch = config;
  if (launch.grid.count() == 0 || launch.block.count() == 0)
    throw Error(ErrorCode::InvalidArgument,
                "kernel '" + k.name + "': launch with a zero-size grid or block dimension");
  if (!(kd.flags & HG_CPU_KERNEL_LAUNCH_LEVEL)) check_compiled_block(k, kd.block, launch);
  if (kd.flags & HG_CPU_KERNEL_LAUNCH_LEVEL) launch = LaunchConfig{}; // one lane, once
  // At most 2^30 lanes per block, and 2^62 per launch: the compiled code relies on %gid never
  // wrapping (it adds a chunk's width to a lane's %gid without an overflow test).
  // (Two 32-bit factors never overflow 64 bits, and a third one does not after the first two
  // were found at most 2^30.)
  const uint64_t most_block_lanes = uint64_t{1} << 30;
  uint64_t block_lanes = uint64_t{launch.block.x} * launch.block.y;
  if (block_lanes <= most_block_lanes) block_lanes *= launch.block.z;
  if (block_lanes > most_block_lanes)
    throw Error(ErrorCode::InvalidArgument,
                "kernel '" + k.name + "': a block of " + std::to_string(launch.block.x) + "x" +
                    std::to_string(launch.block.y) + "x" + std::to_string(launch.block.z) +
                    " lanes; the CPU backend runs at most 2^30 lanes per block");
  const uint64_t max_lanes = (uint64_t{1} << 62) - 1;
  uint64_t launch_lanes = uint64_t{launch.grid.x} * launch.grid.y;
  if (__builtin_mul_overflow(launch_lanes, launch.grid.z, &launch_lanes) ||
      __builtin_mul_overflow(launch_lanes, block_lanes, &launch_lanes) || launch_lanes > max_lanes)
    throw Error(ErrorCode::InvalidArgument,
                "kernel '" + k.name + "': a grid of " + std::to_string(launch.grid.x) + "x" +
                    std::to_string(launch.grid.y) + "x" + std::to_string(launch.grid.z) +
                    " blocks of " + std::to_string(block_lanes) +
                    " lanes; the CPU backend runs fewer than 2^62 lanes per launch");
  return prepared(m, kidx, launch);
}

void launch_cpu_kernel(const CpuModule &m, uint32_t kidx, const LaunchConfig &config,
                       CpuArgPointers args, interp::AtlasState *atlas, LibraryPathCounter *paths) {
  run_cpu_launch(m, kidx, prepare_cpu_launch(m, kidx, config), args, atlas, paths);
}

PreparedCpuLaunch prepare_cpu_launch_over(const CpuModule &m, uint32_t kidx, uint64_t count) {
  const hg_cpu_kernel_desc &kd = m.desc().kernels[kidx];
  LaunchConfig config; // a launch-level kernel: one lane, once
  if (!(kd.flags & HG_CPU_KERNEL_LAUNCH_LEVEL)) {
    const uint32_t block = kd.block[0] ? kd.block[0] : 256;
    // A shift for the usual power-of-two block (a 64-bit division takes tens of cycles); a
    // count of 0 still runs one block.
    const uint64_t whole =
        std::has_single_bit(block) ? count >> std::countr_zero(block) : count / block;
    const uint64_t blocks = std::max<uint64_t>(whole + (whole * block != count), 1);
    if (blocks > UINT32_MAX)
      throw Error(ErrorCode::InvalidArgument, "kernel '" + m.isa().kernels[kidx].name +
                                                  "': a launch of " + std::to_string(count) +
                                                  " lanes takes more than 2^32 - 1 blocks of " +
                                                  std::to_string(block) + "; pass an hg_launch");
    config.grid = {static_cast<uint32_t>(blocks), 1, 1};
    config.block = {block, kd.block[0] ? kd.block[1] : 1, kd.block[0] ? kd.block[2] : 1};
    // A block the module names is checked like any launch's; 256 lanes in fewer than 2^32
    // blocks is a launch that prepare_cpu_launch would pass.
    if (kd.block[0]) return prepare_cpu_launch(m, kidx, config);
  }
  return prepared(m, kidx, config);
}

void launch_cpu_kernel_over(const CpuModule &m, uint32_t kidx, uint64_t count, CpuArgPointers args,
                            interp::AtlasState *atlas) {
  run_cpu_launch(m, kidx, prepare_cpu_launch_over(m, kidx, count), args, atlas);
}

} // namespace hologram::runtime
