#!/usr/bin/env bash
# End-to-end checks of `gpufleet place`: the examples run, the JSON has the documented keys and is
# byte-identical between runs, and bad input gives exit 2, one error line naming file, line, column
# and field, and no output file.
set -u
BIN="$1"
EXAMPLES="$2"
source "$(dirname "$0")/common.sh"

# 1. The examples: listing and summary on stdout, one warning per skipped kind on stderr.
if "$BIN" place --cluster "$EXAMPLES/pools.yaml" "$EXAMPLES/mig-h100.yaml" "$EXAMPLES/time-slicing.yaml" \
     --workload "$EXAMPLES/workloads.yaml" "$EXAMPLES/priorityclasses.yaml" "$EXAMPLES/quota-team.yaml" \
     --json "$T/a.json" > "$T/out.txt" 2> "$T/err.txt"; then ok; else bad "examples run exited $?: $(cat "$T/err.txt")"; fi
grep -q ' placed, .* pending, .* rejected by quota' "$T/out.txt" && ok || bad "no summary line: $(tail -2 "$T/out.txt")"
grep -q 'skipped 1 object(s) of 1 unmodelled kind(s)' "$T/out.txt" && ok || bad "skipped kinds not counted in the summary"
[ "$(grep -c 'warning: skipped' "$T/err.txt")" = 1 ] && grep -q 'Namespace' "$T/err.txt" && ok || bad "want one warning for the Namespace kind: $(cat "$T/err.txt")"
for key in '"placements": \[' '"pending": \[' '"quota_rejected": \[' '"pod": "ml-training/llm-pretrain-0"' '"mig": ' '"preempted": \['; do
  grep -q "$key" "$T/a.json" && ok || bad "JSON lacks $key"
done
grep -q 'nodes are available: ' "$T/a.json" && ok || bad "no kube-style pending reason in JSON"
"$BIN" place --cluster "$EXAMPLES" --workload "$EXAMPLES" -q --json "$T/b.json" > /dev/null 2>&1 && ok || bad "directory inputs failed"
"$BIN" place --cluster "$EXAMPLES" --workload "$EXAMPLES" -q --json "$T/c.json" > /dev/null 2>&1
cmp -s "$T/b.json" "$T/c.json" && ok || bad "JSON differs between identical runs"

# 2. Bad input.
cat > "$T/nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {nvidia.com/gpu.product: NVIDIA-L4}}
status:
  allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1", pods: "110"}
YAML
pod_yaml() {  # requests
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: %s\n' "$1"
}
expect_bad() {  # name, expected substring, workload file
  local name="$1" want="$2" workload="$3"
  rm -f "$T/out.json"
  echo keep > "$T/old.json"
  "$BIN" place --cluster "$T/nodes.yaml" --workload "$workload" --json "$T/out.json" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: stderr should be one line: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: stderr lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$name: left an output file"
  "$BIN" place --cluster "$T/nodes.yaml" --workload "$workload" --json "$T/old.json" > /dev/null 2>&1
  [ "$(cat "$T/old.json")" = keep ] && ok || bad "$name: clobbered an existing output"
}
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p\nspec: {}\n' > "$T/syntax.yaml"
expect_bad "YAML syntax error" "syntax.yaml:4:" "$T/syntax.yaml"
pod_yaml '{cpu: 1x5, memory: 1Gi}' > "$T/quantity.yaml"
expect_bad "malformed quantity" "quantity.yaml:8:" "$T/quantity.yaml"
grep -q 'containers\[0\].resources.requests.cpu' "$T/err.txt" && ok || bad "malformed quantity: field not named: $(cat "$T/err.txt")"
pod_yaml '{cpu: "-1", memory: 1Gi}' > "$T/negative.yaml"
expect_bad "negative request" "negative.yaml:8:" "$T/negative.yaml"
pod_yaml '{cpu: "1", nvidia.com/gpus: 1}' > "$T/gpus.yaml"
expect_bad "unmodelled nvidia.com resource" "gpus.yaml:8:45: field 'spec.containers[0].resources.requests.nvidia.com/gpus': unknown resource 'nvidia.com/gpus'" "$T/gpus.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resource:\n      requests: {nvidia.com/gpu: 1}\n' > "$T/resource.yaml"
expect_bad "container key resource" "resource.yaml:7:5: field 'spec.containers[0].resource': unknown key 'resource': did you mean 'resources'?" "$T/resource.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      request: {nvidia.com/gpu: 1}\n' > "$T/request.yaml"
expect_bad "unknown key in resources" "request.yaml:8:7: field 'spec.containers[0].resources.request': unknown key 'request' (expected requests, limits, claims)" "$T/request.yaml"
expect_bad "missing file" "nope.yaml" "$T/nope.yaml"
printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {requests.nvidia.com/gpu: "1"}}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {cpu: "1"}}\n' > "$T/dupquota.yaml"
expect_bad "duplicate ResourceQuota" "dupquota.yaml:8:18: field 'metadata.name': duplicate ResourceQuota" "$T/dupquota.yaml"
printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {requests.nvidia.com/gpu: "1"}\n  scopes: [BestEffort, Platinum]\n' > "$T/scope.yaml"
expect_bad "unknown quota scope" "scope.yaml:6:24: field 'spec.scopes[1]': unsupported scope 'Platinum'" "$T/scope.yaml"
printf 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: urgent}\nvalue: 2000000000\n' > "$T/pc.yaml"
expect_bad "PriorityClass above the user maximum" "pc.yaml:4:8: field 'value': value 2000000000 is above 1000000000" "$T/pc.yaml"
printf 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {containers: [{name: c}]}\n' > "$T/ds.yaml"
expect_bad "DaemonSet selector not matching its template" "ds.yaml:7:24: field 'spec.template.metadata.labels': Invalid value: \`selector\` does not match template \`labels\`" "$T/ds.yaml"
mkdir -p "$T/loop" && ln -s self.yaml "$T/loop/self.yaml"
expect_bad "symlink loop in a directory" "self.yaml: cannot read" "$T/loop"

# Bad cluster input (node pools): the same checks, with the error at the pool file's line.
expect_bad_cluster() {  # name, expected substring, cluster paths...
  local name="$1" want="$2"
  shift 2
  rm -f "$T/out.json"
  "$BIN" place --cluster "$@" --json "$T/out.json" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2"
  [ "$(wc -l < "$T/err.txt")" = 1 ] && ok || bad "$name: stderr should be one line: $(cat "$T/err.txt")"
  grep -qF -- "$want" "$T/err.txt" && ok || bad "$name: stderr lacks '$want': $(cat "$T/err.txt")"
  [ ! -e "$T/out.json" ] && ok || bad "$name: left an output file"
}
pool_yaml() {  # pool name, extra pool lines
  printf 'apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools:\n- name: %s\n  gpu: {model: A10G, count: 1}\n  cpu: "8"\n  memory: 32Gi\n  nodes: 1\n  prices: {onDemand: 1.0}\n%b' "$1" "$2"
}
pool_yaml dev-a10g '' > "$T/dupA.yaml"
{ echo '# the same pool in another file'; pool_yaml dev-a10g ''; } > "$T/dupB.yaml"
expect_bad_cluster "pool in two files" "dupB.yaml:5:9: field 'pools[0].name': node name 'dev-a10g-0' of pool dev-a10g is already a node of pool dev-a10g in $T/dupA.yaml" "$T/dupA.yaml" "$T/dupB.yaml"

pool_yaml dev-a10g '  labels: {kubernetes.io/hostname: x}\n' > "$T/hostname.yaml"
expect_bad_cluster "pool giving the hostname label" "hostname.yaml:10:36: field 'pools[0].labels.kubernetes.io/hostname': label kubernetes.io/hostname is set by gpufleet to each node's name" "$T/hostname.yaml"

printf 'version: v1\nmig-configs:\n  all-1g.10gb:\n  - {devices: all, mig-enabled: true, mig-devices: {1g.10gb: 7}}\n' > "$T/mig.yaml"
pool_yaml inference-l4 '  labels: {nvidia.com/mig.config: nosuch}\n' > "$T/nosuchmig.yaml"
expect_bad_cluster "pool label naming a missing mig-parted config" "nosuchmig.yaml:10:35: field 'pools[0].labels.nvidia.com/mig.config': node inference-l4-0: mig-parted config 'nosuch' is not among the inputs" "$T/nosuchmig.yaml" "$T/mig.yaml"

# A quota on a resource no pod is charged for: accepted, as Kubernetes does, with a warning.
printf 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {requests.cpuu: "1"}\n' > "$T/cpuu.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/cpuu.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 0 ] && grep -qF "warning: ResourceQuota spec.hard resource 'requests.cpuu' is not enforced by gpufleet" "$T/err.txt" && ok || bad "unknown quota resource: $(cat "$T/err.txt")"

# An empty workload file: exit 0 with a warning naming it, also when it is the whole workload.
: > "$T/empty.yaml"
printf -- '---\n' > "$T/dashes.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/empty.yaml" "$T/dashes.yaml" > "$T/empty.out" 2> "$T/err.txt"
[ $? = 0 ] && ok || bad "empty workload: exit $?: $(cat "$T/err.txt")"
grep -qF "warning: $T/empty.yaml: no objects" "$T/err.txt" && grep -qF "warning: $T/dashes.yaml: no objects" "$T/err.txt" && ok || bad "empty workload: no warning naming each file: $(cat "$T/err.txt")"
grep -q '^0 placed' "$T/empty.out" && ok || bad "empty workload: $(cat "$T/empty.out")"

# 3. A name that holds a NUL byte: JSON still valid, no pod lost in the listing.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: "a\\0b"}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: zz}\nspec: {containers: [{name: c}]}\n' > "$T/names.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/names.yaml" --json "$T/names.json" > "$T/names.out" 2> "$T/err.txt"
[ $? = 0 ] && ok || bad "NUL in a name: exit $?: $(cat "$T/err.txt")"
grep -q '"default/a\\u0000b"' "$T/names.json" && ok || bad "NUL in a name: JSON lacks the escaped name: $(cat "$T/names.json")"
grep -q 'default/zz' "$T/names.out" && grep -q '^2 placed' "$T/names.out" && ok || bad "NUL in a name: the listing lost pods: $(cat -v "$T/names.out")"
# Text that is not UTF-8 (a Latin-1 name) is refused as kubectl's YAML reader refuses it, at the byte.
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: "caf\xe9"}\nspec: {containers: [{name: c}]}\n' > "$T/latin.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/latin.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF "latin.yaml:3:22: YAML syntax error: invalid trailing UTF-8 octet" "$T/err.txt" && ok || bad "Latin-1 name: $(cat -v "$T/err.txt")"

# 4. A template's spec.nodeName pins its pods.
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 1\n  template:\n    spec:\n      nodeName: ghost\n      containers: [{name: c}]\n' > "$T/pinned.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/pinned.yaml" > "$T/pinned.out" 2>&1
grep -q 'default/d-0  pending: node "ghost" not found' "$T/pinned.out" && ok || bad "template nodeName ignored: $(cat "$T/pinned.out")"
"$BIN" place --cluster "$T/nodes.yaml" --policy nope > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q "unknown policy 'nope'" "$T/err.txt" && ok || bad "unknown policy: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --policy fgd,random > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--policy: place takes one policy, got 'fgd,random'" "$T/err.txt" && ok || bad "two policies: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --seed -1 > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--seed: -1 is negative" "$T/err.txt" && ok || bad "negative --seed: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --json "$T/no-dir/x.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/no-dir/x.json: cannot write there" "$T/err.txt" && ok || bad "unwritable --json: $(cat "$T/err.txt")"
# An output on an input file, or among the files of an input directory, would overwrite or be read
# as input: a usage error naming the option, inputs intact.
cp "$T/nodes.yaml" "$T/nodes-copy.yaml"
"$BIN" place --cluster "$T/nodes-copy.yaml" --json "$T/nodes-copy.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/nodes-copy.yaml: would overwrite the --cluster input $T/nodes-copy.yaml" "$T/err.txt" \
  && cmp -s "$T/nodes.yaml" "$T/nodes-copy.yaml" && ok || bad "--json on a --cluster file: $(cat "$T/err.txt")"
mkdir -p "$T/wl" && pod_yaml '{cpu: 1}' > "$T/wl/pod.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/wl/pod.yaml" --json "$T/wl/../wl/pod.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "would overwrite the --workload input $T/wl/pod.yaml" "$T/err.txt" && ok || bad "--json on a --workload file: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/wl" --json "$T/wl/out.json" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- "--json $T/wl/out.json: is in the --workload directory $T/wl, whose *.yaml, *.yml and *.json files are read as input" "$T/err.txt" \
  && [ ! -e "$T/wl/out.json" ] && ok || bad "--json in a --workload directory: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --workload "$T/wl" --json "$T/wl/out.txt" > /dev/null 2> "$T/err.txt"
[ $? = 0 ] && [ -s "$T/wl/out.txt" ] && ok || bad "a name the directory reader skips is a fine output: $(cat "$T/err.txt")"
"$BIN" place --workload "$T/nodes.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "missing --cluster should exit 2"
"$BIN" place --cluster "$T/quantity.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && ok || bad "a cluster without nodes should exit 2: $(cat "$T/err.txt")"

# Kueue objects and gangs (examples/queues, docs/queues.md): each bad input exits 2 at its place.
QX="$(cd "$(dirname "$0")/../../examples/queues" && pwd)"
kueue_set() {  # the example set in one file, with a sed expression applied
  for f in flavors cluster-queues local-queues jobs; do cat "$QX/$f.yaml"; printf -- '---\n'; done | sed "$1"
}
kueue_set 's/- name: a100-spot$/- name: a100-spott/' > "$T/kq-flavor.yaml"
expect_bad "kueue: unknown flavor" "field 'spec.resourceGroups[0].flavors[1].name': unknown ResourceFlavor 'a100-spott'" "$T/kq-flavor.yaml"
kueue_set 's/{name: nvidia.com\/gpu, nominalQuota: 16,/{name: nvidia.com\/gpu, nominalQuota: -16,/' > "$T/kq-negative.yaml"
expect_bad "kueue: negative quota" "nominalQuota" "$T/kq-negative.yaml"
kueue_set 's/kueue.x-k8s.io\/queue-name: training/kueue.x-k8s.io\/queue-name: nosuch/' > "$T/kq-lq.yaml"
expect_bad "kueue: missing LocalQueue" "metadata.labels.kueue.x-k8s.io/queue-name" "$T/kq-lq.yaml"
kueue_set 's/minMember: 3/minMember: 4/; s/annotations: {kueue.x-k8s.io\/podset-preferred-topology: [^}]*}/annotations: {}/' > "$T/kq-gang.yaml"
expect_bad "kueue: minMember above the members" "spec.minMember" "$T/kq-gang.yaml"
kueue_set 's/{name: cpu, nominalQuota: 384}/{name: cpu, nominalQuota: 384}\n      - {name: pods, nominalQuota: 10}/' > "$T/kq-covered.yaml"
expect_bad "kueue: quota for a resource not covered" "resource 'pods' is not in this resource group's coveredResources" "$T/kq-covered.yaml"
kueue_set 's/podset-preferred-topology: cloud.provider.com\/topology-rack/podset-preferred-topology: example.com\/nowhere/' > "$T/kq-level.yaml"
expect_bad "kueue: a topology level no Topology defines" "example.com/nowhere" "$T/kq-level.yaml"

# MPS (docs/place.md "MPS"): examples/mps places 6 one-replica pods with their share, refuses the pod
# asking for 2 replicas, and reports the node advertising 28 of 32 (warning and JSON node_warnings).
M="$EXAMPLES/mps"
if "$BIN" place --cluster "$M/device-plugin-config.yaml" "$M/nodes.yaml" --workload "$M/workload.yaml" --json "$T/mps.json" \
     > "$T/mps.txt" 2> "$T/err.txt"; then ok; else bad "mps example exited $?: $(cat "$T/err.txt")"; fi
[ "$(grep -c 'mps 1/4 (20480 MiB, 25% SMs per replica)' "$T/mps.txt")" = 6 ] && ok || bad "mps shares: $(cat "$T/mps.txt")"
grep -q 'serving/big .*pending: .*refuse more than one shared GPU replica per pod' "$T/mps.txt" && ok || bad "2-replica pod not refused: $(cat "$T/mps.txt")"
grep -qx 'gpufleet: warning: node a100-mps-1 advertises 28 nvidia.com/gpu but its labels imply 32 (8 nvidia.com/gpu.count x 4 mps replicas); placing on the advertised 28 (7 GPUs)' "$T/err.txt" && ok || bad "mismatch warning: $(cat "$T/err.txt")"
python3 - "$T/mps.json" <<'PY' && ok || bad "mps JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["node_warnings"] == [{"node": "a100-mps-1", "resource": "nvidia.com/gpu", "advertised": 28, "expected": 32, "gpus": 8,
                               "replicas": 4, "strategy": "mps", "message": d["node_warnings"][0]["message"]}], d["node_warnings"]
assert all(p["mps"] == {"replicas": 4, "pinned_device_mem_limit_mib": 20480, "active_thread_percentage": 25} for p in d["placements"])
assert d["gpu_allocation_pct"] == 10.0, d["gpu_allocation_pct"]
PY
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 2}\n  mps:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 4}\n' > "$T/both.yaml"
"$BIN" place --cluster "$T/both.yaml" "$M/nodes.yaml" --workload "$M/workload.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -q "both.yaml:7:5: field 'sharing.mps': sharing.timeSlicing and sharing.mps are mutually exclusive" "$T/err.txt" && ok || bad "time-slicing and MPS together: $(cat "$T/err.txt")"

# A field read but not modelled: one warning at its first place, and the same in the JSON.
printf 'kind: Pod\nmetadata: {name: kai}\nspec:\n  schedulerName: kai-scheduler\n  containers: [{name: c}]\n' > "$T/kai.yaml"
"$BIN" place --cluster "$M/nodes.yaml" --workload "$T/kai.yaml" --json "$T/kai.json" > /dev/null 2> "$T/err.txt"
[ $? = 0 ] && grep -q "kai.yaml:4:18: field 'spec.schedulerName': scheduler 'kai-scheduler' is not modelled (1 object(s))" "$T/err.txt" && ok \
  || bad "schedulerName warning: $(cat "$T/err.txt")"
python3 - "$T/kai.json" <<'PY' && ok || bad "not_modelled in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
[f] = d["not_modelled"]
assert (f["what"], f["objects"], f["line"], f["column"], f["field"]) == ("scheduler 'kai-scheduler'", 1, 4, 18, "spec.schedulerName"), f
assert d["placements"][0]["pod"] == "default/kai", d["placements"]
PY

# topologySpreadConstraints (PodTopologySpread): four replicas with zone maxSkew 1 on two zones of one
# node each end 2 and 2 (the second and fourth must go to the zone with fewer); a constraint on a key
# no node has leaves its pod pending with kube's reason. A bad maxSkew is refused with exit 2.
cat > "$T/spread-nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: a-0, labels: {topology.kubernetes.io/zone: a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b-0, labels: {topology.kubernetes.io/zone: b}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
YAML
cat > "$T/spread.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
---
apiVersion: v1
kind: Pod
metadata: {name: racked, labels: {app: db}}
spec:
  containers: [{name: c, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: example.com/rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: db}}}
YAML
if "$BIN" place --cluster "$T/spread-nodes.yaml" --workload "$T/spread.yaml" --json "$T/spread.json" > "$T/spread.txt" 2> "$T/err.txt"; then ok
else bad "spread run exited $?: $(cat "$T/err.txt")"; fi
! grep -q 'topologySpreadConstraints' "$T/err.txt" && ok || bad "spreading still said not modelled: $(cat "$T/err.txt")"
python3 - "$T/spread.json" <<'PY' && ok || bad "spread placements: $(cat "$T/spread.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = sorted(p["node"] for p in d["placements"] if p["pod"].startswith("default/web-"))
assert nodes == ["a-0", "a-0", "b-0", "b-0"], nodes
[pending] = d["pending"]
assert pending["pod"] == "default/racked", pending
assert "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints (missing required label)." in pending["reason"], pending
PY
sed 's/maxSkew: 1, topologyKey: topology/maxSkew: 0, topologyKey: topology/' "$T/spread.yaml" > "$T/spread-bad.yaml"
"$BIN" place --cluster "$T/spread-nodes.yaml" --workload "$T/spread-bad.yaml" > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && [ "$(wc -l < "$T/err.txt")" = 1 ] && grep -q "spread-bad.yaml:12:19: field 'spec.template.spec.topologySpreadConstraints\[0\].maxSkew': Invalid value: 0: must be greater than zero" "$T/err.txt" && ok \
  || bad "bad maxSkew: $(cat "$T/err.txt")"

# 3. DRA: a pod naming a ResourceClaimTemplate no input holds (docs/dra.md "Claims that name no
# object"), and --feature-gates (kube's syntax; an unknown gate is refused).
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\nspec:\n  containers:\n  - {name: c, image: i}\n  resourceClaims:\n  - {name: g, resourceClaimTemplateName: missing}\n' > "$T/claim.yaml"
expect_bad "missing ResourceClaimTemplate" "claim.yaml:8:42: field 'spec.resourceClaims[0].resourceClaimTemplateName': ResourceClaimTemplate 'team-a/missing' is not among the inputs" "$T/claim.yaml"
"$BIN" place --cluster "$EXAMPLES/dra/consumable-cluster.yaml" --workload "$EXAMPLES/dra/consumable-workload.yaml" --feature-gates DRAConsumableCapacity=true > "$T/cc.txt" 2> "$T/err.txt"
[ $? = 0 ] && grep -qF 'default/infer-b  -> shared-gpu-0  claim default/infer-b-gpu: gpu.example.com/shared-gpu-0/gpu-0 (memory 16Gi)' "$T/cc.txt" && [ ! -s "$T/err.txt" ] && ok \
  || bad "consumable capacity example: $(cat "$T/cc.txt" "$T/err.txt")"
"$BIN" place --cluster "$EXAMPLES/dra/consumable-cluster.yaml" --workload "$EXAMPLES/dra/consumable-workload.yaml" > /dev/null 2> "$T/err.txt"
grep -q 'warning: 1 device(s) with allowMultipleAllocations (first: gpu.example.com/shared-gpu-0/gpu-0) are allocated whole' "$T/err.txt" && ok \
  || bad "gate off: no warning: $(cat "$T/err.txt")"
"$BIN" place --cluster "$T/nodes.yaml" --feature-gates DRADeviceTaintz=true > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- '--feature-gates: unrecognized feature gate: DRADeviceTaintz' "$T/err.txt" && ok || bad "unknown feature gate: $(cat "$T/err.txt")"

# 4. DRA device taints (docs/dra.md "Device taints and tolerations"): PreferNoSchedule is no device
# taint effect and a DeviceTaintRule needs a version that has it (exit 2, one line at the field);
# DRADeviceTaints is GA and locked on (true accepted, false refused as kube refuses it); the example.
printf 'apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  nodeName: n\n  devices:\n  - name: gpu-0\n    taints: [{key: k, effect: PreferNoSchedule}]\n' > "$T/taint.yaml"
expect_bad "PreferNoSchedule device taint" "taint.yaml:10:31: field 'spec.devices[0].taints[0].effect': unknown taint effect 'PreferNoSchedule' (expected None, NoSchedule or NoExecute)" "$T/taint.yaml"
printf 'apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\nspec:\n  taint: {key: k, effect: NoSchedule}\n' > "$T/rule.yaml"
expect_bad "DeviceTaintRule version" "rule.yaml:1:13: field 'apiVersion': unsupported apiVersion 'resource.k8s.io/v1' for DeviceTaintRule" "$T/rule.yaml"
"$BIN" place --cluster "$T/nodes.yaml" --feature-gates DRADeviceTaints=false > /dev/null 2> "$T/err.txt"
[ $? = 2 ] && grep -qF -- '--feature-gates: cannot set feature gate DRADeviceTaints to false, feature is locked to true' "$T/err.txt" && ok \
  || bad "locked gate: $(cat "$T/err.txt")"
"$BIN" place --cluster "$EXAMPLES/dra/device-taints-cluster.yaml" --workload "$EXAMPLES/dra/device-taints-workload.yaml" --feature-gates DRADeviceTaints=true > "$T/dt.txt" 2> "$T/err.txt"
[ $? = 0 ] && [ ! -s "$T/err.txt" ] \
  && grep -qF 'default/inference-1  pending: resourceclaim default/inference-shared: allocated device gpu.nvidia.com/dra-h100-0/gpu-0 has untolerated taint {gpu.nvidia.com/xid: 79}' "$T/dt.txt" \
  && grep -qF 'default/gpu-diag     -> dra-h100-0  claim default/gpu-diag-gpu: gpu.nvidia.com/dra-h100-0/gpu-3' "$T/dt.txt" && ok \
  || bad "device taints example: $(cat "$T/dt.txt" "$T/err.txt")"

finish
