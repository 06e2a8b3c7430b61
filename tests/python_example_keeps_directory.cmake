# Runs the Python package's quickstart (bindings/python/examples/quickstart.py)
# with a directory that holds a file: the example must refuse it (non-zero
# exit), say why, and leave the file where it was (issue 33.16: the old
# ctypes example deleted the directory it was given); then with a new
# directory, which it must make and leave. Variables: PYTHON (the venv's),
# EXAMPLE, WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/mine)
file(WRITE ${WORK_DIR}/mine/precious.txt "the user's data\n")
execute_process(COMMAND ${PYTHON} ${EXAMPLE} ${WORK_DIR}/mine
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
execute_process(COMMAND ${PYTHON} ${EXAMPLE} ${WORK_DIR}/new
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "all steps passed")
  message(FATAL_ERROR "the example failed on a new directory:\n${out}${err}")
endif()
if(NOT IS_DIRECTORY ${WORK_DIR}/new)
  message(FATAL_ERROR "the example did not leave the database it made")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
