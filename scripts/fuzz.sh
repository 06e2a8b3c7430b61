#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cc, clang with ASan + UBSan) in
# build-fuzz (or ROCKDOC_FUZZ_BUILD_DIR) and runs each for a bounded time,
# starting from a temporary copy of its committed seed corpus fuzz/corpus/<target> (so the committed one is
# never modified), with fuzz/<target>.dict when there is one. Runs as many
# targets at once as there are cores. Exits non-zero when any target finds a
# crash, a sanitizer report, a broken property, a timeout or an OOM; the
# failing input is kept in <build>/artifacts/<target>/ and the script
# prints how to replay it.
#
#   scripts/fuzz.sh                                   # every target, 40 s each
#   ROCKDOC_FUZZ_SECONDS=600 scripts/fuzz.sh update   # one target, longer
#   ROCKDOC_FUZZ_SEED=0 scripts/fuzz.sh               # a new seed each run (CI uses seed 1)
#   ROCKDOC_FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh # targets from a build configured
#                                                     # with -DROCKDOC_BUILD_FUZZERS=ON
#                                                     # (scripts/test.sh's sanitizer build)
#
# A new failing input worth keeping goes into fuzz/corpus/<target>/ with the
# fix, so every later run replays it first.
set -euo pipefail
cd "$(dirname "$0")/.."

# 40 s a target keeps CI's fuzz stage near 4 minutes with ten targets.
seconds=${ROCKDOC_FUZZ_SECONDS:-40}
# A fixed seed makes a run replay the same sequence of inputs, so CI's verdict
# is about the code, not about which inputs a run happened to try; explore
# with ROCKDOC_FUZZ_SEED=0 (a new seed each run) and longer times.
seed=${ROCKDOC_FUZZ_SEED:-1}
jobs=$(nproc)
start=$(date +%s)

build=${ROCKDOC_FUZZ_BUILD_DIR:-build-fuzz}
echo "== build (libFuzzer targets, clang, in $build) =="
if [ -z "${ROCKDOC_FUZZ_BUILD_DIR:-}" ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DROCKDOC_BUILD_FUZZERS=ON -DROCKDOC_BUILD_TESTS=OFF -DROCKDOC_BUILD_BENCHMARKS=OFF \
    -DROCKDOC_BUILD_TOOLS=OFF >/dev/null
elif ! grep -q '^ROCKDOC_BUILD_FUZZERS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "$build is not configured with -DROCKDOC_BUILD_FUZZERS=ON" >&2
  exit 2
fi
cmake --build "$build" -j "$jobs"
echo "== build took $(( $(date +%s) - start )) s =="

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for source in fuzz/*_fuzz.cc; do
    name=$(basename "$source" .cc)
    targets+=("${name%_fuzz}")
  done
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Runs one target; its output goes to $scratch/<target>.log.
run_target() {
  local target=$1
  local corpus="$scratch/corpus-$target"
  local artifacts="$build/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  if [ -d "fuzz/corpus/$target" ]; then cp -R "fuzz/corpus/$target/." "$corpus/"; fi
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -seed="$seed" -artifact_prefix="$artifacts/")
  if [ -f "fuzz/$target.dict" ]; then args+=(-dict="fuzz/$target.dict"); fi
  ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/fuzz/${target}_fuzz" "${args[@]}" "$corpus" >"$scratch/$target.log" 2>&1
}

echo "== fuzz: ${#targets[@]} targets, $seconds s each, $jobs at a time =="
# Every run takes the same time, so batches of $jobs keep the cores busy.
failed=()
for (( i = 0; i < ${#targets[@]}; i += jobs )); do
  batch=("${targets[@]:i:jobs}")
  pids=()
  for target in "${batch[@]}"; do
    if [ ! -x "$build/fuzz/${target}_fuzz" ]; then
      echo "no fuzz target '$target'" >&2
      exit 2
    fi
    run_target "$target" &
    pids+=($!)
  done
  for j in "${!batch[@]}"; do
    target=${batch[$j]}
    if wait "${pids[$j]}"; then
      runs=$(grep -o 'number_of_executed_units: *[0-9]*' "$scratch/$target.log" |
             grep -o '[0-9]*$' || echo "?")
      echo "fuzz $target: ok, $runs inputs"
    else
      failed+=("$target")
      echo "fuzz $target: FAILED"
      tail -n 60 "$scratch/$target.log"
      echo "replay: $build/fuzz/${target}_fuzz $build/artifacts/$target/<file>"
    fi
  done
done

echo "== fuzz finished in $(( $(date +%s) - start )) s =="
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz targets that failed: ${failed[*]}" >&2
  exit 1
fi
