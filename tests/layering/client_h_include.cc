// Compiled by tests/CMakeLists.txt's layering tests in two layers' include
// contexts: in api's it compiles; in pipeline's (the highest layer below
// api/) it must fail, because the layers below api/ see the public
// vocabulary headers (rockdoc/options.h, rockdoc/results.h, ...) and not the
// client's header (src/CMakeLists.txt).
#include "rockdoc/client.h"

int rockdoc_client_h_probe() { return 0; }
