// libFuzzer target: the circuit parser never crashes; the canonical form prints to text that
// parses back to itself, canonicalising it again changes nothing, it lowers to verified ISA,
// and it has the same data effect as the original on the interpreter.
#include "hologram/frontend/circuit.h"
#include "hologram/interp/interpreter.h"

#include <cstdlib>
#include <string_view>

namespace {

using namespace hologram;

/// The boundary pool after running `c` (i32 classes: exact, so any difference is real) over a
/// fixed pseudo-random pool; aborts when the circuit does not lower or run.
std::vector<std::byte> data_effect(const frontend::Circuit &c) {
  static const std::vector<std::byte> start = [] {
    std::vector<std::byte> pool(atlas::kBoundaryPoolBytes);
    uint32_t s = 12345;
    for (auto &b : pool) b = static_cast<std::byte>((s = s * 1664525u + 1013904223u) >> 24);
    return pool;
  }();
  frontend::CircuitOptions o;
  o.element = isa::Type::I32;
  DiagnosticEngine diags;
  auto m = frontend::lower_circuit(c, o, "fuzz.circuit", diags);
  if (!m) std::abort();
  interp::AtlasState atlas;
  atlas.boundary = start;
  auto launch = LaunchConfig::linear(frontend::circuit_elements_per_class(o.element), 256);
  if (!interp::run_kernel(m->kernels[0], launch, {}, atlas)) std::abort();
  return atlas.boundary;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
  if (data_effect(*c) != data_effect(canon)) std::abort();
  return 0;
}
