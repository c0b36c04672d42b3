# commscope_bench_env: environment capture for the benchmark tools (versions, hosts, CPU, MPI,
# CUDA/NCCL, communication environment variables). Internal static library, not installed.
# Included from bench/CMakeLists.txt.
add_library(commscope_bench_env STATIC ${CMAKE_CURRENT_LIST_DIR}/src/environment.cpp)
target_include_directories(commscope_bench_env PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
target_compile_definitions(commscope_bench_env PRIVATE "COMMSCOPE_VERSION=\"${PROJECT_VERSION}\"")
target_link_libraries(commscope_bench_env PUBLIC commscope::collectives PRIVATE commscope_build_flags)
if(COMMSCOPE_WITH_CUDA)
  target_sources(commscope_bench_env PRIVATE ${CMAKE_CURRENT_LIST_DIR}/src/environment_cuda.cpp)
  target_compile_definitions(commscope_bench_env PRIVATE COMMSCOPE_WITH_CUDA=1)
  target_link_libraries(commscope_bench_env PRIVATE CUDA::cudart commscope_nccl)
endif()

if(COMMSCOPE_BUILD_TESTS)
  add_executable(test_bench_environment ${CMAKE_CURRENT_LIST_DIR}/tests/test_environment.cpp)
  target_link_libraries(test_bench_environment PRIVATE commscope_bench_env commscope_build_flags GTest::gtest)
  if(COMMSCOPE_WITH_CUDA)
    target_compile_definitions(test_bench_environment PRIVATE COMMSCOPE_WITH_CUDA=1)
  endif()
  commscope_add_mpi_test(NAME bench.environment.np3 RANKS 3 COMMAND $<TARGET_FILE:test_bench_environment> TIMEOUT 120)
endif()
