#!/usr/bin/env bash
# Load on `gpufleet serve`'s extender verbs with wrk (Debian package wrk): a cluster of N 8-GPU nodes
# (two pods bound on each) is posted as a snapshot; wrk then sends one verb's request (a 1-GPU pod and
# every node, as kube-scheduler sends it) for SECONDS at saturation over CONNECTIONS connections, and
# prints requests/s, the latency distribution (p50, p90, p99) and non-2xx responses; the server's RSS
# is sampled every 10 s (flat memory: the same at the end as after warm-up).
# With SLOW > 0, wrk runs twice, without and then with SLOW slow clients (each sends a request head a
# byte every 5 s, and connects again when the server closes it), and prints both lines; then the
# server gets SIGTERM with the slow clients still connected, and the script prints how long it took to
# exit (the server's default grace, 10 s; it is killed after 30 s).
#
#   bench/live/wrk_extender.sh BINARY NODES VERB [SECONDS] [CONNECTIONS] [THREADS] [MODE] [SLOW]
#     VERB: filter or prioritize; MODE: names (nodeCacheCapable, default) or nodelist
# Example: bench/live/wrk_extender.sh build/gpufleet 1000 filter 60 16 2
#          bench/live/wrk_extender.sh build/gpufleet 1000 filter 20 16 2 names 50
set -euo pipefail
here=$(dirname "$(realpath "$0")")
bin=$(realpath "$1"); nodes=$2; verb=$3; seconds=${4:-60}; conns=${5:-16}; threads=${6:-2}; mode=${7:-names}; slow=${8:-0}
command -v wrk >/dev/null || { echo "wrk is not installed (Debian package wrk)"; exit 77; }
dir=$(mktemp -d); slow_pids=()
trap 'kill $pid "${slow_pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
# The snapshot and the request body.
awk -v n="$nodes" 'BEGIN {
  printf "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":["
  for (i = 0; i < n; i++) {
    r = "{\"cpu\":\"96\",\"memory\":\"1024Gi\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"}"
    printf "%s{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-%d\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"}},\"status\":{\"allocatable\":%s,\"capacity\":%s}}", (i ? "," : ""), i, r, r
    for (k = 0; k < 2; k++)
      printf ",{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p%d-%d\",\"namespace\":\"default\",\"uid\":\"u%d-%d\"},\"spec\":{\"nodeName\":\"node-%d\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"%d\"},\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}", i, k, i, k, i, 1 + (i + k) % 4, 1 + (i + k) % 4
  }
  printf "]}\n" }' > "$dir/snapshot.json"
pod='{"kind":"Pod","apiVersion":"v1","metadata":{"name":"incoming","namespace":"default","uid":"u-in"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}'
if [ "$mode" = names ]; then
  awk -v n="$nodes" -v pod="$pod" 'BEGIN { printf "{\"Pod\":%s,\"Nodes\":null,\"NodeNames\":[", pod; for (i = 0; i < n; i++) printf "%s\"node-%d\"", (i ? "," : ""), i; printf "]}" }' > "$dir/body.json"
else
  awk -v n="$nodes" -v pod="$pod" 'BEGIN { r = "{\"cpu\":\"96\",\"memory\":\"1024Gi\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"}"
    printf "{\"Pod\":%s,\"NodeNames\":null,\"Nodes\":{\"metadata\":{},\"items\":[", pod
    for (i = 0; i < n; i++) printf "%s{\"metadata\":{\"name\":\"node-%d\",\"labels\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"}},\"status\":{\"allocatable\":%s,\"capacity\":%s}}", (i ? "," : ""), i, r, r
    printf "]}}" }' > "$dir/body.json"
fi
export WRK_BODY="$dir/body.json"
"$bin" serve --listen 127.0.0.1:0 --threads $((conns + 8)) > "$dir/serve.log" 2>&1 & pid=$!
for _ in $(seq 100); do port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/serve.log"); [ -n "$port" ] && break; sleep 0.1; done
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/snapshot.json" "http://127.0.0.1:$port/snapshot"
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/body.json" "http://127.0.0.1:$port/$verb"  # warm-up
rss() { awk '/VmRSS/ {print $2 / 1024 " MiB"}' /proc/$pid/status; }
echo "nodes $nodes, verb $verb ($mode), $seconds s, $conns connections, $threads wrk threads; RSS after warm-up $(rss)"
( for _ in $(seq $((seconds / 10))); do sleep 10; echo "  RSS $(rss)"; done ) & sampler=$!
run_wrk() { wrk -t"$threads" -c"$conns" -d"${seconds}s" -s "$here/post_body.lua" "http://127.0.0.1:$port/$verb" | tail -1; }
if [ "$slow" -eq 0 ]; then
  run_wrk
  wait $sampler
  exit 0
fi
echo "without slow clients: $(run_wrk)"
# A slow client: a request head a byte every 5 s; again on a new connection when the server closes it.
slow_client() {
  trap '' PIPE
  local head=$'POST /filter HTTP/1.1\r\nHost: gpufleet\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
  while :; do
    exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || { sleep 1; continue; }
    for ((k = 0; k < ${#head}; k++)); do printf '%s' "${head:k:1}" >&3 2>/dev/null || break; sleep 5; done
    exec 3>&- 3<&-
  done
}
for _ in $(seq "$slow"); do slow_client & slow_pids+=($!); done
sleep 2
echo "with $slow slow clients:  $(run_wrk)"
wait $sampler
start=$(date +%s.%N); kill -TERM $pid
for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
  echo "SIGTERM with $slow slow clients connected: still running after 30 s (killed)"; kill -KILL $pid
else
  echo "SIGTERM with $slow slow clients connected: exited after $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
fi
