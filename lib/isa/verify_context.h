// Shared state of the verifier's rule families (verify_*.cpp). Internal to lib/isa.
#pragma once

#include "hologram/isa/accesses.h"
#include "hologram/isa/cfg.h"
#include "hologram/isa/text.h"
#include "hologram/isa/verifier.h"

#include <string>
#include <vector>

namespace hologram::isa::detail {

struct VerifyContext {
  const Kernel &kernel;
  const std::string &file;
  DiagnosticEngine &diags;
  const VerifyOptions &opts;
  Cfg cfg;
  size_t errors = 0;

  /// Reports an error at instruction `i`, quoting it.
  void error_at(size_t i, const std::string &msg, std::vector<std::string> notes = {}) {
    const auto &inst = kernel.insts[i];
    notes.insert(notes.begin(),
                 "in '" + print_instruction(kernel, inst) + "' of kernel '" + kernel.name + "'");
    diags.error(file, inst.loc, msg, std::move(notes));
    ++errors;
  }
  void error_kernel(const std::string &msg, std::vector<std::string> notes = {}) {
    diags.error(file, kernel.loc, msg, std::move(notes));
    ++errors;
  }
  /// "line N" or "@label (line N)" for the start of a block.
  [[nodiscard]] std::string describe_block(uint32_t b) const;
};

using isa::instruction_defs;
using isa::instruction_uses;
using isa::RegAccess;

// Rule families. Each reports through the context; later families run only when the
// earlier ones found the program well-formed enough to analyse.
void verify_operands(VerifyContext &cx);   // kinds, types, params, labels, addresses
void verify_control(VerifyContext &cx);    // reducibility, calls, recursion, ret
void verify_registers(VerifyContext &cx);  // static typing, definite initialisation
void verify_pools(VerifyContext &cx);      // pool.alloc / pool.free pairing
void verify_uniformity(VerifyContext &cx); // barriers under lane-varying control flow

} // namespace hologram::isa::detail
