#===- ZerocRtFindOpenBLAS.cmake - locate OpenBLAS and its cblas.h ---------===#
#
# Sets ZEROC_RT_OPENBLAS_LIBRARY and ZEROC_RT_CBLAS_INCLUDE_DIR (cached, so
# they can be overridden on the command line). The OpenBLAS copy of cblas.h is
# preferred over whatever the system `cblas.h` alternative points to.
#
#===-----------------------------------------------------------------------===#

function(zeroc_rt_find_openblas)
  find_library(ZEROC_RT_OPENBLAS_LIBRARY NAMES openblas
    DOC "OpenBLAS library used by the zeroc runtime")
  find_path(ZEROC_RT_CBLAS_INCLUDE_DIR NAMES cblas.h
    PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas
    DOC "Directory containing OpenBLAS's cblas.h")
  if(NOT ZEROC_RT_OPENBLAS_LIBRARY OR NOT ZEROC_RT_CBLAS_INCLUDE_DIR)
    message(FATAL_ERROR
      "zeroc runtime: OpenBLAS not found "
      "(library='${ZEROC_RT_OPENBLAS_LIBRARY}', "
      "cblas.h dir='${ZEROC_RT_CBLAS_INCLUDE_DIR}'); install libopenblas-dev")
  endif()
  message(STATUS "zeroc runtime: OpenBLAS ${ZEROC_RT_OPENBLAS_LIBRARY}, "
                 "cblas.h in ${ZEROC_RT_CBLAS_INCLUDE_DIR}")
endfunction()
