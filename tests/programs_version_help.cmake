# Every program answers --version ("<program> version: <version>") and
# --help (its flags, --version among them) on stdout with exit status 0
# (issue 33.13: rockdoc, rockdoc-serve and rockdoc-lab had no --version).
# Variables: PROGRAMS (a list of program paths), VERSION.
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name ${program} NAME)
  execute_process(COMMAND ${program} --version RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "${name} version: ${VERSION}\n")
    message(FATAL_ERROR "${name} --version: status ${rc}, stdout '${out}', stderr '${err}'")
  endif()
  execute_process(COMMAND ${program} --help RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "--version" OR NOT out MATCHES "--help")
    message(FATAL_ERROR "${name} --help: status ${rc}, stdout '${out}', stderr '${err}'")
  endif()
endforeach()
