#!/usr/bin/env bash
# End-to-end check of `gpufleet pack --report`: the HTML page opens in headless Chromium without any
# script error, draws its charts (the page sets data-rendered="ok"), and references nothing on the
# network. Chromium is required (Debian package `chromium`, installed by scripts/install-deps): when
# it is missing the test FAILS, it does not skip. Set $CHROMIUM to use another binary.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"

source "$(dirname "$0")/chromium.sh"

# All checks on one report page; $1 = name, $2 = path, $3 = policies expected in the table.
check_report() {
  local name="$1" html="$2" policy
  check_page_basics "$name" "$html"
  [ "$(grep -c '<canvas id="chart-' "$html.dom")" = 3 ] && ok || bad "$name: want 3 chart canvases in the DOM"
  for policy in $3; do
    grep -q "</span>$policy</td>" "$html.dom" && ok || bad "$name: summary table lacks policy $policy"
  done
  # Self-contained: no stylesheet import from the network either.
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
check_sabotage_is_caught "$T/a.html"

# 5. Ten policies (`--policy all`), ten colours: no two rows of the table share a swatch colour. The
#    summary table fits its card in a 1400 px wide window and scrolls inside it in an 800 px one; its
#    header words are whole and its text and numbers aligned (check_table_cells).
all="random dotprod clustering packing bestfit fgd leastallocated mostallocated fgd-online gpufleet"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy all --seeds 1 -q --report "$T/all.html" > /dev/null \
  2> "$T/err.txt" && ok || bad "pack --policy all --report failed: $(cat "$T/err.txt")"
check_report all-policies "$T/all.html" "$all"
colours=$(grep -o '<span class="swatch" style="background:#[0-9a-f]*">' "$T/all.html" | sort -u | wc -l)
[ "$colours" = 10 ] && ok || bad "--policy all: want 10 distinct swatch colours in the table, got $colours"
check_tables_in_cards all-policies "$T/all.html" 1400 fit
check_tables_in_cards all-policies "$T/all.html" 800 contained
check_table_cells all-policies "$T/all.html"

# 6. An unwritable --report path fails and leaves nothing behind.
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd --seeds 1 -q --report "$T/missing-dir/r.html" \
  > /dev/null 2> "$T/err.txt"
rc=$?
[ "$rc" != 0 ] && ok || bad "writing into a missing folder should fail"
[ ! -e "$T/missing-dir" ] && ok || bad "a failed report write created files"

finish
