#!/usr/bin/env bash
# End-to-end check of `gpufleet pack --report`: the HTML page opens in headless Chromium without any
# script error, draws its charts (the page sets data-rendered="ok"), and references nothing on the
# network. Chromium is required (Debian package `chromium`, installed by scripts/install-deps): when
# it is missing the test FAILS, it does not skip. Set $CHROMIUM to use another binary.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"

CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ] || ! [ -x "$CHROMIUM" ]; then
  bad "headless Chromium not found: install the Debian package 'chromium' (scripts/install-deps does) or set \$CHROMIUM"
  finish
fi


# Opens $1 in headless Chromium; the DOM goes to $1.dom, Chromium's log to $1.err.
open_in_chromium() {
  local profile
  profile=$(mktemp -d "$T/profile.XXXXXX")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --dump-dom "file://$1" > "$1.dom" 2> "$1.err"
}

# Script errors and console output of the page, as Chromium logs them (its own dbus/GPU noise is not).
page_messages() { grep -E 'CONSOLE|Uncaught|SyntaxError' "$1.err"; }

# All checks on one report page; $1 = name, $2 = path, $3 = policies expected in the table.
check_report() {
  local name="$1" html="$2" policy
  open_in_chromium "$html"
  local rc=$?
  [ "$rc" = 0 ] && ok || bad "$name: chromium exited $rc: $(tail -5 "$html.err")"
  grep -q 'data-rendered="ok"' "$html.dom" && ok \
    || bad "$name: the page did not render (no data-rendered=\"ok\"): $(grep -o 'data-rendered="[a-z]*"' "$html.dom")"
  grep -q '<pre id="errors"></pre>' "$html.dom" && ok \
    || bad "$name: #errors is not empty: $(sed -n '/<pre id="errors">/,/<\/pre>/p' "$html.dom" | head -20)"
  page_messages "$html" > "$html.msgs"
  [ ! -s "$html.msgs" ] && ok || bad "$name: the page logged errors or console output: $(head -10 "$html.msgs")"
  [ "$(grep -c '<canvas id="chart-' "$html.dom")" = 3 ] && ok || bad "$name: want 3 chart canvases in the DOM"
  for policy in $3; do
    grep -q "</span>$policy</td>" "$html.dom" && ok || bad "$name: summary table lacks policy $policy"
  done
  # Self-contained: no script, stylesheet, image or frame comes from the network.
  if grep -Eio "<(script|link|img|iframe)[^>]*(src|href)=[\"']?(https?:)?//[^\"' >]*" "$html"; then
    bad "$name: references a network URL (above)"
  else ok; fi
  if grep -Eio "url\([\"']?(https?:)?//|@import" "$html"; then bad "$name: CSS loads from the network (above)"; else ok; fi
  grep -q '<script type="application/json" id="report-data">' "$html" && ok || bad "$name: no embedded JSON data block"
}

# 1. A report with two policies, bound computed (the default).
if "$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd,bestfit --seeds 1-2 -q \
     --json "$T/a.json" --report "$T/a.html" > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "pack --report exited $?: $(cat "$T/err.txt")"; fi
grep -qx "report: $T/a.html" "$T/out.txt" && ok || bad "summary lacks 'report: FILE': $(cat "$T/out.txt")"
[ -s "$T/a.html" ] && ok || bad "no report written"
ls "$T" | grep -q '\.tmp' && bad "left a temporary file" || ok
check_report with-bound "$T/a.html" "fgd bestfit"

# 2. Without the bound (no dashed line; bound_pct is null in the data).
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy packing,random --seeds 3 -q --no-bound \
  --report "$T/b.html" > /dev/null 2> "$T/err.txt" && ok || bad "pack --no-bound --report failed: $(cat "$T/err.txt")"
grep -q '"bound_pct":null' "$T/b.html" && ok || bad "--no-bound report should have bound_pct null"
check_report no-bound "$T/b.html" "packing random"

# 3. Deterministic: the same command gives the same page.
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd,bestfit --seeds 1-2 -q --report "$T/c.html" > /dev/null 2>&1
cmp -s "$T/a.html" "$T/c.html" && ok || bad "report differs between identical runs"

# 4. The harness catches a failing page: a render script that throws must show up in #errors.
sed 's|if (typeof Chart === "undefined")|throw new Error("sabotaged for the test"); &|' "$T/a.html" > "$T/broken.html"
cmp -s "$T/a.html" "$T/broken.html" && bad "could not sabotage the report (render script changed?)" || ok
open_in_chromium "$T/broken.html"
grep -q 'data-rendered="error"' "$T/broken.html.dom" && ok || bad "sabotaged page: want data-rendered=\"error\""
grep -q 'sabotaged for the test' "$T/broken.html.dom" && ok || bad "sabotaged page: error not shown in #errors"
page_messages "$T/broken.html" | grep -q 'Uncaught' && ok || bad "sabotaged page: Chromium log lacks the Uncaught error"

# 5. An unwritable --report path fails and leaves nothing behind.
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd --seeds 1 -q --report "$T/missing-dir/r.html" \
  > /dev/null 2> "$T/err.txt"
rc=$?
[ "$rc" != 0 ] && ok || bad "writing into a missing folder should fail"
[ ! -e "$T/missing-dir" ] && ok || bad "a failed report write created files"

finish
