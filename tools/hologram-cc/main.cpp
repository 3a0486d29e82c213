// hologram-cc: the compiler driver's command line. For now it reads Atlas ISA text (.hasm),
// verifies it and emits the canonical ISA text; later stages add front ends and targets.
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/file_io.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iostream>

namespace {

enum Exit { kOk = 0, kInputError = 1, kUsageError = 2 };

/// Expands @responsefile arguments (whitespace-separated, with '...' and "..." quoting) and
/// rewrites clang-style single-dash long options (-Werror) into the spelling CLI11 parses.
bool normalise_args(int argc, char **argv, std::vector<std::string> &out, std::string &err) {
  static const char *kLongSingleDash[] = {"-Werror"};
  std::function<bool(const std::string &, int)> add = [&](const std::string &a, int depth) {
    if (a.size() > 1 && a[0] == '@') {
      if (depth > 8) {
        err = "response files nest too deeply at '" + a + "'";
        return false;
      }
      auto text = hologram::read_file(a.substr(1), &err);
      if (!text) return false;
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

std::string input_kind(const std::string &path, const std::string &forced) {
  if (!forced.empty()) return forced;
  if (path.size() >= 5 && path.ends_with(".hasm")) return "isa";
  if (path.ends_with(".json")) return "json";
  if (path.ends_with(".circuit")) return "circuit";
  return "";
}

} // namespace

int run(int argc, char **argv) {
  using namespace hologram;
  CLI::App app{"hologram-cc: compile JSON kernels, circuits and Atlas ISA"};
  app.set_version_flag("--version", std::string("hologram-cc ") + HOLOGRAM_VERSION);
  app.allow_config_extras(false);
  std::vector<std::string> inputs;
  std::string output = "-", emit = "isa", lang, diag_format = "text";
  bool werror = false;
  app.add_option("inputs", inputs, "input files (.hasm; '-' reads standard input)")->required();
  app.add_option("-o", output, "output file ('-' for standard output)");
  app.add_option("--emit", emit, "what to produce")->check(CLI::IsMember({"isa"}));
  app.add_option("-x", lang, "input language")->check(CLI::IsMember({"isa", "json", "circuit"}));
  app.add_option("--diagnostics-format", diag_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("--Werror", werror, "treat warnings as errors (also -Werror)");
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

  DiagnosticEngine diags;
  diags.set_warnings_as_errors(werror);
  auto fmt = diag_format == "json" ? DiagnosticsFormat::Json : DiagnosticsFormat::Text;
  isa::Module all;
  for (const auto &path : inputs) {
    std::string kind = input_kind(path, lang);
    if (kind.empty()) {
      std::cerr << "hologram-cc: error: cannot tell the language of '" << path
                << "' from its extension; use -x isa|json|circuit\n";
      return kUsageError;
    }
    if (kind != "isa") {
      std::cerr << "hologram-cc: error: " << kind << " input is not supported by this build yet\n";
      return kUsageError;
    }
    std::string err;
    auto text = read_file(path, &err);
    if (!text) {
      std::cerr << "hologram-cc: error: " << err << '\n';
      return kInputError;
    }
    std::string name = path == "-" ? "<stdin>" : path;
    auto m = isa::parse_module(*text, name, diags);
    if (m && isa::verify_module(*m, diags)) {
      for (auto &k : m->kernels) {
        if (all.find_kernel(k.name)) {
          diags.error(name, k.loc, "kernel '" + k.name + "' is defined in more than one input");
          continue;
        }
        all.kernels.push_back(std::move(k));
      }
    }
  }
  diags.print(std::cerr, fmt);
  if (diags.has_errors()) return kInputError;
  std::string err;
  if (!write_file_atomic(output, isa::print_module(all), &err)) {
    std::cerr << "hologram-cc: error: " << err << '\n';
    return kInputError;
  }
  return kOk;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "hologram-cc: internal error: " << e.what() << '\n';
    return kInputError;
  }
}
