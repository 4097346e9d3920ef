#!/usr/bin/env bash
# `gpufleet plan --current FILE` (docs/plan.md "Planning from the current cluster") on the small catalog
# the plan tests share and the kubectl-style fixture tests/data/plan-current-nodes.json (hand-made: 3
# g6.12xlarge on-demand, 2 spot, 1 g6.xlarge without a capacity type, 1 p4d.24xlarge in us-east-1b, 1
# node without an instance type): (a) the diff in the summary, the JSON and --diff-out, the rows' kinds
# following the plan's bounds, the unlabelled nodes named on stderr; (b) the plan's own pools file as
# --current: every row "keep"; (c) a priced node-pool file: the hourly costs; (d) --merge accepts
# --current and gives the one-process outputs; (e) a workload of inference
# services only; (f) bad input: exit 2, one line, nothing written.
set -u
BIN="$1"
SRC="$2"
source "$(dirname "$0")/common.sh"
unset JOB_COMPLETION_INDEX

source "$(dirname "$0")/plan_catalog.sh"
plan_catalog > "$T/catalog.yaml"
plan_constraints > "$T/constraints.yaml"
cat > "$T/workload.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 14400
services:
- {name: api, replicas: 2, gpus: 1, cpu: "2", memory: 8Gi, priority: 1000}
jobs:
- {name: train-a, gpus: 4, cpu: "16", memory: 64Gi, durationSeconds: 7200, priority: 1000}
- {name: train-b, arrivalSeconds: 1800, gpus: 2, cpu: "8", memory: 32Gi, durationSeconds: 3600, priority: 100, capacity: spot-ok, checkpointIntervalSeconds: 600}
- {name: dev-1, arrivalSeconds: 3600, gpus: 1, cpu: "2", memory: 8Gi, durationSeconds: 1800, priority: 100, capacity: spot-ok}
- {name: late, arrivalSeconds: 10800, gpus: 4, cpu: "16", memory: 64Gi, durationSeconds: 3600, priority: 100, capacity: spot-ok, checkpointIntervalSeconds: 900}
YAML
NODES="$SRC/tests/data/plan-current-nodes.json"
POOLS="$SRC/tests/data/plan-current-pools.yaml"
plan() { "$BIN" plan -q --catalog "$T/catalog.yaml" --constraints "$T/constraints.yaml" --workload "$T/workload.yaml" --seed 7 "$@"; }

# a. kubectl get nodes -o json.
mkdir -p "$T/a"
plan --current "$NODES" --json "$T/a/plan.json" --diff-out "$T/a/diff.md" --pools-out "$T/a/pools.yaml" > "$T/a/out.txt" 2> "$T/a/err.txt" \
  && ok || bad "plan --current exited $?: $(cat "$T/a/err.txt")"
grep -q "^gpufleet: warning: $NODES: 1 node without an instance type .* left out of the diff: control-0\$" "$T/a/err.txt" \
  && ok || bad "no warning naming control-0: $(cat "$T/a/err.txt")"
grep -q "^gpufleet: warning: $NODES: 1 node without a capacity-type label .* taken as on-demand: ip-10-0-3-1.ec2.internal\$" "$T/a/err.txt" \
  && ok || bad "no warning naming the node without a capacity type: $(cat "$T/a/err.txt")"
[ "$(wc -l < "$T/a/err.txt")" = 2 ] && ok || bad "stderr: want the two warnings only: $(cat "$T/a/err.txt")"
grep -q "^current cluster: $NODES, 8 nodes in 4 groups (instance type, zone, capacity type), against the plan:\$" "$T/a/out.txt" \
  && ok || bad "no diff heading in the summary: $(cat "$T/a/out.txt")"
grep -qE '^remove +p4d\.24xlarge +us-east-1b +on-demand +1 +0 +- +- +-$' "$T/a/out.txt" && ok || bad "no p4d remove row: $(cat "$T/a/out.txt")"
grep -qE '^[a-z]+ +g6\.12xlarge +us-east-1a +spot +2 +0 ' "$T/a/out.txt" && ok || bad "no g6.12xlarge spot row with 2 nodes: $(cat "$T/a/out.txt")"
grep -q '^  not in the table: 1 node without an instance type' "$T/a/out.txt" && ok || bad "the summary does not count the unlabelled node"
grep -q 'hourly cost' "$T/a/out.txt" && bad "an hourly cost for Nodes, which carry no prices" || ok
grep -qF '| remove | p4d.24xlarge | us-east-1b | on-demand | 1 | 0 | - | - | - |' "$T/a/diff.md" && ok || bad "--diff-out lacks the p4d row: $(cat "$T/a/diff.md")"
grep -q '^# gpufleet plan: the current cluster against the plan' "$T/a/diff.md" && ok || bad "--diff-out heading: $(head -1 "$T/a/diff.md")"
grep -qxF -- "- $(grep '^plan: ' "$T/a/out.txt")" "$T/a/diff.md" && ok || bad "--diff-out does not name the plan"
python3 - "$T/a/plan.json" <<'PY' && ok || bad "JSON current_diff: rows and kinds"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["current_diff"]
assert d["nodes"] == 8 and d["unlabelled"] == ["control-0"], d
assert d["current_usd_per_hour"] is None and d["plan_mean_usd_per_hour"] > 0, d
assert abs(d["plan_mean_usd_per_hour"] - j["plan"]["cost_usd"] / 4) < 1e-9, (d["plan_mean_usd_per_hour"], j["plan"]["cost_usd"])
rows = {(r["instance_type"], r["zone"], r["capacity_type"]): r for r in d["rows"]}
assert rows[("p4d.24xlarge", "us-east-1b", "on-demand")]["kind"] == "remove"
assert rows[("g6.12xlarge", "us-east-1a", "on-demand")]["current_nodes"] == 3
assert rows[("g6.12xlarge", "us-east-1a", "spot")]["current_nodes"] == 2
assert rows[("g6.xlarge", "us-east-1a", "on-demand")]["current_nodes"] == 1
current = {("g6.12xlarge", "us-east-1a", "on-demand"), ("g6.12xlarge", "us-east-1a", "spot"), ("g6.xlarge", "us-east-1a", "on-demand"),
           ("p4d.24xlarge", "us-east-1b", "on-demand")}
assert current <= set(rows), rows.keys()
for key, r in rows.items():
    p = r["plan"]
    if key not in current: want = "add"
    elif p is None: want = "remove"
    elif p["min"] <= r["current_nodes"] <= p["max"] and p["committed"] == r["current_committed"]: want = "keep"
    else: want = "change"
    assert r["kind"] == want, (key, r, want)
assert any(r["plan"] for r in d["rows"]), "no row of the plan"
PY

# b. The plan's own pools file as the current cluster: every row keep.
plan --current "$T/a/pools.yaml" --json "$T/b.json" > "$T/b.txt" 2> "$T/err.txt" && ok || bad "plan --current its own pools exited $?: $(cat "$T/err.txt")"
[ ! -s "$T/err.txt" ] && ok || bad "the plan's pools file as --current warned: $(cat "$T/err.txt")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["current_diff"]
assert d["rows"] and all(r["kind"] == "keep" for r in d["rows"]), d["rows"]
assert d["current_usd_per_hour"] is not None, d
' "$T/b.json" && ok || bad "the plan against its own pools file is not all keep: $(cat "$T/b.txt")"

# c. A priced node-pool file: 1 reserved x 2.6989 + 2 on-demand x 4.6016 + 2 spot x 1.8406 = 15.5833 USD/h.
plan --current "$POOLS" > "$T/c.txt" 2> "$T/err.txt" && ok || bad "plan --current pools exited $?: $(cat "$T/err.txt")"
[ ! -s "$T/err.txt" ] && ok || bad "a pool file with its Autoscaling document warned: $(cat "$T/err.txt")"
grep -q '^hourly cost: current cluster 15.58 USD/h at its node counts, the plan [0-9.]* USD/h' "$T/c.txt" && ok || bad "no hourly costs: $(cat "$T/c.txt")"
grep -qE '^[a-z]+ +g6\.12xlarge +us-east-1a +on-demand +3 +1 ' "$T/c.txt" && ok || bad "the pool's 3 nodes, 1 committed: $(cat "$T/c.txt")"

# d. Shards merged with --current: the one-process outputs.
mkdir -p "$T/d"
for i in 0 1; do
  plan --shards 2 --shard-index $i --shard-out "$T/d/shard-$i.json" > /dev/null 2> "$T/err.txt" || bad "shard $i exited $?: $(cat "$T/err.txt")"
done
plan --merge "$T/d/shard-0.json" "$T/d/shard-1.json" --current "$NODES" --json "$T/d/plan.json" --diff-out "$T/d/diff.md" \
  --pools-out "$T/d/pools.yaml" > "$T/d/out.txt" 2> /dev/null && ok || bad "merge with --current exited $?"
for f in plan.json diff.md pools.yaml; do cmp -s "$T/a/$f" "$T/d/$f" && ok || bad "merged $f differs from one process's"; done
cmp -s "$T/a/out.txt" <(sed 's#/d/#/a/#' "$T/d/out.txt") && ok || bad "merged summary differs: $(diff "$T/a/out.txt" "$T/d/out.txt")"

# e. A workload of inference services only: the diff against the services' pools, the plan's mean
# the total cost over the one-hour horizon.
cat > "$T/services.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 3600
services:
- name: chat
  gpus: 1
  inference:
    model: Llama-3.2-1B
    slo: {ttftP99Seconds: 600, tpotP99Seconds: 0.1}
    traffic: {generate: {meanRatePerSecond: 2, tokens: {promptMean: 100, promptMedian: 80, outputMean: 50, outputMedian: 40}}}
YAML
"$BIN" plan -q --catalog "$T/catalog.yaml" --workload "$T/services.yaml" --current "$POOLS" --json "$T/f.json" --diff-out "$T/f.md" \
  > "$T/f.txt" 2> "$T/err.txt" && ok || bad "services plan --current exited $?: $(cat "$T/err.txt")"
python3 - "$T/f.json" <<'PY' && ok || bad "services: current_diff: $(cat "$T/f.txt")"
import json, sys
j = json.load(open(sys.argv[1]))
d = j["current_diff"]
assert abs(d["plan_mean_usd_per_hour"] - j["total_cost_usd"]) < 1e-9, (d["plan_mean_usd_per_hour"], j["total_cost_usd"])
assert abs(d["current_usd_per_hour"] - (2.6989 + 2 * 4.6016 + 2 * 1.8406)) < 1e-9, d["current_usd_per_hour"]
kinds = {(r["instance_type"], r["capacity_type"]): r["kind"] for r in d["rows"]}
assert kinds[("g6.12xlarge", "spot")] == "remove", kinds
assert "add" in kinds.values() or "keep" in kinds.values() or "change" in kinds.values(), kinds
PY
grep -q '^- plan: chat: ' "$T/f.md" && ok || bad "services: --diff-out does not name the service's plan: $(cat "$T/f.md")"

# f. Bad input: exit 2, one line naming the file (line, column, field where there are), nothing written.
expect_bad() {  # name, expected substring, then the plan arguments
  local name="$1" want="$2"
  shift 2
  rm -f "$T/bad.json" "$T/bad.md"
  plan --json "$T/bad.json" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/bad.json" ] && [ ! -e "$T/bad.md" ] && ok || bad "$name: an output was written"
}
BADCAP="$SRC/tests/data/plan-current-bad-capacity.json"
expect_bad "unknown capacity type" \
  "$BADCAP:97:55: field 'items[3].metadata.labels.eks.amazonaws.com/capacityType': capacity type 'SPOTT' is not one of ON_DEMAND, SPOT, CAPACITY_BLOCK" \
  --current "$BADCAP" --diff-out "$T/bad.md"
head -c 2000 "$NODES" > "$T/truncated.json"
expect_bad "truncated JSON" "$T/truncated.json:" --current "$T/truncated.json" --diff-out "$T/bad.md"
printf 'apiVersion: v1\nkind: List\nitems: []\n' > "$T/no-nodes.json"
expect_bad "no nodes" "$T/no-nodes.json: no nodes (no Node, nor a pool of a NodePoolSet)" --current "$T/no-nodes.json"
expect_bad "missing file" "$T/absent.json" --current "$T/absent.json"
expect_bad "--diff-out without --current" "--diff-out needs --current FILE" --diff-out "$T/bad.md"

finish
