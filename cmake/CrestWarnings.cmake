# crest_target_warnings(<target>): the warning set every Crest target builds with.
# CREST_WERROR (on in CI) turns them into errors.
function(crest_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
  if(CREST_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
