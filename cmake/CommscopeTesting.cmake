# Helpers for registering tests. MPI tests run the real launcher with a given rank count;
# as root Open MPI needs its allow-run-as-root variables, and more ranks than cores need
# --oversubscribe, so both are set for every MPI test.
set(COMMSCOPE_MPIEXEC_FLAGS --oversubscribe --bind-to none CACHE STRING "Extra flags for mpiexec in tests")
set(COMMSCOPE_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)

# commscope_add_mpi_test(NAME name RANKS n COMMAND exe args... [LABELS ...] [TIMEOUT s])
function(commscope_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;RANKS;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${COMMSCOPE_MPIEXEC_FLAGS}
                   ${MPIEXEC_PREFLAGS} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${COMMSCOPE_TEST_ENV}" TIMEOUT ${T_TIMEOUT}
                                            LABELS "mpi;${T_LABELS}" PROCESSORS 2)
endfunction()

# A Python 3 with h5py for the tests that read HDF5 files independently (Debian: python3-h5py):
# COMMSCOPE_H5PY_PYTHON, empty when there is none (those tests then skip, saying why).
set(COMMSCOPE_H5PY_PYTHON "")
foreach(candidate python3 /usr/bin/python3)
  execute_process(COMMAND ${candidate} -c "import h5py" RESULT_VARIABLE h5py_rc OUTPUT_QUIET ERROR_QUIET)
  if(h5py_rc EQUAL 0)
    set(COMMSCOPE_H5PY_PYTHON ${candidate})
    break()
  endif()
endforeach()
