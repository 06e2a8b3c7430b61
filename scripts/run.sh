#!/usr/bin/env bash
# The main job from a clean clone: installs the Debian packages, builds in
# Release mode, and runs the demo program over a scratch database.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DROCKDOC_BUILD_TESTS=OFF
cmake --build build-release -j "$(nproc)"
./build-release/tools/rockdoc-demo "${1:-rockdoc-data/demo}"
