// hologram-run: runs one kernel of a program file (.hasm, .json or .circuit) on a backend and
// prints or saves its arrays. Arguments: NAME=@file.bin (raw little-endian elements),
// NAME=zeros:N, NAME=iota:N (0, 1, 2, ...), NAME=[1,2.5,3], or a scalar literal. For a
// circuit, cK=... fills class K of the boundary pool and --print cK prints it.
#include "hologram/artifact/bundle.h"
#include "hologram/artifact/compile_cache.h"
#include "hologram/codegen/cpu.h"
#include "hologram/codegen/ptx_abi.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/driver/driver.h"
#include "hologram/interp/interpreter.h"
#include "hologram/isa/builder.h"
#include "hologram/isa/numeric.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/runtime/backend.h"
#include "hologram/runtime/cpu.h"
#include "hologram/support/file_io.h"
#include "hologram/support/process.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>

namespace {

using namespace hologram;
using isa::Type;

enum Exit { kOk = 0, kInputError = 1, kUsageError = 2, kLaunchError = 3 };

struct UsageError {
  std::string message;
};

/// Parses --global or --local (`option`): one to three decimal numbers, each at most
/// 4294967295, separated by commas; a UsageError that names the part that is wrong otherwise.
Dim3 parse_dims(const std::string &option, const std::string &s) {
  uint32_t v[3] = {1, 1, 1};
  size_t start = 0;
  for (int i = 0;; ++i) {
    if (i == 3) throw UsageError{option + " has at most three numbers (x,y,z), got '" + s + "'"};
    size_t comma = s.find(',', start);
    std::string part =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    // from_chars takes digits only: no sign, space or base prefix.
    if (ec == std::errc::invalid_argument || end != part.data() + part.size())
      throw UsageError{option + " expects N[,N,N] (decimal numbers), got '" + s + "'"};
    if (ec == std::errc::result_out_of_range || n > UINT32_MAX)
      throw UsageError{option + ": " + part + " is more than 4294967295 lanes in a dimension"};
    v[i] = static_cast<uint32_t>(n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {v[0], v[1], v[2]};
}

/// A class of the boundary pool named as an argument ("c5", "c05"); nullopt otherwise.
std::optional<uint32_t> class_argument(const std::string &name) {
  if (name.size() < 2 || name[0] != 'c' || name.size() > 3 ||
      name.find_first_not_of("0123456789", 1) != std::string::npos)
    return std::nullopt;
  uint32_t c = static_cast<uint32_t>(std::stoul(name.substr(1)));
  if (c >= atlas::kNumClasses) return std::nullopt;
  return c;
}

std::vector<std::byte> parse_array(const isa::Param &p, const std::string &value) {
  unsigned elem = p.kind == isa::ParamKind::Pool ? 1 : isa::type_size(p.type);
  // An element count, and room for that many elements (a count beyond memory is refused
  // with the bytes it asks for, not an allocation failure).
  std::vector<std::byte> bytes;
  auto count_of = [&](const std::string &s) {
    uint64_t n = 0, size = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc::invalid_argument || end != s.data() + s.size())
      throw UsageError{"expected an element count in '" + value + "'"};
    if (ec == std::errc::result_out_of_range || __builtin_mul_overflow(n, elem, &size) ||
        size > bytes.max_size())
      throw UsageError{"%" + p.name + "=" + value + ": more bytes than memory can hold"};
    try {
      bytes.reserve(size);
    } catch (const std::bad_alloc &) {
      throw UsageError{"%" + p.name + "=" + value + ": cannot allocate " + std::to_string(size) +
                       " bytes"};
    }
    return n;
  };
  if (value.starts_with("zeros:")) {
    bytes.assign(count_of(value.substr(6)) * elem, std::byte{0});
  } else if (value.starts_with("iota:")) {
    if (p.kind != isa::ParamKind::Buffer) throw UsageError{"iota: needs a buffer parameter"};
    uint64_t n = count_of(value.substr(5));
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t bits;
      if (isa::is_float(p.type))
        bits = isa::float_bits(p.type, static_cast<double>(i));
      else
        bits = i;
      for (unsigned b = 0; b < elem; ++b) bytes.push_back(static_cast<std::byte>(bits >> (8 * b)));
    }
  } else if (value.starts_with("@")) {
    auto data = read_file(value.substr(1));
    if (!data) throw UsageError{data.message()};
    if (data->size() % elem)
      throw UsageError{"'" + value.substr(1) + "' holds " + std::to_string(data->size()) +
                       " bytes, not a whole number of " + std::string(isa::type_name(p.type)) +
                       " elements"};
    for (char c : *data) bytes.push_back(static_cast<std::byte>(c));
  } else if (value.starts_with("[") && value.ends_with("]")) {
    if (p.kind != isa::ParamKind::Buffer) throw UsageError{"a list needs a buffer parameter"};
    std::string body = value.substr(1, value.size() - 2);
    size_t start = 0;
    while (start < body.size()) {
      size_t comma = body.find(',', start);
      std::string item =
          body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      auto bits = isa::parse_literal(p.type, item);
      if (!bits) {
        // An integer written for a float buffer is fine; anything else is an error.
        throw UsageError{"element '" + item + "' of %" + p.name + ": " + bits.message()};
      }
      for (unsigned b = 0; b < elem; ++b) bytes.push_back(static_cast<std::byte>(*bits >> (8 * b)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    throw UsageError{"array argument %" + p.name +
                     " must be @file.bin, zeros:N, iota:N or [a,b,...]"};
  }
  return bytes;
}

std::string element_json(Type t, uint64_t bits) {
  double v = 0;
  switch (t) {
  case Type::F16: v = isa::f16_to_float(static_cast<uint16_t>(bits)); break;
  case Type::BF16: v = isa::bf16_to_float(static_cast<uint16_t>(bits)); break;
  case Type::F32: v = isa::bits_to_f32(bits); break;
  case Type::F64: v = isa::bits_to_f64(bits); break;
  case Type::I16:
  case Type::I32:
  case Type::I64:
  case Type::I8:
  case Type::None:
  case Type::Pred:
  case Type::U16:
  case Type::U32:
  case Type::U64:
  case Type::U8: return isa::format_literal(t, bits);
  }
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  if (t == Type::F64) return isa::format_literal(Type::F64, bits);
  return isa::format_literal(Type::F32, isa::f32_bits(static_cast<float>(v)));
}

/// Runs `kernel` on backend `name` through `start` (a module launch or execute_program);
/// arrays and the Atlas state are copied in and back out.
Status run_on_backend(const std::string &name, const isa::Kernel &kernel,
                      std::vector<interp::ArgValue> &args, interp::AtlasState &atlas,
                      const std::function<void(Backend &, std::span<const KernelArg>)> &start) {
  try {
    auto backend = create_backend(Preference::parse(name));
    std::vector<KernelArg> kargs;
    for (size_t i = 0; i < args.size(); ++i) {
      const auto &p = kernel.params[i];
      if (p.kind == isa::ParamKind::Scalar) {
        kargs.push_back(KernelArg::scalar(p.type, args[i].bits));
        continue;
      }
      auto mem = args[i].memory;
      if (p.kind == isa::ParamKind::Pool) {
        auto pool = backend->allocate_pool(std::max<size_t>(mem.size(), 1));
        backend->copy_to_pool(pool, 0, mem);
        kargs.push_back(KernelArg::pool(pool));
      } else {
        auto b = backend->allocate_buffer(std::max<size_t>(mem.size(), 1));
        backend->copy_to_buffer(b, 0, mem);
        kargs.push_back(KernelArg::buffer(b));
      }
    }
    backend->copy_to_boundary(0, atlas.boundary);
    backend->set_resonance(atlas.resonance);
    backend->set_phase(atlas.phase);
    start(*backend, kargs);
    for (size_t i = 0; i < args.size(); ++i) {
      const auto &p = kernel.params[i];
      if (p.kind == isa::ParamKind::Pool)
        backend->copy_from_pool(PoolHandle{kargs[i].handle}, 0, args[i].memory);
      else if (p.kind == isa::ParamKind::Buffer)
        backend->copy_from_buffer(BufferHandle{kargs[i].handle}, 0, args[i].memory);
    }
    backend->copy_from_boundary(0, atlas.boundary);
    atlas.resonance = backend->resonance();
    atlas.phase = backend->phase();
  } catch (const Error &e) {
    return {e.code(), e.what()};
  }
  return {};
}

/// Loads a compiled module (a shared object or a bundle) into the CPU backend and runs
/// `kernel`.
Status run_module_file(const std::string &backend, const std::string &path,
                       const isa::Kernel &kernel, const LaunchConfig &launch,
                       std::vector<interp::ArgValue> &args, interp::AtlasState &atlas) {
  return run_on_backend(backend, kernel, args, atlas,
                        [&](Backend &b, std::span<const KernelArg> kargs) {
                          b.launch(b.load_module(path), kernel.name, launch, kargs);
                        });
}

/// Compiles the module for `backend` (a shared object for cpu, a bundle with its SPIR-V for
/// vulkan and opencl, with its PTX for cuda) in a temporary directory, then loads and runs it
/// there.
Status run_compiled(const std::string &backend, const isa::Module &module,
                    const isa::Kernel &kernel, const driver::CpuOutputOptions &co,
                    const LaunchConfig &launch, std::vector<interp::ArgValue> &args,
                    interp::AtlasState &atlas) {
  bool cpu = backend == "cpu";
  const std::string emit = cpu ? "shared" : "bundle";
  // The compiled file comes from the persistent compile cache when an earlier run made it.
  auto settings = artifact::CacheSettings::from_environment();
  if (!settings) return settings.status();
  artifact::CompileCache cache(std::move(*settings));
  const auto key = artifact::CompileCache::key("hologram-run --emit=" + emit + " " +
                                                   co.module_name + " " + co.source_name,
                                               module, driver::compile_options_of(co));
  auto bytes = cache.get_or_make(key, [&] { return driver::emit_cpu_output(module, co, emit); });
  if (!bytes) return bytes.status();
  auto dir = ScratchDir::create("hologram-run");
  if (!dir) return {ErrorCode::Internal, "cannot create a temporary directory"};
  std::string path = dir->path() + "/" + co.module_name + (cpu ? ".so" : ".hgb");
  if (auto st = write_file_atomic(path, *bytes); !st) return {ErrorCode::Internal, st.message()};
  return run_module_file(backend, path, kernel, launch, args, atlas);
}

/// The x86 target --backend=cpu compiles: the variant the CPU backend's dispatcher picks, so
/// only that one is compiled. A forced CPU name (HOLOGRAM_CPU_ISA or set_cpu_isa), that name;
/// else the best level at or below the cap (if any) whose features this CPU has, counting
/// those HOLOGRAM_CPU_DISABLE disables (codegen::best_cpu_target, as Hologram::jit picks).
std::vector<std::string> dispatch_targets() {
  const std::string request = runtime::requested_cpu_isa();
  const auto [want, cap] = runtime::parse_cpu_isa_request(request);
  if (!request.empty() && (cap < 2 || cap > 4)) return {want};
  // No level runs: compile v2, and the dispatcher names what this CPU lacks.
  auto t = codegen::best_cpu_target(cap, runtime::cpu_has_feature);
  return {t ? t->name : "x86-64-v2"};
}

} // namespace

int run(int argc, char **argv) {
  CLI::App app{"hologram-run: run a kernel on a backend"};
  std::string file, kernel_name, backend = "interp", global_s, local_s, lang, circuit_type = "f32";
  std::vector<std::string> arg_specs, outs, prints;
  uint32_t shared = 0;
  uint64_t max_steps = 0;
  bool check_div = false;
  app.add_option("file", file, "program file (.hasm, .json, .circuit) or bundle (.hgb)")
      ->required();
  app.add_option("-x", lang, "input language: isa, json, circuit")
      ->check(CLI::IsMember({"isa", "json", "circuit"}));
  app.add_option("--circuit-type", circuit_type, "element type of circuit classes (default f32)");
  app.add_option("--kernel", kernel_name, "kernel to run (default: the only one)");
  app.add_option("--backend", backend,
                 "interp (the reference interpreter), cpu (compiled x86 code), vulkan "
                 "(SPIR-V on the first Vulkan device), opencl (SPIR-V on the first OpenCL "
                 "device) or cuda (PTX on the first CUDA device)")
      ->check(CLI::IsMember({"interp", "cpu", "vulkan", "opencl", "cuda"}));
  std::string target;
  bool bounds_check = true;
  auto *target_opt =
      app.add_option("--target", target,
                     "x86 targets for --backend=cpu (default: the level the CPU backend runs under "
                     "HOLOGRAM_CPU_ISA, else this CPU's); a CUDA target for --backend=cuda "
                     "(default: cuda-sm_70, which every device hologram runs JIT-compiles)");
  auto *bounds_opt = app.add_flag(
      "--bounds-check,!--no-bounds-check", bounds_check,
      "check every memory access of a program compiled here, on every backend: an access "
      "outside its buffer fails the launch with the lane and source line (the default; "
      "--no-bounds-check for speed)");
  app.add_option("--global", global_s,
                 "global size in lanes: N[,N,N] (circuits: one class by default)");
  app.add_option("--local", local_s, "block size in lanes: N[,N,N] (default: min(global, 256))");
  app.add_option("--shared", shared, "shared memory bytes per block");
  app.add_option("--arg", arg_specs, "NAME=VALUE");
  app.add_option("--out", outs, "NAME=file.bin: write an array after the launch");
  app.add_option("--print", prints, "NAME: print an array as JSON after the launch");
  app.add_option("--max-steps", max_steps, "stop after this many instructions (0: no limit)");
  app.add_flag("--check-div", check_div, "integer division by zero fails the launch");
  unsigned opt_level = 2;
  app.add_option("-O", opt_level, "optimisation level 0..3 of a program compiled here")
      ->check(CLI::Range(0u, 3u));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kUsageError;
  }

  if (target_opt->count() > 0)
    if (auto st = driver::check_target_names(driver::split_target_list(target), backend != "cuda");
        !st) {
      std::cerr << "hologram-run: error: " << st.message() << '\n';
      return kUsageError;
    }
  driver::FrontendOptions fo;
  fo.opt_level = opt_level;
  auto ct = isa::parse_type(circuit_type);
  if (!ct || !isa::is_numeric(*ct)) {
    std::cerr << "hologram-run: error: --circuit-type must be a numeric type, got '" << circuit_type
              << "'\n";
    return kUsageError;
  }
  fo.circuit_type = *ct;
  // A bundle is run as compiled (its CPU payload, or its ISA on the interpreter); any other
  // file is compiled here first.
  std::optional<artifact::Bundle> bundle;
  std::optional<driver::CompiledInput> compiled;
  bool is_circuit = false;
  if (lang.empty() && artifact::is_bundle_file(file)) {
    if (target_opt->count() > 0 || (bounds_opt->count() > 0 && bounds_check)) {
      std::cerr << "hologram-run: error: --target and --bounds-check apply when compiling; '"
                << file << "' is a bundle, compiled already\n";
      return kUsageError;
    }
    auto bytes = read_file(file);
    if (!bytes) {
      std::cerr << "hologram-run: error: " << bytes.message() << '\n';
      return kInputError;
    }
    auto read = artifact::read_bundle(std::move(*bytes));
    if (!read) {
      std::cerr << "hologram-run: error: '" << file << "' is not a valid bundle: " << read.message()
                << '\n';
      return kInputError;
    }
    bundle = std::move(*read);
    is_circuit = bundle->sources.size() == 1 && bundle->sources[0].ends_with(".circuit");
  } else {
    auto kind = lang.empty() ? driver::kind_from_extension(file) : driver::parse_kind(lang);
    if (!kind) {
      std::cerr << "hologram-run: error: cannot tell the language of '" << file
                << "'; use -x isa|json|circuit\n";
      return kUsageError;
    }
    DiagnosticEngine diags;
    compiled = driver::compile_input(file, *kind, fo, diags);
    diags.print(std::cerr);
    if (!compiled) return kInputError;
    is_circuit = *kind == driver::InputKind::Circuit;
  }
  auto *module = bundle ? &bundle->module : &compiled->module;
  const isa::Kernel *kernel = nullptr;
  if (kernel_name.empty()) {
    if (module->kernels.size() != 1) {
      std::cerr << "hologram-run: error: '" << file << "' has " << module->kernels.size()
                << " kernels; choose one with --kernel:";
      for (const auto &k : module->kernels) std::cerr << ' ' << k.name;
      std::cerr << '\n';
      return kUsageError;
    }
    kernel = &module->kernels[0];
  } else if (!(kernel = module->find_kernel(kernel_name))) {
    std::cerr << "hologram-run: error: no kernel '" << kernel_name << "' in '" << file << "'\n";
    return kUsageError;
  }

  try {
    Dim3 global, local;
    if (global_s.empty() && is_circuit)
      global_s = std::to_string(frontend::circuit_elements_per_class(*ct));
    if (global_s.empty()) throw UsageError{"--global is required"};
    global = parse_dims("--global", global_s);
    local = local_s.empty() ? Dim3{std::min<uint32_t>(global.x, 256), 1, 1}
                            : parse_dims("--local", local_s);
    if (global.count() == 0 || local.count() == 0)
      throw UsageError{"--global and --local must be positive"};
    LaunchConfig launch;
    launch.block = local;
    // Blocks to cover each dimension, in 64 bits: global + local - 1 may not fit in 32.
    auto blocks = [](uint32_t lanes, uint32_t per_block) {
      return static_cast<uint32_t>((uint64_t{lanes} + per_block - 1) / per_block);
    };
    launch.grid = {blocks(global.x, local.x), blocks(global.y, local.y), blocks(global.z, local.z)};
    launch.shared_memory = shared;

    // A circuit's arrays are classes of the boundary pool, with elements of the circuit type.
    // The pool (1.18 MB) is made only for a kernel that uses the Atlas state: zeroing it costs
    // a small launch more than the launch itself, and the backend would copy it in and out.
    interp::AtlasState atlas{.boundary = {}};
    if (is_circuit || kernel->uses_atlas_state()) atlas.boundary.resize(atlas::kBoundaryPoolBytes);
    auto class_bytes = [&](uint32_t c) {
      return std::span<std::byte>(atlas.boundary.data() + uint64_t{c} * atlas::kClassBytes,
                                  atlas::kClassBytes);
    };
    std::map<std::string, std::string> given;
    for (const auto &spec : arg_specs) {
      auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError{"--arg expects NAME=VALUE, got '" + spec + "'"};
      std::string name = spec.substr(0, eq);
      if (name.starts_with('%')) name.erase(0, 1);
      if (is_circuit) {
        auto c = class_argument(name);
        if (!c) throw UsageError{"a circuit takes class arguments c0..c95, got '" + name + "'"};
        isa::Param cls{name, isa::ParamKind::Buffer, *ct, isa::Access::ReadWrite, {}};
        auto data = parse_array(cls, spec.substr(eq + 1));
        if (data.size() > atlas::kClassBytes)
          throw UsageError{"class " + name + " holds " +
                           std::to_string(frontend::circuit_elements_per_class(*ct)) +
                           " elements; more were given"};
        std::memcpy(class_bytes(*c).data(), data.data(), data.size());
        continue;
      }
      if (!kernel->find_param(name))
        throw UsageError{"kernel '" + kernel->name + "' has no parameter '" + name + "'"};
      if (!given.emplace(name, spec.substr(eq + 1)).second)
        throw UsageError{"argument '" + name + "' is given twice"};
    }
    std::vector<std::vector<std::byte>> storage(kernel->params.size());
    std::vector<interp::ArgValue> args;
    for (size_t i = 0; i < kernel->params.size(); ++i) {
      const auto &p = kernel->params[i];
      auto it = given.find(p.name);
      if (it == given.end()) throw UsageError{"missing --arg " + p.name + "=..."};
      if (p.kind == isa::ParamKind::Scalar) {
        auto bits = isa::parse_literal(p.type, it->second);
        if (!bits) throw UsageError{"argument " + p.name + ": " + bits.message()};
        args.push_back(interp::ArgValue::scalar(*bits));
      } else {
        storage[i] = parse_array(p, it->second);
        args.push_back(p.kind == isa::ParamKind::Pool ? interp::ArgValue::pool(storage[i])
                                                      : interp::ArgValue::buffer(storage[i]));
      }
    }
    // Arrays to print or save: array parameters, or the classes of a circuit.
    auto array_of = [&](std::string name) -> std::pair<std::span<std::byte>, Type> {
      if (name.starts_with('%')) name.erase(0, 1);
      if (is_circuit) {
        auto c = class_argument(name);
        if (!c) throw UsageError{"a circuit's arrays are its classes c0..c95, got '" + name + "'"};
        return {class_bytes(*c), *ct};
      }
      auto idx = kernel->find_param(name);
      if (!idx || kernel->params[*idx].kind == isa::ParamKind::Scalar)
        throw UsageError{"'" + name + "' is not an array parameter of kernel '" + kernel->name +
                         "'"};
      const auto &p = kernel->params[*idx];
      return {storage[*idx], p.kind == isa::ParamKind::Pool ? Type::U8 : p.type};
    };
    for (const auto &o : outs) {
      const auto eq = o.find('=');
      if (eq == std::string::npos) throw UsageError{"--out expects NAME=file.bin"};
      (void)array_of(o.substr(0, eq));
      if (same_file(o.substr(eq + 1), file))
        throw UsageError{"--out " + o + ": the file is the program '" + file +
                         "'; writing it would replace the program"};
    }
    for (const auto &pname : prints) (void)array_of(pname);

    Status st;
    const bool device = backend == "vulkan" || backend == "opencl" || backend == "cuda";
    if (backend != "interp" && bundle) {
      // Checked by default, as everything compiled here is: a bundle's code is as it was
      // compiled, so a run of one without the checks says so, unless asked not to.
      if (!bundle->options.bounds_check && bounds_opt->count() == 0)
        std::cerr << "hologram-run: note: '" << file
                  << "' was compiled without -fbounds-check: an access outside its buffers is "
                     "not caught (--backend=interp checks every access; --no-bounds-check runs "
                     "it without this note)\n";
      st = run_module_file(backend, file, *kernel, launch, args, atlas);
    } else if (device && (check_div || bounds_check)) {
      // The checks are compiled in: a bundle for this backend, loaded as it is.
      if (!target.empty() && backend != "cuda")
        throw UsageError{"--target applies to --backend=cpu and --backend=cuda"};
      if (!target.empty() && !codegen::parse_ptx_target(target))
        throw UsageError{"--backend=cuda takes one CUDA target (" + codegen::ptx_target_names() +
                         "), got '" + target + "'"};
      driver::CpuOutputOptions co;
      co.targets = {backend == "vulkan"   ? "vulkan1.1"
                    : backend == "opencl" ? "opencl1.2"
                    : target.empty()      ? "cuda-sm_70"
                                          : target};
      co.check_div = check_div;
      co.bounds_check = bounds_check;
      co.module_name = driver::kernel_name_from_path(file);
      co.source_name = file;
      co.sources = {file};
      st = run_compiled(backend, *module, *kernel, co, launch, args, atlas);
    } else if (device) {
      if (!target.empty()) throw UsageError{"--target applies to programs compiled with checks"};
      st = run_on_backend(backend, *kernel, args, atlas,
                          [&](Backend &b, std::span<const KernelArg> kargs) {
                            b.execute_program(*kernel, launch, kargs);
                          });
    } else if (backend == "cpu") {
      driver::CpuOutputOptions co;
      co.targets = target.empty() ? dispatch_targets() : driver::split_target_list(target);
      co.check_div = check_div;
      co.bounds_check = bounds_check;
      co.module_name = driver::kernel_name_from_path(file);
      co.source_name = file;
      st = run_compiled("cpu", *module, *kernel, co, launch, args, atlas);
    } else {
      interp::InterpOptions opts;
      opts.check_div = check_div;
      opts.max_steps = max_steps;
      opts.source_name = file;
      st = interp::run_kernel(*kernel, launch, args, atlas, opts);
    }
    if (!st) {
      std::cerr << "hologram-run: launch failed: " << st.describe() << '\n';
      return kLaunchError;
    }
    for (const auto &o : outs) {
      auto eq = o.find('=');
      auto [bytes, type] = array_of(o.substr(0, eq));
      std::string_view data(reinterpret_cast<const char *>(bytes.data()), bytes.size());
      if (auto written = write_file_atomic(o.substr(eq + 1), data); !written) {
        std::cerr << "hologram-run: error: " << written.message() << '\n';
        return kInputError;
      }
    }
    for (const auto &pname : prints) {
      auto [bytes, t] = array_of(pname);
      unsigned elem = isa::type_size(t);
      std::cout << '[';
      for (size_t off = 0; off + elem <= bytes.size(); off += elem) {
        uint64_t bits = 0;
        std::memcpy(&bits, bytes.data() + off, elem);
        std::cout << (off ? "," : "") << element_json(t, bits);
      }
      std::cout << "]\n";
    }
  } catch (const UsageError &e) {
    std::cerr << "hologram-run: error: " << e.message << '\n';
    return kUsageError;
  }
  return kOk;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::cerr << "hologram-run: error: out of memory\n";
    return kInputError;
  } catch (const std::exception &e) {
    std::cerr << "hologram-run: internal error: " << e.what() << '\n';
    return kInputError;
  }
}
