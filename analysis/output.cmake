# The report's outputs: tables (terminal, Markdown, CSV) and plots drawn with gnuplot (SVG, PNG).
set(output_src ${CMAKE_CURRENT_SOURCE_DIR}/src/output)
add_library(commscope_analysis_output STATIC ${output_src}/table.cpp ${output_src}/files.cpp ${output_src}/gnuplot.cpp
                                             ${output_src}/plots.cpp ${output_src}/image_checks.cpp)
target_include_directories(commscope_analysis_output PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(commscope_analysis_output PUBLIC commscope_analysis_core PRIVATE commscope_build_flags)

if(COMMSCOPE_BUILD_TESTS)
  commscope_add_unit_test(NAME analysis.output TARGET test_analysis_output
                          SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_output.cpp LINK commscope_analysis_output
                          ENVIRONMENT COMMSCOPE_TEST_TMP=${CMAKE_CURRENT_BINARY_DIR})
endif()
