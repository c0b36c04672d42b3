# OpenBLAS (sgemm/dgemm) as the interface target commscope_openblas: its libraries and the
# folder of its own cblas.h, which also declares openblas_set_num_threads. Used by the trainer's
# GEMMs and the doctor's sgemm probe.
if(TARGET commscope_openblas)
  return()
endif()
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(COMMSCOPE_OPENBLAS_INCLUDE_DIR openblas_config.h
          PATH_SUFFIXES openblas-pthread openblas x86_64-linux-gnu/openblas-pthread x86_64-linux-gnu/openblas)
if(NOT COMMSCOPE_OPENBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "OpenBLAS headers not found (Debian: libopenblas-dev)")
endif()
add_library(commscope_openblas INTERFACE)
target_include_directories(commscope_openblas SYSTEM INTERFACE ${COMMSCOPE_OPENBLAS_INCLUDE_DIR})
target_link_libraries(commscope_openblas INTERFACE ${BLAS_LIBRARIES})
