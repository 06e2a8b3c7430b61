// rockdoc: the mongosh-style shell. All of it lives in src/shell/ so that
// tests can drive it; see src/shell/README.md.
#include "shell/shell.h"

int main(int argc, char** argv) { return rockdoc::shell::RunMain(argc, argv); }
