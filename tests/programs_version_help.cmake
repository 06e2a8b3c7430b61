# Every program answers --version ("<program> version: <version>") and
# --help (its flags, --version among them) on stdout with exit status 0
# (issue 33.13: rockdoc, rockdoc-serve and rockdoc-lab had no --version).
# Every program decodes its command line with the one flag parser
# (src/tools/flags.h, issue 35 item 7): an unknown flag fails with a non-zero
# status (2 as mongod's and the shell's, 3 as mongo-tools') and that parser's
# words on stderr.
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
  execute_process(COMMAND ${program} --no-such-flag RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "error parsing command line options: unknown option \"--no-such-flag\"")
    message(FATAL_ERROR "${name} --no-such-flag: status ${rc}, stdout '${out}', stderr '${err}'")
  endif()
endforeach()
