// The generated C/C++ header of SPEC §8: a typed C entry point per kernel, a C++ wrapper,
// kernel metadata (hg_kernel_info) and static checks of the ABI structures. The entry points
// themselves are defined in the object that hologram-cc emits next to the header.
#pragma once

#include "hologram/isa/program.h"

#include <string>
#include <string_view>

namespace hologram::artifact {

/// The C function name of a kernel's entry point: the kernel's name, with "_kernel" appended
/// when that name is a C keyword or a function of the C standard library (exp, log, ...).
std::string c_entry_point_name(std::string_view kernel);
/// A parameter's name as a C identifier (a keyword gets a trailing underscore).
std::string c_parameter_name(std::string_view param);
/// The C type of a scalar parameter or of a buffer's elements ("float", "uint16_t", ...).
std::string c_type_name(isa::Type t);

/// The header for `module` (compiled as `module_name` from `source_name`); `features` are
/// the CPU features of its least demanding x86 variant, recorded in hg_kernel_info.
std::string generate_header(const isa::Module &module, std::string_view module_name,
                            std::string_view source_name, std::string_view features);

} // namespace hologram::artifact
