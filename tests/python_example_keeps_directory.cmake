# Runs examples/python/rockdoc_example.py with --dbpath naming a directory
# that holds a file: the example must refuse it (non-zero exit) and leave the
# file where it was. Variables: PYTHON, EXAMPLE, LIBRARY, WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/mine)
file(WRITE ${WORK_DIR}/mine/precious.txt "the user's data\n")
execute_process(COMMAND ${PYTHON} ${EXAMPLE} --library ${LIBRARY} --dbpath ${WORK_DIR}/mine
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "the example accepted a directory that holds a file:\n${out}${err}")
endif()
if(NOT EXISTS ${WORK_DIR}/mine/precious.txt)
  message(FATAL_ERROR "the example deleted the directory it was given")
endif()
if(NOT err MATCHES "never deletes")
  message(FATAL_ERROR "the refusal does not say why: ${err}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
