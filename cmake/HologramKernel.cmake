# add_hologram_kernel (SPEC §12): compiles JSON kernels, circuits and Atlas ISA files with
# hologram-cc into a normal STATIC library, with the generated headers on its include path.
#
#   add_hologram_kernel(<target> SOURCES k1.json k2.circuit
#                       [TARGETS x86-64-v2 x86-64-v3 ...] [BUNDLE]
#                       [OPTIONS -O3 -ffast-math ...] [HEADER_DIR dir])
#
# Each source becomes one object (every x86 TARGET variant plus the dispatcher) and one
# header <stem>.h; hologram-cc writes a depfile for each, so editing one source rebuilds only
# its object and header (and a new hologram-cc rebuilds everything). BUNDLE also writes
# <target>.hgb, one bundle of all sources, for Backend::load_module; its path is the target's
# HOLOGRAM_BUNDLE property. Vulkan and OpenCL TARGETS (vulkan1.1, opencl1.2, ...) compile SPIR-V
# that each object embeds next to its x86 code (Backend::load_linked_module on the vulkan and
# opencl backends runs it) and the bundle holds; CUDA TARGETS (cuda-sm_70 ... cuda-sm_90) put
# PTX in the bundle, so they need BUNDLE. The library links Hologram::runtime. Works
# with the Ninja and Makefile generators, from a build tree and from an installed package.
include_guard(GLOBAL)

function(add_hologram_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 HGK "BUNDLE" "HEADER_DIR" "SOURCES;TARGETS;OPTIONS")
  set(fn "add_hologram_kernel(${target})")
  if(HGK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${fn}: unknown arguments: ${HGK_UNPARSED_ARGUMENTS} (expected SOURCES, "
                        "TARGETS, BUNDLE, OPTIONS, HEADER_DIR)")
  endif()
  if(NOT HGK_SOURCES)
    message(FATAL_ERROR "${fn}: SOURCES names no kernel file")
  endif()
  if(NOT TARGET Hologram::hologram-cc)
    message(FATAL_ERROR "${fn}: Hologram::hologram-cc is not defined; find_package(Hologram) first")
  endif()
  if(NOT HGK_TARGETS)
    set(HGK_TARGETS x86-64-v2 x86-64-v3 x86-64-v4)
  endif()
  # x86 targets make the objects' code; Vulkan and OpenCL targets add SPIR-V to them; CUDA
  # targets (cuda-sm_80, ...) go into the bundle only, as PTX: objects do not carry it.
  set(cpu_targets "")
  set(spirv_targets "")
  set(cuda_targets "")
  foreach(t IN LISTS HGK_TARGETS)
    if(t MATCHES "^(vulkan|opencl)")
      list(APPEND spirv_targets "${t}")
    elseif(t MATCHES "^cuda")
      list(APPEND cuda_targets "${t}")
    else()
      list(APPEND cpu_targets "${t}")
    endif()
  endforeach()
  if(NOT cpu_targets)
    message(FATAL_ERROR "${fn}: TARGETS names no x86 target; the library's objects need one "
                        "(x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name)")
  endif()
  if(cuda_targets AND NOT HGK_BUNDLE)
    message(FATAL_ERROR "${fn}: CUDA TARGETS (${cuda_targets}) are PTX in the bundle, which "
                        "BUNDLE asks for; the library's objects do not carry PTX")
  endif()
  if(NOT HGK_HEADER_DIR)
    set(HGK_HEADER_DIR "${CMAKE_CURRENT_BINARY_DIR}/${target}.include")
  endif()
  get_filename_component(header_dir "${HGK_HEADER_DIR}" ABSOLUTE
                         BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(work "${CMAKE_CURRENT_BINARY_DIR}/${target}.hologram")
  file(MAKE_DIRECTORY "${header_dir}" "${work}")
  list(JOIN cpu_targets "," header_target_list)
  set(object_targets ${cpu_targets} ${spirv_targets})
  list(JOIN object_targets "," object_target_list)
  list(JOIN HGK_TARGETS "," target_list)
  set(cc "$<TARGET_FILE:Hologram::hologram-cc>")

  set(objects "")
  set(headers "")
  set(inputs "")
  set(stems "")
  foreach(src IN LISTS HGK_SOURCES)
    get_filename_component(input "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${src}" NAME_WE)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "${fn}: two SOURCES are named '${stem}'; their headers would collide")
    endif()
    list(APPEND stems "${stem}")
    list(APPEND inputs "${input}")
    set(object "${work}/${stem}.o")
    set(header "${header_dir}/${stem}.h")
    foreach(emit obj header)
      if(emit STREQUAL "obj")
        set(output "${object}")
        set(targets "${object_target_list}")
      else()
        set(output "${header}")
        set(targets "${header_target_list}")
      endif()
      get_filename_component(name "${output}" NAME)
      add_custom_command(
        OUTPUT "${output}"
        COMMAND "${cc}" "${input}" --emit=${emit} "--target=${targets}" ${HGK_OPTIONS}
                -o "${output}" -MD -MF "${work}/${name}.d"
        DEPENDS "${input}" "${cc}"
        DEPFILE "${work}/${name}.d"
        COMMENT "hologram-cc ${src} -> ${name} (${targets})"
        VERBATIM)
    endforeach()
    list(APPEND objects "${object}")
    list(APPEND headers "${header}")
  endforeach()

  set(extra "")
  if(HGK_BUNDLE)
    set(bundle "${CMAKE_CURRENT_BINARY_DIR}/${target}.hgb")
    add_custom_command(
      OUTPUT "${bundle}"
      COMMAND "${cc}" ${inputs} --emit=bundle "--target=${target_list}" ${HGK_OPTIONS}
              -o "${bundle}" -MD -MF "${work}/bundle.d"
      DEPENDS ${inputs} "${cc}"
      DEPFILE "${work}/bundle.d"
      COMMENT "hologram-cc -> ${target}.hgb (${target_list})"
      VERBATIM)
    set(extra "${bundle}")
  endif()

  set_source_files_properties(${objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${target} STATIC ${objects} ${headers} ${extra})
  # Only objects go into the archive; it is made with whichever language the project enabled.
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST languages)
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  else()
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${header_dir}>")
  target_link_libraries(${target} PUBLIC Hologram::runtime)
  # In hologram's own build tree the compiler is a target to build first.
  get_target_property(compiler Hologram::hologram-cc ALIASED_TARGET)
  if(compiler)
    add_dependencies(${target} ${compiler})
  endif()
  if(HGK_BUNDLE)
    set_target_properties(${target} PROPERTIES HOLOGRAM_BUNDLE "${bundle}")
  endif()
endfunction()
