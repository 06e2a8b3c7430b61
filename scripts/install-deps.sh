#!/usr/bin/env bash
# Installs every Debian package rockdoc needs to build, test and benchmark,
# then the npm packages of the wire tests (tests/wire/package-lock.json: the
# Node.js driver, mongosh and mongo-express 1.0.0 for the status-page test,
# NeDB and better-sqlite3 for bench/node, into tests/wire/node_modules).
# Idempotent: packages already present are left alone, apt-get update runs
# only when something is missing, and npm runs only when the lock file
# changed since its last install.  Run as root (or with sudo available).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git
  # build speed: a compiler cache, and a linker that links each of some
  # sixty test programs in a seventh of GNU ld's time (CMakeLists.txt)
  ccache mold
  # library dependencies
  librocksdb-dev libsimdjson-dev libabsl-dev libpcre2-dev
  # Decimal128 arithmetic: Intel's decimal library, which MongoDB uses
  # (src/bson/decimal_arithmetic.h)
  libintelrdfpmath-dev
  # text indexes: Snowball's stemmers, and Snowball's stop word lists, which
  # PostgreSQL's tsearch_data ships (src/index/fts.h)
  libstemmer-dev postgresql-15
  # vectorSearch indexes: the HNSW graph of approximate nearest neighbours
  # (header-only hnswlib 0.6.2; src/index/vector_access_method.cc)
  libhnswlib-dev
  # rockdoc-serve's SCRAM (SHA-256, HMAC and PBKDF2 from OpenSSL's libcrypto)
  # and TLS (libssl); the openssl command makes the TLS tests' CA and
  # certificates (tests/wire/tls_test.py)
  libssl-dev openssl
  # SCRAM-SHA-256's SASLprep (RFC 4013) is ICU's StringPrep profile
  libicu-dev
  # geometry and 2dsphere indexes: S2, the library MongoDB's 2dsphere is
  # built on, so validity, cell coverings and predicates agree with MongoDB's
  # (src/query/geometry.h)
  libs2-dev
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
  # rockdoc-serve's real-client test with Python's driver (tests/wire/)
  python3-pymongo
  # the Python package (bindings/python): its C extension is built against
  # Python's headers by setuptools (+ wheel, for pip's build), and installed
  # with pip into a venv made with --system-site-packages (the install check,
  # python_binding_install; offline: --no-build-isolation)
  python3-dev python3-setuptools python3-wheel python3-venv python3-pip
  # pymongo's C extensions (BSON encoding and decoding, message building):
  # without them every document is encoded in pure Python, which dominates
  # the binding's time (bench/python/python_bench.py)
  python3-bson-ext python3-pymongo-ext
  # the Python package's native module under memcheck (python_binding_memcheck)
  valgrind
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
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Node.js driver and mongosh for the wire tests, at the versions
# tests/wire/package-lock.json pins. Node.js itself is not in the list
# above: the driver needs Node.js >= 20.19, newer than Debian 12's, so it
# comes from NodeSource's packages (as on the CI machines). Without npm
# the Node.js tests skip, saying so. --ignore-scripts: no package's install
# script runs (none of what the tests use needs one).
lock=tests/wire/package-lock.json
stamp=tests/wire/node_modules/.rockdoc-lock-sha256
if ! command -v npm >/dev/null; then
  echo "install-deps: npm not found: the Node.js driver and mongosh tests will skip" \
       "(install Node.js >= 20.19 with npm)"
elif [ -f "$stamp" ] && [ "$(sha256sum "$lock" | cut -d' ' -f1)" = "$(cat "$stamp")" ]; then
  echo "install-deps: npm packages of tests/wire present"
else
  echo "install-deps: npm ci in tests/wire"
  if (cd tests/wire && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    # better-sqlite3 12 (bench/node/node_bench.js compares the Node.js
    # binding with it) is the one native package: its own install script
    # would fetch a prebuilt binary from GitHub, so it is compiled here from
    # the SQLite it bundles, with npm's node-gyp against the installed
    # Node.js's headers (--nodedir: nothing downloaded). Not fatal: the
    # benchmark then skips it, saying so.
    nodedir=$(dirname "$(dirname "$(node -p process.execPath)")")
    gyp=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js
    (cd tests/wire/node_modules/better-sqlite3 &&
     node "$gyp" rebuild --release --nodedir="$nodedir" --loglevel=error >/dev/null) ||
      echo "install-deps: better-sqlite3 did not build: bench/node skips it"
    sha256sum "$lock" | cut -d' ' -f1 > "$stamp"
  else
    # Not fatal: without the registry the Node.js tests skip, saying why.
    echo "install-deps: npm ci failed: the Node.js driver and mongosh tests will skip"
  fi
fi
