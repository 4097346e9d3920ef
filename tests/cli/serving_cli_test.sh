#!/usr/bin/env bash
# End-to-end checks of `gpufleet simulate` and `compare` on LLM inference services
# (examples/serving): the example runs; its JSON has the inference keys with consistent values; the
# --serving-timeseries header; runs are byte-identical for one seed and differ for another; compare
# with a workload per configuration; and bad input (a model that does not fit, an unknown model,
# tensor parallel size != gpus, absurd token counts, broken traces, an autoscaler on a metric nothing
# exports, unknown keys, a broken --serving-catalog) exits 2 with one line naming the file, line,
# column and field, and writes no output. A disaggregated service: its role lines, JSON and CSV columns.
set -u
BIN=$(realpath "$1")
EXAMPLES=$(realpath "$2")/serving
SRC=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/common.sh"

# The value of the first `"key": number` in a JSON file (the inference block's keys are unique).
num() { sed -n "s/^ *\"$1\": \\(-\\{0,1\\}[0-9.e+-]*\\),\\{0,1\\}\$/\\1/p" "$2" | head -1; }

# 1. The example, with every output.
if "$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/chat.yaml" --json "$T/a.json" \
     --serving-timeseries "$T/a.csv" --report "$T/a.html" > "$T/out.txt" 2> "$T/err.txt"; then ok
else bad "example run exited $?: $(cat "$T/err.txt")"; fi
grep -q '^inference service chat (Llama-3.1-8B, keda chat (vllm:num_requests_waiting > 5)): [0-9]* requests' "$T/out.txt" \
  && ok || bad "no inference summary line: $(cat "$T/out.txt")"
for key in '"inference": \[' '"service": "chat"' '"model": "Llama-3.1-8B"' '"requests": {' '"arrived": ' '"finished": ' \
           '"timed_out": ' '"dropped": ' '"unfinished": ' '"ttft_s": {' '"tpot_s": {' '"e2e_s": {' '"slo_attainment": ' \
           '"max_ready_replicas": ' '"cold_starts": {' '"tokens": {'; do
  grep -q "$key" "$T/a.json" && ok || bad "JSON lacks $key"
done
arrived=$(num arrived "$T/a.json"); finished=$(num finished "$T/a.json"); timed_out=$(num timed_out "$T/a.json")
dropped=$(num dropped "$T/a.json"); unfinished=$(num unfinished "$T/a.json"); slo=$(num slo_attainment "$T/a.json")
[ -n "$arrived" ] && [ "$arrived" -gt 10000 ] && ok || bad "arrived '$arrived': want > 10000 for 6 req/s over 1 h"
[ "$arrived" = $((finished + timed_out + dropped + unfinished)) ] && ok \
  || bad "requests: arrived $arrived != finished $finished + timed_out $timed_out + dropped $dropped + unfinished $unfinished"
[ "$finished" -gt 0 ] && ok || bad "no request finished"
awk -v s="$slo" 'BEGIN { exit !(s != "" && s >= 0 && s <= 1) }' && ok || bad "slo_attainment '$slo' outside [0, 1]"
[ "$(num max_ready_replicas "$T/a.json")" -ge 1 ] && ok || bad "no replica became ready"
head -1 "$T/a.csv" | grep -qx 'service,time_s,arrivals,finished,timed_out,ttft_p99_s,desired_replicas,ready_replicas,starting_replicas,router_waiting,engine_waiting,engine_running,kv_cache_usage,cost_usd_per_hour,prefill_desired_replicas,prefill_ready_replicas,decode_desired_replicas,decode_ready_replicas' \
  && ok || bad "serving timeseries header: $(head -1 "$T/a.csv")"
[ "$(wc -l < "$T/a.csv")" = 61 ] && ok || bad "want 60 minute rows + header for 1 h, got $(wc -l < "$T/a.csv")"
# The per-minute arrivals add up to the JSON's count.
[ "$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$T/a.csv")" = "$arrived" ] && ok || bad "timeseries arrivals do not add up to $arrived"
grep -q 'Llama-3.1-8B' "$T/a.html" && ok || bad "the report does not mention the model"

# Same seed: byte-identical; another seed: different.
"$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/chat.yaml" --json "$T/b.json" \
  --serving-timeseries "$T/b.csv" -q > /dev/null
cmp -s "$T/a.json" "$T/b.json" && cmp -s "$T/a.csv" "$T/b.csv" && ok || bad "outputs differ between identical runs"
"$BIN" simulate --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/chat.yaml" --json "$T/c.json" --seed 7 -q > /dev/null
cmp -s "$T/a.json" "$T/c.json" && bad "seed 7 gives the same JSON as seed 42" || ok

# 2. compare with a workload per configuration: the chat service at 6 and at 3 requests/s.
mkdir -p "$T/ex" && cp "$EXAMPLES"/*.yaml "$T/ex/"
sed 's/meanRatePerSecond: 6$/meanRatePerSecond: 3/' "$EXAMPLES/chat.yaml" > "$T/ex/half.yaml"
if "$BIN" compare --config "six=$T/ex/pools.yaml,,$T/ex/chat.yaml" --config "three=$T/ex/pools.yaml,,$T/ex/half.yaml" \
     --json "$T/cmp.json" -q > "$T/cmp.txt" 2> "$T/err.txt"; then ok; else bad "compare exited $?: $(cat "$T/err.txt")"; fi
grep -q '^workload: per configuration' "$T/cmp.txt" && ok || bad "compare does not say 'workload: per configuration': $(head -3 "$T/cmp.txt")"
grep -q '^six .*chat' "$T/cmp.txt" && grep -q '^three .*chat' "$T/cmp.txt" && ok || bad "compare lacks an inference row per configuration: $(cat "$T/cmp.txt")"
[ "$(grep -c '"arrived": ' "$T/cmp.json")" = 2 ] && ok || bad "compare JSON: want 2 inference results"
a1=$(grep '"arrived": ' "$T/cmp.json" | sed -n '1s/[^0-9]//gp'); a2=$(grep '"arrived": ' "$T/cmp.json" | sed -n '2s/[^0-9]//gp')
[ "$a1" = "$arrived" ] && ok || bad "compare's first configuration: $a1 arrivals, simulate had $arrived"
[ -n "$a2" ] && [ "$a2" -lt $((a1 * 6 / 10)) ] && [ "$a2" -gt $((a1 * 4 / 10)) ] && ok || bad "half the rate: $a2 arrivals vs $a1"

# Outputs are all-or-nothing: an error in the second configuration's workload writes none of them.
sed 's/model: Llama-3.1-8B/model: Llama-9/' "$EXAMPLES/chat.yaml" > "$T/ex/unknown.yaml"
echo keep > "$T/old.json"; echo keep > "$T/old.html"
"$BIN" compare --config "six=$T/ex/pools.yaml,,$T/ex/chat.yaml" --config "bad=$T/ex/pools.yaml,,$T/ex/unknown.yaml" \
  --json "$T/old.json" --report "$T/old.html" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "compare with a bad workload should exit 2: $(cat "$T/err.txt")"
grep -qF "unknown.yaml:17:12: field 'services[0].inference.model': unknown model 'Llama-9'" "$T/err.txt" && ok \
  || bad "compare error: $(cat "$T/err.txt")"
[ "$(cat "$T/old.json")" = keep ] && [ "$(cat "$T/old.html")" = keep ] && ok || bad "compare touched an output on error"
echo keep > "$T/old.csv"
"$BIN" simulate --pools "$T/ex/pools.yaml" --workload "$T/ex/unknown.yaml" --json "$T/old.json" --report "$T/old.html" \
  --serving-timeseries "$T/old.csv" -q > /dev/null 2>&1
[ $? = 2 ] && [ "$(cat "$T/old.json")" = keep ] && [ "$(cat "$T/old.html")" = keep ] && [ "$(cat "$T/old.csv")" = keep ] \
  && ok || bad "simulate touched an output on error"
"$BIN" simulate --pools "$T/ex/pools.yaml" --workload "$T/ex/chat.yaml" --json "$T/new.json" \
  --serving-timeseries "$T/no-dir/x.csv" -q > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && [ ! -e "$T/new.json" ] && ok || bad "an unwritable --serving-timeseries must fail before any output: $(cat "$T/err.txt")"

# 3. Bad input: exit 2, ONE line "file:line:column: field '...': message", no output written.
cd "$T/ex" || exit 1
expect_bad() {  # name, expected substring, workload file, extra args...
  local name="$1" want="$2" workload="$3"
  shift 3
  echo keep > "$T/old.json"
  "$BIN" simulate --pools pools.yaml --workload "$workload" --json "$T/old.json" -q "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ "$(cat "$T/old.json")" = keep ] && ok || bad "$name: the old output was touched"
}
# Llama-3.1-70B on the one-L4 pool: how much is missing, and what would fit.
sed 's/model: Llama-3.1-8B/model: Llama-3.1-70B/; s/pools: \[l40s\]/pools: [l4]/' chat.yaml > fit.yaml
expect_bad "model does not fit" "fit.yaml:17:12: field 'services[0].inference.model': inference service 'chat': no pool it may use can run it: on pool 'l4': Llama-3.1-70B bf16 needs 131.4 GiB of weights per GPU" fit.yaml
expect_bad "model does not fit: missing" "5.0 GiB KV cache for max_model_len 16384), 117.6 GiB more than the 20.1 GiB usable on L4 at gpu_memory_utilization 0.9; tensor_parallel_size 8 would fit" fit.yaml
expect_bad "unknown model" "unknown.yaml:17:12: field 'services[0].inference.model': unknown model 'Llama-9' (the serving catalog has: Llama-3.1-8B," unknown.yaml
sed 's/maxNumSeqs: 256,/tensorParallelSize: 2, maxNumSeqs: 256,/' chat.yaml > tp.yaml
expect_bad "tensor parallel != gpus" "tp.yaml:18:34: field 'services[0].inference.engine.tensorParallelSize': 2 but each replica pod requests gpus: 1; they must be equal" tp.yaml
sed 's/promptMean: 1155/promptMean: -1/' chat.yaml > neg.yaml
expect_bad "negative promptMean" "neg.yaml:22:30: field 'services[0].inference.traffic.generate.tokens.promptMean': -1 is outside (0, 1e+07]" neg.yaml
sed 's/outputMean: 211/outputMean: 1e12/' chat.yaml > absurd.yaml
expect_bad "absurd outputMean" "absurd.yaml:22:68: field 'services[0].inference.traffic.generate.tokens.outputMean': 1e12 is outside (0, 1e+07]" absurd.yaml
sed 's/    slo:/    colour: blue\n    slo:/' chat.yaml > key.yaml
expect_bad "unknown key in inference" "key.yaml:26:5: field 'services[0].inference.colour': unknown key 'colour' (expected model, engine," key.yaml
sed 's/router: {policy: least-outstanding,/router: {policy: least-outstanding, retries: 3,/' chat.yaml > key2.yaml
expect_bad "unknown key in router" "key2.yaml:25:41: field 'services[0].inference.router.retries': unknown key 'retries'" key2.yaml

# Traces: the generator replaced by a trace file.
trace_workload() {  # trace file, workload file
  sed "s#^      generate:#      trace: $1\n      generate:#" chat.yaml | sed '/^      generate:/,/maxOutputTokens/d' > "$2"
}
header='TIMESTAMP,ContextTokens,GeneratedTokens'
printf '%s\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,0,10\n' "$header" > zero.csv
printf '%s\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,1e12,10\n' "$header" > huge.csv
printf '%s\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,12,-3\n' "$header" > negative.csv
printf 'TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.68,374\n' > column.csv
printf '%s\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,20,5\n2023-11-16 18:15:45.00,10,10\n' "$header" > order.csv
printf '{"timestamp": 0, "input_length": 10, "output_length": 5}\n{"timestamp": 10, "input_length": 10}\n' > key.jsonl
for c in zero huge negative column order; do trace_workload $c.csv t-$c.yaml; done
trace_workload key.jsonl t-key.yaml
expect_bad "trace: 0 tokens" "zero.csv:3:24: field 'ContextTokens': 0 prompt tokens: a request has at least 1" t-zero.yaml
expect_bad "trace: 1e12 tokens" "huge.csv:3:24: field 'ContextTokens': 1e12 is more than 10000000 prompt tokens (limit RequestTraceLimits::max_prompt_tokens" t-huge.yaml
expect_bad "trace: negative tokens" "negative.csv:3:27: field 'GeneratedTokens': -3 is negative" t-negative.yaml
# A missing column has no column to point at: the header line and the column's name.
expect_bad "trace: missing column" "column.csv:1: field 'GeneratedTokens': missing column (header has: TIMESTAMP,ContextTokens)" t-column.yaml
expect_bad "trace: missing key" "key.jsonl:2:1: field 'output_length': missing key (a Mooncake row has" t-key.yaml
expect_bad "trace: unsorted" "order.csv:4:1: field 'TIMESTAMP': 2023-11-16 18:15:45.00 is before the previous row's 2023-11-16 18:15:47.00 (line 3): rows must be in time order" t-order.yaml
trace_workload no-such.csv t-missing.yaml
expect_bad "trace: missing file" "no-such.csv: cannot open file: no such file" t-missing.yaml

# Autoscalers: a metric no simulated component exports, named at its line in the autoscaler's file.
sed 's/vllm:num_requests_waiting{/vllm:num_requests_swapped{/' keda-waiting.yaml > keda-bad.yaml
sed 's/keda-waiting.yaml/keda-bad.yaml/' chat.yaml > as-keda.yaml
expect_bad "KEDA metric not exported" "keda-bad.yaml:18:14: field 'spec.triggers[0].metadata.query': metric 'vllm:num_requests_swapped' is exported by no simulated component (exported: vllm:num_requests_waiting," as-keda.yaml
sed 's/DCGM_FI_DEV_GPU_UTIL/DCGM_FI_DEV_FB_USED/' hpa-dcgm.yaml > hpa-bad.yaml
sed 's/keda-waiting.yaml/hpa-bad.yaml/' chat.yaml > as-hpa.yaml
expect_bad "HPA metric not exported" "hpa-bad.yaml:19:15: field 'spec.metrics[0].pods.metric.name': metric 'DCGM_FI_DEV_FB_USED' is exported by no simulated component" as-hpa.yaml
sed 's/keda-waiting.yaml/vllm-deployment.yaml/' chat.yaml > as-none.yaml
expect_bad "no HPA or ScaledObject" "as-none.yaml:29:19: field 'services[0].inference.autoscaler.kubernetes': vllm-deployment.yaml has 0 HorizontalPodAutoscaler and 0 ScaledObject objects; exactly one is needed" as-none.yaml

# --serving-catalog with an error.
cp "$SRC/data/inference/catalog.yaml" catalog.yaml
sed '0,/^  layers: 32$/s//  layers: -32/' catalog.yaml > bad-catalog.yaml
expect_bad "bad serving catalog" "bad-catalog.yaml:26:11: field 'models[0].layers': -32 is negative" chat.yaml --serving-catalog bad-catalog.yaml
"$BIN" simulate --pools pools.yaml --workload chat.yaml --serving-catalog catalog.yaml --json "$T/d.json" -q > /dev/null 2>&1
cmp -s "$T/a.json" "$T/d.json" && ok || bad "--serving-catalog with the built-in catalog's copy changes the result"

# Files that are not regular files are refused before reading (a trace on /dev/zero would never end).
trace_workload /dev/zero t-dev.yaml
expect_bad "trace on a device" "/dev/zero: is not a regular file" t-dev.yaml
mkfifo fifo.csv
trace_workload fifo.csv t-fifo.yaml
expect_bad "trace on a FIFO" "fifo.csv: is not a regular file" t-fifo.yaml

# A disaggregated service (docs/disaggregated-serving.md): each role's line, the JSON's disaggregation
# object, and the CSV's role columns, which add up to the service's counts (empty for aggregated rows).
if "$BIN" simulate -q --pools "$EXAMPLES/pools.yaml" --workload "$EXAMPLES/disaggregated-rag.yaml" --json "$T/g.json" \
     --serving-timeseries "$T/g.csv" > "$T/g.txt" 2> "$T/err.txt"; then ok
else bad "disaggregated example exited $?: $(cat "$T/err.txt")"; fi
grep -q '^  rag-prefill: TP1, max ready [1-9]' "$T/g.txt" && grep -q '^  rag-decode: TP1, max ready [1-9]' "$T/g.txt" \
  && ok || bad "no role lines: $(cat "$T/g.txt")"
for key in '"disaggregation": {' '"kv_transfers": ' '"prefill": {' '"decode": {' '"item": "rag-prefill"'; do
  grep -q "$key" "$T/g.json" && ok || bad "disaggregated JSON lacks $key"
done
awk -F, 'NR > 1 && ($15 == "" || $7 != $15 + $17 || $8 != $16 + $18) { bad++ } END { exit bad > 0 }' "$T/g.csv" \
  && ok || bad "role columns do not add up to the service's desired and ready replicas"
awk -F, 'NR > 1 && ($15 != "" || $16 != "" || $17 != "" || $18 != "") { bad++ } END { exit bad > 0 }' "$T/a.csv" \
  && ok || bad "an aggregated service's role columns are not empty"

finish
