# Compiles README.md's C++ examples (its ```cpp blocks) against the public
# headers with -Wall -Wextra -Werror, so that an example the README shows is
# one that builds cleanly (issue 33.16: it produced [[nodiscard]] warnings).
# The blocks are one program, in order: their #include and using lines at
# file scope, the rest the body of a function returning rockdoc::Status (as
# the README says). Variables: README, INCLUDE_DIR, CXX, WORK_DIR.
file(READ ${README} text)
# CMake lists split at ';': a placeholder keeps the code's own.
string(REPLACE ";" "@SEMICOLON@" text "${text}")
string(REGEX MATCHALL "```cpp\n[^`]*```" blocks "${text}")
list(LENGTH blocks count)
if(count EQUAL 0)
  message(FATAL_ERROR "no ```cpp block in ${README}")
endif()
set(head "")
set(body "")
foreach(block IN LISTS blocks)
  string(REGEX REPLACE "^```cpp\n" "" block "${block}")
  string(REGEX REPLACE "```$" "" block "${block}")
  string(REPLACE "\n" ";" lines "${block}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#include" OR line MATCHES "^using ")
      string(APPEND head "${line}\n")
    else()
      string(APPEND body "  ${line}\n")
    endif()
  endforeach()
endforeach()
string(REPLACE "@SEMICOLON@" ";" head "${head}")
string(REPLACE "@SEMICOLON@" ";" body "${body}")
file(MAKE_DIRECTORY ${WORK_DIR})
file(WRITE ${WORK_DIR}/readme_examples.cc
  "${head}\nrockdoc::Status ReadmeExamples() {\n${body}  return rockdoc::Status::OK();\n}\n")
execute_process(
  COMMAND ${CXX} -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I${INCLUDE_DIR}
          ${WORK_DIR}/readme_examples.cc
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "README.md's C++ examples do not compile cleanly "
                      "(${WORK_DIR}/readme_examples.cc):\n${out}${err}")
endif()
message(STATUS "${count} README C++ blocks compile with -Wall -Wextra -Werror")
