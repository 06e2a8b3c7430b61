#!/usr/bin/env bash
# Renders the lab's report.html (from a --tiny run of every bundled scenario)
# in headless Chromium and checks what a reader would: the page loads without
# errors, every chart has a size, no "$$" or $lab... expression text or {{placeholder}} is
# visible, nothing is fetched from elsewhere; and that it opens grid first
# and short: the grid of rules against sizes has one cell per (claim, size)
# verdict of results.json, each linking to an anchor of the page; one chart
# per scenario and size is visible without unfolding (every other chart is
# folded); the page is at most LAB_MAX_HEIGHT px tall as it opens (8,000 for
# 15 scenarios, scaled up with their number) at 1400 px wide; and no debug
# line ends it. The page checks itself (a script at its end writes "self-check
# OK" or the problems, and what it measured, into a hidden <pre id="check">);
# --dump-dom gives us the DOM after that script ran. Chromium is bounded in
# time (120 s), as is the lab's --tiny run (the test's TIMEOUT).
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

python3 - "$tmp/dom.html" "$tmp/out/results.json" <<'PY'
import html.parser, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
results = json.load(open(sys.argv[2], encoding="utf-8"))
problems = []
m = re.search(r'<pre id="check"([^>]*)>(.*?)</pre>', dom, re.S)
measured = {}
if not m:
    problems.append("no <pre id=check> in the rendered page")
else:
    if "hidden" not in m.group(1):
        problems.append("the self-check's <pre> is not hidden: a debug line would end the page")
    check = m.group(2).strip()
    print("page says:", check)
    if not check.startswith("self-check OK"):
        problems.append("the page's self-check: " + check)
    elif "\n" not in check:
        problems.append("the self-check measured nothing (no height, no visible charts)")
    else:
        measured = json.loads(check.split("\n", 1)[1])
        if measured["charts"] == 0:
            problems.append("no charts at all")

# What the run measured: its scenarios, their sizes, and its verdicts on
# claims, one per (claim, size) checked.
scenarios = results["scenarios"]
sizes = sum(len(s["sizes"]) for s in scenarios)
verdicts = sum(len(s["rulesOfThumb"]) for s in scenarios)
max_height = 8000 * max(1.0, len(scenarios) / 15)
if measured:
    print("height %d px as it opens (%d unfolded); %d of %d charts visible; %d scenarios, %d sizes"
          % (measured["height"], measured["unfoldedHeight"], measured["visibleCharts"],
             measured["charts"], len(scenarios), sizes))
    if measured["height"] > max_height:
        problems.append("the page is %d px tall as it opens, more than %d"
                        % (measured["height"], max_height))
    if measured["visibleCharts"] != sizes:
        problems.append("%d charts visible without unfolding, not one per scenario and size (%d)"
                        % (measured["visibleCharts"], sizes))
    if "self-check" in measured["lastLine"]:
        problems.append("a debug line ends the page: " + measured["lastLine"])

# The DOM itself: the grid's cells and the anchors they link to.
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.cells, self.in_grid, self.in_cell, self.depth = set(), [], False, False, 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "table" and a.get("class") == "grid":
            self.in_grid = True
        if self.in_grid and tag == "td" and (a.get("class") or "").startswith("cell "):
            self.in_cell = True
            self.cells.append(None)
        if self.in_cell and tag == "a":
            self.cells[-1] = a.get("href")
    def handle_endtag(self, tag):
        if tag == "td":
            self.in_cell = False
        if tag == "table":
            self.in_grid = False
page = Page()
page.feed(dom)
if len(page.cells) != verdicts:
    problems.append("the grid has %d verdict cells, results.json %d verdicts"
                    % (len(page.cells), verdicts))
for href in page.cells:
    if not href or not href.startswith("#") or href[1:] not in page.ids:
        problems.append("a grid cell links to %r, which is no anchor of the page" % href)
        break
print("grid: %d cells, one per verdict, each linking to an anchor" % len(page.cells))

# An independent look at the text outside scripts: no template text.
text = re.sub(r"<script.*?</script>", "", dom, flags=re.S)
text = re.sub(r"<[^>]+>", " ", text)
# "$$": a variable or {"$$eval": ...}; "$labText": the lab's own operators.
for bad in (r"\$\$", r"\$lab[A-Z]", r"\{\{\s*[\w.]+\s*\}\}"):
    found = re.search(bad, text)
    if found:
        at = found.start()
        problems.append("visible %s: ...%s..." % (found.group(0), " ".join(text[max(0, at - 80):at + 80].split())))
if "<h2 id=\"summary\">" not in dom:
    problems.append("no summary grid")
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
