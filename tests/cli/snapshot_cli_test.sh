#!/usr/bin/env bash
# End-to-end checks of `--snapshot FILE` (a `kubectl get pods -A -o json` List: its Running and Pending
# pods at time 0) and `--history CSV` (its past pods, an openb pod list) on the hand-made
# tests/data/snapshot: (a) simulate on one fixed $1.00/h node for --horizon 3600 costs 1.00 USD with
# the 4 live pods running and none pending, and warns about the Succeeded and DaemonSet pods;
# (b) plan on the plan tests' catalog runs, and simulate on its --pools-out with the same snapshot and
# history reproduces its cost to the cent; (c) bad input: exit 2, one line naming file, line, column
# and field; the usage rules of the options.
set -u
BIN="$1"
SRC="$2"
D="$SRC/tests/data/snapshot"
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/plan_catalog.sh"

# a. simulate: 1 node x 1 h x $1.00; web (2 x 500m), train (4 CPUs, 1 GPU) and debug (1 CPU by its
# init container) fit on it: 6 of 8 CPUs, 17.25 of 32 GiB, its one GPU.
"$BIN" simulate --pools "$D/pools.yaml" --snapshot "$D/tiny.json" --horizon 3600 --json "$T/a.json" > "$T/a.txt" 2> "$T/err.txt" \
  && ok || bad "simulate --snapshot exited $?: $(cat "$T/err.txt")"
grep -q '^cost: 1\.00 USD' "$T/a.txt" && ok || bad "want cost 1.00 USD: $(grep '^cost' "$T/a.txt")"
python3 - "$T/a.json" <<'PY' && ok || bad "simulate --snapshot: pods or cost off: $(cat "$T/a.json" | head -c 600)"
import json, sys
r = json.load(open(sys.argv[1]))
assert round(r["cost_usd"], 2) == 1.00, r["cost_usd"]
assert r["pods"]["pending"] == 0, r["pods"]
assert r["pods"]["running"] + r["pods"]["completed"] == 4, r["pods"]
PY
grep -q "1 pod Succeeded or Failed: history, not load" "$T/err.txt" && ok || bad "no warning for the Succeeded pod: $(cat "$T/err.txt")"
grep -q "1 DaemonSet pod left out" "$T/err.txt" && ok || bad "no warning for the DaemonSet pod: $(cat "$T/err.txt")"
grep -q "^workload: .*tiny.json (snapshot: Running and Pending pods at time 0, jobs run to the horizon, horizon 3600 s)" "$T/a.txt" \
  && ok || bad "workload line: $(grep '^workload' "$T/a.txt")"
# compare takes the same workload options.
"$BIN" compare -q --snapshot "$D/tiny.json" --horizon 3600 --config one="$D/pools.yaml" > "$T/cmp.txt" 2> "$T/err.txt" \
  && ok || bad "compare --snapshot exited $?: $(cat "$T/err.txt")"
grep -qE '^one +gpufleet +1\.00 ' "$T/cmp.txt" && ok || bad "compare --snapshot: want 1.00 USD: $(cat "$T/cmp.txt")"

# b. plan with the history, then simulate on its pools: the same cost to the cent.
plan_catalog > "$T/catalog.yaml"
SEED=7
mkdir -p "$T/plan"
"$BIN" plan -q --catalog "$T/catalog.yaml" --snapshot "$D/tiny.json" --history "$D/history.csv" --seed "$SEED" \
  --pools-out "$T/plan/pools.yaml" --json "$T/plan/plan.json" > "$T/plan/out.txt" 2> "$T/err.txt" \
  && ok || bad "plan --snapshot --history exited $?: $(cat "$T/err.txt")"
"$BIN" simulate -q --pools "$T/plan/pools.yaml" --snapshot "$D/tiny.json" --history "$D/history.csv" --seed "$SEED" --policy gpufleet \
  --json "$T/plan/sim.json" > "$T/plan/sim.txt" 2> "$T/err.txt" && ok || bad "simulate on the plan's pools exited $?: $(cat "$T/err.txt")"
python3 - "$T/plan/plan.json" "$T/plan/sim.json" "$T/plan/sim.txt" <<'PY' && ok || bad "simulate's cost is not the plan's: $(grep '^cost:' "$T/plan/sim.txt")"
import json, re, sys
p = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2])); text = open(sys.argv[3]).read()
plan = p["plan"]
assert plan is not None, p.get("infeasible")
assert round(plan["cost_usd"], 2) == round(s["cost_usd"], 2), (plan["cost_usd"], s["cost_usd"])
m = re.search(r"^cost: ([0-9.]+) USD", text, re.M)
assert m and m.group(1) == "%.2f" % plan["cost_usd"], (m and m.group(1), plan["cost_usd"])
PY
# The shards' fingerprint covers the snapshot's bytes: another snapshot, another fingerprint.
"$BIN" plan -q --catalog "$T/catalog.yaml" --snapshot "$D/tiny.json" --history "$D/history.csv" --seed "$SEED" \
  --shards 2 --shard-index 0 --shard-out "$T/plan/shard-a.json" > /dev/null 2>&1
sed 's/"cpu": "250m"/"cpu": "300m"/' "$D/tiny.json" > "$T/other.json"
"$BIN" plan -q --catalog "$T/catalog.yaml" --snapshot "$T/other.json" --history "$D/history.csv" --seed "$SEED" \
  --shards 2 --shard-index 1 --shard-out "$T/plan/shard-b.json" > /dev/null 2>&1
"$BIN" plan -q --catalog "$T/catalog.yaml" --snapshot "$D/tiny.json" --history "$D/history.csv" --seed "$SEED" \
  --merge "$T/plan/shard-a.json" "$T/plan/shard-b.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF "field 'fingerprint'" "$T/err.txt" && ok || bad "shards of two snapshots merged: $(cat "$T/err.txt")"

# c. Bad input and usage.
expect_bad() {  # name, expected exit status, expected substring, then the simulate arguments
  local name="$1" rc_want="$2" want="$3"
  shift 3
  "$BIN" simulate -q --pools "$D/pools.yaml" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = "$rc_want" ] && ok || bad "$name: exit $rc, want $rc_want ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
}
sed 's/"phase": "Pending"/"phase": "Waiting"/' "$D/tiny.json" > "$T/bad-phase.json"
expect_bad "unknown phase" 2 "bad-phase.json:42:27: field 'items[3].status.phase': unknown phase 'Waiting'" \
  --snapshot "$T/bad-phase.json" --horizon 3600
printf '{"kind": "List", "items": [\n  {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1x"}}}]}}\n]}\n' \
  > "$T/bad-cpu.json"
expect_bad "bad quantity" 2 "bad-cpu.json:2:" --snapshot "$T/bad-cpu.json" --horizon 3600
grep -qF "field 'items[0].spec.containers[0].resources.requests.cpu'" "$T/err.txt" && ok || bad "bad quantity field: $(cat "$T/err.txt")"
printf '{"kind": "List", "items": [\n' > "$T/truncated.json"
expect_bad "truncated JSON" 2 "truncated.json:" --snapshot "$T/truncated.json" --horizon 3600
expect_bad "no horizon" 2 "--snapshot without --history: give --horizon SECONDS" --snapshot "$D/tiny.json"
expect_bad "history without snapshot" 2 "--history CSV needs --snapshot FILE" --openb-pods "$D/history.csv" --history "$D/history.csv"
expect_bad "two sources" 2 "give exactly one of --workload FILE, --openb-pods CSV and --snapshot FILE" \
  --openb-pods "$D/history.csv" --snapshot "$D/tiny.json"
expect_bad "trace options without history" 2 "apply to --openb-pods only" --snapshot "$D/tiny.json" --horizon 3600 --time-scale 2
printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\njobs:\n- {name: j, gpus: 1, cpu: "1", memory: 1Gi, durationSeconds: 60}\n' \
  > "$T/own.yaml"
"$BIN" compare -q --config one="$D/pools.yaml,gpufleet,$T/own.yaml" --history "$D/history.csv" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--history CSV needs --snapshot FILE" "$T/err.txt" && ok || bad "compare --history without --snapshot: $(cat "$T/err.txt")"
expect_bad "job seconds without snapshot" 2 "--snapshot-job-seconds applies to --snapshot only" --openb-pods "$D/history.csv" \
  --snapshot-job-seconds 60
finish
