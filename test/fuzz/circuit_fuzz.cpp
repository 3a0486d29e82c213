// libFuzzer target: the circuit parser never crashes; the canonical form prints to text that
// parses back to itself, canonicalising it again changes nothing, and it lowers to verified ISA.
#include "hologram/frontend/circuit.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace hologram;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine diags;
  auto c = frontend::parse_circuit(text, "fuzz.circuit", diags);
  if (!c) {
    if (!diags.has_errors()) std::abort();
    return 0;
  }
  auto canon = frontend::canonicalize(*c);
  std::string printed = frontend::print_circuit(canon);
  DiagnosticEngine again;
  auto back = frontend::parse_circuit(printed, "printed.circuit", again);
  if (!back || back->branches != canon.branches) std::abort();
  if (frontend::print_circuit(frontend::canonicalize(*back)) != printed) std::abort();
  if (!frontend::lower_circuit(*c, {}, "fuzz.circuit", again)) std::abort();
  return 0;
}
