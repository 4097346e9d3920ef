#!/usr/bin/env bash
# Inputs inside every per-field limit whose product hurt (found by fuzzing through the command line),
# and the work budget that refuses them (inputs/sim/work_estimate.h, docs/input-limits.md "Work
# budget"): each must give exit status 2 and one error line naming the file, line and field (or the
# option), write no output file, and stay under 200 MB of peak resident memory (GNU time); 10 s is
# the hang guard (each takes under 2 s: the note of the change gives the times).
#   1. replica counts past 100,000 by every path: a vLLM Deployment's spec.replicas, an HPA's
#      maxReplicas, a ScaledObject's maxReplicaCount, a service's replicas;
#   2. request totals: a generator's rate x window, a trace's rows x rateMultiplier;
#   3. simulated time x size: a 100,000-node pool scanned for 1e8 s, 100,000 replicas;
#   4. intervals below 1 ms; bench-serve clocks that cannot advance; --request-rate with --trace.
# And the way out: raising a budget lets the run past the check.
set -u
BIN="$1"
EXAMPLES="$2"
source "$(dirname "$0")/common.sh"

# expect_refused NAME PATTERN ARGS...: exit 2 within 10 s, one stderr line matching
# "gpufleet: error: PATTERN", no --json output left behind, peak RSS under 200 MB.
expect_refused() {
  local name="$1" pattern="$2"
  shift 2
  rm -f "$T/out.json"
  /usr/bin/time -o "$T/rss.txt" -f "%M" timeout 10 "$BIN" "$@" --json "$T/out.json" > /dev/null 2> "$T/err.txt"
  local rc=$?
  local rss_kib
  rss_kib=$(tail -1 "$T/rss.txt")
  [ "$rss_kib" -lt 204800 ] 2>/dev/null && ok || bad "$name: peak RSS ${rss_kib} KiB, expected under 200 MB"
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, expected 2: $(head -c 400 "$T/err.txt")"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && grep -q "^gpufleet: error: $pattern" "$T/err.txt" && ok \
    || bad "$name: expected one line 'gpufleet: error: $pattern...', got: $(head -c 400 "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$name: an output file was written"
}

cp "$EXAMPLES/serving/pools.yaml" "$EXAMPLES/serving/from-deployment.yaml" "$EXAMPLES/serving/chat.yaml" \
   "$EXAMPLES/serving/vllm-deployment.yaml" "$EXAMPLES/serving/hpa-dcgm.yaml" "$EXAMPLES/serving/keda-waiting.yaml" "$T/"
sim() { "$@" -q; }

# 1. Replica counts.
sed -i 's/^  replicas: 2$/  replicas: 100000000/' "$T/vllm-deployment.yaml"
expect_refused "Deployment spec.replicas" "$T/from-deployment.yaml:13:17: field 'services\[0\]\.inference\.deployment': $T/vllm-deployment.yaml:10:13: field 'spec.replicas': 100000000 is out of range \[0, 100000\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/from-deployment.yaml"
cp "$EXAMPLES/serving/vllm-deployment.yaml" "$T/"
sed -i 's/^  maxReplicas: .*/  maxReplicas: 100000000/' "$T/hpa-dcgm.yaml"
expect_refused "HPA maxReplicas" "$T/from-deployment.yaml:22:19: field 'services\[0\]\.inference\.autoscaler\.kubernetes': $T/hpa-dcgm.yaml:14:16: field 'spec.maxReplicas': 100000000 is out of range \[1, 100000\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/from-deployment.yaml"
sed -i 's/^  maxReplicas: .*/  maxReplicas: 8/; s/^  minReplicas: .*/  minReplicas: 100000000/' "$T/hpa-dcgm.yaml"
expect_refused "HPA minReplicas" "$T/from-deployment.yaml:22:19: field 'services\[0\]\.inference\.autoscaler\.kubernetes': $T/hpa-dcgm.yaml:13:16: field 'spec.minReplicas': 100000000 is out of range \[0, 100000\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/from-deployment.yaml"
sed -i 's/^  maxReplicaCount: .*/  maxReplicaCount: 100000000/' "$T/keda-waiting.yaml"
expect_refused "ScaledObject maxReplicaCount" "$T/chat.yaml:29:19: field 'services\[0\]\.inference\.autoscaler\.kubernetes': $T/keda-waiting.yaml:13:20: field 'spec.maxReplicaCount': 100000000 is out of range \[0, 100000\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/chat.yaml"
sed -i 's/^  maxReplicaCount: .*/  maxReplicaCount: 16/; s/^  minReplicaCount: .*/  minReplicaCount: 100000000/' "$T/keda-waiting.yaml"
expect_refused "ScaledObject minReplicaCount" "$T/chat.yaml:29:19: field 'services\[0\]\.inference\.autoscaler\.kubernetes': $T/keda-waiting.yaml:12:20: field 'spec.minReplicaCount': 100000000 is out of range \[0, 100000\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/chat.yaml"
# At the cap, the autoscaler's maximum is over the pods budget, named at the autoscaler.
sed -i 's/^  maxReplicaCount: .*/  maxReplicaCount: 100000/; s/^  minReplicaCount: .*/  minReplicaCount: 1/' "$T/keda-waiting.yaml"
expect_refused "autoscaler up to 100000 replicas" "$T/chat.yaml:29:7: field 'services\[0\].inference.autoscaler': 100000 pods (.*) is over the budget of 50000 per run; .*raise --max-pods" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/chat.yaml"
cp "$EXAMPLES/serving/keda-waiting.yaml" "$T/"

# 2. Request totals.
cat > "$T/rate.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 1800
services:
- name: chat
  gpus: 1
  pools: [l40s]
  inference:
    model: Llama-3.1-8B
    traffic:
      generate:
        meanRatePerSecond: 100000
        tokens: {promptMean: 1155, promptMedian: 1020, outputMean: 211, outputMedian: 129}
YAML
expect_refused "generator rate x window" "$T/rate.yaml:12:28: field 'services\[0\].inference.traffic.generate.meanRatePerSecond': 1.8e+08 requests (service chat: meanRatePerSecond 100000 x 1800 s) is over the budget of 2e+07 per run; lower the rate or the horizon, or raise --max-requests" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/rate.yaml"
expect_refused "compare checks every configuration first" "$T/rate.yaml:12:28: field 'services\[0\].inference.traffic.generate.meanRatePerSecond': 1.8e+08 requests" \
  compare -q --workload "$T/rate.yaml" --config "$T/pools.yaml"
# A trace of 20,000 rows, replayed 10,000-fold.
awk 'BEGIN { print "TIMESTAMP,ContextTokens,GeneratedTokens"; for (i = 0; i < 20000; i++) printf "2023-11-16 18:%02d:%02d.%06d,100,10\n", int(i / 600) % 60, int(i / 10) % 60, (i % 10) * 100000 }' > "$T/trace.csv"
sed -e '/generate:/,$d' -e 's/horizonSeconds: 1800/horizonSeconds: 3600/' "$T/rate.yaml" > "$T/trace.yaml"
printf '      trace: trace.csv\n      rateMultiplier: 10000\n' >> "$T/trace.yaml"
expect_refused "trace rows x rateMultiplier" "$T/trace.yaml:12:23: field 'services\[0\].inference.traffic.rateMultiplier': 2e+08 requests (service chat: 20000 trace rows x rateMultiplier 10000) is over the budget" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/trace.yaml"

# 3. Simulated time x size.
cat > "$T/big-pool.yaml" <<'YAML'
apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: big
  instanceType: p5.48xlarge
  gpu: {model: H100-80GB, count: 8}
  cpu: "192"
  memory: 2Ti
  nodes: 0
  max: 100000
  prices: {onDemand: 98.32}
YAML
cat > "$T/long-job.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 1e8
jobs:
- name: j
  gpus: 1
  durationSeconds: 60
YAML
expect_refused "100000 node slots scanned for 1e8 s" "$T/big-pool.yaml:10:8: field 'pools\[0\].max': 1e+12 node checks (100000 node slots x 1e+08 s / scanIntervalSeconds 10 s) is over the budget of 2e+10 per run; lower the pools' max or shorten the horizon, or raise --max-node-checks" \
  simulate -q --pools "$T/big-pool.yaml" --workload "$T/long-job.yaml"
cat > "$T/replicas.yaml" <<'YAML'
apiVersion: sim.gpufleet.io/v1
kind: Workload
horizonSeconds: 3600
services:
- name: web
  replicas: 100000
  cpu: "1"
YAML
expect_refused "100000 replicas" "$T/replicas.yaml:6:13: field 'services\[0\].replicas': 100000 pods (service web: replicas 100000) is over the budget of 50000 per run; lower the replicas, or raise --max-pods" \
  simulate -q --pools "$T/big-pool.yaml" --workload "$T/replicas.yaml"
# Raised, the pods budget lets it past to the next one (the placement's node checks).
expect_refused "--max-pods raised" "$T/replicas.yaml:6:13: field 'services\[0\].replicas': 1e+10 node checks (100000 pods x 100000 node slots) is over the budget of 1e+09 per run" \
  simulate -q --pools "$T/big-pool.yaml" --workload "$T/replicas.yaml" --max-pods 200000 --max-node-checks 1e9
expect_refused "--max-pods not a number" "--max-pods: " simulate -q --pools "$T/big-pool.yaml" --workload "$T/replicas.yaml" --max-pods -1

# 4. Intervals and clocks.
sed 's/meanRatePerSecond: 100000/meanRatePerSecond: 6/; s/^    model: Llama-3.1-8B$/    model: Llama-3.1-8B\n    scrapeIntervalSeconds: 1e-9/' "$T/rate.yaml" > "$T/scrape.yaml"
expect_refused "scrape interval 1e-9" "$T/scrape.yaml:10:28: field 'services\[0\].inference.scrapeIntervalSeconds': 1e-9 is outside \[0.001, 86400\]" \
  simulate -q --pools "$T/pools.yaml" --workload "$T/scrape.yaml"
bench() { "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 10 "$@"; }
expect_refused "bench-serve --request-rate 1e-15" "request_rate: 1e-15 sends 10 prompts over 1e+16 s, longer than the most simulated time of 1e+08 s" \
  bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 10 --request-rate 1e-15
printf '{"timestamp": 0, "input_length": 100, "output_length": 10}\n{"timestamp": 500, "input_length": 200, "output_length": 20}\n' > "$T/t.jsonl"
for scale in 1e+15 1e+308; do
  expect_refused "bench-serve --time-scale $scale" "--time-scale: time_scale: $scale sends the trace's last request at" \
    bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/t.jsonl" --time-scale "$scale"
done
for rate in nan -1 0; do
  expect_refused "bench-serve --trace --request-rate $rate" "--request-rate: request_rate: $rate must be positive or inf" \
    bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/t.jsonl" --request-rate "$rate"
done
expect_refused "bench-serve --trace --request-rate 5" "--request-rate: a --trace keeps its own send times" \
  bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/t.jsonl" --request-rate 5

# A run within every budget that passes its memory ceiling stops with exit 2 and one line (never an
# internal error with std::bad_alloc), writing nothing.
expect_refused "memory ceiling" "out of memory: the run passed its memory ceiling of 64 MiB (--max-memory-mib" \
  simulate --pools "$EXAMPLES/serving/pools.yaml" --workload "$EXAMPLES/serving/chat-day.yaml" -q --max-memory-mib 64

finish
