// hologram-cc: the compiler driver's command line. For now it reads Atlas ISA text (.hasm),
// verifies it and emits the canonical ISA text; later stages add front ends and targets.
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/support/file_io.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

enum Exit { kOk = 0, kInputError = 1, kUsageError = 2 };

std::string input_kind(const std::string &path, const std::string &forced) {
  if (!forced.empty()) return forced;
  if (path.size() >= 5 && path.ends_with(".hasm")) return "isa";
  if (path.ends_with(".json")) return "json";
  if (path.ends_with(".circuit")) return "circuit";
  return "";
}

} // namespace

int main(int argc, char **argv) {
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
  app.add_flag("-Werror", werror, "treat warnings as errors");
  try {
    app.parse(argc, argv);
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
