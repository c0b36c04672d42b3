# The report's input readers (bench results files and profiles, HDF5 only) and their tests.
# Included from analysis/CMakeLists.txt.
add_library(commscope_analysis_inputs STATIC ${CMAKE_CURRENT_SOURCE_DIR}/src/inputs/inputs.cpp)
target_include_directories(commscope_analysis_inputs PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_compile_features(commscope_analysis_inputs PUBLIC cxx_std_20)
target_link_libraries(commscope_analysis_inputs PUBLIC commscope::h5 commscope::profiler_core commscope::model commscope::common
                      PRIVATE commscope::formats commscope_build_flags)

if(COMMSCOPE_BUILD_TESTS)
  # bench_fits.cpp: the report's pooling of bench rows, tested on files built in memory.
  commscope_add_unit_test(NAME analysis.inputs TARGET test_analysis_inputs
                          SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_inputs.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/src/report/bench_fits.cpp
                          LINK commscope_analysis_inputs commscope::analysis_core commscope::formats commscope::common
                          ENVIRONMENT COMMSCOPE_TEST_TMP=${CMAKE_CURRENT_BINARY_DIR})

  # The schema names: the one form written, the doctor's earlier name still read.
  commscope_add_unit_test(NAME analysis.schemas TARGET test_analysis_schemas
                          SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_schemas.cpp
                          LINK commscope_analysis_inputs commscope::formats commscope::common)

  # read_any KIND FILE: preflight + reader, "ok" or the InputError line (the fuzz test's reader).
  add_executable(test_analysis_read_any ${CMAKE_CURRENT_SOURCE_DIR}/tests/read_any.cpp)
  target_link_libraries(test_analysis_read_any PRIVATE commscope_analysis_inputs commscope_build_flags)

  # Fixture files from the real programs (bench and trainer, 1, 2 and 4 ranks). The machine's
  # figures and the trainer's GEMM reference given, not probed (no test reads them as measured): 7 s
  # against 18.
  set(fixture_env "${COMMSCOPE_TEST_ENV};${COMMSCOPE_GIVEN_MACHINE};COMMSCOPE_GEMM_GFLOPS=100")
  add_test(NAME analysis.fixtures
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/fixtures.sh $<TARGET_FILE_DIR:commscope-bench>
                   ${CMAKE_BINARY_DIR}/fixtures ${MPIEXEC_EXECUTABLE})
  set_tests_properties(analysis.fixtures PROPERTIES FIXTURES_SETUP report_fixtures LABELS "mpi" PROCESSORS 2
                                                    TIMEOUT 300 ENVIRONMENT "${fixture_env}")

  # A fixture older than the program that writes it is written again (a stale file from before a
  # schema change): a copy of the fixtures with bench-np1.h5 replaced by an old non-HDF5 file
  # gets a fresh, readable one, and the other eight are kept.
  add_test(NAME analysis.fixtures_stale
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/fixtures_stale.sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/fixtures.sh
                   $<TARGET_FILE_DIR:commscope-bench> ${CMAKE_BINARY_DIR}/fixtures ${CMAKE_CURRENT_BINARY_DIR}/stale-fixtures
                   ${MPIEXEC_EXECUTABLE})
  set_tests_properties(analysis.fixtures_stale PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "mpi" PROCESSORS 2
                                                          TIMEOUT 300 ENVIRONMENT "${fixture_env}")

  # commscope-bench --from-profile on the trainer's profiles (ddp, ZeRO-3 and tp 2 with SP at 2 ranks, tp 2 x pp 2
  # at 4): every collective call of each has its bench row in commscope-report profile --bench. The
  # machine's figures given, not probed (COMMSCOPE_GIVEN_MACHINE): 4 benches, 12 of the test's 17 s.
  add_test(NAME analysis.from_profile
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/from_profile.sh $<TARGET_FILE_DIR:commscope-bench>
                   ${CMAKE_BINARY_DIR}/fixtures ${CMAKE_CURRENT_BINARY_DIR}/from-profile ${MPIEXEC_EXECUTABLE}
                   ${COMMSCOPE_MPIEXEC_FLAGS})
  set_tests_properties(analysis.from_profile PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "mpi" PROCESSORS 2
                                                        TIMEOUT 300 ENVIRONMENT "${COMMSCOPE_TEST_ENV};${COMMSCOPE_GIVEN_MACHINE}")

  # Damaged variants of the fixtures: every one read without a crash, a hang or a multi-line error.
  add_test(NAME analysis.fuzz_inputs
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz_inputs.sh $<TARGET_FILE:test_analysis_read_any>
                   ${CMAKE_BINARY_DIR}/fixtures ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
  set_tests_properties(analysis.fuzz_inputs PROPERTIES FIXTURES_REQUIRED report_fixtures LABELS "unit" TIMEOUT 900)
endif()
