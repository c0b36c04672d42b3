# Compile flags every commscope target gets, through the interface target commscope_build_flags.
add_library(commscope_build_flags INTERFACE)
target_compile_options(commscope_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${COMMSCOPE_WERROR}>>:-Werror>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${COMMSCOPE_NATIVE}>>:-march=native>)
# A unity build's batch includes the .cpp files, so GCC takes their anonymous namespaces for a
# header's and warns of each class holding one of their types (model_cuda.cpp's Impl).
if(COMMSCOPE_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(commscope_build_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()
if(COMMSCOPE_SANITIZE)
  target_compile_options(commscope_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(commscope_build_flags INTERFACE -fsanitize=address,undefined)
endif()
# Build-time only: linked as $<BUILD_INTERFACE:...>, so consumers of the installed package do not inherit it.

# commscope_command_line_sources(SOURCE ...): a tool's main that only reads its command line (CLI11)
# and calls the libraries compiles at -O1. CLI11 is the build's heaviest header: a file that includes
# it takes 15.7 s at -O3 against 9.3 at -O1 here, whatever else it holds. Not for a main that times
# anything itself. Call it in the folder that adds the target.
function(commscope_command_line_sources)
  if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS -O1)
  endif()
endfunction()
