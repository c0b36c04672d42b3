# commscope-microbench: Google Benchmark of the local reduction loops (reduce_host) per
# datatype and op, beside memcpy. No MPI at run time. Included from bench/CMakeLists.txt.
find_package(benchmark REQUIRED)

add_executable(commscope-microbench ${CMAKE_CURRENT_LIST_DIR}/microbench.cpp)
target_link_libraries(commscope-microbench PRIVATE commscope::collectives benchmark::benchmark commscope_build_flags)
install(TARGETS commscope-microbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

if(COMMSCOPE_BUILD_TESTS)
  # Smoke run: every benchmark at the smallest size (4 KiB) only, minimal time each.
  add_test(NAME bench.microbench.smoke
           COMMAND $<TARGET_FILE:commscope-microbench> --benchmark_min_time=0.001 "--benchmark_filter=/4096$")
  set_tests_properties(bench.microbench.smoke PROPERTIES LABELS "unit" ENVIRONMENT "${COMMSCOPE_TEST_ENV}" TIMEOUT 60)
endif()
