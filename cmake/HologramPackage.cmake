# The installable package (SPEC §12): headers, the runtime and the libraries it links, the
# tools, and HologramConfig.cmake with add_hologram_kernel. The same package is usable from
# the build tree (Hologram_DIR=<build>) and from an install prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HOLOGRAM_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Hologram")

# The runtime, the optional compiler library (jit) and the libraries they link, under the
# names their in-tree aliases use.
foreach(lib support isa opt interp artifact spirv_abi ptx_abi codegen_spirv codegen_llvm runtime jit)
  set_target_properties(hologram_${lib} PROPERTIES EXPORT_NAME ${lib})
endforeach()
set_target_properties(hologram-cc PROPERTIES EXPORT_NAME hologram-cc)
set_target_properties(hologram-run PROPERTIES EXPORT_NAME hologram-run)
set_target_properties(hologram-info PROPERTIES EXPORT_NAME hologram-info)
add_executable(Hologram::hologram-cc ALIAS hologram-cc)
add_executable(Hologram::hologram-run ALIAS hologram-run)
add_executable(Hologram::hologram-info ALIAS hologram-info)

install(TARGETS hologram_support hologram_isa hologram_opt hologram_interp hologram_artifact
                hologram_spirv_abi hologram_ptx_abi hologram_codegen_spirv hologram_codegen_llvm
                hologram_runtime
                hologram_jit
                hologram-cc hologram-run hologram-info
        EXPORT HologramTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The Python-to-JSON front end (python3 only; no build step).
install(PROGRAMS tools/hologram-py2json/hologram-py2json.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME hologram-py2json)
# The public headers: the C API, the runtime, and what the runtime's headers include.
install(FILES include/hologram/hologram.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hologram)
install(DIRECTORY include/hologram/runtime include/hologram/isa include/hologram/interp
                  include/hologram/support include/hologram/artifact
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hologram)
install(FILES include/hologram/codegen/cpu_abi.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hologram/codegen)

install(EXPORT HologramTargets NAMESPACE Hologram:: DESTINATION ${HOLOGRAM_CMAKE_DIR})
configure_package_config_file(cmake/HologramConfig.cmake.in
  ${PROJECT_BINARY_DIR}/HologramConfig.cmake INSTALL_DESTINATION ${HOLOGRAM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/HologramConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/HologramConfig.cmake
              ${PROJECT_BINARY_DIR}/HologramConfigVersion.cmake cmake/HologramKernel.cmake
        DESTINATION ${HOLOGRAM_CMAKE_DIR})

# The build tree as a package: Hologram_DIR=<build> finds the same config next to these.
export(EXPORT HologramTargets NAMESPACE Hologram:: FILE ${PROJECT_BINARY_DIR}/HologramTargets.cmake)
configure_file(cmake/HologramKernel.cmake ${PROJECT_BINARY_DIR}/HologramKernel.cmake COPYONLY)

# In this build, add_hologram_kernel uses the compiler and runtime targets directly.
include(cmake/HologramKernel.cmake)
