#!/usr/bin/env bash
# Renders the lab's report.html (from a --tiny run of every bundled scenario)
# in headless Chromium and checks what a reader would: the page loads without
# errors, every chart has a size, no "$$" template text or {{placeholder}} is
# visible, nothing is fetched from elsewhere. The page checks itself (a
# script at its end writes "self-check OK: N charts" or the problems into
# <pre id="check">); --dump-dom gives us the DOM after that script ran.
#
# Usage: lab_report_html_test.sh ROCKDOC_LAB [SCREENSHOT.png]
# Exit 77 (CTest's SKIP_RETURN_CODE) only when no chromium is installed.
set -euo pipefail

lab="$1"
screenshot="${2:-${LAB_SCREENSHOT:-}}"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
  echo "SKIP: no chromium on PATH (scripts/install-deps.sh installs Debian's chromium)"
  exit 77
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if ! "$lab" --tiny --out "$tmp/out" --work "$tmp/work" >"$tmp/lab.log" 2>&1; then
  echo "FAIL: rockdoc-lab --tiny failed"
  tail -30 "$tmp/lab.log"
  exit 1
fi
page="$tmp/out/report.html"
[ -s "$page" ] || { echo "FAIL: no report.html"; exit 1; }

# A fresh profile, no network services, bounded in time.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --user-data-dir="$tmp/profile" --window-size=1400,1000)
if ! timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$page" >"$tmp/dom.html" \
    2>"$tmp/chromium.log"; then
  echo "FAIL: chromium could not render the page"
  tail -20 "$tmp/chromium.log"
  exit 1
fi

python3 - "$tmp/dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="check">(.*?)</pre>', dom, re.S)
problems = []
if not m:
    problems.append("no <pre id=check> in the rendered page")
else:
    check = m.group(1).strip()
    print("page says:", check)
    if not check.startswith("self-check OK"):
        problems.append("the page's self-check: " + check)
    elif int(re.search(r"(\d+) charts", check).group(1)) == 0:
        problems.append("no charts at all")
# An independent look at the text outside scripts: no template text.
text = re.sub(r"<script.*?</script>", "", dom, flags=re.S)
text = re.sub(r"<[^>]+>", " ", text)
for bad in (r"\$\$", r"\{\{\s*[\w.]+\s*\}\}"):
    found = re.search(bad, text)
    if found:
        at = found.start()
        problems.append("visible %s: ...%s..." % (found.group(0), " ".join(text[max(0, at - 80):at + 80].split())))
if "<h2 id=\"summary\">" not in dom:
    problems.append("no summary table")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("OK")
PY

if [ -n "$screenshot" ]; then
  timeout 120 "$chromium" "${flags[@]}" --screenshot="$screenshot" "file://$page" \
    >/dev/null 2>&1 || { echo "FAIL: screenshot"; exit 1; }
  echo "screenshot: $screenshot"
fi
