#!/usr/bin/env bash
# `gpufleet plan` with MIG pods (docs/plan.md "GPU sharing"): the shared small catalog
# (plan_catalog.sh) plus one A100-40GB type, and a 4-hour workload of a whole-GPU job and pods that
# request nvidia.com/mig-1g.5gb and nvidia.com/mig-3g.20gb. The plan has a MIG pool p4d-24xlarge-mig
# with the layout of the demand (1g.5gb x4, 3g.20gb x1 per GPU), labelled nvidia.com/mig.config;
# `simulate --pools` on its pools file reproduces the plan's cost to the cent with every MIG pod
# completed; --mig-parted-out is the mig-parted config of that pool; --device-plugin-out says there is
# no time-sliced pool and holds no object; a workload without MIG pods gets no MIG pool and an empty
# mig-parted file.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"
unset JOB_COMPLETION_INDEX

source "$(dirname "$0")/plan_catalog.sh"
# The shared catalog ends with its instance types: one more goes at the end of the list.
{ plan_catalog; cat <<'YAML'; } > "$T/catalog.yaml"
- name: p4d.24xlarge
  gpu: {model: A100-40GB, count: 8}
  cpu: 95690m
  memory: 1100Gi
  offerings:
  - {zone: us-east-1a, onDemand: 32.77}
YAML
cat > "$T/workload.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 14400
jobs:
- {name: train, gpus: 1, cpu: "2", memory: 8Gi, durationSeconds: 3600, priority: 100}
- {name: small, pods: 6, mig: 1g.5gb, cpu: "2", memory: 8Gi, durationSeconds: 3600, priority: 100}
- {name: mid, pods: 2, mig: 3g.20gb, cpu: "4", memory: 32Gi, arrivalSeconds: 600, durationSeconds: 3600, priority: 1000}
YAML

"$BIN" plan -q --catalog "$T/catalog.yaml" --workload "$T/workload.yaml" --pools-out "$T/pools.yaml" --json "$T/plan.json" \
  --mig-parted-out "$T/mig-parted.yaml" --device-plugin-out "$T/device-plugin.yaml" --karpenter-out "$T/karpenter.yaml" \
  > "$T/out.txt" 2> "$T/err.txt" && ok || bad "plan exited $?: $(cat "$T/err.txt")"
grep -q '^plan: .*p4d.24xlarge us-east-1a (MIG 1g.5gb x4, 3g.20gb x1)' "$T/out.txt" && ok || bad "no MIG pool in the plan: $(grep '^plan' "$T/out.txt")"
"$BIN" simulate -q --pools "$T/pools.yaml" --workload "$T/workload.yaml" --json "$T/sim.json" > "$T/sim.txt" 2> "$T/err.txt" \
  && ok || bad "simulate on the plan's pools exited $?: $(cat "$T/err.txt")"
python3 - "$T" <<'PY' && ok || bad "the MIG plan's files"
import json, sys, yaml
t = sys.argv[1]
p = json.load(open(t + "/plan.json")); s = json.load(open(t + "/sim.json"))
plan = p["plan"]
assert plan is not None, p.get("infeasible")
# The pools file reproduces the plan's cost to the cent; every pod completes, the MIG pods too.
assert round(plan["cost_usd"], 2) == round(s["cost_usd"], 2), (plan["cost_usd"], s["cost_usd"])
assert plan["pods_failed"] == 0 and s["pods"]["failed"] == 0 and s["pods"]["completed"] == 9, (plan, s["pods"])
assert s["cost_by_pool"].get("p4d-24xlarge-mig", 0) > 0, s["cost_by_pool"]
assert p["baseline"]["pods_failed"] == 0, p["baseline"]
# The pools file: the MIG pool with its layout and the mig.config label.
docs = list(yaml.safe_load_all(open(t + "/pools.yaml")))
pools = {q["name"]: q for q in docs[0]["pools"]}
mig = pools["p4d-24xlarge-mig"]
assert mig["mig"] == {"1g.5gb": 4, "3g.20gb": 1}, mig
assert mig["labels"]["nvidia.com/mig.config"] == "p4d-24xlarge-mig", mig
assert all("mig" not in q for n, q in pools.items() if n != "p4d-24xlarge-mig"), pools
# mig-parted: one config named after the pool.
cfg = yaml.safe_load(open(t + "/mig-parted.yaml"))
assert cfg == {"version": "v1", "mig-configs": {"p4d-24xlarge-mig": [
    {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.5gb": 4, "3g.20gb": 1}}]}}, cfg
# The device plugin: no time-sliced pool, a comment and no object.
dp = open(t + "/device-plugin.yaml").read()
assert yaml.safe_load(dp) is None and "no time-sliced or MPS pool" in dp, dp
# Karpenter: the NodePool of the MIG pool labels its nodes.
nps = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(t + "/karpenter.yaml")) if d}
assert nps["p4d-24xlarge-mig"]["spec"]["template"]["metadata"]["labels"] == {"nvidia.com/mig.config": "p4d-24xlarge-mig"}, nps
PY
# Without MIG pods: no MIG pool, and the mig-parted file says so.
head -5 "$T/workload.yaml" > "$T/plain.yaml"
"$BIN" plan -q --catalog "$T/catalog.yaml" --workload "$T/plain.yaml" --pools-out "$T/plain-pools.yaml" --mig-parted-out "$T/plain-mig.yaml" \
  > /dev/null 2> "$T/err.txt" && ok || bad "plan without MIG exited $?: $(cat "$T/err.txt")"
grep -q -- '-mig' "$T/plain-pools.yaml" && bad "a MIG pool without MIG pods: $(cat "$T/plain-pools.yaml")" || ok
grep -q '^# The plan has no MIG pool' "$T/plain-mig.yaml" && ! grep -q '^[^#]' "$T/plain-mig.yaml" && ok || bad "mig-parted without MIG: $(cat "$T/plain-mig.yaml")"
finish
