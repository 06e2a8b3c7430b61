// rockdoc-advise: the schema advisor over a rockdoc directory. All of it
// lives in src/tools/ so that tests can drive it.
#include <iostream>

#include "tools/mains.h"

int main(int argc, char** argv) { return rockdoc::tools::AdviseMain(argc, argv, std::cout, std::cerr); }
