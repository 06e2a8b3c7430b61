# Fails when a source file outside src/storage/ includes a RocksDB header
# (RocksDB's headers are system headers, so the per-layer include trees
# cannot hide them). Run by CTest: cmake -DSOURCE_DIR=... -P this file.
file(GLOB_RECURSE sources ${SOURCE_DIR}/src/*.h ${SOURCE_DIR}/src/*.cc)
set(offenders)
foreach(f IN LISTS sources)
  if(f MATCHES "/src/storage/")
    continue()
  endif()
  file(STRINGS ${f} lines REGEX "^#include <rocksdb/")
  if(lines)
    list(APPEND offenders ${f})
  endif()
endforeach()
if(offenders)
  message(FATAL_ERROR "RocksDB headers included above storage/: ${offenders}")
endif()
list(LENGTH sources n)
message(STATUS "${n} sources checked: RocksDB is included by storage/ alone")
