#!/usr/bin/env bash
# End-to-end checks of fault schedules (docs/faults.md): examples/faults runs (S28 and its XID 79
# control), the alerts reach the JSON, summary and HTML report, rate faults are deterministic per
# seed, and every reader error exits 2 with one line naming file:line:column and field, leaving no
# output file.
set -u
BIN="$1"
EX="$2/faults"
source "$(dirname "$0")/common.sh"

# 1. The example: XID 94 restarts R in place at 60 s; Q binds at 1860 s with the whole node.
"$BIN" simulate --pools "$EX/pools.yaml" --workload "$EX/workload.yaml" --json "$T/a.json" --report "$T/a.html" -q > "$T/a.txt" 2> "$T/err.txt" \
  && ok || bad "example exited $?: $(cat "$T/err.txt")"
grep -q '^pods: 2 completed, 0 running, 0 pending, 0 failed' "$T/a.txt" && ok || bad "S28: want both pods completed: $(cat "$T/a.txt")"
grep -q '1 XIDs (0 GPUs out for a reset, 1 restarts in place)' "$T/a.txt" && ok || bad "S28: fault line: $(cat "$T/a.txt")"
grep -q '60s DCGMXidError warning h100-0/gpu0: XID 94 (contained ECC error) on GPU 0 of h100-0: restart the application' "$T/a.txt" \
  && ok || bad "S28: alert line: $(cat "$T/a.txt")"
grep -q '"alert": "DCGMXidError"' "$T/a.json" && grep -q '"severity": "warning"' "$T/a.json" && grep -q '"container_restarts": 1' "$T/a.json" \
  && ok || bad "S28: JSON alerts/faults"
grep -q '<h2>Alerts</h2>' "$T/a.html" && grep -q 'restart the application' "$T/a.html" && ok || bad "S28: report has no alerts table"
# The control: XID 79 takes GPU 0 away, R restarts elsewhere, Q never binds.
"$BIN" simulate --pools "$EX/pools.yaml" --faults "$EX/xid79.yaml" --workload "$EX/workload.yaml" -q > "$T/b.txt" 2> "$T/err.txt" \
  && ok || bad "control exited $?: $(cat "$T/err.txt")"
grep -q '^pods: 1 completed, 0 running, 1 pending, 0 failed' "$T/b.txt" && ok || bad "control: want Q pending: $(cat "$T/b.txt")"
grep -q '60s DCGMXidError critical h100-0/gpu0: .*drain and reset the GPU' "$T/b.txt" && ok || bad "control: alert: $(cat "$T/b.txt")"
# compare takes --faults too.
"$BIN" compare --config "$EX/pools.yaml" --faults "$EX/xid79.yaml" --workload "$EX/workload.yaml" --json "$T/c.json" -q > /dev/null 2> "$T/err.txt" \
  && grep -q '"gpus_reset": 1' "$T/c.json" && ok || bad "compare --faults: $(cat "$T/err.txt")"

# The spot shortage (docs/karpenter.md): with on-demand in the NodePool the reclaimed jobs wait 73 s,
# without it they wait out the outage; the same work is lost in both.
for f in spot-first-karpenter spot-only-karpenter; do
  "$BIN" simulate --pools "$EX/$f.yaml" --workload "$EX/spot-shortage-workload.yaml" --faults "$EX/spot-outage.yaml" \
    --json "$T/$f.json" -q > "$T/$f.txt" 2> "$T/err.txt" && ok || bad "$f exited $?: $(cat "$T/err.txt")"
done
python3 - "$T/spot-first-karpenter.json" "$T/spot-only-karpenter.json" <<'PY' && ok || bad "spot shortage figures"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["pending_s"]["production"]["p99"] == 73, a["pending_s"]["production"]
assert b["pending_s"]["production"]["p99"] == 3781, b["pending_s"]["production"]
assert abs(a["lost_gpu_hours"] - 4 * 1739 / 3600) < 1e-5 and abs(b["lost_gpu_hours"] - a["lost_gpu_hours"]) < 1e-9
assert a["launch_failures"] == 16 and b["launch_failures"] == 240
assert a["cost_by_capacity_type"]["on-demand"] > 0 and b["cost_by_capacity_type"]["on-demand"] == 0
PY

# The rolling driver upgrade of 32 nodes (docs/checkpoints-and-upgrades.md): finish time and capacity
# lost per maxUnavailable, as the test DriverUpgradeFigures computes them in code.
U="$EX/driver-upgrade"
for case in "1 22800 41.33" "4 8400 37.33" "25pct 6000 32.00"; do
  set -- $case
  "$BIN" simulate --pools "$U/pools.yaml" --workload "$U/workload.yaml" --faults "$U/upgrade-$1.yaml" -q > "$T/u.txt" 2> "$T/err.txt" \
    && grep -q "to $2 s, 32 nodes upgraded .*capacity lost 42.67 GPU-hours, 32 job interruptions, .*lost $3 GPU-hours" "$T/u.txt" \
    && ok || bad "driver upgrade $1: $(cat "$T/u.txt" "$T/err.txt")"
done

# 2. Rate faults: same seed, same JSON; another seed, another JSON.
cat > "$T/rate.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: FaultSchedule
faults:
- kind: node-failure
  pool: h100
  rate: {perNodeHour: 2}
  recoverAfterSeconds: 600
YAML
for s in 1 1b 2; do
  "$BIN" simulate --pools "$EX/pools.yaml" --faults "$T/rate.yaml" --workload "$EX/workload.yaml" --seed "${s%b}" --json "$T/rate-$s.json" -q > /dev/null
done
cmp -s "$T/rate-1.json" "$T/rate-1b.json" && ok || bad "rate faults differ between identical runs"
cmp -s "$T/rate-1.json" "$T/rate-2.json" && bad "seed 2 gives the same rate faults as seed 1" || ok
grep -q '"node_failures": [1-9]' "$T/rate-1.json" && ok || bad "no node failure at 2 per node-hour over 2 h"

# 3. Reader errors: exit 2, one line file:line:column: field '...': message, no output file.
expect_bad() {  # name, expected substring, faults file content
  local name="$1" want="$2"
  printf '%s\n' "$3" > "$T/bad.yaml"
  rm -f "$T/out.json"
  "$BIN" simulate --pools "$EX/pools.yaml" --faults "$T/bad.yaml" --workload "$EX/workload.yaml" --json "$T/out.json" -q > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$name: an output file was written"
}
H='apiVersion: sim.gpufleet.io/v1
kind: FaultSchedule'
expect_bad "unknown XID" "bad.yaml:7:15: field 'faults[0].xid.code': unknown XID 12 (known: 8, 13, 31, 43, 45, 48, 63, 64, 68, 74, 79, 92, 94, 95, 109, 119, 120)" \
  "$H
faults:
- kind: xid
  node: h100-0
  at: 0
  xid: {code: 12}"
expect_bad "unknown node" "bad.yaml:5:9: field 'faults[0].node': no node 'h100-1'" "$H
faults:
- kind: node-failure
  node: h100-1
  at: 0"
expect_bad "unknown pool" "bad.yaml:5:9: field 'faults[0].pool': no pool 'a100' (pools: h100)" "$H
faults:
- kind: node-failure
  pool: a100
  at: 0"
expect_bad "unknown zone" "bad.yaml:5:9: field 'faults[0].zone': no node is in zone 'us-east-1a' (zones: none)" "$H
faults:
- kind: node-failure
  zone: us-east-1a
  at: 0"
expect_bad "spot on on-demand" "field 'faults[0].kind': spot-interruption needs a spot pool" "$H
faults:
- kind: spot-interruption
  pool: h100
  at: 0"
expect_bad "unknown kind" "bad.yaml:4:9: field 'faults[0].kind': unknown fault kind 'reboot'" "$H
faults:
- kind: reboot
  node: h100-0
  at: 0"
expect_bad "negative time" "bad.yaml:5:7: field 'faults[0].at': -5 is negative" "$H
faults:
- kind: node-failure
  at: -5
  node: h100-0"
expect_bad "NaN time" "bad.yaml:5:7: field 'faults[0].at': '.nan' is not a number" "$H
faults:
- kind: node-failure
  at: .nan
  node: h100-0"
expect_bad "at and rate" "field 'faults[0]': give at or rate, not both" "$H
faults:
- kind: node-failure
  node: h100-0
  at: 0
  rate: {perNodeHour: 1}"
expect_bad "GPU index" "bad.yaml:7:24: field 'faults[0].xid.gpu': 8 is not a GPU of the target (0..7)" "$H
faults:
- kind: xid
  node: h100-0
  at: 0
  xid: {code: 79, gpu: 8}"
expect_bad "outage window" "bad.yaml:4:50: field 'capacityOutages[0].to': the outage ends at 10 before it starts at 20" "$H
capacityOutages:
- {pool: h100, capacityType: spot, from: 20, to: 10}"
expect_bad "limit resource" "field 'limitChanges[0].limits.pods': unknown resource 'pods' (known: cpu, memory, nvidia.com/gpu)" "$H
limitChanges:
- {at: 0, nodePool: default, limits: {pods: 10}}"
expect_bad "negative limit" "field 'limitChanges[0].limits.cpu': '-1' is negative" "$H
limitChanges:
- {at: 0, nodePool: default, limits: {cpu: -1}}"
# A limit change for a NodePool the run does not have (the pools file has none).
expect_bad "limit change NodePool" "bad.yaml:4:21: field 'limitChanges[0].nodePool': no NodePool 'gpu' (NodePools: none)" "$H
limitChanges:
- {at: 0, nodePool: gpu, limits: {cpu: 16}}"
# A Karpenter NodePool's spec.limits: negative, or a resource Karpenter does not limit.
expect_bad_nodepool() {  # name, expected substring, limits line
  sed "s|  limits: {nvidia.com/gpu: \"16\"}|$3|" "$EX/spot-first-karpenter.yaml" > "$T/badpools.yaml"
  rm -f "$T/out.json"
  "$BIN" simulate --pools "$T/badpools.yaml" --workload "$EX/spot-shortage-workload.yaml" --json "$T/out.json" -q > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$1: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && grep -qF -- "$2" "$T/err.txt" && ok || bad "$1: error lacks '$2': $(cat "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$1: an output file was written"
}
expect_bad_nodepool "negative NodePool limit" "badpools.yaml:22:28: field 'spec.limits.nvidia.com/gpu': '-1' is negative" '  limits: {nvidia.com/gpu: "-1"}'
expect_bad_nodepool "unknown NodePool limit" "badpools.yaml:22:18: field 'spec.limits.pods': unknown resource 'pods' in limits (expected cpu, memory, nvidia.com/gpu)" '  limits: {pods: "10"}'
expect_bad "upgrade pool" "field 'driverUpgrades[0].pool': no pool 'a100' (pools: h100)" "$H
driverUpgrades:
- {pool: a100, at: 0}"
expect_bad "other kind" "field 'kind': unknown kind 'Workload' in a fault schedule file (expected FaultSchedule)" "apiVersion: sim.gpufleet.io/v1
kind: Workload"
expect_bad "apiVersion" "field 'apiVersion': apiVersion 'sim.gpufleet.io/v2' is not supported for kind FaultSchedule" "apiVersion: sim.gpufleet.io/v2
kind: FaultSchedule"
expect_bad "unknown key" "field 'faults[0].recover': unknown key 'recover'" "$H
faults:
- kind: node-failure
  node: h100-0
  at: 0
  recover: 10"

finish
