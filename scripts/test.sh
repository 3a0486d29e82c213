#!/usr/bin/env bash
# Runs every test: install what is missing, check formatting, build, run ctest (unit, lit,
# conformance, C API); then the same suites built with ASan and UBSan, and the fuzz corpora.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
# The Vulkan backend runs on Mesa's lavapipe here; a backend that cannot start is a failure.
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export HOLOGRAM_REQUIRE_BACKENDS=${HOLOGRAM_REQUIRE_BACKENDS:-cpu,vulkan}
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure --parallel "$(nproc)")
"$root/scripts/sanitize.sh"
