# The report's outputs: tables (terminal, Markdown, CSV) and plots drawn with gnuplot (SVG, PNG).
set(output_src ${CMAKE_CURRENT_SOURCE_DIR}/src/output)
add_library(commscope_analysis_output STATIC ${output_src}/table.cpp ${output_src}/files.cpp ${output_src}/gnuplot.cpp
                                             ${output_src}/plots.cpp ${output_src}/image_checks.cpp)
target_include_directories(commscope_analysis_output PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(commscope_analysis_output PUBLIC commscope_analysis_core PRIVATE commscope_build_flags)

if(COMMSCOPE_BUILD_TESTS)
  add_executable(test_analysis_output ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_output.cpp)
  target_link_libraries(test_analysis_output PRIVATE commscope_analysis_output commscope_build_flags GTest::gtest_main)
  add_test(NAME analysis.output COMMAND test_analysis_output)
  set_tests_properties(analysis.output PROPERTIES LABELS "unit"
                                                  ENVIRONMENT "COMMSCOPE_TEST_TMP=${CMAKE_CURRENT_BINARY_DIR}")
endif()
