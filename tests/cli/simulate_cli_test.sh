#!/usr/bin/env bash
# End-to-end checks of `gpufleet simulate`: the example runs, the JSON has the keys of issue 5, the
# JSON and CSV are byte-identical between runs with the same seed, --quiet silences stderr, and bad
# input gives exit 2, one error line naming file, line and field, and no output file.
set -u
BIN="$1"
EXAMPLES="$2/simulate"
source "$(dirname "$0")/common.sh"

# 1. The example.
if "$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/workload.yaml" --json "$T/a.json" \
     --timeseries "$T/a.csv" > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "example run exited $?: $(cat "$T/err.txt")"; fi
grep -q '^cost: .* USD' "$T/out.txt" && ok || bad "no cost line: $(cat "$T/out.txt")"
grep -q '^pods: .* completed, .* running, .* pending, .* failed' "$T/out.txt" && ok || bad "no pods line"
grep -q 'simulate: 100/100' "$T/err.txt" && ok || bad "no progress on stderr: $(cat "$T/err.txt")"
for key in '"cost_usd": ' '"cost_by_pool": {' '"cost_by_capacity_type": {' '"chargeback": {' '"idle_cost_usd": ' \
           '"gpu_allocation_pct_mean": ' '"pending_s": {' '"p50": ' '"p95": ' '"p99": ' '"by_priority": {' \
           '"spot_interruptions": ' '"lost_gpu_hours": ' '"pods": {' '"completed": ' '"running": ' '"pending": ' '"failed": '; do
  grep -q "$key" "$T/a.json" && ok || bad "JSON lacks $key"
done
head -1 "$T/a.csv" | grep -q '^time_s,nodes_inference-l4,nodes_training-h100,nodes_training-h100-spot,nodes_dev-a10g,gpus_allocated,gpus_billed,pending_pods,cost_usd_per_hour$' \
  && ok || bad "CSV header: $(head -1 "$T/a.csv")"
[ "$(wc -l < "$T/a.csv")" = 2881 ] && ok || bad "want 2880 minute rows + header for 48 h, got $(wc -l < "$T/a.csv")"
# The nodes removed (127, all by consolidation in this example) are the same figure in the summary's
# "nodes:" line, its "consolidation:" line and the JSON, and the causes add up to the total.
python3 - "$T/a.json" "$T/out.txt" <<'PY' && ok || bad "nodes removed: the summary and the JSON disagree: $(grep -E '^(nodes|consolidation):' "$T/out.txt")"
import json, re, sys
r = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
removed = r["nodes_removed"]
causes = ("scale_down", "consolidation", "spot_reclaim", "not_ready_in_time", "other")
assert removed["total"] == sum(removed[k] for k in causes), removed
assert removed["scale_down"] == r["nodes_scaled_down"] and removed["consolidation"] == r["nodes_consolidated"], removed
assert removed["total"] == 127 and removed["consolidation"] == 127, removed
m = re.search(r"^nodes: (\d+) scaled up, (\d+) removed \(scale-down (\d+), consolidation (\d+), spot reclaim (\d+), "
              r"not Ready in time (\d+)\);", text, re.M)
assert m, "no nodes line"
assert [int(g) for g in m.groups()] == [r["nodes_scaled_up"], removed["total"], removed["scale_down"], removed["consolidation"],
                                        removed["spot_reclaim"], removed["not_ready_in_time"]], m.groups()
c = re.search(r"^consolidation: (\d+) nodes removed", text, re.M)
assert c and int(c.group(1)) == removed["consolidation"]
PY
"$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/workload.yaml" --json "$T/b.json" \
  --timeseries "$T/b.csv" --quiet > /dev/null 2> "$T/err2.txt"
cmp -s "$T/a.json" "$T/b.json" && cmp -s "$T/a.csv" "$T/b.csv" && ok || bad "outputs differ between identical runs"
[ ! -s "$T/err2.txt" ] && ok || bad "--quiet still wrote to stderr: $(cat "$T/err2.txt")"
"$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/workload.yaml" --json "$T/c.json" --seed 7 -q > /dev/null
cmp -s "$T/a.json" "$T/c.json" && bad "seed 7 gives the same JSON as seed 42" || ok

# 2. Bad input: exit 2, one line naming the file, line and field, no output file, an old one kept.
cat > "$T/pools.yaml" <<'YAML'
apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: gpu
  gpu: {model: L4, count: 1}
  cpu: "4"
  memory: 16Gi
  nodes: 1
  min: 0
  max: 4
  prices: {onDemand: 0.8}
YAML
job_yaml() {  # one job with extra lines
  printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\njobs:\n- name: j\n  gpus: 1\n%s\n' "$1"
}
expect_bad() {  # name, expected substring, pools file, workload file, extra args...
  local name="$1" want="$2" pools="$3" workload="$4"
  shift 4
  echo keep > "$T/old.json"
  "$BIN" simulate --pools "$pools" --workload "$workload" --json "$T/old.json" -q "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ "$(cat "$T/old.json")" = keep ] && ok || bad "$name: the old output was touched"
}
job_yaml '  durationSeconds: 60
  pools: [gpu, tpu]' > "$T/unknown-pool.yaml"
expect_bad "unknown pool" "unknown-pool.yaml:8:" "$T/pools.yaml" "$T/unknown-pool.yaml"
expect_bad "unknown pool message" "field 'jobs[0].pools[1]': unknown pool 'tpu' (pools: gpu)" "$T/pools.yaml" "$T/unknown-pool.yaml"
# A KEDA ScaledJob: a bad strategy is an error at its position; a KEDA field not modelled is a warning.
scaled_job_yaml() {  # one ScaledJob with extra lines
  printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nscaledJobs:\n- name: q\n  jobTargetRef: {gpus: 1, durationSeconds: 60}\n  trigger: {queueLength: {arrivals: [{timeSeconds: 0, value: 2}]}}\n%s\n' "$1"
}
scaled_job_yaml '  scalingStrategy: {strategy: custom}' > "$T/scaledjob-bad.yaml"
expect_bad "ScaledJob strategy" "scaledjob-bad.yaml:8:31: field 'scaledJobs[0].scalingStrategy.strategy': unknown strategy 'custom'" \
  "$T/pools.yaml" "$T/scaledjob-bad.yaml"
scaled_job_yaml '  envSourceContainerName: worker' > "$T/scaledjob-warn.yaml"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/scaledjob-warn.yaml" -q > "$T/out.txt" 2> "$T/err.txt" && ok || bad "ScaledJob with a field not modelled exited $?"
grep -qF "scaledjob-warn.yaml:8:27: field 'scaledJobs[0].envSourceContainerName': not modelled, ignored" "$T/err.txt" && ok ||
  bad "ScaledJob warning: $(cat "$T/err.txt")"
grep -qF "scaled job q (default): 2 jobs created" "$T/out.txt" && ok || bad "ScaledJob summary: $(cat "$T/out.txt")"
# A rolling update under an HPA (S27, the docs' example): the wanted count stays 10, no node is added;
# with the controller before kubernetes/kubernetes PR 141134 (statusReplicas) it drifts to 11 and a node is added.
"$BIN" simulate --pools "$EXAMPLES/rollout-pools.yaml" --workload "$EXAMPLES/rollout-workload.yaml" -q > "$T/out.txt" 2> "$T/err.txt" &&
  ok || bad "rollout example exited $?: $(cat "$T/err.txt")"
grep -qF "rollout api revision 1: started at 300 s, complete at 900 s (600 s); maxSurge 1, maxUnavailable 0; 10 replicas created, 10 removed; at most 11 pods, at least 10 available" "$T/out.txt" &&
  ok || bad "rollout summary: $(cat "$T/out.txt")"
grep -qF "wanted replicas 10..10" "$T/out.txt" && grep -qF "nodes: 0 scaled up" "$T/out.txt" && ok || bad "S27 with the fix: $(cat "$T/out.txt")"
cp "$EXAMPLES/rollout-hpa.yaml" "$T/rollout-hpa.yaml"
sed 's/perPodWithinTolerance: specReplicas/perPodWithinTolerance: statusReplicas/' "$EXAMPLES/rollout-workload.yaml" > "$T/rollout-old.yaml"
"$BIN" simulate --pools "$EXAMPLES/rollout-pools.yaml" --workload "$T/rollout-old.yaml" -q > "$T/out.txt" 2> "$T/err.txt" &&
  ok || bad "rollout with statusReplicas exited $?: $(cat "$T/err.txt")"
grep -qF "wanted replicas 10..11" "$T/out.txt" && grep -qF "nodes: 1 scaled up" "$T/out.txt" && ok || bad "S27 before the fix: $(cat "$T/out.txt")"
job_yaml '  durationSeconds: -5' > "$T/negative.yaml"
expect_bad "negative duration" "negative.yaml:7:20: field 'jobs[0].durationSeconds': -5 is negative" "$T/pools.yaml" "$T/negative.yaml"
job_yaml '  durationSeconds: 60' > "$T/good.yaml"
job_yaml '  durationSeconds: 60' | sed 's/horizonSeconds: 3600/horizonSeconds: 2e8/' > "$T/long.yaml"
sed 's/jobsPerHour: 3$/jobsPerHour: 1e9/' "$EXAMPLES/workload.yaml" > "$T/flood.yaml"
expect_bad "generator above the job limit" "field 'generate.jobsPerHour': 1e9 jobs per hour over 48 h" "$EXAMPLES/pools.yaml" "$T/flood.yaml"
sed 's/max: 4/max: 1000000/' "$T/pools.yaml" > "$T/huge-pool.yaml"
expect_bad "pool max above the limit" "huge-pool.yaml:10:8: field 'pools[0].max': 1000000 is out of range [0, 100000]" "$T/huge-pool.yaml" "$T/good.yaml"
expect_bad "horizon above the limit" "long.yaml:3:17: field 'horizonSeconds': 2e8 is above the maximum of 100000000 s" "$T/pools.yaml" "$T/long.yaml"
sed 's/min: 0/min: 5/' "$T/pools.yaml" > "$T/minmax.yaml"
expect_bad "min above max" "minmax.yaml:9:8: field 'pools[0].min': min 5 is above max 4" "$T/minmax.yaml" "$T/good.yaml"
cp "$T/pools.yaml" "$T/settings.yaml"
printf -- '---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\npools:\n  gpu: {capacityType: spot}\n' >> "$T/settings.yaml"
expect_bad "spot without price" "pool gpu has no spot price" "$T/settings.yaml" "$T/good.yaml"
sed 's#sim.gpufleet.io/v1#sim.gpufleet.io/v2#' "$T/settings.yaml" > "$T/settings-v2.yaml"
expect_bad "settings under another apiVersion" \
  "settings-v2.yaml:13:13: field 'apiVersion': apiVersion 'sim.gpufleet.io/v2' is not supported for kind Autoscaling (expected sim.gpufleet.io/v1)" \
  "$T/settings-v2.yaml" "$T/good.yaml"
job_yaml '  durationSeconds: 60
  colour: blue' > "$T/typo.yaml"
expect_bad "unknown key" "unknown key 'colour'" "$T/pools.yaml" "$T/typo.yaml"
expect_bad "unknown policy" "unknown policy 'nope'" "$T/pools.yaml" "$T/good.yaml" --policy nope
expect_bad "missing file" "no-such.yaml" "$T/pools.yaml" "$T/no-such.yaml"
# Seeds are 0 .. 2^63-1 in every command: CLI11 alone wrapped -1 to 18446744073709551615 and saturated an overflow.
expect_bad "negative seed" "--seed: -1 is negative (a seed is an integer from 0 to 9223372036854775807)" "$T/pools.yaml" "$T/good.yaml" --seed -1
expect_bad "seed overflow" "--seed: '18446744073709551616' is not an integer from 0 to 9223372036854775807" "$T/pools.yaml" "$T/good.yaml" \
  --seed 18446744073709551616
expect_bad "seed above 2^63-1" "--seed: '9223372036854775808' is not an integer from 0 to 9223372036854775807" "$T/pools.yaml" "$T/good.yaml" \
  --seed 9223372036854775808
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/good.yaml" --json "$T/no-dir/x.json" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "an unwritable --json path should exit 2"
grep -qF -- "--json $T/no-dir/x.json: cannot write there" "$T/err.txt" && ok || bad "unwritable --json message: $(cat "$T/err.txt")"
# Outputs are replaced by rename: a FIFO (or device) or a symbolic link there would be replaced, so
# they are refused before any work, and left as they were.
mkfifo "$T/fifo"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/good.yaml" --json "$T/fifo" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && [ -p "$T/fifo" ] && ok || bad "a FIFO --json should exit 2 and stay a FIFO"
grep -qF -- "--json $T/fifo: cannot write there: is not a regular file" "$T/err.txt" && ok || bad "FIFO message: $(cat "$T/err.txt")"
echo target > "$T/target" && ln -s "$T/target" "$T/link"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/good.yaml" --json "$T/link" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && [ -L "$T/link" ] && [ "$(cat "$T/target")" = target ] && ok || bad "a symlink --json should exit 2, untouched"
grep -qF -- "is a symbolic link" "$T/err.txt" && ok || bad "symlink message: $(cat "$T/err.txt")"
# Two outputs on one file (only the last would be kept): a usage error naming both, nothing written.
echo keep > "$T/same"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/good.yaml" --json "$T/same" --report "$T/same" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "--json and --report on one file should exit 2"
grep -qF -- "--json $T/same and --report $T/same are the same file: give each output its own path" "$T/err.txt" && ok \
  || bad "same output twice: $(cat "$T/err.txt")"
[ "$(cat "$T/same")" = keep ] && ok || bad "same output twice: the file was written"
mkdir -p "$T/outdir" && ln -s outdir "$T/outlink"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/good.yaml" --json "$T/outdir/r.json" --timeseries "$T/outlink/../outdir/./r.json" \
  -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "are the same file" "$T/err.txt" && [ ! -e "$T/outdir/r.json" ] && ok \
  || bad "one new file by two spellings: $(cat "$T/err.txt")"
# An output on an input file would overwrite it: a usage error naming the option, the input intact.
cp "$T/good.yaml" "$T/swcopy.yaml"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/swcopy.yaml" --json "$T/swcopy.yaml" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "--json on the --workload file should exit 2"
grep -qF -- "--json $T/swcopy.yaml: would overwrite the --workload input $T/swcopy.yaml" "$T/err.txt" && ok || bad "output on input: $(cat "$T/err.txt")"
cmp -s "$T/good.yaml" "$T/swcopy.yaml" && ok || bad "output on input: the workload file was overwritten"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/swcopy.yaml" --timeseries "$T/outlink/../swcopy.yaml" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--timeseries $T/outlink/../swcopy.yaml: would overwrite the --workload input" "$T/err.txt" && ok \
  || bad "output on input through a symbolic link: $(cat "$T/err.txt")"
"$BIN" simulate --pools "$T/pools.yaml" --workload "$T/swcopy.yaml" --report "$T/pools.yaml" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--report $T/pools.yaml: would overwrite the --pools input" "$T/err.txt" && ok || bad "output on --pools: $(cat "$T/err.txt")"

# 3. The openb trace as the workload (a small file in the trace's layout; no trace data copied).
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n' > "$T/trace.csv"
printf 'p0,2000,4096,1,500,,LS,Running,0,7200,0\np1,2000,4096,1,500,,BE,Succeeded,36000,39600,36000\n' >> "$T/trace.csv"
if "$BIN" simulate --pools "$T/pools.yaml" --openb-pods "$T/trace.csv" --time-scale 10 --json "$T/t.json" -q > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "trace run exited $?: $(cat "$T/err.txt")"; fi
grep -q '"horizon_s": 3600.0' "$T/t.json" && ok || bad "trace horizon should be 36000 / 10 s: $(grep horizon "$T/t.json")"
grep -q 'arrivals / 10' "$T/out.txt" && ok || bad "the summary should state the mapping: $(head -1 "$T/out.txt")"
printf 'p2,1,1,1,1000,,LS,Running,50,20,\n' >> "$T/trace.csv"
expect_bad_trace() {  # name, expected substring, extra args...
  local name="$1" want="$2"
  shift 2
  "$BIN" simulate --pools "$T/pools.yaml" -q "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
}
expect_bad_trace "deletion before creation" "trace.csv:4: field 'deletion_time': 20 is before creation_time 50" --openb-pods "$T/trace.csv"
expect_bad_trace "both sources" "exactly one of --workload" --openb-pods "$T/trace.csv" --workload "$T/good.yaml"
expect_bad_trace "no source" "exactly one of --workload"
expect_bad_trace "time scale without trace" "apply to --openb-pods only" --workload "$T/good.yaml" --time-scale 5
expect_bad_trace "zero time scale" "--time-scale 0 must be positive" --openb-pods "$T/trace.csv" --time-scale 0
# Limits that keep a run bounded (each of these ran for minutes and took GBs): checked before any work.
expect_bad_trace "huge horizon" "--horizon 1e+300 is above the maximum of 100000000 s" --openb-pods "$T/trace.csv" --horizon 1e300
expect_bad_trace "tiny time scale" "--time-scale 1e-300 is outside [0.001, 1000000]" --openb-pods "$T/trace.csv" --time-scale 1e-300
expect_bad_trace "huge time scale" "--time-scale 10000000 is outside [0.001, 1000000]" --openb-pods "$T/trace.csv" --time-scale 1e7
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n' > "$T/far.csv"
printf 'p0,2000,4096,1,500,,LS,Running,0,7200,0\np1,2000,4096,1,500,,BE,Succeeded,1000000,1003600,1000000\n' >> "$T/far.csv"
expect_bad_trace "replay past the horizon limit" "--time-scale 0.001: the replay runs to its last arrival at 1e+09 s, above the maximum of 100000000 s" \
  --openb-pods "$T/far.csv" --time-scale 0.001
"$BIN" simulate --pools "$T/pools.yaml" --openb-pods "$T/far.csv" --time-scale 0.001 --horizon 3600 -q > /dev/null 2> "$T/err.txt" \
  && ok || bad "a --horizon within the limit should let --time-scale 0.001 run: $(cat "$T/err.txt")"
expect_bad_trace "output on the trace" "--json $T/far.csv: would overwrite the --openb-pods input $T/far.csv" --openb-pods "$T/far.csv" --json "$T/far.csv"

# 4. compare: one table row per configuration, savings against the first, JSON per configuration.
if "$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "base=$EXAMPLES/baseline-pools.yaml,leastallocated" \
     --config "$EXAMPLES/pools.yaml" --json "$T/cmp.json" -q > "$T/cmp.txt" 2> "$T/err.txt"; then ok; else bad "compare exited $?: $(cat "$T/err.txt")"; fi
grep -Eq '^base +leastallocated +[0-9.]+ +0\.0%' "$T/cmp.txt" && ok || bad "compare: no baseline row: $(cat "$T/cmp.txt")"
grep -Eq '^pools +gpufleet +[0-9.]+ +[0-9.]+%' "$T/cmp.txt" && ok || bad "compare: no row labelled by the file name: $(cat "$T/cmp.txt")"
python3 - "$T/cmp.json" "$T/a.json" <<'PY' && ok || bad "compare JSON: saving or embedded result wrong"
import json, sys
c = json.load(open(sys.argv[1])); single = json.load(open(sys.argv[2]))
a, b = c["configs"]
assert a["label"] == "base" and a["saving_pct_vs_first"] == 0
# the second configuration is the same run as section 1's simulate: identical result
assert b["result"] == single, "compare's run differs from simulate's"
want = (a["result"]["cost_usd"] - b["result"]["cost_usd"]) / a["result"]["cost_usd"] * 100
assert abs(b["saving_pct_vs_first"] - want) < 1e-5, (b["saving_pct_vs_first"], want)
PY
"$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "$EXAMPLES/pools.yaml" --config "$EXAMPLES/pools.yaml,packing" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q "label 'pools' appears twice" "$T/err.txt" && ok || bad "duplicate labels: $(cat "$T/err.txt")"
"$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "x=$EXAMPLES/pools.yaml,nope" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--config 'x=$EXAMPLES/pools.yaml,nope': unknown policy 'nope' (valid: " "$T/err.txt" && ! grep -q -- "--policy" "$T/err.txt" \
  && ok || bad "unknown policy in --config should name --config, not --policy: $(cat "$T/err.txt")"
"$BIN" compare --workload "$T/good.yaml" --config "$T/pools.yaml" --json "$T/cmp2.json" --report "$T/./cmp2.json" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/cmp2.json and --report $T/./cmp2.json are the same file" "$T/err.txt" && [ ! -e "$T/cmp2.json" ] && ok \
  || bad "compare --json and --report on one file: $(cat "$T/err.txt")"
cp "$T/pools.yaml" "$T/cmp-pools.yaml"
"$BIN" compare --workload "$T/good.yaml" --config "x=$T/cmp-pools.yaml,fgd" --json "$T/cmp-pools.yaml" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/cmp-pools.yaml: would overwrite the --config input $T/cmp-pools.yaml" "$T/err.txt" \
  && cmp -s "$T/pools.yaml" "$T/cmp-pools.yaml" && ok || bad "compare output on a --config pools file: $(cat "$T/err.txt")"
"$BIN" compare --workload "$T/good.yaml" --config "$T/pools.yaml" --seed -1 -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--seed: -1 is negative" "$T/err.txt" && ok || bad "compare --seed -1: $(cat "$T/err.txt")"
"$BIN" compare --workload "$T/negative.yaml" --config "$T/pools.yaml" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q "negative.yaml:7:20" "$T/err.txt" && ok || bad "compare with bad workload: $(cat "$T/err.txt")"

# GPU sharing: the example of docs/simulate.md ("GPU sharing") runs, with its hand-computed figures
# (the h100-mig node 30 s to 8010 s at 98.32 USD/h, the l4-shared node 40 s to the horizon at 4.6016,
# 2 nodes up and 1 down, 13 pods completed), and a MIG request with GPUs is refused at `mig`.
if "$BIN" simulate --pools "$EXAMPLES/sharing-pools.yaml" --workload "$EXAMPLES/sharing-workload.yaml" --json "$T/share.json" \
     > "$T/share.txt" 2> "$T/err.txt"; then ok; else bad "sharing example exited $?: $(cat "$T/err.txt")"; fi
grep -qx 'cost: 236.30 USD (59.07 USD/h), idle 152.64 USD (64.6%)' "$T/share.txt" && ok || bad "sharing cost line: $(cat "$T/share.txt")"
grep -qx 'pods: 13 completed, 6 running, 0 pending, 0 failed' "$T/share.txt" && ok || bad "sharing pods line: $(cat "$T/share.txt")"
python3 - "$T/share.json" <<'PY' && ok || bad "sharing example JSON"
import json, sys
r = json.load(open(sys.argv[1]))
assert abs(r["cost_by_pool"]["h100-mig"] - 7980 / 3600 * 98.32) < 1e-6, r["cost_by_pool"]
assert abs(r["cost_by_pool"]["l4-shared"] - 14360 / 3600 * 4.6016) < 1e-6, r["cost_by_pool"]
assert (r["nodes_scaled_up"], r["nodes_scaled_down"]) == (2, 1)
assert r["pods"] == {"completed": 13, "running": 6, "pending": 0, "failed": 0}, r["pods"]
PY
printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\njobs:\n- name: j\n  gpus: 1\n  mig: 3g.40gb\n  durationSeconds: 60\n' \
  > "$T/mig-gpus.yaml"
expect_bad "mig with gpus" "mig-gpus.yaml:7:8: field 'jobs[0].mig': mig and gpus cannot both be set" "$EXAMPLES/sharing-pools.yaml" "$T/mig-gpus.yaml"


# Queues and topology: bad input at its position, exit 2 (examples: docs/queues.md).
Q="$(cd "$(dirname "$EXAMPLES")/queues" && pwd)"
qwork() { printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\n%s\n' "$1"; }
qwork "queues:
  objects: [nosuch.yaml]" > "$T/q-missing.yaml"
expect_bad "queues: a missing objects file" "q-missing.yaml:5:13: field 'queues.objects[0]'" "$Q/simulate/pools.yaml" "$T/q-missing.yaml"
qwork "queues:
  objects: [$Q]" > "$T/q-jobs.yaml"
expect_bad "queues: jobs among the objects" "field 'queues.objects': the files hold 2 queued job(s)" "$Q/simulate/pools.yaml" "$T/q-jobs.yaml"
qwork "queues:
  objects: [$Q/flavors.yaml, $Q/cluster-queues.yaml, $Q/local-queues.yaml]
jobs:
- {name: j, namespace: team-a, queueName: nosuch, gpus: 1, durationSeconds: 60}" > "$T/q-lq.yaml"
expect_bad "queues: a missing LocalQueue" "q-lq.yaml:7:43: field 'jobs[0].queueName': LocalQueue team-a/nosuch does not exist" "$Q/simulate/pools.yaml" "$T/q-lq.yaml"
qwork "topology:
  levels: [example.com/nowhere]" > "$T/t-level.yaml"
expect_bad "topology: a level no node carries" "t-level.yaml:5:12: field 'topology.levels[0]': topology level example.com/nowhere: no pool's nodes carry this label" "$Q/simulate/pools.yaml" "$T/t-level.yaml"
qwork "topology:
  levels: [cloud.provider.com/topology-rack]
  slowdown: {cloud.provider.com/topology-rack: -0.5}" > "$T/t-slow.yaml"
expect_bad "topology: a negative slowdown" "field 'topology.slowdown.cloud.provider.com/topology-rack': -0.5 is outside [0, 100]" "$Q/simulate/pools.yaml" "$T/t-slow.yaml"

# A namespace that is not UTF-8: refused (YAML is Unicode; kubectl refuses it too), at the byte, exit 2.
sed 's/namespace: research/namespace: "r\xe9search"/' "$EXAMPLES/workload.yaml" > "$T/latin.yaml"
"$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$T/latin.yaml" -q --json "$T/latin.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q 'latin.yaml:[0-9]*:[0-9]*: YAML syntax error: invalid trailing UTF-8 octet' "$T/err.txt" && [ ! -e "$T/latin.json" ] \
  && ok || bad "non-UTF-8 namespace: $(cat -v "$T/err.txt")"

# A service that tolerates every taint on a spot pool interrupted about once a minute per node: kube's
# NodeUnschedulable lets it onto a node under notice (cordoned), and the reclaim takes it down with
# the node (no crash; it is evicted and queued again).
printf 'apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- name: spot-l4\n  gpu: {model: L4, count: 1}\n  cpu: 3920m\n  memory: 14Gi\n  nodes: 2\n  min: 0\n  max: 4\n  prices: {onDemand: 0.8, spot: 0.3}\n---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\nconsolidation:\n  enabled: true\npools:\n  spot-l4:\n    capacityType: spot\n    spotInterruptionsPerNodeHour: 60\n' > "$T/tol-pools.yaml"
printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 7200\nservices:\n- name: web\n  replicas: 3\n  cpu: 1\n  memory: 1Gi\n  gpus: 1\n  capacity: spot\n  tolerations: [{operator: Exists}]\n' > "$T/tol-workload.yaml"
"$BIN" simulate --pools "$T/tol-pools.yaml" --workload "$T/tol-workload.yaml" -q > "$T/tol.txt" 2> "$T/err.txt"
[ $? = 0 ] && grep -q 'spot interruptions [1-9]' "$T/tol.txt" && ok || bad "blanket toleration on interrupted spot nodes: $(cat "$T/err.txt")"

# MPS pool (docs/node-pools.md "MPS pools"): 6 one-replica services for 14190 s each, a replica
# charged as 1/4 of an L4: 6 x 0.253504 USD/h x 3.941667 h = 5.995368 USD.
"$BIN" simulate --pools "$EXAMPLES/../mps/pools.yaml" --workload "$EXAMPLES/../mps/sim-workload.yaml" -q --json "$T/mps.json" > "$T/mps.txt" 2> "$T/err.txt"
[ $? = 0 ] && grep -qx '  chargeback: serving 6.00' "$T/mps.txt" && ok || bad "mps simulate: $(cat "$T/mps.txt" "$T/err.txt")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert abs(d["chargeback"]["serving"] - 5.995368) < 1e-6, d["chargeback"]' "$T/mps.json" && ok || bad "mps chargeback JSON"

finish
