#!/usr/bin/env bash
# Installs (with apt-get) every Debian 12 package the build and the tests need, and nothing
# that is already present. Safe to run any number of times.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config python3
  llvm-19-dev llvm-19-tools libclang-19-dev clang-19 clang-format-19 libclang-rt-19-dev
  spirv-tools spirv-headers libvulkan-dev ocl-icd-opencl-dev opencl-headers
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libxxhash-dev
  libc6-dev libsleef-dev libopenblas-dev
  mesa-vulkan-drivers pocl-opencl-icd llvm-spirv-15 glslang-tools
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
