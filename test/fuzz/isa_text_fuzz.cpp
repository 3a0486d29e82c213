// libFuzzer target: the .hasm parser and verifier never crash; whatever parses prints to a
// canonical text that parses back to the same module and the same bytes.
#include "hologram/isa/encoding.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace hologram;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine diags;
  auto m = isa::parse_module(text, "fuzz.hasm", diags);
  if (!m) return 0;
  isa::verify_module(*m, diags);
  std::string printed = isa::print_module(*m);
  DiagnosticEngine again;
  auto back = isa::parse_module(printed, "printed.hasm", again);
  if (!back || !back->same_as(*m) || isa::print_module(*back) != printed) std::abort();
  auto decoded = isa::decode_module(isa::encode_module(*m));
  if (!decoded || !decoded->same_as(*m)) std::abort();
  return 0;
}
