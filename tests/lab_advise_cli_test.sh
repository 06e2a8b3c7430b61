#!/usr/bin/env bash
# rockdoc-lab's --sizes, --keep and --advise from the command line (the flag
# table in tools/lab/main.cc), and rockdoc-advise over a kept database: it
# reports exactly what the lab's results.json says the advisor found there.
# tests/lab_advise_test.cc checks the findings themselves, in-process.
#
# Usage: lab_advise_cli_test.sh ROCKDOC_LAB ROCKDOC_ADVISE
set -euo pipefail

lab="$1"
advise="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# A bad command line is exit 2, before anything runs.
for args in "--keep" "--sizes" "--sizes 10,x" "--sizes -1" "--sizes 10,,20" "--advise=yes" \
            "--bogus" "stray"; do
  set +e
  # shellcheck disable=SC2086  # the flags are words on purpose
  "$lab" --tiny --scenario index-count --work "$tmp/bad" $args >"$tmp/bad.log" 2>&1
  rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$tmp/bad.log"; fail "rockdoc-lab $args: exit $rc, not 2"; }
done
[ ! -e "$tmp/bad" ] || fail "a bad command line ran something"

"$lab" --tiny --scenario index-count --sizes 30 --keep "$tmp/kept" --advise --out "$tmp/out" \
  --work "$tmp/work" >"$tmp/lab.log" 2>&1 || { tail -30 "$tmp/lab.log"; fail "rockdoc-lab failed"; }
grep -q "^  0-indexes 30: no findings" "$tmp/lab.log" || { cat "$tmp/lab.log"; fail "no advisor line for 0-indexes"; }
grep -q "^  10-indexes 30: \[warning\] unused-index in lab.items, 10 findings: sku_1, " "$tmp/lab.log" ||
  { cat "$tmp/lab.log"; fail "no advisor line for 10-indexes"; }
for v in 0-indexes 1-index 2-indexes 5-indexes 10-indexes; do
  [ -d "$tmp/kept/index-count/$v-30" ] || fail "$v not kept as $tmp/kept/index-count/$v-30"
done
[ ! -e "$tmp/kept/index-count/0-indexes-30-again" ] || fail "an A/A copy was kept"

# rockdoc-advise exits 2 when it finds something at or above --failOn warning.
set +e
"$advise" --json --unusedIndexDays 0 "$tmp/kept/index-count/10-indexes-30" >"$tmp/advise.json"
rc=$?
set -e
[ "$rc" = 2 ] || fail "rockdoc-advise: exit $rc, not 2 (findings)"

python3 - "$tmp/out/results.json" "$tmp/advise.json" "$tmp/kept/index-count/10-indexes-30" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
advice = json.load(open(sys.argv[2]))
rows = [r for r in results["scenarios"][0]["results"] if r["variant"] == "10-indexes"]
assert len(rows) == 1, rows
row = rows[0]
assert row["keptDir"] == sys.argv[3], (row["keptDir"], sys.argv[3])
lab = row["advice"]
assert lab["findings"] == advice["findings"], "rockdoc-advise and results.json differ"
# Every document the lab counted (the setup's and the writes') was examined.
assert lab["documentsExamined"] == advice["documentsExamined"] == row["documents"], (
    lab["documentsExamined"], advice["documentsExamined"], row["documents"])
rules = sorted(f["rule"] for f in advice["findings"])
assert rules.count("unused-index") == 10, rules
print("OK: rockdoc-advise over the kept 10-indexes database agrees with results.json:", rules)
PY
