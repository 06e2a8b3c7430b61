# Writes OUT (a header defining ROCKDOC_LAB_COMMIT) from git HEAD of SRC, at
# build time, and only when the text changes (so nothing recompiles for
# nothing). "-dirty" marks a tree with uncommitted changes to tracked files.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD RESULT_VARIABLE rc
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0)
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "#define ROCKDOC_LAB_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
