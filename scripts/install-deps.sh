#!/usr/bin/env bash
# Installs every Debian package rockdoc needs to build, test and benchmark.
# Idempotent: packages already present are left alone, and apt-get update runs
# only when something is missing.  Run as root (or with sudo available).
set -euo pipefail

packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git
  # library dependencies
  librocksdb-dev libsimdjson-dev libabsl-dev libpcre2-dev
  # timezones of the date expressions (absl::LoadTimeZone reads zoneinfo)
  tzdata
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  # the tools: gzip (--gzip); libbson reads what they write, in tests
  zlib1g-dev libbson-dev
  # the lab's report.html is rendered and checked in headless Chromium
  chromium
  # the C API's Python example (ctypes + pymongo's BSON codec)
  python3 python3-bson
  # fuzzing (libFuzzer ships with clang) and sanitizer runtimes
  clang libclang-rt-dev
  # the shell: SpiderMonkey and line editing
  libmozjs-102-dev libedit-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
