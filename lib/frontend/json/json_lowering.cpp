// JSON kernels -> Atlas ISA (SPEC §5): the reader checks the document's shape
// (json_reader.h), the emitter types and lowers each kernel (json_emitter.h, after the flow
// analysis of json_flow.h), and the ISA verifier's findings are reported at the JSON
// statement they came from.
#include "hologram/frontend/json.h"

#include "hologram/isa/verifier.h"
#include "json_emitter.h"
#include "json_locator.h"
#include "json_reader.h"

namespace hologram::frontend {

std::optional<isa::Module> compile_json(std::string_view text, const std::string &file,
                                        DiagnosticEngine &diags) {
  json::JsonLocator locator(text);
  auto kernels = json::read_document(text, file, locator, diags);
  if (!kernels) return std::nullopt;
  isa::Module m;
  m.source_name = file;
  bool ok = true;
  for (const auto &decl : *kernels) {
    json::KernelEmitter lowering(decl, file, diags);
    auto k = lowering.run();
    if (!k) {
      ok = false;
      continue;
    }
    k->loc = decl.loc;
    for (auto &inst : k->insts) // parameter reads at entry
      if (inst.loc.line == 0) inst.loc = decl.loc;
    // Rules the ISA verifier checks (a barrier under lane-varying control flow) are reported
    // at the statement that broke them, with its JSON Pointer.
    DiagnosticEngine isa_diags;
    if (!isa::verify_kernel(*k, file, isa_diags)) {
      for (auto d : isa_diags.diagnostics()) {
        auto it = lowering.pointers_.find({d.loc.line, d.loc.col});
        if (it != lowering.pointers_.end()) d.pointer = it->second;
        if (!d.notes.empty() && d.notes.front().starts_with("in '")) d.notes.erase(d.notes.begin());
        diags.report(std::move(d));
      }
      ok = false;
      continue;
    }
    m.kernels.push_back(std::move(*k));
  }
  if (!ok || diags.has_errors()) return std::nullopt;
  return m;
}

} // namespace hologram::frontend
