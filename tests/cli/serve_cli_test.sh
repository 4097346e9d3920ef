#!/usr/bin/env bash
# End-to-end checks of `gpufleet serve` (docs/live.md): --replay of examples/live/replay equals place
# in both nodeCacheCapable modes, --replay of place's examples (controllers, pools, DaemonSets, quotas)
# differs only where place preempts, gangs are refused; a server started from a snapshot file answers health, readiness, the
# extender verbs, /metrics (with prices) and the KEDA metrics-api over HTTP, answers 400 to bad bodies,
# and stops gracefully on SIGTERM (exit 0); bad options and inputs exit 2 with one line.
set -u
BIN="$1"
EX="$2/live"
source "$(dirname "$0")/common.sh"
command -v curl > /dev/null || { echo "serve_cli_test skipped: curl is not installed (scripts/install-deps)"; exit 77; }

# 1. Replay: every decision equal to place's.
"$BIN" serve --replay --cluster "$EX/replay/nodes.yaml" --workload "$EX/replay/pods.yaml" --json "$T/replay.json" > "$T/replay.txt" 2> "$T/err.txt" \
  && ok || bad "replay exited $?: $(cat "$T/err.txt") $(cat "$T/replay.txt")"
[ "$(grep -c '^equal to place: 13/13$' "$T/replay.txt")" = 2 ] && ok || bad "replay: want 13/13 twice: $(cat "$T/replay.txt")"
grep -q '^extender calls: filter 13, prioritize 6, bind 10$' "$T/replay.txt" && ok || bad "replay calls: $(cat "$T/replay.txt")"
grep -q '"mismatches": 0' "$T/replay.json" && ok || bad "replay JSON"
# Pods written by hand have no metadata.uid (the API server sets it): the replay gives each one.
grep -v '^  uid: ' "$EX/replay/pods.yaml" > "$T/no-uid.yaml"
"$BIN" serve --replay --cluster "$EX/replay/nodes.yaml" --workload "$T/no-uid.yaml" > "$T/replay.txt" 2> "$T/err.txt" \
  && [ "$(grep -c '^equal to place: 13/13$' "$T/replay.txt")" = 2 ] && ok || bad "replay without uids: $(cat "$T/err.txt") $(cat "$T/replay.txt")"

# place's own inputs: node pools, controllers, PriorityClasses, a quota, MIG and time-slicing ConfigMaps.
# Every decision equal but the one place makes by preemption (not replayed): exit 1, that line only.
"$BIN" serve --replay --cluster "$2" --workload "$2" --json "$T/examples.json" > "$T/examples.txt" 2> "$T/err.txt"
rc=$?
[ "$rc" = 1 ] && [ "$(grep -c '^equal to place: 26/27 (1 bound by preemption in place, not replayed)$' "$T/examples.txt")" = 2 ] \
  && [ "$(grep -c '^  differs: ' "$T/examples.txt")" = 2 ] \
  && [ "$(grep -c '^  differs: ml-training/llm-eval-0: serve pending / place training-h200-0 gpus \[0,1,2,3\]$' "$T/examples.txt")" = 2 ] \
  && [ "$(grep -c '^not created, rejected by ResourceQuota admission as in place: 1 pod$' "$T/examples.txt")" = 2 ] \
  && grep -q '"quota_rejected": \[' "$T/examples.json" && grep -q '"team-a/hparam-sweep-3"' "$T/examples.json" \
  && ok || bad "replay of examples: exit $rc: $(cat "$T/err.txt") $(cat "$T/examples.txt")"
# DaemonSets on a node pool: their pods first, each to its node.
"$BIN" serve --replay --cluster "$2/daemonsets/pools.yaml" --workload "$2/daemonsets/workload.yaml" > "$T/ds.txt" 2> "$T/err.txt" \
  && [ "$(grep -c '^replay: 1 nodes, 4 pods to schedule (2 of DaemonSets, first): 3 bound, 1 pending$' "$T/ds.txt")" = 2 ] \
  && [ "$(grep -c '^equal to place: 4/4$' "$T/ds.txt")" = 2 ] && ok || bad "replay of DaemonSets: $(cat "$T/err.txt") $(cat "$T/ds.txt")"

# 2. A server from a snapshot file.
"$BIN" serve --listen 127.0.0.1:0 --snapshot "$EX/replay/nodes.yaml" --prices "$2/pools.yaml" > "$T/out.txt" 2> "$T/serve.txt" &
pid=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$T/serve.txt")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] && ok || bad "serve did not start: $(cat "$T/serve.txt")"
U="http://127.0.0.1:$port"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/healthz")" = 200 ] && ok || bad "healthz"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/readyz")" = 200 ] && ok || bad "readyz after --snapshot"
pod='{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":"4"},"limits":{"nvidia.com/gpu":"4"}}}]}}'
curl -s -H 'Content-Type: application/json' -d "{\"Pod\":$pod,\"Nodes\":null,\"NodeNames\":[\"h100-a\",\"a100-a\",\"l4-a\"]}" "$U/filter" > "$T/filter.json"
grep -q '"NodeNames":\["h100-a","a100-a"\]' "$T/filter.json" && grep -q '"l4-a":"node(s) had untolerated taint {workload-type: inference}"' "$T/filter.json" \
  && ok || bad "filter: $(cat "$T/filter.json")"
curl -s -H 'Content-Type: application/json' -d "{\"Pod\":$pod,\"Nodes\":null,\"NodeNames\":[\"h100-a\",\"a100-a\"]}" "$U/prioritize" > "$T/prio.json"
grep -q '"Score":10' "$T/prio.json" && grep -q '"Score":0' "$T/prio.json" && ok || bad "prioritize: $(cat "$T/prio.json")"
code=$(curl -s -o "$T/bad.txt" -w '%{http_code}' -H 'Content-Type: application/json' -d '{"Pod": 7}' "$U/filter")
[ "$code" = 400 ] && [ "$(wc -l < "$T/bad.txt")" = 1 ] && grep -q 'Pod' "$T/bad.txt" && ok || bad "bad body: $code $(cat "$T/bad.txt")"
curl -s "$U/metrics" > "$T/metrics.txt"
grep -q '^gpufleet_node_gpu_capacity_milli{node="h100-a"' "$T/metrics.txt" && grep -q '^gpufleet_http_requests_total{verb="filter",code="400"} 1' "$T/metrics.txt" \
  && ok || bad "metrics: $(grep -c . "$T/metrics.txt") lines"
if command -v promtool > /dev/null; then promtool check metrics < "$T/metrics.txt" > "$T/promtool.txt" 2>&1 && ok || bad "promtool: $(cat "$T/promtool.txt")"; fi
# KEDA metrics-api: an observation, then the recommendation.
curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
  -d "{\"time_s\": $(date +%s), \"request_rate_rps\": 10, \"num_requests_waiting\": 0, \"num_requests_running\": 4, \"current_replicas\": 1}" \
  "$U/v1/services/serving/chat/observations" > "$T/obs.txt"
case "$(cat "$T/obs.txt")" in 200|204) ok ;; *) bad "observation: $(cat "$T/obs.txt")" ;; esac
# 10 requests/s at 4 per replica: ceil(10 / 4) = 3 replicas.
curl -s "$U/v1/services/serving/chat/scale?targetRequestRatePerReplica=4" > "$T/scale.json"
grep -q '"desiredReplicas": *3' "$T/scale.json" && ok || bad "scale: $(cat "$T/scale.json")"
# A second server on the same port is refused (no silent port sharing).
"$BIN" serve --listen "127.0.0.1:$port" -q > /dev/null 2> "$T/second.txt"
rc=$?
[ "$rc" = 2 ] && grep -q "cannot listen on 127.0.0.1:$port" "$T/second.txt" && ok || bad "second server on port $port: exit $rc $(cat "$T/second.txt")"
kill -TERM $pid
wait $pid && ok || bad "serve exited $? on SIGTERM"
grep -q 'gpufleet serve: stopped' "$T/serve.txt" && ok || bad "no graceful stop: $(cat "$T/serve.txt")"

# 3. Bad options and inputs: exit 2, one line.
expect2() { local what="$1"; shift; "$BIN" "$@" > /dev/null 2> "$T/e.txt"; local rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < "$T/e.txt")" = 1 ] && ok || bad "$what: exit $rc: $(cat "$T/e.txt")"; }
expect2 "tls cert alone" serve --tls-cert "$T/x.pem"
expect2 "bad listen" serve --listen 127.0.0.1:99999
expect2 "bad listen host" serve --listen 203.0.113.7:0
expect2 "kubeconfig and in-cluster" serve --kubeconfig "$T/k" --in-cluster
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: [x]}\n' > "$T/bad.yaml"
expect2 "bad snapshot" serve --listen 127.0.0.1:0 --snapshot "$T/bad.yaml"
expect2 "replay without cluster" serve --replay
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n' > "$T/deploy.yaml"
expect2 "replay of a Deployment without a template" serve --replay --cluster "$EX/replay/nodes.yaml" --workload "$T/deploy.yaml"
grep -q 'deploy.yaml:' "$T/e.txt" && ok || bad "Deployment without a template: no file in $(cat "$T/e.txt")"
# Gangs are refused, naming one.
printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec:\n  containers: [{name: c}]\n' > "$T/gang.yaml"
expect2 "replay of a gang" serve --replay --cluster "$EX/replay/nodes.yaml" --workload "$T/gang.yaml"
grep -q 'PodGroup ml/g is a gang' "$T/e.txt" && ok || bad "gang: $(cat "$T/e.txt")"
# Replay with nothing pending ends at once (no server left waiting).
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: default, uid: u-r}\nspec:\n  nodeName: h100-a\n  containers: [{name: c}]\n' > "$T/bound.yaml"
timeout 20 "$BIN" serve --replay --cluster "$EX/replay/nodes.yaml" --workload "$T/bound.yaml" > "$T/r0.txt" 2>&1 \
  && grep -q '0 pods to schedule' "$T/r0.txt" && ok || bad "replay with nothing pending: $(cat "$T/r0.txt")"
# Node pools are nodes for place and --replay, not for a server whose nodes come from the API server.
timeout 10 "$BIN" serve --listen 127.0.0.1:0 -q --cluster-config "$2/mig-h100.yaml" > /dev/null 2> "$T/e.txt"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < "$T/e.txt")" = 1 ] && grep -q 'mig-h100.yaml: a gpufleet NodePoolSet' "$T/e.txt" && ok || bad "cluster-config pools: exit $rc: $(cat "$T/e.txt")"
# A snapshot file that place refuses (a node twice) is refused, naming the file.
cat "$EX/replay/nodes.yaml" "$EX/replay/nodes.yaml" > "$T/dup.yaml"
expect2 "duplicate nodes" serve --listen 127.0.0.1:0 --snapshot "$T/dup.yaml"
grep -q 'dup.yaml:' "$T/e.txt" && ok || bad "duplicate nodes: no file in $(cat "$T/e.txt")"
finish
