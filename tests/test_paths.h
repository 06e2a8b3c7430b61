// Where the tests find their data: the specification test data
// (../shared/test-data beside the checkout) and this folder's own files.
// The two paths are compiled into one small generated source
// (test_paths.cc.in) rather than passed to every test as -D flags, so
// that every other test source compiles to the same command line wherever
// the checkout lies, and a compiler cache shares its results between
// checkouts (CI builds a fresh clone in a folder of its own).
#ifndef ROCKDOC_TESTS_TEST_PATHS_H_
#define ROCKDOC_TESTS_TEST_PATHS_H_

#include <string>

namespace rockdoc::test {

// ../shared/test-data; the environment's ROCKDOC_TEST_DATA_DIR, when set,
// takes precedence.
std::string TestDataDir();

// The tests/ folder of the checkout.
std::string TestsSourceDir();

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_TEST_PATHS_H_
