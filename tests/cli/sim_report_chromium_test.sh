#!/usr/bin/env bash
# End-to-end check of `gpufleet simulate --report` and `gpufleet compare --report`: the HTML page
# opens in headless Chromium without any script error, draws its four charts (data-rendered="ok"),
# holds the summary table, and references nothing on the network. Chromium is required (Debian
# package `chromium`): when it is missing the test FAILS, it does not skip. $CHROMIUM overrides it.
set -u
BIN="$1"
EXAMPLES="$2/simulate"  # $2/serving: the inference example
source "$(dirname "$0")/common.sh"

source "$(dirname "$0")/chromium.sh"

# $1 = name, $2 = path, $3 = configuration labels expected in the table.
check_report() {
  local name="$1" html="$2" label
  check_page_basics "$name" "$html"
  for id in nodes gpus pending cost; do
    grep -q "<canvas id=\"chart-$id\"" "$html.dom" && ok || bad "$name: no chart-$id canvas"
  done
  for label in $3; do
    grep -q "</span>$label</td>" "$html.dom" && ok || bad "$name: summary table lacks $label"
  done
}

# 1. simulate --report on the example.
if "$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/workload.yaml" -q --report "$T/s.html" --json "$T/s.json" \
     > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "simulate --report exited $?: $(cat "$T/err.txt")"; fi
grep -qx "report: $T/s.html" "$T/out.txt" && ok || bad "summary lacks 'report: FILE'"
check_report simulate "$T/s.html" "simulate"
grep -q '"pools":\["inference-l4","training-h100","training-h100-spot","dev-a10g"\]' "$T/s.html" && ok || bad "report data lacks the pools"
# The nodes table shows the JSON's figures: scaled up, Karpenter launches, removed and its causes.
want=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); n = r["nodes_removed"]
cells = [r["nodes_scaled_up"], 0, n["total"], n["scale_down"], n["consolidation"], n["spot_reclaim"], n["not_ready_in_time"], n["other"]]
print("<tr><td>simulate</td>" + "".join("<td>%d</td>" % c for c in cells) + "</tr>")' "$T/s.json")
case "$want" in *"<td>127</td><td>0</td><td>127</td>"*) ok ;; *) bad "simulate: the example's JSON should have 127 removed by consolidation: $want" ;; esac
grep -qF "$want" "$T/s.html.dom" && ok || bad "simulate: the nodes table lacks $want"

# 2. compare --report with two configurations; deterministic.
run_compare() {
  "$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "baseline=$EXAMPLES/baseline-pools.yaml,leastallocated" \
    --config "$EXAMPLES/pools.yaml" -q --report "$1" > /dev/null 2> "$T/err.txt"
}
run_compare "$T/c.html" && ok || bad "compare --report failed: $(cat "$T/err.txt")"
check_report compare "$T/c.html" "baseline pools"
run_compare "$T/c2.html"
cmp -s "$T/c.html" "$T/c2.html" && ok || bad "report differs between identical runs"

# 3. An inference service adds its five charts and its table, drawn without script errors.
SERVING="$2/serving"
if "$BIN" simulate --pools "$SERVING/pools.yaml" --workload "$SERVING/chat.yaml" -q --report "$T/serving.html" \
     > /dev/null 2> "$T/err.txt"; then ok; else bad "simulate --report (serving) exited $?: $(cat "$T/err.txt")"; fi
check_page_basics serving "$T/serving.html"
for id in serving-rate serving-ttft serving-queue serving-kv serving-cost; do
  grep -q "<canvas id=\"chart-$id\"" "$T/serving.html.dom" && ok || bad "serving: no chart-$id canvas"
done
grep -q "<td>chat</td><td class=\"text\">Llama-3.1-8B</td>" "$T/serving.html.dom" && ok || bad "serving: the services table lacks chat"
check_tables_in_cards serving "$T/serving.html" 1400 fit

# 3b. Kueue queues and topology add their tables (examples/queues/simulate, examples/topology).
Q="$2/queues/simulate"
if "$BIN" compare --workload "$Q/quota-only.yaml" --config "quota=$Q/pools.yaml,gpufleet,$Q/quota-only.yaml" \
     --config "placement=$Q/pools.yaml,gpufleet,$Q/placement-aware.yaml" -q --report "$T/queues.html" > /dev/null 2> "$T/err.txt"; then
  ok
else
  bad "compare --report with queues failed: $(cat "$T/err.txt")"
fi
check_page_basics queues "$T/queues.html"
grep -q "<h2>Queues</h2>" "$T/queues.html.dom" && ok || bad "queues: no Queues section"
grep -q "<td>placement</td><td class=\"text\">team-a</td><td class=\"text\">research</td><td class=\"text\">placement</td>" "$T/queues.html.dom" && ok || bad "queues: the table lacks placement/team-a"
check_tables_in_cards queues "$T/queues.html" 1400 fit
TP="$2/topology"
"$BIN" simulate --pools "$TP/pools.yaml" --workload "$TP/week-aware.yaml" -q --report "$T/topology.html" > /dev/null 2> "$T/err.txt" \
  && ok || bad "simulate --report with topology failed: $(cat "$T/err.txt")"
check_page_basics topology "$T/topology.html"
grep -q "<h2>Topology</h2>" "$T/topology.html.dom" && ok || bad "topology: no Topology section"

# 3c. A Karpenter NodePool limited to 2 GPUs and 3 one-GPU jobs: the third waits to the horizon, and
#     the report lists it at the horizon and at the peak with the limit as its reason.
cat > "$T/np-pools.yaml" <<'YAML'
apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools: []
---
apiVersion: sim.gpufleet.io/v1
kind: InstanceTypes
instanceTypes:
  - name: g6.xlarge
    gpu: {model: L4, count: 1}
    cpu: "4"
    memory: 16Gi
    offerings: [{zone: us-east-1a, onDemand: 0.805}, {zone: us-east-1b, onDemand: 0.805}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  limits: {nvidia.com/gpu: "2"}
YAML
cat > "$T/np-workload.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 3600
jobs:
- {name: a, gpus: 1, cpu: "1", memory: 1Gi, durationSeconds: 7200}
- {name: b, gpus: 1, cpu: "1", memory: 1Gi, durationSeconds: 7200}
- {name: c, gpus: 1, cpu: "1", memory: 1Gi, durationSeconds: 7200}
YAML
"$BIN" simulate --pools "$T/np-pools.yaml" --workload "$T/np-workload.yaml" -q --report "$T/pending.html" > /dev/null 2> "$T/err.txt" \
  && ok || bad "simulate --report with a NodePool failed: $(cat "$T/err.txt")"
check_page_basics pending "$T/pending.html"
grep -q "<h2>Pending units and reasons</h2>" "$T/pending.html.dom" && ok || bad "pending: no Pending units and reasons section"
grep -q "<td>simulate</td><td class=\"text\">horizon</td><td class=\"text\">c</td><td>1</td><td>0</td><td>0</td><td class=\"text\" style=\"white-space:normal\">pool limit reached (NodePool gpu: nvidia.com/gpu)</td>" \
  "$T/pending.html.dom" && ok || bad "pending: the table lacks c at the horizon with the limit"
grep -q "<td>simulate</td><td class=\"text\">peak (" "$T/pending.html.dom" && ok || bad "pending: the table lacks the peak"
check_tables_in_cards pending "$T/pending.html" 1400 fit
grep -q "<h2>Pending units and reasons</h2>" "$T/s.html.dom" && bad "simulate: a Pending units and reasons section without NodePools or faults" || ok

# 3d. Header words are never hyphenated nor broken; text cells are left-aligned, numbers right-aligned.
for page in c queues serving pending; do check_table_cells "$page" "$T/$page.html"; done

# What the charts of page $1 drew, after its render script: per chart, per dataset, its legend label,
# its largest y and whether a part of it is dashed by the overlap rule (a segment style with a dash
# pattern, as Chart.js laid the line out). Written as JSON to $1.charts.json.
chart_state() {
  local page="$1" copy="$1.state.html"
  {
    cat "$page"
    cat <<'JS'
<script>
window.addEventListener("load", function () {
  var out = {};
  document.querySelectorAll("canvas").forEach(function (canvas) {
    var chart = Chart.getChart(canvas);
    out[canvas.id] = chart.data.datasets.map(function (d, i) {
      var meta = chart.getDatasetMeta(i), max = null;
      d.data.forEach(function (p) { if (p.y !== null && (max === null || p.y > max)) max = p.y; });
      var dashed = meta.dataset.segments.some(function (g) { return g.style && g.style.borderDash && g.style.borderDash.length > 0; });
      return { label: d.label, max: max, dashed: dashed };
    });
  });
  document.body.dataset.charts = JSON.stringify(out);
});
</script>
JS
  } > "$copy"
  open_in_chromium "$copy"
  python3 -c 'import html, re, sys
m = re.search(r"data-charts=\"([^\"]*)\"", open(sys.argv[1]).read())
print(html.unescape(m.group(1)) if m else "{}")' "$copy.dom" > "$page.charts.json"
}

# 3e. The pending chart counts what the summary counts. docs/faults.md's XID 79 run: its top is the
#     JSON's pending peak (the peak table's pods), 1 (Q alone: R, stopped at 60 s, binds again at
#     once), and the peak's unit has its reason. docs/queues.md's placement-aware run: jobs wait in
#     Kueue only, and the chart shows them (its top is the most pods of the CSV or more).
F="$2/faults"
"$BIN" simulate --pools "$F/pools.yaml" --faults "$F/xid79.yaml" --workload "$F/workload.yaml" -q --json "$T/xid79.json" \
  --report "$T/xid79.html" > /dev/null 2> "$T/err.txt" && ok || bad "simulate --faults xid79.yaml failed: $(cat "$T/err.txt")"
check_page_basics xid79 "$T/xid79.html"
chart_state "$T/xid79.html"
python3 - "$T/xid79.json" "$T/xid79.html.charts.json" <<'PY' && ok || bad "xid79: the pending chart and the JSON's peak disagree"
import json, sys
r = json.load(open(sys.argv[1])); charts = json.load(open(sys.argv[2]))
peak = r["pending_peak"]
assert peak["pods"] == 1 and len(peak["units"]) == 1 and peak["units"][0]["reason"].startswith("0/1 nodes are available"), peak
assert charts["chart-pending"][0]["max"] == peak["pods"], (charts["chart-pending"], peak)
PY
grep -q "(no reason recorded)" "$T/xid79.html.dom" && bad "xid79: a pending unit without its reason" || ok
"$BIN" simulate --pools "$Q/pools.yaml" --workload "$Q/placement-aware.yaml" -q --json "$T/aware.json" --timeseries "$T/aware.csv" \
  --report "$T/aware.html" > /dev/null 2> "$T/err.txt" && ok || bad "simulate placement-aware failed: $(cat "$T/err.txt")"
check_page_basics aware "$T/aware.html"
chart_state "$T/aware.html"
python3 - "$T/aware.json" "$T/aware.csv" "$T/aware.html.charts.json" <<'PY' && ok || bad "placement-aware: the pending chart misses the jobs Kueue holds"
import csv, json, sys
r = json.load(open(sys.argv[1])); rows = list(csv.DictReader(open(sys.argv[2]))); charts = json.load(open(sys.argv[3]))
assert r["pending_s"]["p99"] > 3600, r["pending_s"]  # the example's jobs wait in their queues for hours
most = max(int(row["pending_pods"]) for row in rows)
top = charts["chart-pending"][0]["max"]
assert most > 0 and top >= most, (most, top)
PY

# 3f. Two configurations with identical results (the same pools file under two labels): in every
#     chart the second series says it is the same as the first, and the one drawn on top of it (the
#     first: Chart.js draws the first dataset last) is dashed so the one under it shows.
"$BIN" compare --workload "$EXAMPLES/workload.yaml" --config "a=$EXAMPLES/pools.yaml" --config "b=$EXAMPLES/pools.yaml" -q \
  --report "$T/twins.html" > /dev/null 2> "$T/err.txt" && ok || bad "compare of twins failed: $(cat "$T/err.txt")"
check_page_basics twins "$T/twins.html"
chart_state "$T/twins.html"
python3 - "$T/twins.html.charts.json" <<'PY' && ok || bad "twins: identical series are not told apart: $(cat "$T/twins.html.charts.json" | head -c 600)"
import json, sys
charts = json.load(open(sys.argv[1]))
pending, cost = charts["chart-pending"], charts["chart-cost"]
for sets in (pending, cost):
    assert [d["label"] for d in sets] == ["a", "b (same as a)"], sets
    assert sets[0]["dashed"] and not sets[1]["dashed"], sets
PY
chart_state "$T/c.html"
python3 - "$T/c.html.charts.json" <<'PY' && ok || bad "compare: different configurations marked the same: $(head -c 600 "$T/c.html.charts.json")"
import json, sys
charts = json.load(open(sys.argv[1]))
assert not any("(same as" in d["label"] for d in charts["chart-cost"]), charts["chart-cost"]
PY

# 4. The harness catches a failing page.
check_sabotage_is_caught "$T/c.html"

# 5. The summary table (18 figures per configuration) fits its card in a 1400 px wide window and
#    scrolls inside the card in an 800 px one; the page never scrolls sideways.
check_tables_in_cards compare "$T/c.html" 1400 fit
check_tables_in_cards compare "$T/c.html" 800 contained
check_tables_in_cards simulate "$T/s.html" 1400 fit

finish
