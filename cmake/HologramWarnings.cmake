# One warning policy for every target of the project: hologram_set_warnings(<target>).
function(hologram_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                         -Wimplicit-fallthrough -Wswitch-enum $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>)
  if(HOLOGRAM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
