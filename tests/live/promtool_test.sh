#!/usr/bin/env bash
# gpufleet's metrics and alert rules against Prometheus' own tools (Debian packages prometheus and
# promtool):
#   1. `promtool check metrics` on the text of tests/live/cluster.yaml (metrics_fixture print);
#   2. `promtool check rules` on the groups of examples/live/prometheus-rules.yaml (spec.groups of the
#      PrometheusRule, de-indented into a plain rule file);
#   3. `promtool test rules` with tests/live/alerts_test.yaml: each alert fires on its series, and the
#      series beside it do not;
#   4. a real Prometheus scrapes the same text from metrics_fixture serve (127.0.0.1, ephemeral ports,
#      storage in a temporary directory) and its HTTP API (/api/v1/query) returns the value gpufleet
#      computed for four series (stranded, fragmentation, idle cost, chargeback), the pending pods and up.
# Usage: promtool_test.sh <metrics_fixture binary> <source dir>. Skipped (exit 77, with a message) when
# promtool or prometheus is missing. metrics_fixture query is the HTTP client.
set -euo pipefail
fixture=$1
src=$2
for tool in promtool prometheus; do
  if ! command -v "$tool" >/dev/null; then
    echo "promtool_test skipped: $tool not found (Debian package prometheus; scripts/install-deps)"
    exit 77
  fi
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
cluster=$src/tests/live/cluster.yaml
prices=$src/tests/live/prices.yaml

# 1. The exposition format.
"$fixture" print "$cluster" "$prices" >"$tmp/metrics.txt"
promtool check metrics <"$tmp/metrics.txt"
echo "ok: promtool check metrics ($(grep -vc '^#' "$tmp/metrics.txt") samples)"

# 2. The rules: spec.groups of the PrometheusRule, one indentation level (2 spaces) less.
awk 'f { print substr($0, 3) } /^spec:/ { f = 1 }' "$src/examples/live/prometheus-rules.yaml" >"$tmp/rules.yaml"
head -1 "$tmp/rules.yaml" | grep -qx 'groups:' || { echo "FAIL: no spec.groups in prometheus-rules.yaml"; exit 1; }
promtool check rules "$tmp/rules.yaml"

# 3. Each alert fires on the series written for it.
cp "$src/tests/live/alerts_test.yaml" "$tmp/alerts_test.yaml"
promtool test rules "$tmp/alerts_test.yaml"

# 4. A real Prometheus scrapes the metrics.
"$fixture" serve "$cluster" "$prices" "$tmp/target-port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/target-port" ] && break; sleep 0.1; done
target_port=$(cat "$tmp/target-port")
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
- job_name: gpufleet
  static_configs:
  - targets: ['127.0.0.1:$target_port']
YAML
promtool check config "$tmp/prometheus.yml" >/dev/null
start=$(date +%s)
for attempt in 1 2 3; do  # the port was free a moment ago; another process may take it first
  prom_port=$("$fixture" free-port)
  prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
  prom_pid=$!
  pids+=("$prom_pid")
  sleep 1
  kill -0 "$prom_pid" 2>/dev/null && break
  echo "prometheus did not start (attempt $attempt):"; tail -3 "$tmp/prometheus.log"
done
query() { "$fixture" query "$prom_port" "$1"; }
value_of() { grep -F "$1 " "$tmp/metrics.txt" | sed 's/.* //'; }  # the sample of series $1 in gpufleet's text
got=""
for _ in $(seq 200); do  # up to 20 s for the first scrape
  got=$(query 'gpufleet_node_gpu_stranded_milli{node="gpu-a"}' 2>/dev/null || true)
  [ -n "$got" ] && break
  sleep 0.1
done
if [ -z "$got" ]; then
  echo "FAIL: Prometheus returned no gpufleet_node_gpu_stranded_milli after 20 s"
  tail -20 "$tmp/prometheus.log"
  exit 1
fi
echo "first scrape seen $(( $(date +%s) - start )) s after Prometheus started"
# The same figures through Prometheus' HTTP API as in gpufleet's text (Prometheus prints the shortest
# round-trip decimal, as gpufleet does).
for series in 'gpufleet_node_gpu_stranded_milli{node="gpu-a",pool="train"}' \
              'gpufleet_node_gpu_fragmentation_milli{node="gpu-a",pool="train"}' \
              'gpufleet_node_idle_cost_usd_per_hour{node="gpu-a",pool="train"}' \
              'gpufleet_namespace_chargeback_usd_per_hour{namespace="team-b"}'; do
  expected=$(value_of "$series")
  got=$(query "$series")
  [ -n "$expected" ] || { echo "FAIL: no $series in gpufleet's metrics"; exit 1; }
  echo "Prometheus: $series = $got (gpufleet computed $expected)"
  [ "$got" = "$expected" ] || { echo "FAIL: $got != $expected"; exit 1; }
done
pending=$(query 'sum(gpufleet_pending_pods{reason="Insufficient cpu"})')
[ "$pending" = "1" ] || { echo "FAIL: pending pods $pending != 1"; exit 1; }
up=$(query 'up{job="gpufleet"}')
[ "$up" = "1" ] || { echo "FAIL: up $up != 1"; exit 1; }
echo "ok: a real Prometheus scraped gpufleet's metrics and returns its values"
