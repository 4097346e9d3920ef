#!/usr/bin/env bash
# End-to-end check of `gpufleet simulate --report` and `gpufleet compare --report`: the HTML page
# opens in headless Chromium without any script error, draws its four charts (data-rendered="ok"),
# holds the summary table, and references nothing on the network. Chromium is required (Debian
# package `chromium`): when it is missing the test FAILS, it does not skip. $CHROMIUM overrides it.
set -u
BIN="$1"
EXAMPLES="$2/simulate"
source "$(dirname "$0")/common.sh"

CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ] || ! [ -x "$CHROMIUM" ]; then
  bad "headless Chromium not found: install the Debian package 'chromium' (scripts/install-deps does) or set \$CHROMIUM"
  finish
fi

open_in_chromium() {
  local profile
  profile=$(mktemp -d "$T/profile.XXXXXX")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --dump-dom "file://$1" > "$1.dom" 2> "$1.err"
}
page_messages() { grep -E 'CONSOLE|Uncaught|SyntaxError' "$1.err"; }

# $1 = name, $2 = path, $3 = configuration labels expected in the table.
check_report() {
  local name="$1" html="$2" label
  open_in_chromium "$html"
  local rc=$?
  [ "$rc" = 0 ] && ok || bad "$name: chromium exited $rc: $(tail -5 "$html.err")"
  grep -q 'data-rendered="ok"' "$html.dom" && ok \
    || bad "$name: the page did not render: $(grep -o 'data-rendered="[a-z]*"' "$html.dom")"
  grep -q '<pre id="errors"></pre>' "$html.dom" && ok \
    || bad "$name: #errors is not empty: $(sed -n '/<pre id="errors">/,/<\/pre>/p' "$html.dom" | head -20)"
  page_messages "$html" > "$html.msgs"
  [ ! -s "$html.msgs" ] && ok || bad "$name: the page logged errors or console output: $(head -10 "$html.msgs")"
  for id in nodes gpus pending cost; do
    grep -q "<canvas id=\"chart-$id\"" "$html.dom" && ok || bad "$name: no chart-$id canvas"
  done
  for label in $3; do
    grep -q "</span>$label</td>" "$html.dom" && ok || bad "$name: summary table lacks $label"
  done
  if grep -Eio "<(script|link|img|iframe)[^>]*(src|href)=[\"']?(https?:)?//[^\"' >]*" "$html"; then
    bad "$name: references a network URL (above)"
  else ok; fi
}

# 1. simulate --report on the example.
if "$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/workload.yaml" -q --report "$T/s.html" \
     > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "simulate --report exited $?: $(cat "$T/err.txt")"; fi
grep -qx "report: $T/s.html" "$T/out.txt" && ok || bad "summary lacks 'report: FILE'"
check_report simulate "$T/s.html" "simulate"
grep -q '"pools":\["inference-l4","training-h100","training-h100-spot","dev-a10g"\]' "$T/s.html" && ok || bad "report data lacks the pools"

# 2. compare --report with two configurations; deterministic.
run_compare() {
  "$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "baseline=$EXAMPLES/baseline-pools.yaml,leastallocated" \
    --config "$EXAMPLES/pools.yaml" -q --report "$1" > /dev/null 2> "$T/err.txt"
}
run_compare "$T/c.html" && ok || bad "compare --report failed: $(cat "$T/err.txt")"
check_report compare "$T/c.html" "baseline pools"
run_compare "$T/c2.html"
cmp -s "$T/c.html" "$T/c2.html" && ok || bad "report differs between identical runs"

# 3. The harness catches a failing page.
sed 's|if (typeof Chart === "undefined")|throw new Error("sabotaged for the test"); &|' "$T/c.html" > "$T/broken.html"
open_in_chromium "$T/broken.html"
grep -q 'data-rendered="error"' "$T/broken.html.dom" && ok || bad "sabotaged page: want data-rendered=\"error\""
grep -q 'sabotaged for the test' "$T/broken.html.dom" && ok || bad "sabotaged page: error not shown in #errors"

finish
