#!/usr/bin/env bash
# Errors that name what the user gave, through the real CLI: a file a workload names (trace, step
# profile, Kubernetes objects) at the workload's file, line, column and field, with the named file's
# own position when a row of it is bad; "no nodes" naming the option and file given; a kubeconfig's
# CA at the kubeconfig's field; a second Pod with one metadata.uid; and place -q silencing warnings.
# Each: exit 2 and exactly one stderr line.
set -u
BIN="$1"
EXAMPLES="$2"
source "$(dirname "$0")/common.sh"

# expect_error NAME EXPECTED_LINE ARGS...: exit 2, stderr exactly "gpufleet: error: EXPECTED_LINE".
expect_error() {
  local name="$1" want="gpufleet: error: $2"
  shift 2
  timeout 20 "$BIN" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2"
  [ "$(cat "$T/err.txt")" = "$want" ] && ok || bad "$name: stderr is '$(cat "$T/err.txt")', want '$want'"
}

POOLS="$EXAMPLES/serving/pools.yaml"
# workload FILE LINES...: a one-service workload whose inference section ends with LINES (at line 14 on).
workload() {
  local file="$1"
  shift
  {
    printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nservices:\n- name: chat\n'
    printf '  replicas: 1\n  gpus: 1\n  cpu: "3"\n  memory: 24Gi\n  pools: [l40s]\n  inference:\n'
    printf '    model: Llama-3.1-8B\n    slo: {ttftP99Seconds: 2}\n'
    printf '%s\n' "$@"
  } > "$file"
}
GEN='    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 100, promptMedian: 90, outputMean: 20, outputMedian: 18}}}'

# 1. Files a workload names.
workload "$T/trace-missing.yaml" '    traffic: {trace: missing.csv}'
expect_error "traffic.trace missing" \
  "$T/trace-missing.yaml:14:22: field 'services[0].inference.traffic.trace': $T/missing.csv: cannot open file: no such file" \
  simulate --pools "$POOLS" --workload "$T/trace-missing.yaml"
mkdir -p "$T/adir"
workload "$T/trace-dir.yaml" '    traffic: {trace: adir}'
expect_error "traffic.trace a directory" \
  "$T/trace-dir.yaml:14:22: field 'services[0].inference.traffic.trace': $T/adir: is a directory, expected a file" \
  simulate --pools "$POOLS" --workload "$T/trace-dir.yaml"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,x,1\n' > "$T/bad-trace.csv"
workload "$T/trace-row.yaml" '    traffic: {trace: bad-trace.csv}'
"$BIN" simulate --pools "$POOLS" --workload "$T/trace-row.yaml" > /dev/null 2> "$T/err.txt"
rc=$?
[ "$rc" = 2 ] && ok || bad "traffic.trace bad row: exit $rc, want 2"
grep -qx "gpufleet: error: $T/trace-row.yaml:14:22: field 'services\[0\].inference.traffic.trace': $T/bad-trace.csv:3:[0-9]*: field 'ContextTokens': .*" "$T/err.txt" \
  && [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "traffic.trace bad row: $(cat "$T/err.txt")"
workload "$T/from-trace.yaml" \
  '    traffic: {generate: {meanRatePerSecond: 1, tokens: {fromTrace: bad-trace.csv}}}'
"$BIN" simulate --pools "$POOLS" --workload "$T/from-trace.yaml" > /dev/null 2> "$T/err.txt"
rc=$?
[ "$rc" = 2 ] && ok || bad "tokens.fromTrace bad row: exit $rc, want 2"
grep -qx "gpufleet: error: $T/from-trace.yaml:14:[0-9]*: field 'services\[0\].inference.traffic.generate.tokens.fromTrace': $T/bad-trace.csv:3:[0-9]*: field 'ContextTokens': .*" "$T/err.txt" \
  && [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "tokens.fromTrace bad row: $(cat "$T/err.txt")"
printf 'num_seqs,tokens,step_s\n1,100,0.01\n0,200,0.02\n' > "$T/profile.csv"
workload "$T/profile-row.yaml" '    stepProfile: profile.csv' "$GEN"
expect_error "stepProfile bad row" \
  "$T/profile-row.yaml:14:18: field 'services[0].inference.stepProfile': $T/profile.csv:3:1: field 'num_seqs': 0 is out of range [1, 1048576]" \
  simulate --pools "$POOLS" --workload "$T/profile-row.yaml"
workload "$T/profile-missing.yaml" '    stepProfile: nope.csv' "$GEN"
expect_error "stepProfile missing" \
  "$T/profile-missing.yaml:14:18: field 'services[0].inference.stepProfile': $T/nope.csv: cannot open file: no such file" \
  simulate --pools "$POOLS" --workload "$T/profile-missing.yaml"
workload "$T/hpa-missing.yaml" "$GEN" '    autoscaler: {kubernetes: hpa.yaml}'
expect_error "autoscaler.kubernetes missing" \
  "$T/hpa-missing.yaml:15:30: field 'services[0].inference.autoscaler.kubernetes': $T/hpa.yaml: no such file or directory" \
  simulate --pools "$POOLS" --workload "$T/hpa-missing.yaml"
printf 'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: chat}\nspec:\n  minReplicas: x\n' > "$T/hpa-bad.yaml"
workload "$T/hpa-row.yaml" "$GEN" '    autoscaler: {kubernetes: hpa-bad.yaml}'
expect_error "autoscaler.kubernetes bad object" \
  "$T/hpa-row.yaml:15:30: field 'services[0].inference.autoscaler.kubernetes': $T/hpa-bad.yaml:5:3: field 'spec.scaleTargetRef': required field is missing" \
  simulate --pools "$POOLS" --workload "$T/hpa-row.yaml"
{
  printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nservices:\n- name: chat\n  cpu: "3"\n'
  printf '  memory: 24Gi\n  pools: [l40s]\n  inference:\n    deployment: adir\n%s\n' "$GEN"
} > "$T/deployment-dir.yaml"
expect_error "inference.deployment a directory" \
  "$T/deployment-dir.yaml:10:17: field 'services[0].inference.deployment': $T/adir: directory has no *.yaml, *.yml or *.json file" \
  simulate --pools "$POOLS" --workload "$T/deployment-dir.yaml"
printf 'apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n  resourceGroups: x\n' > "$T/bad-cq.yaml"
cp "$EXAMPLES/queues/flavors.yaml" "$T/flavors.yaml"
printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nqueues:\n  objects: [flavors.yaml, bad-cq.yaml]\n' > "$T/queues.yaml"
expect_error "queues.objects bad object" \
  "$T/queues.yaml:5:27: field 'queues.objects[1]': $T/bad-cq.yaml:6:19: field 'spec.resourceGroups': expected a list, got a scalar" \
  simulate --pools "$EXAMPLES/queues/simulate/pools.yaml" --workload "$T/queues.yaml"

# 2. No nodes: the option and the file given.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n' > "$T/no-nodes.yaml"
expect_error "place: no nodes" \
  "--cluster $T/no-nodes.yaml: no nodes (give Node objects or a gpufleet NodePoolSet file)" place --cluster "$T/no-nodes.yaml"
expect_error "serve --snapshot: no nodes" \
  "--snapshot $T/no-nodes.yaml: no nodes (give Node objects or a gpufleet NodePoolSet file)" \
  serve --snapshot "$T/no-nodes.yaml" --listen 127.0.0.1:0
expect_error "serve --replay: no nodes" \
  "--cluster $T/no-nodes.yaml: no nodes (give Node objects or a gpufleet NodePoolSet file)" \
  serve --replay --cluster "$T/no-nodes.yaml"

# 3. A kubeconfig's CA that does not load: at the kubeconfig's field, with the CA file.
printf 'not a certificate\n' > "$T/bad-ca.crt"
kubeconfig() {
  printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n'
  printf 'users: [{name: u, user: {token: t}}]\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n%s\n' "$1"
}
kubeconfig '    certificate-authority: bad-ca.crt' > "$T/kc.yaml"
expect_error "kubeconfig certificate-authority" \
  "$T/kc.yaml:10:28: field 'clusters[0].cluster.certificate-authority': $T/bad-ca.crt: no PEM certificate in the CA bundle" \
  serve --kubeconfig "$T/kc.yaml" --listen 127.0.0.1:0
kubeconfig '    certificate-authority: gone.crt' > "$T/kc-missing.yaml"
expect_error "kubeconfig certificate-authority missing" \
  "$T/kc-missing.yaml:10:28: field 'clusters[0].cluster.certificate-authority': $T/gone.crt: cannot open file: no such file" \
  serve --kubeconfig "$T/kc-missing.yaml" --listen 127.0.0.1:0
kubeconfig '    certificate-authority-data: Q0E=' > "$T/kc-data.yaml"
expect_error "kubeconfig certificate-authority-data" \
  "$T/kc-data.yaml:10:33: field 'clusters[0].cluster.certificate-authority-data': no PEM certificate in the CA bundle" \
  serve --kubeconfig "$T/kc-data.yaml" --listen 127.0.0.1:0

# 4. place -q: no warning lines (they stay in the JSON); without -q, they are there.
cat > "$T/cluster.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Service
metadata: {name: s}
YAML
"$BIN" place --cluster "$T/cluster.yaml" -q --json "$T/place.json" > /dev/null 2> "$T/err.txt" && ok || bad "place -q failed: $(cat "$T/err.txt")"
[ ! -s "$T/err.txt" ] && ok || bad "place -q printed: $(cat "$T/err.txt")"
grep -q "kind not modelled" "$T/place.json" && ok || bad "place -q: the warning is not in the JSON"
"$BIN" place --cluster "$T/cluster.yaml" > /dev/null 2> "$T/err.txt" && ok || bad "place failed: $(cat "$T/err.txt")"
grep -q "^gpufleet: warning: .*kind not modelled" "$T/err.txt" && ok || bad "place without -q: no warning: $(cat "$T/err.txt")"

# 5. Two Pods with one metadata.uid: the second refused at its metadata.uid.
cat > "$T/pods.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: a, uid: 6f1c2e8a-0000-4000-8000-000000000001}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, uid: 6f1c2e8a-0000-4000-8000-000000000001}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
YAML
want="$T/pods.yaml:8:26: field 'metadata.uid': uid '6f1c2e8a-0000-4000-8000-000000000001' is already that of pod default/a (the API server gives every object its own)"
expect_error "place: duplicate uid" "$want" place --cluster "$T/cluster.yaml" --workload "$T/pods.yaml"
expect_error "serve --replay: duplicate uid" "$want" serve --replay --cluster "$T/cluster.yaml" --workload "$T/pods.yaml"
cat "$T/cluster.yaml" > "$T/snapshot.yaml"
printf -- '---\n' >> "$T/snapshot.yaml"
cat "$T/pods.yaml" >> "$T/snapshot.yaml"
expect_error "serve --snapshot: duplicate uid" \
  "$T/snapshot.yaml:21:26: field 'metadata.uid': uid '6f1c2e8a-0000-4000-8000-000000000001' is already that of pod default/a (the API server gives every object its own)" \
  serve --snapshot "$T/snapshot.yaml" --listen 127.0.0.1:0

# inference.disaggregation: a bad link name, and a role without GPUs (docs/disaggregated-serving.md).
disagg() {
  local file="$1" link="$2" prefill="$3"
  {
    printf 'apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 600\nservices:\n- name: rag\n  inference:\n'
    printf '    model: Llama-3.1-8B\n%s\n    disaggregation:\n' "$GEN"
    printf '      kvTransferLink: %s\n      prefill: %s\n      decode: {gpus: 1, pools: [l40s]}\n' "$link" "$prefill"
  } > "$file"
}
disagg "$T/disagg-link.yaml" infiniband '{gpus: 1, pools: [l4]}'
expect_error "disaggregation: unknown link" \
  "$T/disagg-link.yaml:10:23: field 'services[0].inference.disaggregation.kvTransferLink': unknown link 'infiniband' (expected nvlink, rdma, tcp, or {gbps, latencyMs, perGpu})" \
  simulate --pools "$POOLS" --workload "$T/disagg-link.yaml"
disagg "$T/disagg-gpus.yaml" tcp '{replicas: 2, pools: [l4]}'
expect_error "disaggregation: a role without GPUs" \
  "$T/disagg-gpus.yaml:11:16: field 'services[0].inference.disaggregation.prefill': gpus is required: each role's pods request their own GPUs (= its tensorParallelSize)" \
  simulate --pools "$POOLS" --workload "$T/disagg-gpus.yaml"
finish
