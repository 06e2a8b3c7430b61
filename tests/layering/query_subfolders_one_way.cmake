# query/ has three folders that the build compiles as one layer, so the
# include trees cannot order them. This checks the order src/query/README.md
# states: query/expression/ includes nothing of query/update/ nor the
# filters (only query/'s leaf helpers field_path.h and regex.h), and no file
# of query/ itself includes query/update/. Run by CTest:
# cmake -DSOURCE_DIR=... -P this file.
set(offenders)
file(GLOB expression_sources ${SOURCE_DIR}/src/query/expression/*.h
     ${SOURCE_DIR}/src/query/expression/*.cc)
foreach(f IN LISTS expression_sources)
  file(STRINGS ${f} lines REGEX "^#include \"query/")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^#include \"query/(expression/|field_path\\.h|regex\\.h)")
      list(APPEND offenders "${f}: ${line}")
    endif()
  endforeach()
endforeach()
file(GLOB core_sources ${SOURCE_DIR}/src/query/*.h ${SOURCE_DIR}/src/query/*.cc)
foreach(f IN LISTS core_sources)
  file(STRINGS ${f} lines REGEX "^#include \"query/update/")
  foreach(line IN LISTS lines)
    list(APPEND offenders "${f}: ${line}")
  endforeach()
endforeach()
list(LENGTH expression_sources ne)
list(LENGTH core_sources nc)
if(ne LESS 5 OR nc LESS 5)
  message(FATAL_ERROR "found ${ne} expression and ${nc} query sources: wrong SOURCE_DIR?")
endif()
if(offenders)
  list(JOIN offenders "\n  " text)
  message(FATAL_ERROR "query/ subfolders included against their order:\n  ${text}")
endif()
message(STATUS "${ne} expression and ${nc} query sources follow query/'s one-way order")
