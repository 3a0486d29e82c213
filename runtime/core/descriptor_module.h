// The ISA module a CPU module descriptor carries (include/hologram/codegen/cpu_abi.h): binary
// reflection written by isa::encode_module_with_locations, decoded at load (internal to the
// runtime; the CPU backend and the SPIR-V backends' linked modules share it).
#pragma once

#include "hologram/codegen/cpu_abi.h"
#include "hologram/isa/encoding.h"
#include "hologram/runtime/error.h"

#include <string>

namespace hologram::runtime {

/// The module of `desc`; throws InvalidModule naming `what` ("module 'x.so'") when it is
/// missing or damaged.
inline isa::Module decode_descriptor_module(const hg_cpu_module_desc &desc,
                                            const std::string &what) {
  if (!desc.isa || desc.isa_size == 0)
    throw Error(ErrorCode::InvalidModule, what + " carries no kernel metadata");
  auto m = isa::decode_module_with_locations({desc.isa, desc.isa_size});
  if (!m)
    throw Error(ErrorCode::InvalidModule,
                what + " carries damaged kernel metadata: " + m.message());
  return std::move(*m);
}

} // namespace hologram::runtime
