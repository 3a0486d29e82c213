// hologram-cc: the compiler's command line. Parses clang-style options and runs the driver.
// Exit status: 0 success, 1 input errors, 2 usage errors.
#include "hologram/artifact/compile_cache.h"
#include "hologram/driver/cpu_output.h"
#include "hologram/driver/driver.h"
#include "hologram/driver/ptx_output.h"
#include "hologram/driver/spirv_output.h"
#include "hologram/isa/text.h"
#include "hologram/opt/pass_manager.h"
#include "hologram/support/file_io.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <iostream>

namespace {

using namespace hologram;

enum Exit { kOk = 0, kInputError = 1, kUsageError = 2 };

/// Expands @responsefile arguments (whitespace-separated, with '...' and "..." quoting) and
/// rewrites clang-style single-dash long options (-Werror, -MD, -MF, -MT) into the spelling
/// CLI11 parses.
bool normalise_args(int argc, char **argv, std::vector<std::string> &out, std::string &err) {
  static const char *kLongSingleDash[] = {
      "-Werror", "-MD", "-MF", "-MT", "-ffast-math", "-fbounds-check", "-fcheck-div"};
  std::function<bool(const std::string &, int)> add = [&](const std::string &a, int depth) {
    if (a.size() > 1 && a[0] == '@') {
      if (depth > 8) {
        err = "response files nest too deeply at '" + a + "'";
        return false;
      }
      auto text = read_file(a.substr(1));
      if (!text) {
        err = text.message();
        return false;
      }
      std::string cur;
      char quote = 0;
      bool have = false;
      for (char c : *text) {
        if (quote) {
          if (c == quote)
            quote = 0;
          else
            cur += c;
        } else if (c == '\'' || c == '"') {
          quote = c;
          have = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
          if (have && !add(cur, depth + 1)) return false;
          cur.clear();
          have = false;
        } else {
          cur += c;
          have = true;
        }
      }
      return !have || add(cur, depth + 1);
    }
    for (const char *l : kLongSingleDash)
      if (a == l) {
        out.push_back("-" + a);
        return true;
      }
    out.push_back(a);
    return true;
  };
  for (int i = 1; i < argc; ++i)
    if (!add(argv[i], 0)) return false;
  return true;
}

int run(int argc, char **argv) {
  CLI::App app{"hologram-cc: compile JSON kernels, circuits and Atlas ISA"};
  app.set_version_flag("--version", std::string("hologram-cc ") + HOLOGRAM_VERSION);
  std::vector<std::string> inputs;
  std::string output = "-", emit = "isa", lang, diag_format = "text", circuit_type = "f32";
  std::string depfile, dep_target, cache_dir, block_text;
  unsigned opt_level = 2;
  bool werror = false, verbose = false, md = false;
  bool debug = false, fast_math = false, bounds_check = false, check_div = false;
  std::string targets = "x86-64-v2,x86-64-v3,x86-64-v4";
  app.add_option("inputs", inputs, "input files (.hasm, .json, .circuit; '-' reads standard input)")
      ->required();
  app.add_option("-o", output, "output file ('-' for standard output)");
  auto *emit_opt =
      app.add_option("--emit", emit,
                     "what to produce: isa, canonical (circuits), llvm, bc, asm, obj, static, "
                     "shared, header, bundle (.hgb), manifest (a bundle's JSON manifest), spirv, "
                     "spirv-asm, ptx (default: from the output's extension, ISA text for "
                     "standard output or a name without one)")
          ->check(CLI::IsMember({"isa", "canonical", "llvm", "bc", "asm", "obj", "static", "shared",
                                 "header", "bundle", "manifest", "spirv", "spirv-asm", "ptx"}));
  auto *target_opt = app.add_option(
      "--target", targets,
      "comma-separated targets: x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name; for "
      "spirv and spirv-asm one of vulkan1.1, vulkan1.2, vulkan1.3 (default vulkan1.1); for ptx "
      "one of cuda-sm_70, cuda-sm_75, cuda-sm_80, cuda-sm_86, cuda-sm_89, cuda-sm_90 (default "
      "cuda-sm_80)");
  app.add_flag("-g", debug, "debug line tables pointing at the source");
  app.add_flag("--ffast-math", fast_math, "allow fast, less exact floating point (-ffast-math)");
  app.add_flag("--fbounds-check", bounds_check,
               "check every memory access; a failing launch names the lane (-fbounds-check)");
  app.add_flag("--fcheck-div", check_div,
               "fail the launch on integer division by zero (-fcheck-div)");
  app.add_option("-x", lang, "input language: isa, json, circuit")
      ->check(CLI::IsMember({"isa", "json", "circuit"}));
  app.add_option("-O", opt_level, "optimisation level 0..3")->check(CLI::Range(0u, 3u));
  std::vector<std::string> print_after;
  std::string pass_names = "all";
  for (const auto &p : opt::all_passes()) pass_names += ", " + std::string(p.name);
  app.add_option("--print-after", print_after,
                 "print the ISA to standard error after a pass of the -O pipeline: " + pass_names)
      ->delimiter(',');
  app.add_option("--circuit-type", circuit_type, "element type of circuit classes (default f32)");
  app.add_option("--block", block_text,
                 "X[,Y,Z]: the block size every launch of these kernels uses, known to the "
                 "compiled code (x86: constant lane counts; Vulkan: the local size; OpenCL: the "
                 "required work-group size); a launch with another block is refused");
  app.add_option("--diagnostics-format", diag_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--Werror", werror, "treat warnings as errors (also -Werror)");
  app.add_flag("-v,--verbose", verbose,
               "explain what the compiler did (e.g. canonicalisation rules)");
  app.add_flag("--MD", md, "write a depfile next to the output (also -MD)");
  app.add_option("--MF", depfile, "the depfile's path (also -MF)");
  app.add_option("--cache-dir", cache_dir,
                 "keep compiled outputs in DIR (the persistent compile cache, as "
                 "HOLOGRAM_CACHE_DIR is for hologram-run) and reuse them for the same program, "
                 "options and compiler");
  app.add_option("--MT", dep_target, "the target named in the depfile (also -MT)");
  std::vector<std::string> args;
  std::string arg_error;
  if (!normalise_args(argc, argv, args, arg_error)) {
    std::cerr << "hologram-cc: error: " << arg_error << '\n';
    return kUsageError;
  }
  std::reverse(args.begin(), args.end()); // CLI11 takes the arguments in reverse order
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kUsageError;
  }

  // What to write, and for which targets, is settled before any input is read.
  if (emit_opt->count() == 0) {
    auto from_extension = driver::emit_from_extension(output);
    if (!from_extension) {
      std::cerr << "hologram-cc: error: " << from_extension.message() << '\n';
      return kUsageError;
    }
    emit = *from_extension;
  }
  if (target_opt->count() > 0)
    if (auto st = driver::check_target_names(driver::split_target_list(targets)); !st) {
      std::cerr << "hologram-cc: error: " << st.message() << '\n';
      return kUsageError;
    }
  std::array<uint32_t, 3> block = {0, 0, 0};
  if (!block_text.empty()) {
    auto parsed = driver::parse_block(block_text);
    if (!parsed) {
      std::cerr << "hologram-cc: error: " << parsed.message() << '\n';
      return kUsageError;
    }
    block = *parsed;
  }

  driver::FrontendOptions fo;
  fo.opt_level = opt_level;
  for (const auto &p : print_after)
    if (p != "all" && !opt::find_pass(p)) {
      std::cerr << "hologram-cc: error: --print-after: no pass is called '" << p
                << "' (passes: " << pass_names << ")\n";
      return kUsageError;
    }
  fo.print_after = print_after;
  fo.print = [](std::string_view pass, const isa::Module &m) {
    std::cerr << "; *** ISA after " << pass << " ***\n" << isa::print_module(m);
  };
  auto ct = isa::parse_type(circuit_type);
  if (!ct || !isa::is_numeric(*ct)) {
    std::cerr << "hologram-cc: error: --circuit-type must be a numeric type (i8..u64, f16, bf16, "
                 "f32, f64), got '"
              << circuit_type << "'\n";
    return kUsageError;
  }
  fo.circuit_type = *ct;
  if ((!depfile.empty() || !dep_target.empty()) && !md) md = true;
  if (md && output == "-" && depfile.empty()) {
    std::cerr << "hologram-cc: error: -MD needs -o FILE or -MF FILE\n";
    return kUsageError;
  }

  // An output that is one of the inputs (the same path, or a link to it) would replace it.
  for (const auto &path : inputs)
    for (const std::string &out : {output, depfile})
      if (!out.empty() && same_file(path, out)) {
        std::cerr << "hologram-cc: error: the output '" << out << "' is the input '" << path
                  << "'; writing it would replace the program\n";
        return kUsageError;
      }

  DiagnosticEngine diags;
  diags.set_warnings_as_errors(werror);
  auto fmt = diag_format == "json" ? DiagnosticsFormat::Json : DiagnosticsFormat::Text;
  std::vector<driver::CompiledInput> compiled;
  for (const auto &path : inputs) {
    std::optional<driver::InputKind> kind =
        lang.empty() ? driver::kind_from_extension(path) : driver::parse_kind(lang);
    if (!kind) {
      std::cerr << "hologram-cc: error: cannot tell the language of '" << path
                << "' from its extension; use -x isa|json|circuit\n";
      return kUsageError;
    }
    if (emit == "canonical" && *kind != driver::InputKind::Circuit) {
      std::cerr << "hologram-cc: error: --emit=canonical needs circuit inputs; '" << path
                << "' is not one\n";
      return kUsageError;
    }
    if (auto in = driver::compile_input(path, *kind, fo, diags)) compiled.push_back(std::move(*in));
  }
  // Kernel names must be unique across the inputs of one module.
  isa::Module all;
  for (auto &in : compiled)
    for (auto &k : in.module.kernels) {
      if (all.find_kernel(k.name)) {
        diags.error(in.path, k.loc, "kernel '" + k.name + "' is defined in more than one input");
        continue;
      }
      all.kernels.push_back(k);
    }
  diags.print(std::cerr, fmt);
  if (diags.has_errors()) return kInputError;

  if (compiled.size() == 1) all.source_name = compiled[0].path;
  // A failed output: an error about a place in the program is a diagnostic at that place
  // (in the input that defines its kernel), anything else a message of its own.
  auto failed = [&](const Status &st) {
    if (const Diagnostic *d = st.diagnostic()) {
      std::string file = d->file;
      for (const auto &in : compiled)
        if (file.empty() && in.module.find_kernel(d->kernel)) file = in.path;
      DiagnosticEngine backend_diags;
      report(backend_diags, st, file);
      backend_diags.print(std::cerr, fmt);
    } else {
      std::cerr << "hologram-cc: error: " << st.message() << '\n';
    }
    return st.code() == ErrorCode::InvalidArgument ? kUsageError : kInputError;
  };

  std::string text;
  // An output, from the compile cache when --cache-dir names one and it holds it.
  auto produce = [&](const std::string &what, const std::vector<std::string> &target_list,
                     const std::function<Expected<std::string>()> &make) {
    if (cache_dir.empty()) return make();
    artifact::CacheSettings settings;
    settings.dir = cache_dir;
    artifact::CompileCache cache(settings);
    isa::CompileOptions o;
    o.opt_level = opt_level;
    o.debug_info = debug;
    o.fast_math = fast_math;
    o.bounds_check = bounds_check;
    o.check_div = check_div;
    o.block = block;
    o.targets = target_list;
    return cache.get_or_make(artifact::CompileCache::key(what, all, o), make);
  };
  if (emit == "canonical") {
    for (const auto &in : compiled) {
      text += frontend::print_circuit(*in.canonical) + "\n";
      if (!verbose) continue;
      for (const auto &n : in.rewrite_notes)
        std::cerr << in.path << ": rule " << n.rule << ": " << n.detail << '\n';
      std::cerr << in.path << ": " << in.circuit->op_count() << " operation(s) -> "
                << in.canonical->op_count() << " after " << in.rewrite_notes.size()
                << " rewrite(s)\n";
    }
  } else if (driver::is_cpu_emit(emit)) {
    driver::CpuOutputOptions co;
    co.targets = driver::split_target_list(targets);
    if (co.targets.empty()) {
      std::cerr << "hologram-cc: error: --target names no target\n";
      return kUsageError;
    }
    co.opt_level = opt_level;
    co.debug_info = debug;
    co.fast_math = fast_math;
    co.bounds_check = bounds_check;
    co.check_div = check_div;
    co.block = block;
    co.module_name = driver::kernel_name_from_path(inputs[0] == "-" ? output : inputs[0]);
    co.source_name = compiled.size() == 1 ? compiled[0].path : "";
    for (const auto &in : compiled) co.sources.push_back(in.path);
    co.compiler_version = HOLOGRAM_VERSION;
    std::string what = "hologram-cc --emit=" + emit + " " + co.module_name + " " + co.source_name;
    for (const auto &src : co.sources) what += " " + src;
    auto out = produce(what, co.targets, [&] { return driver::emit_cpu_output(all, co, emit); });
    if (!out) return failed(out.status());
    text = std::move(*out);
  } else if (driver::is_spirv_emit(emit)) {
    driver::SpirvOutputOptions so;
    if (target_opt->count() > 0) so.targets = driver::split_target_list(targets);
    so.opt_level = opt_level;
    so.fast_math = fast_math;
    so.bounds_check = bounds_check;
    so.check_div = check_div;
    so.block = block;
    auto out = produce("hologram-cc --emit=" + emit, so.targets,
                       [&] { return driver::emit_spirv_output(all, so, emit); });
    if (!out) return failed(out.status());
    text = std::move(*out);
  } else if (driver::is_ptx_emit(emit)) {
    driver::PtxOutputOptions po;
    po.targets = target_opt->count() > 0 ? driver::split_target_list(targets)
                                         : std::vector<std::string>{"cuda-sm_80"};
    po.opt_level = opt_level;
    po.fast_math = fast_math;
    po.bounds_check = bounds_check;
    po.check_div = check_div;
    po.block = block;
    auto out = produce("hologram-cc --emit=ptx", po.targets,
                       [&] { return driver::emit_ptx_output(all, po); });
    if (!out) return failed(out.status());
    text = std::move(*out);
  } else {
    text = isa::print_module(all);
  }
  if (auto st = write_file_atomic(output, text); !st) {
    std::cerr << "hologram-cc: error: " << st.message() << '\n';
    return kInputError;
  }
  if (md) {
    std::string dep_path = depfile.empty() ? output + ".d" : depfile;
    std::vector<std::string> deps;
    for (const auto &in : compiled) deps.push_back(in.path);
    if (auto st = write_file_atomic(
            dep_path, driver::depfile_text(dep_target.empty() ? output : dep_target, deps));
        !st) {
      std::cerr << "hologram-cc: error: " << st.message() << '\n';
      return kInputError;
    }
  }
  return kOk;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::cerr << "hologram-cc: error: out of memory\n";
    return kInputError;
  } catch (const std::exception &e) {
    std::cerr << "hologram-cc: internal error: " << e.what() << '\n';
    return kInputError;
  }
}
