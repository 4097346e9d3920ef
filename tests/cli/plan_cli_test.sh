#!/usr/bin/env bash
# End-to-end checks of `gpufleet plan` on a tiny catalog (2 instance types) and workload (4 h, a few
# jobs): (a) the pools file it writes reproduces the plan's cost in `simulate` to the cent; (b) four
# shard processes (--shard-index or JOB_COMPLETION_INDEX) merged with --merge write every output
# byte-identical to one process; (c) bad input: exit 2, one error line naming the file, line and field,
# no output written; (d) the openb trace of docs' example with --race-fraction 0.5 (skipped without
# ../shared/traces); (e) inference services: a job naming pools is refused, a service without an SLO
# is refused, and the Azure conversation trace x5 with FP8 allowed (docs/plan.md "Inference services",
# skipped without ../shared/traces) meets its SLO, no dearer than docs/serving.md's best by hand, and
# simulate on --pools-out and --workload-out reproduces the plan's cost to the cent.
set -u
BIN="$1"
SRC="$2"
source "$(dirname "$0")/common.sh"
unset JOB_COMPLETION_INDEX  # the shards below set it per command

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
- {name: dev-2, arrivalSeconds: 5400, gpus: 1, cpu: "2", memory: 8Gi, durationSeconds: 2400, priority: 100}
- {name: eval, arrivalSeconds: 9000, pods: 2, gpus: 1, cpu: "2", memory: 8Gi, durationSeconds: 1800, priority: 1000}
- {name: late, arrivalSeconds: 10800, gpus: 4, cpu: "16", memory: 64Gi, durationSeconds: 3600, priority: 100, capacity: spot-ok, checkpointIntervalSeconds: 900}
YAML
SEED=7
plan() { "$BIN" plan -q --catalog "$T/catalog.yaml" --constraints "$T/constraints.yaml" --workload "$T/workload.yaml" --seed "$SEED" "$@"; }

# a. One process: every output; simulate on the pools file gives the plan's cost to the cent.
mkdir -p "$T/one"
if plan --pools-out "$T/one/pools.yaml" --json "$T/one/plan.json" --csv "$T/one/plan.csv" --report "$T/one/plan.html" \
     > "$T/one/out.txt" 2> "$T/err.txt"; then ok; else bad "plan exited $?: $(cat "$T/err.txt")"; fi
[ ! -s "$T/err.txt" ] && ok || bad "-q still wrote to stderr: $(cat "$T/err.txt")"
for f in pools.yaml plan.json plan.csv plan.html; do [ -s "$T/one/$f" ] && ok || bad "no $f written"; done
grep -q '^plan: ' "$T/one/out.txt" && ok || bad "no plan line in the summary: $(cat "$T/one/out.txt")"
head -1 "$T/one/plan.csv" | grep -q '^phase,index,label,' && ok || bad "CSV header: $(head -1 "$T/one/plan.csv")"
"$BIN" simulate --pools "$T/one/pools.yaml" --workload "$T/workload.yaml" --seed "$SEED" --policy gpufleet -q --json "$T/one/sim.json" \
  > "$T/one/sim.txt" 2> "$T/err.txt" && ok || bad "simulate on the plan's pools exited $?: $(cat "$T/err.txt")"
python3 - "$T/one/plan.json" "$T/one/sim.json" "$T/one/sim.txt" <<'PY' && ok || bad "simulate's cost is not the plan's cost: $(grep '^cost:' "$T/one/sim.txt")"
import json, re, sys
p = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2])); text = open(sys.argv[3]).read()
plan = p["plan"]
assert plan is not None, p.get("infeasible")
assert round(plan["cost_usd"], 2) == round(s["cost_usd"], 2), (plan["cost_usd"], s["cost_usd"])
m = re.search(r"^cost: ([0-9.]+) USD", text, re.M)
assert m and m.group(1) == "%.2f" % plan["cost_usd"], (m and m.group(1), plan["cost_usd"])
assert plan["cost_usd"] <= p["baseline"]["cost_usd"], (plan["cost_usd"], p["baseline"]["cost_usd"])
assert p["frontier"] and [r["cost_usd"] for r in p["frontier"]] == sorted(r["cost_usd"] for r in p["frontier"])
PY
# The same run again: the same bytes.
mkdir -p "$T/again"
plan --pools-out "$T/again/pools.yaml" --json "$T/again/plan.json" --csv "$T/again/plan.csv" --report "$T/again/plan.html" > /dev/null 2>&1
for f in pools.yaml plan.json plan.csv plan.html; do cmp -s "$T/one/$f" "$T/again/$f" && ok || bad "$f differs between identical runs"; done

# b. Four shards, two by --shard-index and two by JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), then --merge.
mkdir -p "$T/shards"
plan --shards 4 --shard-index 0 --shard-out "$T/shards/shard-0.json" > "$T/shards/out0.txt" 2> "$T/err.txt" && ok || bad "shard 0 exited $?: $(cat "$T/err.txt")"
JOB_COMPLETION_INDEX=1 plan --shards 4 --shard-out "$T/shards/shard-1.json" > /dev/null 2> "$T/err.txt" && ok || bad "shard 1 (env) exited $?: $(cat "$T/err.txt")"
plan --shards 4 --shard-index 2 --shard-out "$T/shards/shard-2.json" > /dev/null 2> "$T/err.txt" && ok || bad "shard 2 exited $?: $(cat "$T/err.txt")"
JOB_COMPLETION_INDEX=3 plan --shards 4 --shard-out "$T/shards/shard-3.json" > /dev/null 2> "$T/err.txt" && ok || bad "shard 3 (env) exited $?: $(cat "$T/err.txt")"
grep -q "^shard 0 of 4: .* candidates raced; results: $T/shards/shard-0.json\$" "$T/shards/out0.txt" && ok || bad "shard line: $(cat "$T/shards/out0.txt")"
# --shard-index wins over the environment.
JOB_COMPLETION_INDEX=3 plan --shards 4 --shard-index 2 --shard-out "$T/shards/again-2.json" > /dev/null 2>&1
cmp -s "$T/shards/shard-2.json" "$T/shards/again-2.json" && ok || bad "--shard-index 2 with JOB_COMPLETION_INDEX=3 is not shard 2"
mkdir -p "$T/merged"
S="$T/shards"
plan --merge "$S/shard-2.json" "$S/shard-0.json" "$S/shard-3.json" "$S/shard-1.json" --pools-out "$T/merged/pools.yaml" \
  --json "$T/merged/plan.json" --csv "$T/merged/plan.csv" --report "$T/merged/plan.html" > "$T/merged/out.txt" 2> "$T/err.txt" \
  && ok || bad "merge exited $?: $(cat "$T/err.txt")"
for f in pools.yaml plan.json plan.csv plan.html; do cmp -s "$T/one/$f" "$T/merged/$f" && ok || bad "merged $f differs from one process's"; done
cmp -s "$T/one/out.txt" <(sed 's#/merged/#/one/#' "$T/merged/out.txt") && ok || bad "merged summary differs from one process's"

# c. Bad input: exit 2, one line naming the file (and line and field where there is one), nothing written.
expect_bad() {  # name, expected substring, then the plan arguments
  local name="$1" want="$2"
  shift 2
  rm -f "$T/bad.json" "$T/bad-pools.yaml"
  "$BIN" plan -q --json "$T/bad.json" --pools-out "$T/bad-pools.yaml" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/bad-pools.yaml" ] && ok || bad "$name: a pools file was written"
}
W=(--workload "$T/workload.yaml" --seed "$SEED")
: > "$T/empty.yaml"
expect_bad "empty catalog" "$T/empty.yaml: field 'kind': the file is empty" --catalog "$T/empty.yaml" "${W[@]}"
[ ! -e "$T/bad.json" ] && ok || bad "empty catalog: the JSON was written"
sed 's/spot: 0.3219/spot: 0.9/' "$T/catalog.yaml" > "$T/spot-above.yaml"
expect_bad "spot above on-demand" "spot-above.yaml:9:48: field 'instanceTypes[0].offerings[0].spot': spot 0.9 is above onDemand 0.8048" \
  --catalog "$T/spot-above.yaml" "${W[@]}"
[ ! -e "$T/bad.json" ] && ok || bad "spot above on-demand: the JSON was written"
# Constraints no configuration meets: exit 2 naming the constraint where it was read. (The JSON, CSV and
# report are still written, with "plan": null and why: they show what the configurations reach.)
printf 'apiVersion: plan.gpufleet.io/v1\nkind: PlanConstraints\nslo:\n  productionP99PendingSeconds: 0\n' > "$T/slo.yaml"
expect_bad "SLO nobody meets" "slo.yaml:4:32: field 'slo.productionP99PendingSeconds': no configuration meets the constraints: production p99 pending" \
  --catalog "$T/catalog.yaml" --constraints "$T/slo.yaml" "${W[@]}"
printf 'apiVersion: plan.gpufleet.io/v1\nkind: PlanConstraints\nslo: {productionP99PendingSeconds: 600}\nbudgetUsd: 0.01\n' > "$T/budget.yaml"
expect_bad "budget nobody meets" "budget.yaml:4:12: field 'budgetUsd': no configuration meets the constraints: cost " \
  --catalog "$T/catalog.yaml" --constraints "$T/budget.yaml" "${W[@]}"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["plan"] is None and "(budgetUsd)" in j["infeasible"], j.get("infeasible")' \
  "$T/bad.json" && ok || bad "budget nobody meets: the JSON lacks plan null and the reason"
C=(--catalog "$T/catalog.yaml" --constraints "$T/constraints.yaml" --workload "$T/workload.yaml")
expect_bad "shard of another plan" "$S/shard-0.json: field 'fingerprint': " "${C[@]}" --seed 8 \
  --merge "$S/shard-0.json" "$S/shard-1.json" "$S/shard-2.json" "$S/shard-3.json"
[ ! -e "$T/bad.json" ] && ok || bad "shard of another plan: the JSON was written"
sed 's/durationSeconds: 2400/durationSeconds: 2500/' "$T/workload.yaml" > "$T/edited.yaml"
expect_bad "shard of an edited workload" "field 'fingerprint': " --catalog "$T/catalog.yaml" --constraints "$T/constraints.yaml" \
  --workload "$T/edited.yaml" --seed "$SEED" --merge "$S/shard-0.json" "$S/shard-1.json" "$S/shard-2.json" "$S/shard-3.json"
expect_bad "missing shard" "--merge: shard 2 of 4 is missing" "${C[@]}" --seed "$SEED" --merge "$S/shard-0.json" "$S/shard-1.json" "$S/shard-3.json"
[ ! -e "$T/bad.json" ] && ok || bad "missing shard: the JSON was written"
expect_bad "shard twice" "field 'shard': shard 1 is given twice" "${C[@]}" --seed "$SEED" \
  --merge "$S/shard-0.json" "$S/shard-1.json" "$S/shard-1.json" "$S/shard-2.json" "$S/shard-3.json"
expect_bad "--shards without --shard-out" "--shards: give --shard-out FILE" "${C[@]}" --shards 4 --shard-index 0
JOB_COMPLETION_INDEX=abc expect_bad "JOB_COMPLETION_INDEX=abc" "JOB_COMPLETION_INDEX 'abc' is not an index" "${C[@]}" --shards 4 --shard-out "$T/shards/none.json"
[ ! -e "$T/shards/none.json" ] && ok || bad "a shard file was written"
expect_bad "shard index above --shards" "shard index 4 is not below --shards 4" "${C[@]}" --shards 4 --shard-index 4 --shard-out "$T/shards/none.json"
expect_bad "--shards without an index" "give --shard-index or set JOB_COMPLETION_INDEX" "${C[@]}" --shards 4 --shard-out "$T/shards/none.json"
[ ! -e "$T/shards/none.json" ] && ok || bad "a shard file was written for a bad index"

# d. The openb trace (docs' example) with --race-fraction 0.5: a plan cheaper than the baseline.
TRACE="${GPUFLEET_TRACES:-$SRC/../shared/traces}/alibaba-gpu-v2023/csv/openb_pod_list_default.csv"
if [ -f "$TRACE" ]; then
  "$BIN" plan -q --catalog "$SRC/examples/plan/catalog.yaml" --constraints "$SRC/examples/plan/constraints.yaml" --openb-pods "$TRACE" \
    --time-scale 40 --trace-start 9417600 --race-fraction 0.5 --json "$T/openb.json" > /dev/null 2> "$T/err.txt" \
    && ok || bad "openb plan exited $?: $(cat "$T/err.txt")"
  python3 - "$T/openb.json" <<'PY' && ok || bad "openb: no plan cheaper than the baseline"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["plan"] is not None, j.get("infeasible")
assert j["plan"]["cost_usd"] < j["baseline"]["cost_usd"], (j["plan"]["cost_usd"], j["baseline"]["cost_usd"])
PY
else
  echo "plan_cli_test: the openb case skipped: $TRACE is absent (../shared/traces)"
fi

# e. Inference services.
cat > "$T/pools-named.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 3600
jobs:
- {name: train, gpus: 1, cpu: "1", memory: 1Gi, durationSeconds: 600, pools: [l40s]}
YAML
expect_bad "a job naming pools" "'train' names pools (l40s): plan makes the pools" --catalog "$T/catalog.yaml" \
  --workload "$T/pools-named.yaml" --seed "$SEED"
cat > "$T/no-slo.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 600
services:
- name: chat
  gpus: 1
  pools: [l40s]
  inference:
    model: Llama-3.2-1B
    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 100, promptMedian: 80, outputMean: 50, outputMedian: 40}}}
YAML
expect_bad "a service without an SLO" "inference service 'chat' has no slo" --catalog "$T/catalog.yaml" --workload "$T/no-slo.yaml" --seed "$SEED"
CONV="${GPUFLEET_TRACES:-$SRC/../shared/traces}/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv"
if [ -f "$CONV" ]; then
  A="$T/azure"
  mkdir -p "$A/out"
  sed "s|trace: .*AzureLLMInferenceTrace_conv.csv|trace: $CONV|" "$SRC/examples/plan/azure-conv.yaml" > "$A/workload.yaml"
  "$BIN" plan -q --catalog "$SRC/examples/plan/catalog.yaml" --constraints "$SRC/examples/plan/serving-constraints.yaml" \
    --workload "$A/workload.yaml" --json "$A/plan.json" --pools-out "$A/pools.yaml" --workload-out "$A/out/planned.yaml" \
    --keda-out "$A/keda.yaml" > "$A/out.txt" 2> "$T/err.txt" && ok || bad "azure fp8 plan exited $?: $(cat "$T/err.txt")"
  # docs/serving.md's best by hand (keda-predictive-l40s-fp8.yaml): pods 10.33 USD, nodes 13.61 USD.
  python3 - "$A/plan.json" <<'PY' && ok || bad "azure fp8: the plan misses the SLO or costs more than the best by hand"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["services"][0]
p = s["plan"]
assert p is not None, s["infeasible"]
assert p["ttft_p99_s"] <= 2 and p["tpot_p99_s"] <= 0.1 and p["meets"], p
assert p["node_cost_usd"] <= 13.61, p["node_cost_usd"]
assert abs(j["total_cost_usd"] - p["node_cost_usd"]) < 0.005, (j["total_cost_usd"], p["node_cost_usd"])
best_pods = min(t["cost_usd"] for t in s["tried"] if t["meets"])
assert best_pods <= 10.33, best_pods
assert s["bound_usd"] <= p["cost_usd"], (s["bound_usd"], p["cost_usd"])
PY
  "$BIN" simulate -q --pools "$A/pools.yaml" --workload "$A/out/planned.yaml" --json "$A/sim.json" > /dev/null 2> "$T/err.txt" \
    && ok || bad "azure fp8: simulate of the plan's files exited $?: $(cat "$T/err.txt")"
  python3 - "$A/plan.json" "$A/sim.json" <<'PY' && ok || bad "azure fp8: simulate does not reproduce the plan's cost to the cent"
import json, sys
plan, sim = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = plan["services"][0]["plan"]
assert round(plan["total_cost_usd"], 2) == round(sim["cost_usd"], 2), (plan["total_cost_usd"], sim["cost_usd"])
assert round(p["cost_usd"], 2) == round(sim["inference"][0]["cost_usd"], 2), (p["cost_usd"], sim["inference"][0]["cost_usd"])
PY
else
  echo "plan_cli_test: the Azure inference case skipped: $CONV is absent (../shared/traces)"
fi

finish
