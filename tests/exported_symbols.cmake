# librockdoc.so exports the public API and nothing else (include/rockdoc/
# export.h, src/librockdoc.map). Run by CTest:
#   cmake -DNM=nm -DLIBRARY=librockdoc.so -P this file
# Every symbol of `nm -D --defined-only` (mangled names: they hold no space,
# bracket or semicolon, which CMake lists would split on) must be one of:
#  - the C API, rockdoc_* (rockdoc/c.h);
#  - a C++ symbol of namespace rockdoc outside rockdoc::internal: the classes
#    and functions that include/rockdoc/ marks ROCKDOC_EXPORT (_ZN7rockdoc...;
#    _ZNK, _ZNR, _ZNO for const and ref-qualified members). An exported
#    class exports its private members too (Client's constructor from the
#    engine, say), whose parameters may name internal types: the class is
#    the unit of export;
#  - the typeinfo, typeinfo name and vtable of such a class (_ZTI, _ZTS,
#    _ZTV N7rockdoc...), which the C++ ABI emits for an exported class when a
#    program may need them (dynamic_cast, exceptions, virtual calls);
#  - rockdoc::internal::DieOnBadStatusOrAccess(rockdoc::Status const&): the
#    one internal function the public headers call (rockdoc/status.h:
#    StatusOr<T>'s inline accessors, instantiated in the user's program);
#  - the markers the linker defines in every shared library (_init, _fini,
#    _edata, _end, __bss_start).
# No std:: template instantiation (the library's copies are its own) and no
# symbol of the layers (src/) nor of a third-party library.
cmake_minimum_required(VERSION 3.22)
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed: ${rc}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${out}")
set(allowed_internal "_ZN7rockdoc8internal22DieOnBadStatusOrAccessERKNS_6StatusE")
set(linker_markers _init _fini _edata _end __bss_start)
set(offenders)
set(c_api 0)
set(cxx_api 0)
foreach(line IN LISTS lines)
  # "<address> <type> <name>[@version]"
  string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] +" "" name "${line}")
  string(REGEX REPLACE "@.*" "" name "${name}")
  if(name MATCHES "^rockdoc_[a-z0-9_]+$")
    math(EXPR c_api "${c_api} + 1")
  elseif(name STREQUAL allowed_internal OR name IN_LIST linker_markers)
  elseif(name MATCHES "^_Z(N[KRO]*|T[ISV]N)7rockdoc" AND
         NOT name MATCHES "^_Z(N[KRO]*|T[ISV]N)7rockdoc8internal")
    math(EXPR cxx_api "${cxx_api} + 1")
  else()
    list(APPEND offenders "${name}")
  endif()
endforeach()
list(LENGTH lines total)
if(offenders)
  list(LENGTH offenders n)
  # The first 40, demangled when c++filt is there.
  list(SUBLIST offenders 0 40 shown)
  find_program(CXXFILT c++filt)
  if(CXXFILT)
    execute_process(COMMAND ${CXXFILT} ${shown} OUTPUT_VARIABLE shown)
  else()
    list(JOIN shown "\n" shown)
  endif()
  message(FATAL_ERROR
          "${n} of the ${total} symbols librockdoc.so exports are not the public API, e.g.:\n${shown}")
endif()
if(c_api EQUAL 0 OR cxx_api EQUAL 0)
  message(FATAL_ERROR "librockdoc.so exports ${c_api} C and ${cxx_api} C++ API symbols: expected both")
endif()
message(STATUS "librockdoc.so exports ${total} symbols: ${c_api} of the C API, ${cxx_api} of the C++ API")
