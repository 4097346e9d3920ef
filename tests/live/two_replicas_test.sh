#!/usr/bin/env bash
# Two `gpufleet serve` replicas fed the same watch stream (tests/live/fake_apiserver.cpp: lists,
# watches and Bindings with the API server's semantics):
#  1. give byte-identical filter and prioritize answers;
#  2. race to bind one pod to different nodes: the API server takes one Binding, the other replica's
#     bind answers with the API server's 409 and counts it (gpufleet_kube_binds_total{result="conflict"});
#     the pod holds the winner's node and device annotations, never a mix;
#  3. after the watch delivers the bind, both replicas see the pod on the winner's node and answer alike;
#  4. a replica restarted lists again and answers as the one that kept running;
# and each replica's /metrics counts its lists and the watch events it applied (gpufleet_watch_*, gpufleet_cache_*).
# Usage: two_replicas_test.sh GPUFLEET FAKE_APISERVER
set -euo pipefail
bin=$1; fake=$2
command -v curl >/dev/null || { echo "curl is not installed (Debian package curl)"; exit 77; }
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Port printed by a process on its log ($1: log, $2: sed pattern).
port_of() { for _ in $(seq 100); do p=$(sed -n "$2" "$1"); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.1; done; fail "no port in $1: $(cat "$1")"; }

"$fake" --token t0k3n --nodes 4 --pending-pods 3 --pending-gpus 8 --watch-delay-seconds 3 > "$dir/api.log" 2>&1 & pids+=($!)
api_port=$(port_of "$dir/api.log" 's/^fake-apiserver listening on port \([0-9]*\)$/\1/p')
cat > "$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "http://127.0.0.1:$api_port"}
users:
- name: u
  user: {token: t0k3n}
contexts:
- name: fake
  context: {cluster: fake, user: u}
current-context: fake
EOF

start_replica() {  # $1: name; sets port_$1
  "$bin" serve --listen 127.0.0.1:0 --kubeconfig "$dir/kubeconfig" > "$dir/$1.log" 2>&1 & pids+=($!)
  eval "pid_$1=$!"
  local p; p=$(port_of "$dir/$1.log" 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\) .*/\1/p')
  eval "port_$1=$p"
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$p/readyz" && return; sleep 0.1; done
  fail "replica $1 not ready: $(cat "$dir/$1.log")"
}
start_replica a
start_replica b

pod() {  # $1: name, $2: GPUs
  printf '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"default","uid":"uid-%s"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"%s"},"limits":{"nvidia.com/gpu":"%s"}}}]}}' "$1" "$1" "$2" "$2"
}
nodes='["node-0","node-1","node-2","node-3"]'
ask() {  # $1: replica port, $2: verb, $3: pod JSON
  curl -sf -H 'Content-Type: application/json' --data-binary "{\"Pod\":$3,\"Nodes\":null,\"NodeNames\":$nodes}" "http://127.0.0.1:$1/$2"
}
same_answers() {  # both replicas, filter and prioritize, for a 1-GPU and an 8-GPU pod
  for verb in filter prioritize; do
    for g in 1 8; do
      [ "$(ask "$port_a" $verb "$(pod probe-$g $g)")" = "$(ask "$port_b" $verb "$(pod probe-$g $g)")" ] || return 1
    done
  done
}

# 1. Same stream, same answers.
same_answers || fail "replicas answer differently at start: $(ask "$port_a" filter "$(pod probe-8 8)") vs $(ask "$port_b" filter "$(pod probe-8 8)")"
[ "$(ask "$port_a" filter "$(pod probe-8 8)" | grep -o '"NodeNames":\[[^]]*\]')" = '"NodeNames":["node-0","node-1","node-2","node-3"]' ] \
  || fail "an 8-GPU pod should fit every empty node: $(ask "$port_a" filter "$(pod probe-8 8)")"

# 2. The race: replica a binds pending-0 to node-1, replica b to node-2, at once (the watch lags 3 s, so
#    neither has seen the other's bind: both ask the API server).
bind_body() { printf '{"PodName":"pending-0","PodNamespace":"default","PodUID":"uid-pending-0","Node":"%s"}' "$1"; }
curl -sf -H 'Content-Type: application/json' --data-binary "$(bind_body node-1)" "http://127.0.0.1:$port_a/bind" > "$dir/bind-a" & ca=$!
curl -sf -H 'Content-Type: application/json' --data-binary "$(bind_body node-2)" "http://127.0.0.1:$port_b/bind" > "$dir/bind-b" & cb=$!
wait "$ca" "$cb"
a=$(cat "$dir/bind-a"); b=$(cat "$dir/bind-b")
if [ "$a" = '{"Error":""}' ]; then winner=a; node=node-1; loser_answer=$b; loser_port=$port_b
elif [ "$b" = '{"Error":""}' ]; then winner=b; node=node-2; loser_answer=$a; loser_port=$port_a
else fail "neither bind succeeded: a=$a b=$b"; fi
echo "$loser_answer" | grep -q 'HTTP 409 Conflict.*pod pending-0 is already assigned to node' \
  || fail "the loser's bind should carry the API server's 409: $loser_answer"
held=$(curl -sf "http://127.0.0.1:$api_port/fake/pods/default/pending-0")
echo "$held" | grep -q "\"nodeName\":\"$node\"" || fail "the pod should be on $node (replica $winner won): $held"
echo "$held" | grep -q '"gpufleet.io/gpu-index":"0,1,2,3,4,5,6,7"' || fail "the pod should carry the winner's devices: $held"
curl -sf "http://127.0.0.1:$loser_port/metrics" | grep -qx 'gpufleet_kube_binds_total{result="conflict"} 1' \
  || fail "the loser should count one conflict: $(curl -sf "http://127.0.0.1:$loser_port/metrics" | grep kube_binds)"
[ "$(curl -sf "http://127.0.0.1:$api_port/fake/stats" | grep -o '"bindings":[0-9]*')" = '"bindings":1' ] || fail "one Binding only"

# 3. Once the watch delivers the bind, both see the winner's node full.
for _ in $(seq 100); do
  same_answers && ! ask "$port_a" filter "$(pod probe-8 8)" | grep -o '"NodeNames":\[[^]]*\]' | grep -q "\"$node\"" && break
  sleep 0.1
done
same_answers || fail "replicas disagree after the bind"
ask "$port_b" filter "$(pod probe-8 8)" | grep -o '"NodeNames":\[[^]]*\]' | grep -q "\"$node\"" && fail "$node should be full on b too"

# Its own health: one list of each kind, the bind's MODIFIED as the one Pod event, no Node event.
metrics_a=$(curl -sf "http://127.0.0.1:$port_a/metrics")
for line in 'gpufleet_watch_lists_total{kind="Node"} 1' 'gpufleet_watch_lists_total{kind="Pod"} 1' \
            'gpufleet_cache_watch_events_total{kind="Node",type="MODIFIED"} 0' \
            'gpufleet_cache_watch_events_total{kind="Pod",type="MODIFIED"} 1' \
            'gpufleet_cache_relists_total{kind="Pod"} 0' 'gpufleet_watch_synced{kind="Pod"} 1'; do
  echo "$metrics_a" | grep -qxF "$line" || fail "replica a's /metrics lacks '$line': $(echo "$metrics_a" | grep -E 'gpufleet_(watch|cache)_')"
done

# 4. Restart b: it lists again and answers as a.
kill "$pid_b"; wait "$pid_b" 2>/dev/null || true
start_replica b
same_answers || fail "the restarted replica answers differently"
echo "two replicas: same answers; race won by $winner ($node), loser got 409; restart caught up"
