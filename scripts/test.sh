#!/usr/bin/env bash
# The whole test suite from a clean clone: installs the Debian packages,
# builds (RelWithDebInfo), runs every test through CTest, then builds the
# unit tests again with AddressSanitizer + UndefinedBehaviorSanitizer and
# runs them too (a clang build that also checks the lock annotations and
# builds the fuzz targets), the multi-threaded tests with ThreadSanitizer, and
# each fuzz target for a bounded time. Exits
# non-zero on any failure.
#
#   scripts/test.sh            # everything
#   ROCKDOC_SKIP_SANITIZERS=1 scripts/test.sh   # the plain build only
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

jobs=$(nproc)
start=$(date +%s)
# ccache (scripts/install-deps.sh installs it; CMake reads these variables
# when it first configures a build directory). CI builds a fresh clone in a
# folder of its own, on the machine whose cache the session's builds filled,
# so the cache must not key on where the checkout lies: paths under the
# checkout's parent (the clone and ../shared) are hashed relative to it, the
# working directory is left out (it only names the folder in debug
# information), and the sloppiness lets precompiled headers be cached.
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  CCACHE_BASEDIR=$(cd .. && pwd)
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  ccache --zero-stats >/dev/null
fi

# Debug information is line tables only (-g1, clang's -gline-tables-only)
# in every build here: enough for a failure's stack trace, and a quarter of
# the library's compile time less than full -g.
echo "== build (RelWithDebInfo) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build build -j "$jobs"
echo "== tests =="
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 900

if [ "${ROCKDOC_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build (clang: ASan + UBSan, -Wthread-safety, libFuzzer targets) =="
  # One clang build serves three checks, so the library is compiled once for
  # them (clang also compiles these sanitized sources in half gcc's time):
  # - the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
  #   (-O1 keeps the build and the run short on two cores);
  # - the lock annotations (ABSL_GUARDED_BY and friends; the protocol is in
  #   src/store/collection_lock.h), checked by clang at compile time as errors;
  # - the libFuzzer targets (the library carries coverage instrumentation,
  #   which the tests ignore), run by scripts/fuzz.sh below.
  asan_start=$(date +%s)
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DROCKDOC_SANITIZE=ON -DROCKDOC_THREAD_SAFETY=ON -DROCKDOC_BUILD_FUZZERS=ON \
    -DCMAKE_CXX_FLAGS="-O1" -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
    -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -DROCKDOC_BUILD_BENCHMARKS=OFF -DROCKDOC_BUILD_TOOLS=OFF \
    -DROCKDOC_BUILD_SHARED=OFF
  cmake --build build-asan -j "$jobs"
  echo "== build took $(( $(date +%s) - asan_start )) s =="
  echo "== tests under ASan + UBSan =="
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 1800 \
      -E 'install_find_package|Slow'

  echo "== build (ThreadSanitizer) =="
  # Only the multi-threaded tests: the concurrency suites (plain writes and
  # transactions), the concurrent unique-index inserts, maxTimeMS (its
  # test clock is shared), the wire server (a thread per connection),
  # change subscriptions and live queries (a thread each, writers on
  # others) and the record cache (readers and writers on threads of their
  # own). RocksDB is
  # Debian's, not instrumented, so the build links its shared library
  # (ROCKDOC_ROCKSDB_SHARED) and ignore_noninstrumented_modules=1 makes
  # ThreadSanitizer ignore what librocksdb.so does: tests/tsan.supp says why.
  # clang, like the build above: it compiles these in half gcc's time.
  tsan_start=$(date +%s)
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="-O1 -fsanitize=thread" -DCMAKE_C_FLAGS="-O1 -fsanitize=thread" \
    -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DROCKDOC_ROCKSDB_SHARED=ON \
    -DROCKDOC_BUILD_BENCHMARKS=OFF -DROCKDOC_BUILD_TOOLS=OFF -DROCKDOC_BUILD_SHARED=OFF
  cmake --build build-tsan -j "$jobs" --target concurrency_test index_test max_time_test \
    transaction_concurrency_test capped_test wire_server_test change_subscription_test \
    live_query_test record_cache_test
  echo "== tests under ThreadSanitizer =="
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 suppressions=$PWD/tests/tsan.supp"
  build-tsan/tests/concurrency_test
  build-tsan/tests/index_test --gtest_filter='*Concurrent*'
  build-tsan/tests/max_time_test
  build-tsan/tests/transaction_concurrency_test
  build-tsan/tests/capped_test --gtest_filter='*Concurrent*'
  build-tsan/tests/wire_server_test  # rockdoc serve: a thread per connection
  build-tsan/tests/change_subscription_test  # a change stream read on a thread of its own
  build-tsan/tests/live_query_test --gtest_filter='*Thread*:*Stop*'  # live queries on their own thread
  build-tsan/tests/record_cache_test  # concurrent readers and writers through the cache
  unset TSAN_OPTIONS
  echo "== ThreadSanitizer: $(( $(date +%s) - tsan_start )) s =="
fi

# --- fuzz: the libFuzzer targets, a bounded run each from the committed seed
# corpora (scripts/fuzz.sh; ROCKDOC_FUZZ_SECONDS sets the time per target).
# Skipped with ROCKDOC_SKIP_SANITIZERS=1 or ROCKDOC_SKIP_FUZZ=1.
if [ "${ROCKDOC_SKIP_SANITIZERS:-0}" != "1" ] && [ "${ROCKDOC_SKIP_FUZZ:-0}" != "1" ]; then
  ROCKDOC_FUZZ_BUILD_DIR=build-asan bash scripts/fuzz.sh
fi
# --- end fuzz

if command -v ccache >/dev/null; then
  ccache --show-stats | grep -E 'Hits|Misses' || true
fi
echo "== test.sh finished in $(( $(date +%s) - start )) s =="
