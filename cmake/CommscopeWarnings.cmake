# Compile flags every commscope target gets, through the interface target commscope_build_flags.
add_library(commscope_build_flags INTERFACE)
target_compile_options(commscope_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${COMMSCOPE_WERROR}>>:-Werror>
  $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${COMMSCOPE_NATIVE}>>:-march=native>)
if(COMMSCOPE_SANITIZE)
  target_compile_options(commscope_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(commscope_build_flags INTERFACE -fsanitize=address,undefined)
endif()
# Build-time only: linked as $<BUILD_INTERFACE:...>, so consumers of the installed package do not inherit it.
