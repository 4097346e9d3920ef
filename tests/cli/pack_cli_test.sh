#!/usr/bin/env bash
# End-to-end checks of `gpufleet pack`: success output, byte-identical JSON for identical runs,
# and bad input giving exit 2, one error line naming file, line and field, and no output file.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"


# 1. A good run: summary on stdout, JSON and CSV written.
if "$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd,bestfit --seeds 1-2 -q \
     --json "$T/a.json" --csv "$T/a.csv" > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "good run exited $?: $(cat "$T/err.txt")"; fi
grep -q '^fgd ' "$T/out.txt" && grep -q '^bestfit ' "$T/out.txt" && ok || bad "summary lacks policy rows"
grep -q '"cluster": {' "$T/a.json" && grep -q '"gpus": 14' "$T/a.json" && grep -q '"allocation_pct"' "$T/a.json" && ok || bad "JSON lacks fields"
[ "$(grep -c '"policy"' "$T/a.json")" = 4 ] && ok || bad "JSON should have 4 runs"
[ "$(wc -l < "$T/a.csv")" = $((1 + 4 * 131)) ] && ok || bad "CSV should have 1+4*131 lines, has $(wc -l < "$T/a.csv")"
[ ! -s "$T/err.txt" ] && ok || bad "--quiet run wrote to stderr"
grep -q '^policy .* bound@100 .* wc-bound@100 ' "$T/out.txt" && ok || bad "summary lacks the bound columns"
[ "$(grep -c '"work_conserving_bound_pct_at_100": null' "$T/a.json")" = 4 ] && ok || bad "JSON: no bucket 100 in this workload, so the work-conserving bound should be null"
# Small pods reach bucket 100: the work-conserving bound is a number there, and at least the allocation.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nsmall-1,1000,1024,1,250,,LS,Running,0,10,0\nsmall-2,1000,1024,1,300,,LS,Running,0,10,0\n' > "$T/small.csv"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/small.csv" --policy fgd --seeds 1 -q --json "$T/s.json" > /dev/null 2>&1
grep -q '"work_conserving_bound_pct_at_100": [0-9]' "$T/s.json" && ok || bad "JSON should give the run's work-conserving bound"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd --seeds 1 -q --no-bound --json "$T/nb.json" > /dev/null 2>&1
! grep -q 'bound_pct' "$T/nb.json" && ok || bad "--no-bound JSON should have no bounds"

# 2. Deterministic: the same command gives byte-identical JSON.
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd,bestfit --seeds 1-2 -q --json "$T/b.json" > /dev/null 2>&1
cmp -s "$T/a.json" "$T/b.json" && ok || bad "JSON differs between identical runs"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy random --seeds 7 -q --json "$T/r1.json" --jobs 2 > /dev/null 2>&1
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy random --seeds 7 -q --json "$T/r2.json" --jobs 1 > /dev/null 2>&1
cmp -s "$T/r1.json" "$T/r2.json" && ok || bad "random policy JSON differs between runs"

# 3. Bad input: exit 2, one line naming file:line and the field, no output file, old file intact.
expect_bad() {  # name, expected substring, args...
  local name="$1" want="$2"; shift 2
  rm -f "$T/out.json"
  echo keep > "$T/old.json"
  "$BIN" pack "$@" -q --json "$T/out.json" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: stderr should be one line: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: stderr lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$name: left an output file"
  ls "$T" | grep -q '\.tmp\.' && bad "$name: left a temporary file" || ok
  # the same error must not clobber an existing output
  "$BIN" pack "$@" -q --json "$T/old.json" > /dev/null 2>&1
  [ "$(cat "$T/old.json")" = keep ] && ok || bad "$name: clobbered an existing output"
}
mkpods() { { head -1 "$T/pods.csv"; echo "$1"; } > "$T/bad.csv"; }
mkpods 'pod-x,4000,8192,1,500,,LS'
expect_bad truncated "bad.csv:2: field 'pod_phase': truncated row" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,four,8192,1,500,,LS,Running,0,10,0'
expect_bad non-number "bad.csv:2: field 'cpu_milli': 'four' is not an integer" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,4000,-8192,1,500,,LS,Running,0,10,0'
expect_bad negative "bad.csv:2: field 'memory_mib': -8192 is negative" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,4000,8192,9,1000,,LS,Running,0,10,0'
expect_bad nine-gpus "bad.csv:2: field 'num_gpu': 9 is out of range" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,4000,8192,1,1500,,LS,Running,0,10,0'
expect_bad milli "bad.csv:2: field 'gpu_milli': 1500 is out of range" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,4000,8192,1,500,,Platinum,Running,0,10,0'
expect_bad unknown-qos "bad.csv:2: field 'qos': unknown qos 'Platinum' (expected LS, BE, Burstable or Guaranteed" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,4000,8192,1,500,,LS,Done,0,10,0'
expect_bad unknown-pod-phase "bad.csv:2: field 'pod_phase': unknown pod_phase 'Done'" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
{ echo "name,cpu_milli,memory_mib,gpu_milli"; echo "pod-x,1,1,0"; } > "$T/bad.csv"
expect_bad missing-column "bad.csv:1: field 'num_gpu': missing column" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
{ echo "sn,cpu_milli,memory_mib,gpu,model"; echo "node-z,32000,131072,4"; } > "$T/badnodes.csv"
expect_bad node-truncated "badnodes.csv:2: field 'model': truncated row" --nodes "$T/badnodes.csv" --pods "$T/pods.csv"
expect_bad unknown-policy "unknown policy 'fastest'" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --policy fgd,fastest
expect_bad bad-seeds "--seeds: 'x' is not an integer from 0 to 9223372036854775807" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --seeds 5-x
# One rule for seeds in every command (simulate's --seed says the same).
expect_bad negative-seed "--seeds: -5 is negative (a seed is an integer from 0 to 9223372036854775807)" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --seeds=-5
expect_bad negative-range-end "--seeds: -5 is negative" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --seeds 3--5
expect_bad missing-file "nope.csv: cannot open file" --nodes "$T/nodes.csv" --pods "$T/nope.csv"
expect_bad bad-tune "--tune" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --tune -1
expect_bad tune-not-a-number "gpufleet: error: " --nodes "$T/nodes.csv" --pods "$T/pods.csv" --tune abc
expect_bad pods-is-a-directory "is a directory" --nodes "$T/nodes.csv" --pods "$T"
expect_bad reference-is-a-directory "is a directory" --nodes "$T/nodes.csv" --pods "$T/pods.csv" --reference "$T"
{ echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,cpu_milli"; echo "pod-x,1,1,0,0,1"; } > "$T/bad.csv"
expect_bad duplicate-column "bad.csv:1: field 'cpu_milli': column appears twice" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
mkpods 'pod-x,99999999999999999999999,8192,1,500,,LS,Running,0,10,0'
expect_bad overflow "bad.csv:2: field 'cpu_milli': 99999999999999999999999 is out of range" --nodes "$T/nodes.csv" --pods "$T/bad.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\npod-x,1\033[31m,1,0,0\n' > "$T/bad.csv"
expect_bad control-bytes-escaped "'1\\x1b[31m' is not an integer" --nodes "$T/nodes.csv" --pods "$T/bad.csv"

# 4. Output paths are checked before any work; a failing output never clobbers another one.
echo keep > "$T/old.json"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" -q --json "$T/old.json" --csv "$T/no-such-dir/x.csv" > /dev/null 2> "$T/err.txt"
rc=$?
[ "$rc" = 2 ] && ok || bad "unwritable --csv: exit $rc, want 2"
grep -q -- "--csv $T/no-such-dir/x.csv: cannot write there" "$T/err.txt" && ok || bad "unwritable --csv message: $(cat "$T/err.txt")"
[ "$(cat "$T/old.json")" = keep ] && ok || bad "a failing --csv clobbered --json"
echo keep > "$T/old.json"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" -q --json "$T/old.json" --csv "$T/old.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/old.json and --csv $T/old.json are the same file: give each output its own path" "$T/err.txt" \
  && [ "$(cat "$T/old.json")" = keep ] && ok || bad "--json and --csv on one file: $(cat "$T/err.txt")"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" -q --json "$T/p.json" --report "$T/../$(basename "$T")/p.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "are the same file" "$T/err.txt" && [ ! -e "$T/p.json" ] && ok || bad "--json and --report on one file: $(cat "$T/err.txt")"
cp "$T/pods.csv" "$T/pods-copy.csv"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods-copy.csv" -q --csv "$T/pods-copy.csv" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--csv $T/pods-copy.csv: would overwrite the --pods input $T/pods-copy.csv" "$T/err.txt" \
  && cmp -s "$T/pods.csv" "$T/pods-copy.csv" && ok || bad "--csv on the --pods file: $(cat "$T/err.txt")"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" -q --json "$T/./nodes.csv" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "would overwrite the --nodes input $T/nodes.csv" "$T/err.txt" && ok || bad "--json on the --nodes file: $(cat "$T/err.txt")"
"$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" -q --json "$T" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q "is a directory" "$T/err.txt" && ok || bad "--json DIR: $(cat "$T/err.txt")"

# On a terminal (stdout and stderr both), the input files are said once, in the summary.
if command -v script > /dev/null; then
  script -qc "'$BIN' pack --nodes '$T/nodes.csv' --pods '$T/pods.csv' --seeds 42 --policy fgd --no-bound" /dev/null > "$T/tty.txt" 2>&1
  [ "$(grep -c '^nodes: ' "$T/tty.txt")" = 1 ] && ok || bad "nodes: printed $(grep -c '^nodes: ' "$T/tty.txt") times on a terminal"
  # Not a terminal: the label on stderr before the run, and in the summary on stdout.
  "$BIN" pack --nodes "$T/nodes.csv" --pods "$T/pods.csv" --seeds 42 --policy fgd --no-bound > "$T/out.txt" 2> "$T/err.txt"
  grep -q '^nodes: ' "$T/err.txt" && grep -q '^nodes: ' "$T/out.txt" && ok || bad "nodes: should be on stderr and stdout when piped"
fi

finish
