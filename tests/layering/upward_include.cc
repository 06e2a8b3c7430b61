// Compiled by tests/CMakeLists.txt's layering tests in two layers' include
// contexts: in api's it compiles; in exec's it must fail, because api/ is
// above exec/ and exec's include tree does not hold it.
#include "api/collection_internal.h"

int rockdoc_layering_probe() { return 0; }
