// The compile pipeline shared by hologram-cc and hologram-run.
#include "hologram/driver/driver.h"

#include "hologram/frontend/json.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"
#include "hologram/opt/pass_manager.h"
#include "hologram/support/file_io.h"

#include <cctype>

namespace hologram::driver {

std::optional<InputKind> kind_from_extension(std::string_view path) {
  if (path.ends_with(".hasm")) return InputKind::Isa;
  if (path.ends_with(".json")) return InputKind::Json;
  if (path.ends_with(".circuit")) return InputKind::Circuit;
  return std::nullopt;
}

std::optional<InputKind> parse_kind(std::string_view name) {
  if (name == "isa") return InputKind::Isa;
  if (name == "json") return InputKind::Json;
  if (name == "circuit") return InputKind::Circuit;
  return std::nullopt;
}

std::string kernel_name_from_path(std::string_view path) {
  auto slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = base.find('.');
  if (dot != std::string_view::npos) base = base.substr(0, dot);
  std::string name;
  for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "circuit_" + name;
  return name;
}

namespace {

/// The front end of `kind` on `text`: a verified module, not yet optimised.
std::optional<CompiledInput> front_end(const std::string &text, const std::string &name,
                                       const std::string &path, InputKind kind,
                                       const FrontendOptions &opts, DiagnosticEngine &diags) {
  CompiledInput in;
  in.path = name;
  in.kind = kind;
  switch (kind) {
  case InputKind::Isa: {
    auto m = isa::parse_module(text, name, diags);
    if (!m || !isa::verify_module(*m, diags)) return std::nullopt;
    in.module = std::move(*m);
    return in;
  }
  case InputKind::Json: {
    auto m = frontend::compile_json(text, name, diags);
    if (!m) return std::nullopt;
    in.module = std::move(*m);
    return in;
  }
  case InputKind::Circuit: {
    auto c = frontend::parse_circuit(text, name, diags);
    if (!c) return std::nullopt;
    in.canonical = frontend::canonicalize(*c, &in.rewrite_notes);
    frontend::CircuitOptions co;
    co.element = opts.circuit_type;
    co.kernel_name = path == "-" ? "circuit" : kernel_name_from_path(path);
    co.canonicalize = opts.opt_level > 0;
    auto m = frontend::lower_circuit(co.canonicalize ? *in.canonical : *c, co, name, diags);
    if (!m) return std::nullopt;
    in.circuit = std::move(*c);
    in.module = std::move(*m);
    return in;
  }
  }
  return std::nullopt;
}

} // namespace

std::optional<CompiledInput> compile_input(const std::string &path, InputKind kind,
                                           const FrontendOptions &opts, DiagnosticEngine &diags) {
  auto text = read_file(path);
  std::string name = path == "-" ? "<stdin>" : path;
  if (!text) {
    report(diags, text.status(), name);
    return std::nullopt;
  }
  auto in = front_end(*text, name, path, kind, opts, diags);
  if (!in) return std::nullopt;
  const opt::PassOptions po{opts.opt_level, opts.print_after, opts.print};
  if (!opt::optimize(in->module, po, diags)) return std::nullopt;
  return in;
}

std::string depfile_text(const std::string &target, const std::vector<std::string> &deps) {
  auto escape = [](const std::string &s) {
    std::string out;
    for (char c : s) {
      if (c == ' ' || c == '#') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string s = escape(target) + ":";
  for (const auto &d : deps) s += " " + escape(d);
  return s + "\n";
}

} // namespace hologram::driver
