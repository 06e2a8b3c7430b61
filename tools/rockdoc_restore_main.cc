// rockdoc-restore: mongorestore's flags over a rockdoc directory (--dbpath). All
// of it lives in src/tools/ so that tests can drive it.
#include <iostream>

#include "tools/mains.h"

int main(int argc, char** argv) { return rockdoc::tools::RestoreMain(argc, argv, std::cerr); }
