// Internal interface of the SPIR-V back end: the kernel lowering writes into a shared
// Builder; the module driver adds the header, validates and optimises.
#pragma once

#include "builder.h"
#include "hologram/codegen/spirv.h"
#include "hologram/isa/program.h"

#include <stdexcept>
#include <string>

namespace hologram::codegen::spirv {

/// An instruction the target cannot run: why, and where once the kernel lowering knows it.
/// It stays inside the back end: compile_spirv turns it into a diagnostic.
struct Unsupported : std::runtime_error {
  explicit Unsupported(const std::string &why, SourceLoc where = {})
      : std::runtime_error(why), loc(where) {}
  SourceLoc loc; ///< the instruction's location; line 0 until known
};

/// Lowers one verified kernel as an entry point of `builder`'s module; `library` for the
/// device library's kernels (spirv_library.h).
SpirvKernelInfo lower_kernel(Builder &builder, const isa::Kernel &kernel,
                             const SpirvOptions &options, bool library = false);

} // namespace hologram::codegen::spirv
