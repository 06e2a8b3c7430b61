// rockdoc-serve: MongoDB's wire protocol over a rockdoc database directory
// (src/wire/server.h; README.md, "rockdoc serve").
#include "wire/server.h"

int main(int argc, char** argv) { return rockdoc::wire::ServeMain(argc, argv); }
