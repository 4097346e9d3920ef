#!/usr/bin/env bash
# `gpufleet plan --report` in headless Chromium (tests/cli/chromium.sh): the page renders
# (data-rendered="ok"), shows and logs no script error, fetches nothing from the network, draws the
# frontier chart with the baseline and the plan, and a copy whose render script throws is caught. Also
# the report of a plan no configuration meets (exit 2, the report still written): it renders too.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/chromium.sh"

source "$(dirname "$0")/plan_catalog.sh"
{ plan_catalog; echo "---"; cat; } > "$T/catalog.yaml" <<'YAML'
apiVersion: plan.gpufleet.io/v1
kind: PlanConstraints
slo: {productionP99PendingSeconds: 600}
maxSpotShare: 0.5
YAML
cat > "$T/workload.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 14400
services:
- {name: api, replicas: 2, gpus: 1, cpu: "2", memory: 8Gi, priority: 1000}
jobs:
- {name: train-a, gpus: 4, cpu: "16", memory: 64Gi, durationSeconds: 7200, priority: 1000}
- {name: train-b, arrivalSeconds: 1800, gpus: 2, cpu: "8", memory: 32Gi, durationSeconds: 3600, capacity: spot-ok, checkpointIntervalSeconds: 600}
- {name: "dev <b>&", arrivalSeconds: 3600, gpus: 1, cpu: "2", memory: 8Gi, durationSeconds: 1800, capacity: spot-ok}
- {name: late, arrivalSeconds: 10800, gpus: 4, cpu: "16", memory: 64Gi, durationSeconds: 3600, capacity: spot-ok}
YAML

# 1. A plan.
"$BIN" plan -q --catalog "$T/catalog.yaml" --workload "$T/workload.yaml" --report "$T/plan.html" > /dev/null 2> "$T/err.txt" \
  && ok || bad "plan --report failed: $(cat "$T/err.txt")"
check_page_basics plan "$T/plan.html"
grep -q '<canvas' "$T/plan.html.dom" && ok || bad "plan: no chart canvas"
# What the frontier chart drew: its datasets' labels and point counts (after the render script).
{
  cat "$T/plan.html"
  cat <<'JS'
<script>
window.addEventListener("load", function () {
  var out = {};
  document.querySelectorAll("canvas").forEach(function (canvas) {
    var chart = Chart.getChart(canvas);
    out[canvas.id] = chart ? chart.data.datasets.map(function (d) { return { label: d.label, points: d.data.length }; }) : null;
  });
  document.body.dataset.charts = JSON.stringify(out);
});
</script>
JS
} > "$T/state.html"
open_in_chromium "$T/state.html"
python3 - "$T/state.html.dom" <<'PY' && ok || bad "plan: the chart lacks the baseline or the plan: $(grep -o 'data-charts="[^"]*"' "$T/state.html.dom" | head -c 600)"
import html, json, re, sys
m = re.search(r'data-charts="([^"]*)"', open(sys.argv[1]).read())
charts = json.loads(html.unescape(m.group(1)))
sets = [d for c in charts.values() if c for d in c]
labels = {d["label"]: d["points"] for d in sets}
assert labels.get("baseline") == 1, labels
assert [n for l, n in labels.items() if l == "plan" or l.startswith("plan (")] == [1], labels
# GPUs over time: the plan's and the baseline's, one point per simulated minute of the 4-hour horizon.
over_time = {d["label"]: d["points"] for d in charts["chart-utilization"]}
assert over_time == {"baseline: GPUs billed": 240, "baseline: GPUs allocated": 240, "plan: GPUs billed": 240,
                     "plan: GPUs allocated": 240}, over_time
PY
# Header words are never hyphenated nor broken; text cells are left-aligned, numbers right-aligned.
check_table_cells plan "$T/plan.html"
check_tables_in_cards plan "$T/plan.html" 1400 contained
check_tables_in_cards plan "$T/plan.html" 800 contained

# 2. No configuration meets the constraints (exit 2): the report written still renders.
sed 's/productionP99PendingSeconds: 600/productionP99PendingSeconds: 0/' "$T/catalog.yaml" > "$T/strict.yaml"
"$BIN" plan -q --catalog "$T/strict.yaml" --workload "$T/workload.yaml" --report "$T/none.html" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "an SLO no configuration meets should exit 2: $(cat "$T/err.txt")"
if [ -s "$T/none.html" ]; then
  check_page_basics infeasible "$T/none.html"
else
  echo "plan_report_chromium_test: no report written for an infeasible plan; its page is not checked"
fi

# 3. The harness catches a failing page.
check_sabotage_is_caught "$T/plan.html"

finish
