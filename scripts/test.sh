#!/usr/bin/env bash
# Runs every test: install what is missing, check formatting, build, run ctest (unit, lit,
# conformance, C API); then the same suites built with ASan and UBSan, and the fuzz corpora.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
# The Vulkan backend runs on Mesa's lavapipe here and the OpenCL backend on PoCL (through
# llvm-spirv and cl_khr_spir); a backend that cannot start is a failure, not a skip.
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export HOLOGRAM_REQUIRE_BACKENDS=${HOLOGRAM_REQUIRE_BACKENDS:-cpu,vulkan,opencl}
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure --parallel "$(nproc)")
"$root/scripts/sanitize.sh"
