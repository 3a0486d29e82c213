# Every third-party dependency of SPEC §2, found through its own CMake package (or pkg-config
# where Debian ships no CMake package). Stages link only what they need.

find_package(LLVM 19.1 CONFIG REQUIRED HINTS /usr/lib/llvm-19/lib/cmake/llvm)
message(STATUS "hologram: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
set(HOLOGRAM_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}")

find_package(SPIRV-Headers CONFIG REQUIRED)
find_package(SPIRV-Tools CONFIG REQUIRED)
find_package(SPIRV-Tools-opt CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)

find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# SLEEF: vectorised math with 1-ulp bounds, which generated x86 code calls (SPEC §3.4, §7).
pkg_check_modules(SLEEF REQUIRED IMPORTED_TARGET sleef)

if(HOLOGRAM_ENABLE_VULKAN)
  find_package(VulkanHeaders CONFIG REQUIRED)
endif()
if(HOLOGRAM_ENABLE_OPENCL)
  find_package(OpenCLHeaders CONFIG REQUIRED)
endif()
if(HOLOGRAM_ENABLE_TESTS)
  find_package(GTest CONFIG REQUIRED)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  find_program(HOLOGRAM_LIT lit.py HINTS /usr/lib/llvm-19/build/utils/lit REQUIRED)
  find_program(HOLOGRAM_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED NO_DEFAULT_PATH)
  # NVIDIA's PTX assembler, where the CUDA toolkit is installed: the PTX golden tests assemble
  # what they check with it (test/lit/codegen/ptx). Not a build dependency.
  find_program(HOLOGRAM_PTXAS ptxas HINTS /usr/local/cuda/bin)
endif()
if(HOLOGRAM_ENABLE_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()
