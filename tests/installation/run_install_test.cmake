# Installs the built library into a scratch prefix, then configures, builds
# and runs tests/installation/consumer against it with find_package(rockdoc).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/installation/consumer
                        -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix}
                        -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer ${WORK_DIR}/db
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "consumer printed: ${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
if(NOT out MATCHES "rockdoc consumer ok")
  message(FATAL_ERROR "the consumer did not report success")
endif()

# The C API as a C program of another project sees it: pkg-config's flags,
# the installed shared library.
file(GLOB_RECURSE pc_files ${prefix}/rockdoc.pc)
if(NOT pc_files)
  message(FATAL_ERROR "rockdoc.pc was not installed")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
get_filename_component(lib_dir ${pc_dir} DIRECTORY)
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
                        pkg-config --cflags --libs rockdoc
                OUTPUT_VARIABLE pc_flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs rockdoc failed: ${rc}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
execute_process(COMMAND cc -std=c99 -Wall -Werror ${SOURCE_DIR}/tests/installation/consumer.c
                        ${pc_flags} -o ${WORK_DIR}/consumer_c
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the C consumer with pkg-config's flags failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${lib_dir}
                        ${WORK_DIR}/consumer_c ${WORK_DIR}/cdb
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "C consumer printed: ${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "rockdoc C consumer ok")
  message(FATAL_ERROR "the C consumer failed: ${rc}")
endif()

# The Python package as README.md's "rockdoc from Python" installs it: pip
# against this prefix (ROCKDOC_PREFIX), in a fresh venv, then its example.
# PYTHON is given when the build has the shared library and Python's venv.
if(PYTHON)
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tests/python/install_check.py
                          --source ${SOURCE_DIR}/bindings/python --prefix ${prefix}
                          --venv ${WORK_DIR}/venv
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "Python install check printed: ${out}")
  if(rc EQUAL 77)
    message(STATUS "Python package not checked: ${out}")
  elseif(NOT rc EQUAL 0 OR NOT out MATCHES "its example passed")
    message(FATAL_ERROR "pip install against the installed prefix failed: ${rc}\n${out}${err}")
  endif()
endif()

# The Node.js package as README.md's "rockdoc from Node.js" installs it: npm
# against this prefix (ROCKDOC_PREFIX), in a fresh folder, then its example.
# NODE is given when the build has the shared library and Node.js.
if(NODE)
  execute_process(COMMAND ${NODE} ${SOURCE_DIR}/tests/node/install_check.js
                          --source ${SOURCE_DIR}/bindings/node --prefix ${prefix}
                          --app ${WORK_DIR}/node_app
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "Node.js install check printed: ${out}")
  if(rc EQUAL 77)
    message(STATUS "Node.js package not checked: ${out}")
  elseif(NOT rc EQUAL 0 OR NOT out MATCHES "its example passed")
    message(FATAL_ERROR "npm install against the installed prefix failed: ${rc}\n${out}${err}")
  endif()
endif()
