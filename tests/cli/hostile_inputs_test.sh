#!/usr/bin/env bash
# Inputs that once hurt gpufleet, through the command line: each must give exit status 2 and one
# error line naming the file (and line, column and field where known), within a few seconds and
# 100 MB of memory (GNU time's maximum resident set size), and write no output file.
#   1. a YAML file holding only `,` (yaml-cpp 0.7's LoadAll looped, allocating without end), and a
#      UTF-8 byte-order mark followed by UTF-16LE text, in every YAML reader;
#   2. float cells out of int64_t's range (2e44, 1e30, nan, inf) in the openb CSV readers;
#   3. GPU feature discovery labels whose product overflowed (4294967296 x 4294967296);
#   4. a CSV header of 80,000 column names (a quadratic duplicate check), and a 50 MB line echoed
#      whole into the error;
#   5. YAML aliases that multiply work (nested aliases, "billion laughs").
set -u
BIN="$1"
EXAMPLES="$2"
source "$(dirname "$0")/common.sh"
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "FAIL: $TIME not found: install the Debian package 'time' (scripts/install-deps does)" >&2; exit 1; }

# expect_refused NAME FILE_PATTERN -- ARGS...: exit 2 within 10 s, one stderr line
# "gpufleet: error: FILE_PATTERN...", at most 100 MB resident, no --json output left behind.
expect_refused() {
  local name="$1" pattern="$2"
  shift 3
  rm -f "$T/out.json"
  timeout 10 "$TIME" -f '%M %e' -o "$T/time.txt" "$BIN" "$@" --json "$T/out.json" -q > /dev/null 2> "$T/err.txt"
  local rc=$?
  local kb secs
  read -r kb secs < <(tail -1 "$T/time.txt" 2>/dev/null || echo "0 0")
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, expected 2: $(head -c 300 "$T/err.txt")"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && grep -q "^gpufleet: error: $pattern" "$T/err.txt" && ok \
    || bad "$name: expected one line 'gpufleet: error: $pattern...', got: $(head -c 300 "$T/err.txt")"
  [ "$(wc -c < "$T/err.txt")" -lt 1000 ] && ok || bad "$name: error is $(wc -c < "$T/err.txt") bytes"
  [ "${kb:-0}" -gt 0 ] && [ "$kb" -lt 102400 ] && ok || bad "$name: ${kb:-?} KB resident, limit 100 MB"
  [ ! -e "$T/out.json" ] && ok || bad "$name: an output file was written"
  echo "$name: exit $rc, ${kb} KB, ${secs} s" >> "$T/figures.txt"
}

POOLS="$EXAMPLES/simulate/pools.yaml"
WORKLOAD="$EXAMPLES/simulate/workload.yaml"

# expect_refused_by_yaml_readers NAME FILE PATTERN: FILE refused as every YAML input (place's
# cluster and workload, simulate's pools and workload) with an error matching PATTERN.
expect_refused_by_yaml_readers() {
  local name="$1" F="$2" pattern="$3"
  expect_refused "$name: place" "$pattern" -- place --cluster "$F" --workload "$F"
  expect_refused "$name: simulate --pools" "$pattern" -- simulate --pools "$F" --workload "$WORKLOAD"
  expect_refused "$name: simulate --workload" "$pattern" -- simulate --pools "$POOLS" --workload "$F"
}

# 1. YAML that yaml-cpp 0.7 loops on.
printf ',' > "$T/comma.yaml"
printf '\xef\xbb\xbfk\0i\0n\0d\0:\0 \0N\0o\0d\0e\0\n\0' > "$T/bom16.yaml"
for f in comma bom16; do
  expect_refused_by_yaml_readers "$f" "$T/$f.yaml" "$T/$f.yaml:1:[0-9]*: YAML syntax error"
done

# 2. Float cells out of range, in the node list, the pod list and the trace.
for v in 2e44 1e30 nan inf -inf; do
  printf 'sn,cpu_milli,memory_mib,gpu,model\nd,4,%s,,\n' "$v" > "$T/float-nodes.csv"
  expect_refused "nodes memory_mib $v" "$T/float-nodes.csv:2: field 'memory_mib': " -- pack --nodes "$T/float-nodes.csv" --pods "$T/pods.csv"
  sed "2s/^pod-1,4000,/pod-1,$v,/" "$T/pods.csv" > "$T/float-pods.csv"
  expect_refused "pods cpu_milli $v" "$T/float-pods.csv:2: field 'cpu_milli': " -- pack --nodes "$T/nodes.csv" --pods "$T/float-pods.csv"
  expect_refused "trace cpu_milli $v" "$T/float-pods.csv:2: field 'cpu_milli': " -- simulate --pools "$POOLS" --openb-pods "$T/float-pods.csv"
done

# 3. Time-slicing labels whose product overflowed.
cat > "$T/labels.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: n
  labels:
    nvidia.com/gpu.product: Tesla-T4
    nvidia.com/gpu.replicas: "4294967296"
    nvidia.com/gpu.count: "4294967296"
status:
  allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
YAML
expect_refused "GFD labels 4294967296" "$T/labels.yaml:8:27: field 'metadata.labels.nvidia.com/gpu.count': " -- place --cluster "$T/labels.yaml"

# 4. A header of 80,000 names (549 KB), and a 50 MB line.
awk 'BEGIN { for (i = 0; i < 80000; i++) printf "%scolumn%d", (i ? "," : ""), i; print "" }' > "$T/wide.csv"
expect_refused "80,000 columns" "$T/wide.csv:1: more than 65536 bytes in a line (limit CsvLimits::max_line_bytes" -- pack --nodes "$T/wide.csv" --pods "$T/pods.csv"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%sc%d", (i ? "," : ""), i; print "" }' > "$T/columns.csv"
expect_refused "3,000 columns" "$T/columns.csv:1: more than 1024 columns (limit CsvLimits::max_columns" -- pack --nodes "$T/columns.csv" --pods "$T/pods.csv"
head -c 50000000 /dev/zero | tr '\0' 'a' > "$T/long.csv"
expect_refused "50 MB line" "$T/long.csv:1: more than 65536 bytes in a line" -- pack --nodes "$T/long.csv" --pods "$T/pods.csv"
# A 50 MB cell in a YAML scalar: the limit, not an echo of the value.
{ printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: '; head -c 2000000 /dev/zero | tr '\0' 'a'; printf '}\n'; } > "$T/long.yaml"
expect_refused "2 MB scalar" "$T/long.yaml:3:[0-9]*: more than 1048576 bytes in a scalar" -- place --cluster "$T/long.yaml"

# 5. Aliases: nested (468 bytes, 9^8 leaves) and "billion laughs" (619 bytes, 9^9).
{ echo 'a0: &a0 [x, x, x, x, x, x, x, x, x]'
  for i in 1 2 3 4 5 6 7 8; do printf 'a%d: &a%d [' "$i" "$i"; for j in 1 2 3 4 5 6 7 8 9; do printf '*a%d%s' $((i - 1)) "$([ $j = 9 ] || echo ', ')"; done; echo ']'; done
} > "$T/nested.yaml"
{ echo 'lol: &lol "lol"'
  for i in 1 2 3 4 5 6 7 8 9; do printf 'lol%d: &lol%d [' "$i" "$i"; p=$([ $i = 1 ] && echo lol || echo "lol$((i - 1))"); for j in 1 2 3 4 5 6 7 8 9; do printf '*%s%s' "$p" "$([ $j = 9 ] || echo ,)"; done; echo ']'; done
} > "$T/laughs.yaml"
for f in nested laughs; do
  expect_refused_by_yaml_readers "$f aliases" "$T/$f.yaml" "$T/$f.yaml:2:[0-9]*: YAML alias '\\*"
done

# The figures, for the record (ctest --output-on-failure -V shows them).
cat "$T/figures.txt"
finish
