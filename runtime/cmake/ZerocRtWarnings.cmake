#===- ZerocRtWarnings.cmake - warning flags for runtime targets -----------===#
#
# Applied per target so that the parent project's flags are left untouched.
#
#===-----------------------------------------------------------------------===#

function(zeroc_rt_enable_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(ZEROC_RT_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
