// The C API's status code for each error code (internal to the runtime).
#pragma once

#include "hologram/hologram.h"
#include "hologram/support/status.h"

namespace hologram::runtime {

hg_status status_code_of(ErrorCode code);

} // namespace hologram::runtime
