# commscope-microbench: Google Benchmark of the local reduction loops (reduce_host) per
# datatype and op, beside memcpy (no MPI at run time); `commscope-microbench harness`: the time
# the bench's harness adds to an MPI_Allreduce call. Included from bench/CMakeLists.txt.
find_package(benchmark REQUIRED)

add_executable(commscope-microbench ${CMAKE_CURRENT_LIST_DIR}/microbench.cpp ${CMAKE_CURRENT_LIST_DIR}/harness_overhead.cpp)
target_link_libraries(commscope-microbench PRIVATE commscope_bench_core commscope::collectives benchmark::benchmark
                      CLI11::CLI11 commscope_build_flags)
target_include_directories(commscope-microbench PRIVATE ${COMMSCOPE_BENCH_SRC})
install(TARGETS commscope-microbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(COMMSCOPE_BUILD_TESTS)
  # Smoke run: every benchmark at the smallest size (4 KiB) only, minimal time each.
  add_test(NAME bench.microbench.smoke
           COMMAND $<TARGET_FILE:commscope-microbench> --benchmark_min_time=0.001 "--benchmark_filter=/4096$")
  set_tests_properties(bench.microbench.smoke PROPERTIES LABELS "unit" ENVIRONMENT "${COMMSCOPE_TEST_ENV}" TIMEOUT 60)
  # The harness-overhead command: its three lines at 1 and 3 ranks (a smoke run: the figures
  # are measured by hand, never asserted), and its refusals.
  set(expect ${CMAKE_CURRENT_LIST_DIR}/tests/expect.sh)
  set(harness_lines "^commscope-bench timed loop +[0-9.]+ ns/call +[-+][0-9.]+ ns$")
  add_test(NAME bench.microbench.harness COMMAND ${expect} 0 "${harness_lines}" 0 --
           $<TARGET_FILE:commscope-microbench> harness --calls 2000 --rounds 3)
  add_test(NAME bench.microbench.harness.np3 COMMAND ${expect} 0 "${harness_lines}" 0 --
           ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 ${COMMSCOPE_MPIEXEC_FLAGS}
           $<TARGET_FILE:commscope-microbench> harness --calls 500 --rounds 3)
  add_test(NAME bench.microbench.harness.bad_calls COMMAND ${expect} 2 "--calls" 0 --
           $<TARGET_FILE:commscope-microbench> harness --calls 0)
  add_test(NAME bench.microbench.harness.bad_bytes COMMAND ${expect} 2 "--bytes: Value 2 not in range" 0 --
           $<TARGET_FILE:commscope-microbench> harness --bytes 2)
  set_tests_properties(bench.microbench.harness bench.microbench.harness.bad_calls bench.microbench.harness.bad_bytes
                       PROPERTIES LABELS "unit" ENVIRONMENT "${COMMSCOPE_TEST_ENV}" TIMEOUT 60)
  set_tests_properties(bench.microbench.harness.np3 PROPERTIES LABELS "mpi" ENVIRONMENT "${COMMSCOPE_TEST_ENV}"
                       TIMEOUT 120 PROCESSORS 2)
endif()
