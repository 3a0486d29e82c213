# One warning policy for every target of the project: hologram_set_warnings(<target>).
function(hologram_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                         -Wimplicit-fallthrough -Wswitch-enum $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
  # GCC 12 at -O3 (the Release build of the benchmarks) reports std::string's own inlined
  # copies in `"literal" + std::string` as overlapping memcpy calls (GCC bug 105329, fixed in
  # GCC 13); -Wrestrict then stops the build on code that is correct.
  target_compile_options(${target} PRIVATE
                         $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
  if(HOLOGRAM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
