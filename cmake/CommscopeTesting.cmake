# Helpers for registering tests. MPI tests run the real launcher with a given rank count;
# as root Open MPI needs its allow-run-as-root variables, and more ranks than cores need
# --oversubscribe, so both are set for every MPI test.
set(COMMSCOPE_MPIEXEC_FLAGS --oversubscribe --bind-to none CACHE STRING "Extra flags for mpiexec in tests")
# OMPI_MCA_pml=ob1: the point-to-point layer Open MPI picks on one node and over TCP anyway, named
# so that each rank skips loading the others' (Debian's PSM and PSM2 transports: 0.2 s a launch,
# an MPI program's start 0.39 s against 0.18 s here, over hundreds of launches).
# OMPI_MCA_odls_base_sigkill_timeout=0: when a rank exits with an error (every refusal tested under
# mpirun) Open MPI sends the others SIGTERM and SIGKILL odls_base_sigkill_timeout seconds later, and
# waits that long even when they have already gone: 1 s by default, 2 s a job, 62 of the bench
# tests' 138 s. The tests of a stop keep the default (COMMSCOPE_STOP_TEST_ENV): the SIGTERM's
# second is the time the ranks have to publish their files, which is what they check.
set(commscope_test_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
                       OMPI_MCA_pml=ob1)
set(COMMSCOPE_TEST_ENV ${commscope_test_env} OMPI_MCA_odls_base_sigkill_timeout=0)
set(COMMSCOPE_STOP_TEST_ENV ${commscope_test_env} OMPI_MCA_odls_base_sigkill_timeout=1)
# A machine file with every figure commscope-bench's start-up would measure (bench/tests/data): a
# test's run with --out given it through COMMSCOPE_MACHINE skips the probes, 1.7 s of its 2.1 s
# start at 2 ranks here, where the machine's figures are not what the test checks.
set(COMMSCOPE_GIVEN_MACHINE COMMSCOPE_MACHINE=${PROJECT_SOURCE_DIR}/bench/tests/data/given-machine.txt)

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

# commscope_add_unit_test(NAME name TARGET test_x SOURCES file... LINK library... [INCLUDES dir...]
#                         [TIMEOUT s] [ENVIRONMENT var=value...])
# A GoogleTest program (with gtest_main and the project's build flags) run as one test, alone,
# labelled unit; ctest's default timeout unless TIMEOUT.
function(commscope_add_unit_test)
  cmake_parse_arguments(T "" "NAME;TARGET;TIMEOUT" "SOURCES;LINK;INCLUDES;ENVIRONMENT" ${ARGN})
  add_executable(${T_TARGET} ${T_SOURCES})
  target_link_libraries(${T_TARGET} PRIVATE ${T_LINK} commscope_build_flags GTest::gtest_main)
  if(T_INCLUDES)
    target_include_directories(${T_TARGET} PRIVATE ${T_INCLUDES})
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_TARGET})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "unit")
  if(T_TIMEOUT)
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_ENVIRONMENT)
    set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
endfunction()

# commscope_tests_wait(NAME...): MPI tests whose ranks spend their seconds waiting (a watchdog's or
# a timeout's, a stop's or a signal's: 0.02-0.16 CPU seconds a second, measured) hold one of
# ctest's two slots, not both, so that a single-process test runs beside them. Each writes files
# of its own; a test that finds its ranks finds them as its launcher's children, never by name.
# Labelled "waits" (ctest -L waits).
function(commscope_tests_wait)
  set_tests_properties(${ARGN} PROPERTIES PROCESSORS 1)
  foreach(t IN LISTS ARGN)
    set_property(TEST ${t} APPEND PROPERTY LABELS waits)
  endforeach()
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

# The test programs (every target named test_*, or whose sources are all in a tests/ folder; those
# that compile a source of the tool they test beside their own, too) compile at -O1: what
# they test is in the libraries, built as the project is (-O3 in Release); their own code only
# calls and checks it. At -O3 they took 767 of a first build's 1,883 compile CPU seconds (108
# files); at -O1 a file compiles in about 40% less time (test_chakra.cpp 11.5 s against 18.7 s).
# In a first build (COMMSCOPE_UNITY) those that use GoogleTest also share one precompiled gtest.h
# (commscope_test_pch, built first with the same flags): each of their 57 batches parsed it, about
# 2 s of a 3-5 s compile (test_bench_rows 4.3 -> 2.2 CPU s, test_collectives_half 3.5 -> 1.5).
# Not in incremental builds: ccache does not cache what includes a precompiled header.
# Called once, after every folder is added.
function(commscope_tests_optimised_less)
  set(release FALSE)
  if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    set(release TRUE)
  endif()
  if(COMMSCOPE_UNITY)
    add_executable(commscope_test_pch ${PROJECT_SOURCE_DIR}/cmake/test_pch.cpp)
    target_link_libraries(commscope_test_pch PRIVATE GTest::gtest_main commscope_build_flags)
    target_precompile_headers(commscope_test_pch PRIVATE <gtest/gtest.h>)
    if(release)
      target_compile_options(commscope_test_pch PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
    endif()
  endif()
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(NOT type STREQUAL "EXECUTABLE" OR t STREQUAL "commscope_test_pch")
        continue()
      endif()
      get_target_property(sources ${t} SOURCES)
      get_target_property(source_dir ${t} SOURCE_DIR)
      set(all_tests TRUE)
      foreach(src IN LISTS sources)
        cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE full)
        if(NOT full MATCHES "/tests/")
          set(all_tests FALSE)
        endif()
      endforeach()
      if(NOT all_tests AND NOT t MATCHES "^test_")
        continue()
      endif()
      if(release)
        target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
      endif()
      # Not the trainer's: they compile with OpenMP, and GCC refuses a header precompiled without.
      get_target_property(libs ${t} LINK_LIBRARIES)
      if(COMMSCOPE_UNITY AND libs MATCHES "GTest::" AND NOT libs MATCHES "commscope_trainer")
        target_precompile_headers(${t} REUSE_FROM commscope_test_pch)
      endif()
    endforeach()
  endwhile()
endfunction()
