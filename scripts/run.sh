#!/usr/bin/env bash
# The main job from a clean clone: installs the Debian packages, builds in
# Release mode, runs the demo, then the schema-patterns lab in quick mode.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DROCKDOC_BUILD_TESTS=OFF \
  -DROCKDOC_BUILD_BENCHMARKS=OFF
cmake --build build-release -j "$(nproc)"
./build-release/tools/rockdoc-demo rockdoc-data/demo
./build-release/tools/lab/rockdoc-lab --quick --out lab-report
cat <<MSG

The lab's report: lab-report/report.md (raw figures in lab-report/results.json).
The shell:        ./build-release/tools/rockdoc --db rockdoc-data/demo
                  (then: use library; db.books.find())
MSG
