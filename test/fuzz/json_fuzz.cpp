// libFuzzer target: the JSON front end never crashes, and what it accepts is verified ISA
// whose canonical text parses back.
#include "hologram/frontend/json.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace hologram;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine diags;
  auto m = frontend::compile_json(text, "fuzz.json", diags);
  if (!m) {
    if (!diags.has_errors()) std::abort(); // a rejection always says why
    return 0;
  }
  DiagnosticEngine again;
  auto back = isa::parse_module(isa::print_module(*m), "printed.hasm", again);
  if (!back || !isa::verify_module(*back, again)) std::abort();
  return 0;
}
