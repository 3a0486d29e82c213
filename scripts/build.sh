#!/usr/bin/env bash
# Configures (once) and builds the project into build/ with Ninja and ccache.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HOLOGRAM_BUILD_DIR:-$root/build}
werror=${HOLOGRAM_WERROR:-ON}

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHOLOGRAM_WERROR="$werror"
fi
cmake --build "$build" --parallel "$(nproc)"
