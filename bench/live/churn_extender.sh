#!/usr/bin/env bash
# The extender under churn: `gpufleet serve` lists and watches a fake API server
# (build/tests/fake_apiserver) holding NODES 8-GPU nodes (two pods bound on each) while the fake
# streams EVENTS watch events a second (pods created, bound by another scheduler, finished; nodes
# added and removed). wrk drives VERB with kube-scheduler's sample of the nodes (SAMPLE node names, as
# percentageOfNodesToScore sends them) over CONNECTIONS connections for SECONDS, and prints
# requests/s, p50/p90/p99 latency and non-2xx answers; then the events the fake sent, the watch events
# the server applied (gpufleet_cache_watch_events_total) and the server's RSS,
# sampled every 10 s (flat memory: the same at the end as after warm-up), and the CPU seconds the
# server, the fake API server and wrk used while wrk ran, per request.
#
#   bench/live/churn_extender.sh GPUFLEET FAKE_APISERVER [NODES] [EVENTS] [VERB] [SECONDS] [CONNECTIONS] [SAMPLE]
# Example: bench/live/churn_extender.sh build/gpufleet build/tests/fake_apiserver 10000 100 filter 60 16 1000
set -euo pipefail
here=$(dirname "$(realpath "$0")")
bin=$(realpath "$1"); fake=$(realpath "$2"); nodes=${3:-10000}; events=${4:-100}; verb=${5:-filter}
seconds=${6:-60}; conns=${7:-16}; sample=${8:-1000}
command -v wrk >/dev/null || { echo "wrk is not installed (Debian package wrk)"; exit 77; }
dir=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
port_of() { for _ in $(seq 600); do p=$(sed -n "$2" "$1"); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.1; done; echo "no port in $1" >&2; exit 1; }

"$fake" --nodes "$nodes" --pods-per-node 2 --events-per-second "$events" --seed 1 > "$dir/api.log" 2>&1 & pids+=($!)
api_port=$(port_of "$dir/api.log" 's/^fake-apiserver listening on port \([0-9]*\)$/\1/p')
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: f\n  cluster: {server: "http://127.0.0.1:%s"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: f\n  context: {cluster: f, user: u}\ncurrent-context: f\n' "$api_port" > "$dir/kubeconfig"
"$bin" serve --listen 127.0.0.1:0 --kubeconfig "$dir/kubeconfig" --threads $((conns + 8)) > "$dir/serve.log" 2>&1 & pid=$!; pids+=($pid)
port=$(port_of "$dir/serve.log" 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\) .*/\1/p')
for _ in $(seq 1200); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done

pod='{"kind":"Pod","apiVersion":"v1","metadata":{"name":"incoming","namespace":"default","uid":"u-in"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}'
awk -v n="$sample" -v pod="$pod" 'BEGIN { printf "{\"Pod\":%s,\"Nodes\":null,\"NodeNames\":[", pod; for (i = 0; i < n; i++) printf "%s\"node-%d\"", (i ? "," : ""), i; printf "]}" }' > "$dir/body.json"
export WRK_BODY="$dir/body.json"
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/body.json" "http://127.0.0.1:$port/$verb"  # warm-up
rss() { awk '/VmRSS/ {print $2 / 1024 " MiB"}' /proc/$pid/status; }
stats() { curl -sf "http://127.0.0.1:$api_port/fake/stats"; }
echo "nodes $nodes, $events events/s, verb $verb with $sample node names, $seconds s, $conns connections; RSS after warm-up $(rss); fake $(stats)"
( for _ in $(seq $((seconds / 10))); do sleep 10; echo "  RSS $(rss)"; done ) & sampler=$!
cpu() { awk '{ printf "%.2f", ($14 + $15) / '"$(getconf CLK_TCK)"' }' /proc/$1/stat; }  # user + system seconds
fake_pid=${pids[0]}; serve_cpu0=$(cpu "$pid"); fake_cpu0=$(cpu "$fake_pid")
TIMEFORMAT='%U %S'
{ time wrk -t"$(( conns < 2 ? conns : 2 ))" -c"$conns" -d"${seconds}s" -s "$here/post_body.lua" "http://127.0.0.1:$port/$verb" > "$dir/wrk.out"; } 2> "$dir/wrk.time"
tail -1 "$dir/wrk.out"
serve_cpu1=$(cpu "$pid"); fake_cpu1=$(cpu "$fake_pid")
wait $sampler
# CPU seconds each process used while wrk ran, and per request: requests/s x CPU per request of
# the three together cannot pass the machine's cores.
awk -v r="$(awk '/requests in/ {print $1}' "$dir/wrk.out")" -v s0="$serve_cpu0" -v s1="$serve_cpu1" -v f0="$fake_cpu0" -v f1="$fake_cpu1" \
    -v w="$(awk '{print $1 + $2}' "$dir/wrk.time")" 'BEGIN { s = s1 - s0; f = f1 - f0
  printf "CPU s while wrk ran: serve %.1f, fake API server %.1f, wrk %.1f; per request: serve %.0f us, all three %.0f us (%d requests)\n", s, f, w, s / r * 1e6, (s + f + w) / r * 1e6, r }'
echo "fake after: $(stats)"
curl -sf "http://127.0.0.1:$port/metrics" | grep -E '^gpufleet_(cache_watch_events_total|snapshot_generation|cache_full_builds_total|cache_scheduler_setups_total|cache_relists_total|cache_lists_total)' | head -20 || true
curl -sf "http://127.0.0.1:$port/metrics" | grep -E '^gpufleet_(extender_request_duration_seconds_bucket\{verb="'"$verb"'"|cache_event_lag_seconds_bucket)' || true
