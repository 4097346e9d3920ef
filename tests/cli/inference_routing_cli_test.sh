#!/usr/bin/env bash
# End-to-end checks of `gpufleet bench-serve --routing` (docs/inference-routing.md): the comparison
# table on a hand-made Mooncake trace and on the first 1,500 requests of the Mooncake conversation
# trace (skipped without ../shared/traces): every request accounted for, the endpoint picker's
# default profile hitting the prefix cache at least as often as round robin, the example's config
# file (the EPP's default written out) giving the built-in default's figures, sheddable requests
# dropped only by the endpoint picker, determinism, the JSON list, and bad input (exit 2, one line
# naming file, line, column and field).
#   tests/cli/inference_routing_cli_test.sh GPUFLEET_BINARY SOURCE_DIR
set -u
BIN="$1"
SRC="$2"
source "$(dirname "$0")/common.sh"

# The table's row of policy $2 in file $1, and its column $3 (1 = routing).
col() { awk -v p="$2" -v c="$3" '$1 == p {gsub("%", "", $c); print $c}' "$1"; }

# 1. A hand-made trace: three conversations of 4 turns each, turn k a prompt of 2k blocks of 512
#    tokens that starts with turn k - 1's, sent in turn order (A1 B1 C1 A2 ...) 2 s apart, on 2
#    idle replicas. The picker sends every later turn to the replica holding its conversation.
python3 - "$T/conv.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    t = 0
    for turn in range(4):
        for conv in range(3):
            ids = [conv * 100 + i for i in range(2 * (turn + 1))]
            f.write(json.dumps({"timestamp": t, "input_length": 512 * len(ids), "output_length": 8, "hash_ids": ids}) + "\n")
            t += 2000
PY
run_conv() { "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-replicas 2 --trace "$T/conv.jsonl" "$@"; }
if run_conv --routing round-robin,least-outstanding,endpoint-picker --usd-per-gpu-hour 12.29 --json "$T/conv.json" > "$T/conv.txt" 2> "$T/err.txt"; then ok; else bad "conv run exited $?: $(cat "$T/err.txt")"; fi
grep -qF '2 x Llama-3.1-8B on H100-80GB (TP 1), 12 requests' "$T/conv.txt" && ok || bad "heading: $(cat "$T/conv.txt")"
for p in round-robin least-outstanding endpoint-picker; do
  [ "$(col "$T/conv.txt" $p 2)" = 12 ] && [ "$(col "$T/conv.txt" $p 3)" = 0 ] && ok || bad "$p: not 12 completed, 0 failed: $(cat "$T/conv.txt")"
done
# Prompt tokens: 3 x 512 x (2 + 4 + 6 + 8) = 30,720. The picker: turn k finds turn k - 1's 2(k - 1)
# blocks cached, 3 x 512 x (2 + 4 + 6) = 18,432 tokens, 60.0%. Round robin sends request i to replica
# i mod 2: turns 1-4 of each conversation go to alternate replicas, so turn 2 finds nothing, turn 3
# turn 1's 2 blocks, turn 4 turn 2's 4: 3 x 512 x 6 = 9,216 tokens, 30.0%.
epp=$(col "$T/conv.txt" endpoint-picker 7) rr=$(col "$T/conv.txt" round-robin 7)
[ "$epp" = 60.0 ] && ok || bad "endpoint-picker hit rate $epp%, want 60.0%"
[ "$rr" = 30.0 ] && ok || bad "round-robin hit rate $rr%, want 30.0%"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [x['routing'] for x in d] == ['round-robin','least-outstanding','endpoint-picker']; assert all(x['completed'] == 12 for x in d)" "$T/conv.json" \
  && ok || bad "JSON is not one object per policy"
run_conv --routing round-robin,least-outstanding,endpoint-picker --usd-per-gpu-hour 12.29 > "$T/conv2.txt" 2>&1
[ "$(grep -v '^json:' "$T/conv.txt")" = "$(cat "$T/conv2.txt")" ] && ok || bad "same input, different table"

# 2. Sheddable requests: 40 requests at once on 1 replica, priority -1 (the example's objective).
"$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --max-model-len 8192 --num-prompts 40 --random-input-len 256 \
  --random-output-len 16 --routing least-outstanding,endpoint-picker --endpoint-picker-config "$SRC/examples/inference-routing/epp.yaml" \
  > "$T/shed.txt" 2> "$T/err.txt" && ok || bad "shed run exited $?: $(cat "$T/err.txt")"
[ "$(col "$T/shed.txt" least-outstanding 4)" = 0 ] && ok || bad "least-outstanding dropped requests: $(cat "$T/shed.txt")"
# The first five find 0..4 waiting (saturation < 1); the sixth finds 5: 35 dropped.
[ "$(col "$T/shed.txt" endpoint-picker 4)" = 35 ] && [ "$(col "$T/shed.txt" endpoint-picker 2)" = 5 ] && ok \
  || bad "endpoint-picker: want 5 completed, 35 dropped: $(cat "$T/shed.txt")"

# 3. The Mooncake conversation trace, first 1,500 requests, 12 replicas.
TRACE="${GPUFLEET_TRACES:-$SRC/../shared/traces}/mooncake-fast25/conversation_trace.jsonl"
if [ -f "$TRACE" ]; then
  M=("$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --num-replicas 12 --trace "$TRACE" --num-prompts 1500)
  "${M[@]}" --routing round-robin,least-outstanding,prefix-affinity,endpoint-picker --usd-per-gpu-hour 12.29 > "$T/mc.txt" 2> "$T/err.txt" \
    && ok || bad "mooncake run exited $?: $(cat "$T/err.txt")"
  for p in round-robin least-outstanding prefix-affinity endpoint-picker; do
    [ "$(( $(col "$T/mc.txt" $p 2) + $(col "$T/mc.txt" $p 3) ))" = 1500 ] && ok || bad "$p: completed + failed != 1500: $(cat "$T/mc.txt")"
  done
  epp=$(col "$T/mc.txt" endpoint-picker 7) rr=$(col "$T/mc.txt" round-robin 7)
  awk -v e="$epp" -v r="$rr" 'BEGIN {exit !(e >= r)}' && ok || bad "mooncake: endpoint-picker hit $epp% below round robin's $rr%"
  # The example's EndpointPickerConfig is the default written out: the same row (its objective is
  # sheddable, and this pool never saturates: nothing dropped).
  "${M[@]}" --routing endpoint-picker,round-robin --endpoint-picker-config "$SRC/examples/inference-routing/epp.yaml" --usd-per-gpu-hour 12.29 \
    > "$T/mc-file.txt" 2> "$T/err.txt" && ok || bad "mooncake config-file run exited $?: $(cat "$T/err.txt")"
  [ "$(grep '^endpoint-picker' "$T/mc.txt")" = "$(grep '^endpoint-picker' "$T/mc-file.txt")" ] && ok \
    || bad "config file row differs from the default: $(grep '^endpoint-picker' "$T/mc.txt" "$T/mc-file.txt")"
else
  echo "skipped the Mooncake checks: $TRACE is absent"
fi

# 4. Bad input: exit 2, one line.
expect_bad() {  # name, expected substring, args...
  local name="$1" want="$2"
  shift 2
  "$BIN" bench-serve --model Llama-3.1-8B --gpu H100-80GB --num-prompts 4 "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2 ($(cat "$T/err.txt"))"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: want one error line, got: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: error lacks '$want': $(cat "$T/err.txt")"
}
printf 'apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: queue-scorer\nschedulingProfiles:\n- name: d\n  plugins:\n  - pluginRef: nope\n' > "$T/bad.yaml"
expect_bad "bad pluginRef" "bad.yaml:8:16: field 'schedulingProfiles[0].plugins[0].pluginRef': no plugin named 'nope'" \
  --routing endpoint-picker --endpoint-picker-config "$T/bad.yaml"
expect_bad "unknown policy" "--routing: unknown routing policy 'fastest'" --routing round-robin,fastest
expect_bad "config without the picker" "--endpoint-picker-config: --routing names no endpoint-picker" \
  --routing round-robin --endpoint-picker-config "$SRC/examples/inference-routing/epp.yaml"
expect_bad "unknown objective" "--inference-objective: no InferenceObjective 'x'" \
  --routing endpoint-picker --endpoint-picker-config "$SRC/examples/inference-routing/epp.yaml" --inference-objective x
finish
