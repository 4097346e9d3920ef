#!/usr/bin/env bash
# End-to-end checks of `gpufleet bench-serve`: vLLM's result block with vLLM's names, the JSON file
# with vLLM's keys, determinism by seed, the sharegpt and sonnet datasets, and exit 2 with one error
# line for a model too big for its GPU (naming the missing memory and what would fit), an unknown
# model, GPU or dataset (listing the known ones), absurd token counts and a trace with a missing
# column (naming the file and line); a disaggregated prefill/decode run with its cost section, and
# its bad flags.
set -u
BIN="$1"
source "$(dirname "$0")/common.sh"

run() { "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 100 \
          --random-input-len 256 --random-output-len 64 --random-range-ratio 0.5 "$@"; }

# 1. The result block.
if run --request-rate 20 --seed 1 --json "$T/a.json" > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "run exited $?: $(cat "$T/err.txt")"; fi
for line in '============ Serving Benchmark Result ============' 'Successful requests:                     100 ' \
            'Request rate configured (RPS):           20.00 ' 'Benchmark duration (s):' 'Total input tokens:' \
            'Total generated tokens:' 'Request throughput (req/s):' 'Output token throughput (tok/s):' \
            'Total token throughput (tok/s):' '---------------Time to First Token----------------' 'Mean TTFT (ms):' \
            'Median TTFT (ms):' 'P99 TTFT (ms):' '-----Time per Output Token (excl. 1st token)------' 'Mean TPOT (ms):' \
            'Median TPOT (ms):' 'P99 TPOT (ms):' '---------------Inter-token Latency----------------' 'Mean ITL (ms):' \
            'Median ITL (ms):' 'P99 ITL (ms):' '=================================================='; do
  grep -qF -- "$line" "$T/out.txt" && ok || bad "no '$line' in: $(cat "$T/out.txt")"
done
[ ! -s "$T/err.txt" ] && ok || bad "stderr not empty: $(cat "$T/err.txt")"
for key in '"completed": 100' '"duration": ' '"total_input_tokens": ' '"total_output_tokens": ' '"request_throughput": ' \
           '"output_throughput": ' '"total_token_throughput": ' '"mean_ttft_ms": ' '"median_ttft_ms": ' '"p99_ttft_ms": ' \
           '"mean_tpot_ms": ' '"mean_itl_ms": ' '"p99_itl_ms": ' '"mean_e2el_ms": ' '"request_rate": 20' '"max_concurrency": null'; do
  grep -qF -- "$key" "$T/a.json" && ok || bad "JSON lacks $key"
done
# Determinism: the same seed gives the same bytes; another seed other lengths.
run --request-rate 20 --seed 1 --json "$T/b.json" > /dev/null
cmp -s "$T/a.json" "$T/b.json" && ok || bad "same seed, different JSON"
run --request-rate 20 --seed 2 --json "$T/c.json" > /dev/null
cmp -s "$T/a.json" "$T/c.json" && bad "seeds 1 and 2 give the same JSON" || ok
# The closed loop: never more than C in flight.
run --max-concurrency 4 > "$T/conc.txt" && ok || bad "--max-concurrency run failed"
grep -qF 'Maximum request concurrency:             4 ' "$T/conc.txt" && ok || bad "no concurrency line: $(cat "$T/conc.txt")"
grep -qF 'Peak concurrent requests:                4.00 ' "$T/conc.txt" && ok || bad "more than 4 in flight: $(cat "$T/conc.txt")"
# Two replicas finish 100 requests sent at once sooner than one.
d1=$(run | awk -F: '/Benchmark duration/ {print $2+0}')
d2=$(run --num-replicas 2 | awk -F: '/Benchmark duration/ {print $2+0}')
awk -v a="$d1" -v b="$d2" 'BEGIN {exit !(b < a)}' && ok || bad "2 replicas ($d2 s) not faster than 1 ($d1 s)"

# 2. A trace (Mooncake JSONL) replayed.
printf '{"timestamp": 0, "input_length": 100, "output_length": 10}\n{"timestamp": 500, "input_length": 200, "output_length": 20}\n' > "$T/t.jsonl"
"$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/t.jsonl" > "$T/trace.txt" \
  && ok || bad "trace run failed"
grep -qF 'Total generated tokens:                  30 ' "$T/trace.txt" && ok || bad "trace tokens: $(cat "$T/trace.txt")"

# 2b. vLLM's datasets: sharegpt lengths drawn by seed (the same seed, the same bytes; every prompt at
# most 1,024 tokens and every pair at most 2,048, so at most 200 x 1,024 input tokens); sonnet's
# fixed lengths, 10 x 550 input and 10 x 150 output tokens.
sg() { "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --dataset-name sharegpt --num-prompts 200 "$@"; }
sg --seed 3 --json "$T/sg1.json" > "$T/sg.txt" && ok || bad "sharegpt run failed"
sg --seed 3 --json "$T/sg2.json" > /dev/null
cmp -s "$T/sg1.json" "$T/sg2.json" && ok || bad "sharegpt: same seed, different JSON"
sg --seed 4 --json "$T/sg3.json" > /dev/null
cmp -s "$T/sg1.json" "$T/sg3.json" && bad "sharegpt: seeds 3 and 4 give the same JSON" || ok
in_tokens=$(awk -F: '/Total input tokens/ {print $2+0}' "$T/sg.txt")
awk -v n="$in_tokens" 'BEGIN {exit !(n >= 800 && n <= 204800)}' && ok || bad "sharegpt input tokens $in_tokens"
"$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --dataset-name sonnet --num-prompts 10 > "$T/sonnet.txt" \
  && ok || bad "sonnet run failed"
grep -qF 'Total input tokens:                      5500 ' "$T/sonnet.txt" && ok || bad "sonnet input: $(cat "$T/sonnet.txt")"
grep -qF 'Total generated tokens:                  1500 ' "$T/sonnet.txt" && ok || bad "sonnet output: $(cat "$T/sonnet.txt")"

# 3. Bad input: exit 2, one error line containing the expected text, the old output kept.
expect_bad() {  # name, expected substring, args...
  local name="$1" want="$2"
  shift 2
  echo keep > "$T/old.json"
  "$BIN" bench-serve --json "$T/old.json" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
  [ "$(cat "$T/old.json")" = keep ] && ok || bad "$name: the old output was touched"
}
expect_bad "70B on one L4" "GiB more than the 20.1 GiB usable on L4" --model Llama-3.1-70B --gpu L4 --max-model-len 4096
expect_bad "70B on one L4, what fits" "tensor_parallel_size 8 would fit" --model Llama-3.1-70B --gpu L4 --max-model-len 4096
expect_bad "unknown model" "unknown model 'Llama-9' (known: Llama-3.1-8B" --model Llama-9 --gpu H100-80GB
expect_bad "unknown GPU" "unknown GPU 'H900' (known: " --model Llama-3.1-8B --gpu H900
expect_bad "negative input" "random_input_len: -5 is outside" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --random-input-len -5
expect_bad "absurd output" "random_output_len: 999999999 is outside" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --random-output-len 999999999
expect_bad "zero prompts" "num_prompts: 0 is outside" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 0
expect_bad "range ratio" "random_range_ratio: 1 is outside [0, 1)" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --random-range-ratio 1
expect_bad "negative rate" "request_rate: -1 must be positive" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --request-rate -1
expect_bad "bad dtype" "--dtype: unknown dtype 'int3'" --model Llama-3.1-8B --gpu H100-80GB --dtype int3
expect_bad "negative seed" "--seed: -1 is negative (a seed is an integer from 0 to 9223372036854775807)" --model Llama-3.1-8B --gpu H100-80GB --seed -1
expect_bad "unknown dataset" "--dataset-name: unknown dataset 'burstgpt' (random, sharegpt, sonnet;" --model Llama-3.1-8B --gpu H100-80GB --dataset-name burstgpt
expect_bad "sonnet prefix" "sonnet_prefix_len: 600 is outside 0..550 (the sonnet input length)" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --dataset-name sonnet --sonnet-prefix-len 600
expect_bad "sonnet output" "sonnet_output_len: 0 is outside" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --dataset-name sonnet --sonnet-output-len 0
# The client's API (--backend, --endpoint as vllm bench serve): a chat request's TTFT adds the
# catalog's frontendChatRequestSeconds (0.03638 s) to a completions request's, for one request alone.
one() { "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --random-input-len 512 --random-output-len 16 --num-prompts 1 "$@"; }
one --backend vllm --json "$T/completions.json" > "$T/completions.txt" && ok || bad "--backend vllm failed"
one --backend openai-chat --endpoint /v1/chat/completions --json "$T/chat.json" > "$T/chat.txt" && ok || bad "--backend openai-chat failed"
ttft() { awk -F: '/Mean TTFT/ {print $2+0}' "$1"; }
awk -v a="$(ttft "$T/completions.txt")" -v b="$(ttft "$T/chat.txt")" 'BEGIN {d = b - a; exit !(d > 36.37 && d < 36.39)}' \
  && ok || bad "chat TTFT $(ttft "$T/chat.txt") - completions $(ttft "$T/completions.txt") is not 36.38 ms"
grep -qF '"backend": "openai-chat"' "$T/chat.json" && grep -qF '"endpoint": "/v1/chat/completions"' "$T/chat.json" \
  && ok || bad "chat JSON lacks backend/endpoint: $(head -c 300 "$T/chat.json")"
grep -qF '"backend": "vllm"' "$T/completions.json" && grep -qF '"endpoint": "/v1/completions"' "$T/completions.json" \
  && ok || bad "completions JSON lacks backend/endpoint"
expect_bad "chat backend, completions URL" "--backend/--endpoint: endpoint \"/v1/completions\": the openai-chat backend posts to an OpenAI Chat Completions API URL, which must end with 'chat/completions'" --model Llama-3.1-8B --gpu H100-80GB --backend openai-chat
expect_bad "completions backend, chat URL" "--backend/--endpoint: endpoint \"/v1/chat/completions\": the vllm backend posts to an OpenAI Completions API URL" --model Llama-3.1-8B --gpu H100-80GB --endpoint /v1/chat/completions
expect_bad "empty endpoint" "--backend/--endpoint: endpoint: must not be empty" --model Llama-3.1-8B --gpu H100-80GB --endpoint ""
expect_bad "endpoint with a newline, one line" "endpoint \"/v1/completions\\n\": the vllm backend" --model Llama-3.1-8B --gpu H100-80GB --endpoint $'/v1/completions\n'
expect_bad "unknown backend" "--backend/--endpoint: unknown backend \"tgi\" (vllm, openai, openai-chat;" --model Llama-3.1-8B --gpu H100-80GB --backend tgi
printf 'TIMESTAMP,ContextTokens\n2023-11-16 18:17:03.98,10\n' > "$T/azure.csv"
expect_bad "trace missing column" "azure.csv:1" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/azure.csv"
expect_bad "dataset and trace" "--dataset-name: a --trace replaces the dataset" --model Llama-3.1-8B --gpu H100-80GB --dataset-name sharegpt --trace "$T/azure.csv"
expect_bad "trace missing column names it" "GeneratedTokens" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --trace "$T/azure.csv"
# A measured step profile: a constant 10 ms step, so 2 requests of 10 + 3 tokens sent at once end at 30 ms.
printf 'num_seqs,tokens,step_s\n1,1,0.01\n' > "$T/profile.csv"
"$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 2 --random-input-len 10 \
  --random-output-len 3 --step-profile "$T/profile.csv" > "$T/profile.txt" && ok || bad "--step-profile run failed"
grep -qF 'Benchmark duration (s):                  0.03 ' "$T/profile.txt" && ok || bad "profile run: $(cat "$T/profile.txt")"
grep -qF 'Mean TTFT (ms):                          10.00 ' "$T/profile.txt" && ok || bad "profile run TTFT: $(cat "$T/profile.txt")"
printf 'num_seqs,tokens,step_s\n1,1,0.01\n2,2,fast\n' > "$T/bad-profile.csv"
expect_bad "step profile bad cell" "bad-profile.csv:3:5: field 'step_s'" --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --step-profile "$T/bad-profile.csv"

# 4. Disaggregated prefill/decode (docs/disaggregated-serving.md) and the cost section.
PRICES="$(cd "$(dirname "$0")/../../examples/plan" && pwd)/catalog.yaml"
run --request-rate 20 --seed 1 --prefill-replicas 1 --decode-replicas 2 --price-catalog "$PRICES" \
  --json "$T/pd.json" > "$T/pd.txt" 2> "$T/err.txt" && ok || bad "disaggregated run failed: $(cat "$T/err.txt")"
for line in '-----------Disaggregated Prefill/Decode-----------' 'Prefill pool:                            1 x H100-80GB TP1' \
            'Decode pool:                             2 x H100-80GB TP1' 'KV transfer link:                        rdma 50 GB/s' \
            'Remote prefills:                         100 ' 'Successful requests:                     100 ' \
            'GPUs:                                    3 ' 'USD per million tokens:'; do
  grep -qF -- "$line" "$T/pd.txt" && ok || bad "no '$line' in: $(cat "$T/pd.txt")"
done
for key in '"prefill_replicas": 1' '"kv_transfer_link": "rdma"' '"kv_transfers": 100' '"gpus": 3' '"usd_per_million_tokens": '; do
  grep -qF -- "$key" "$T/pd.json" && ok || bad "disaggregated JSON lacks $key"
done
# Every prompt (128..384 tokens) at most 400: all prefilled locally, no transfer.
run --prefill-replicas 1 --max-local-prefill-length 400 > "$T/local.txt" && ok || bad "local-prefill run failed"
grep -qF 'Local prefills:                          100 ' "$T/local.txt" && ok || bad "local prefills: $(cat "$T/local.txt")"
expect_bad "unknown link" "--kv-transfer-link: kv_transfer_link: unknown link 'wifi'" --model Llama-3.1-8B --gpu H100-80GB --prefill-replicas 1 --kv-transfer-link wifi
expect_bad "decode flags alone" "need --prefill-replicas > 0" --model Llama-3.1-8B --gpu H100-80GB --decode-replicas 2
expect_bad "first token" "--first-token-from: unknown value 'both'" --model Llama-3.1-8B --gpu H100-80GB --prefill-replicas 1 --first-token-from both
expect_bad "negative gbps" "--kv-transfer-gbps: -1" --model Llama-3.1-8B --gpu H100-80GB --prefill-replicas 1 --kv-transfer-gbps -1
expect_bad "prefill pool too small" "--prefill-gpu/--prefill-tensor-parallel-size: " --model Llama-3.1-70B --gpu H100-80GB --prefill-replicas 1 --prefill-gpu L4 --max-model-len 4096 --decode-tensor-parallel-size 4 --prefill-tensor-parallel-size 1
expect_bad "price catalog without the GPU" "--price-catalog: no instance type with GPU H200-141GB" --model Llama-3.1-8B --gpu H200-141GB --price-catalog "$PRICES"
finish
