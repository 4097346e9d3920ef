// `gpufleet serve --replay` on `place`'s inputs (server/replay.h): PriorityClasses order the queue,
// controllers' pods are named as place names them, a mig-parted ConfigMap sets up MIG, a
// DaemonSet's pods go first to their nodes, ResourceQuota rejections are never sent, node pools are
// nodes, and gangs are refused. Each replay runs in both nodeCacheCapable modes.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "place/place_workload.h"
#include "readers/k8s/place_inputs.h"
#include "server/replay.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

class Replay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gpufleet_replay_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // The replay of cluster and workload files in one nodeCacheCapable mode.
  static ReplayResult replay(const std::vector<std::string>& cluster, const std::vector<std::string>& workload, bool node_cache_capable) {
    ReplayOptions options;
    options.node_cache_capable = node_cache_capable;
    return run_replay(read_replay_inputs(cluster, workload), options);
  }

  // The decisions' pods, in queue order.
  static std::vector<std::string> pods(const ReplayResult& r) {
    std::vector<std::string> out;
    for (const ReplayDecision& d : r.decisions) out.push_back(d.pod);
    return out;
  }

  std::filesystem::path dir_;
};

// One node: 4 CPUs, one L4.
constexpr const char* kOneGpuNode = R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.product: NVIDIA-L4}}
status: {allocatable: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1", pods: "110"}}
)";

// Two pods that both fit only on n1's GPU: `low` first in the file, then `high` of PriorityClass
// urgent. PrioritySort puts `high` first, so it takes the GPU, in place and through the server; `low`
// may not preempt a higher pod and stays pending.
TEST_F(Replay, PriorityClassOrdersTheQueue) {
  const std::string nodes = write("nodes.yaml", kOneGpuNode);
  const std::string workload = write("workload.yaml", R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: high}
spec:
  priorityClassName: urgent
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
)");
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({nodes}, {workload}, node_cache_capable);
    ASSERT_EQ(pods(r), (std::vector<std::string>{"default/high", "default/low"}));
    EXPECT_EQ(r.decisions[0].live_node, "n1");
    EXPECT_EQ(r.decisions[0].place_node, "n1");
    EXPECT_EQ(r.decisions[0].live_gpus, std::vector<int32_t>{0});
    EXPECT_EQ(r.decisions[1].live_node, "");
    EXPECT_EQ(r.decisions[1].place_node, "");
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
    EXPECT_EQ(r.bind_calls, 1);
  }
}

// A Deployment of 3 replicas and a Job (parallelism 3, completions 2: 2 pods) make the pods place
// makes, with its names; every decision equals place's.
TEST_F(Replay, ControllersPodsAreNamedAsPlaceNamesThem) {
  const std::string nodes = write("nodes.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: a, labels: {nvidia.com/gpu.product: NVIDIA-L4}}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {nvidia.com/gpu.product: NVIDIA-L4}}
status: {allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "2", pods: "110"}}
)");
  const std::string workload = write("workload.yaml", R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: serving}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: "2", memory: 4Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 3
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        resources: {requests: {cpu: "4", memory: 8Gi, nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}
)");
  const place::PlaceResult placed = place::place_workload(io::read_place_inputs({nodes}, {workload}).input, place::PlaceOptions{});
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({nodes}, {workload}, node_cache_capable);
    EXPECT_EQ(pods(r), (std::vector<std::string>{"serving/web-0", "serving/web-1", "serving/web-2", "default/train-0", "default/train-1"}));
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
    // 3 + 2x2 = 7 GPUs asked of 6: the last pod is pending in both.
    EXPECT_EQ(r.bind_calls, 4);
    EXPECT_EQ(r.decisions.back().live_node, "");
    ASSERT_EQ(placed.placements.size(), 4u);
    for (const place::Placement& p : placed.placements) {
      const auto d = std::find_if(r.decisions.begin(), r.decisions.end(), [&](const ReplayDecision& x) { return x.pod == p.pod; });
      ASSERT_NE(d, r.decisions.end()) << p.pod;
      EXPECT_EQ(d->live_node, p.node) << p.pod;
      EXPECT_EQ(d->live_gpus, p.gpus) << p.pod;
    }
  }
}

// A mig-parted config in a ConfigMap (the GPU Operator's MIG manager) splits the A100 that the node's
// nvidia.com/mig.config label names it for into 7 1g.5gb devices: 3 pods of one nvidia.com/mig-1g.5gb
// go to GPU 0. Without the ConfigMap place binds none of them (the node advertises no MIG device yet),
// so the server must have it too.
TEST_F(Replay, ConfigMapSetsUpMig) {
  const std::string nodes = write("nodes.yaml", R"(apiVersion: v1
kind: Node
metadata:
  name: a100
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB, nvidia.com/gpu.count: "1", nvidia.com/mig.config: all-1g.5gb}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
)");
  const std::string config = write("mig-parted.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: mig-parted-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      all-1g.5gb:
      - devices: all
        mig-enabled: true
        mig-devices: {"1g.5gb": 7}
)");
  std::string pods_text;
  for (int i = 0; i < 3; ++i)
    pods_text += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: m" + std::to_string(i) +
                 "}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: \"1\", memory: 1Gi, nvidia.com/mig-1g.5gb: \"1\"}, "
                 "limits: {nvidia.com/mig-1g.5gb: \"1\"}}\n";
  const std::string workload = write("pods.yaml", pods_text);
  ASSERT_TRUE(place::place_workload(io::read_place_inputs({nodes}, {workload}).input, place::PlaceOptions{}).placements.empty());
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({nodes, config}, {workload}, node_cache_capable);
    ASSERT_EQ(pods(r), (std::vector<std::string>{"default/m0", "default/m1", "default/m2"}));
    for (const ReplayDecision& d : r.decisions) {
      EXPECT_EQ(d.live_node, "a100") << d.pod;
      EXPECT_EQ(d.live_gpus, std::vector<int32_t>{0}) << d.pod;
      EXPECT_EQ(d.live_mig, "1g.5gb") << d.pod;
    }
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
  }
}

// A DaemonSet's pods, one per node that should run it (not the tainted node; the cordoned one, which
// the controller's default tolerations tolerate), named <daemonset>-<node>, are scheduled first, as
// place schedules them, though the workload's `big` has a higher priority. They leave 1 CPU per node:
// `big` (2 CPUs, may not preempt) is pending, `small` goes to n1 (n2 is cordoned).
TEST_F(Replay, DaemonSetPodsGoFirstToTheirNodes) {
  const std::string nodes = write("nodes.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {unschedulable: true}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
spec: {taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
status: {allocatable: {cpu: "1", memory: 16Gi, pods: "110"}}
)");
  const std::string workload = write("workload.yaml", R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: "3", memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  priority: 100
  preemptionPolicy: Never
  containers:
  - name: c
    resources: {requests: {cpu: "2", memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: small}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi}}
)");
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({nodes}, {workload}, node_cache_capable);
    ASSERT_EQ(pods(r), (std::vector<std::string>{"kube-system/agent-n1", "kube-system/agent-n2", "default/big", "default/small"}));
    EXPECT_TRUE(r.decisions[0].daemon_set);
    EXPECT_FALSE(r.decisions[2].daemon_set);
    EXPECT_EQ(r.decisions[0].live_node, "n1");
    EXPECT_EQ(r.decisions[1].live_node, "n2");
    EXPECT_EQ(r.decisions[2].live_node, "");
    EXPECT_EQ(r.decisions[3].live_node, "n1");
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
    EXPECT_NE(replay_text(r).find("4 pods to schedule (2 of DaemonSets, first): 3 bound, 1 pending"), std::string::npos) << replay_text(r);
  }
}

// A ResourceQuota of one GPU in team: the API server refuses to create team/b, as place's admission
// rejects it, so kube-scheduler never sees it and the replay does not send it.
TEST_F(Replay, QuotaRejectedPodsAreNotSent) {
  const std::string nodes = write("nodes.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.product: NVIDIA-L4}}
status: {allocatable: {cpu: "8", memory: 16Gi, nvidia.com/gpu: "2", pods: "110"}}
)");
  const std::string workload = write("workload.yaml", R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus, namespace: team}
spec: {hard: {requests.nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: team}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: team}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
)");
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({nodes}, {workload}, node_cache_capable);
    EXPECT_EQ(pods(r), std::vector<std::string>{"team/a"});
    EXPECT_EQ(r.quota_rejected, std::vector<std::string>{"team/b"});
    EXPECT_EQ(r.decisions.at(0).live_node, "n1");
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
  }
}

// A gpufleet node-pool file is nodes, as for place: two L4 nodes named <pool>-<i>.
TEST_F(Replay, NodePoolsAreNodes) {
  const std::string pools = write("pools.yaml", R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: l4
  gpu: {model: L4, count: 1}
  cpu: "8"
  memory: 32Gi
  nodes: 2
  prices: {onDemand: 0.8}
)");
  const std::string workload = write("workload.yaml", R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
)");
  for (const bool node_cache_capable : {true, false}) {
    const ReplayResult r = replay({pools}, {workload}, node_cache_capable);
    EXPECT_EQ(r.nodes, 2u);
    ASSERT_EQ(pods(r), (std::vector<std::string>{"default/db-0", "default/db-1", "default/db-2"}));
    EXPECT_NE(r.decisions[0].live_node, r.decisions[1].live_node);
    EXPECT_TRUE(r.decisions[0].live_node == "l4-0" || r.decisions[0].live_node == "l4-1") << r.decisions[0].live_node;
    EXPECT_EQ(r.decisions[2].live_node, "");
    EXPECT_EQ(r.mismatches(), 0u) << replay_text(r);
  }
}

// Gangs are placed all or nothing; the extender verbs see one pod at a time: refused, naming the gang.
TEST_F(Replay, RefusesGangs) {
  const std::string nodes = write("nodes.yaml", kOneGpuNode);
  const std::string group = write("group.yaml", R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: w0, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: train}}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "1", memory: 1Gi}}
)");
  try {
    replay({nodes}, {group}, true);
    ADD_FAILURE() << "a pod group was replayed";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--replay: PodGroup ml/train is a gang: pod groups and Kueue workloads are placed all or nothing, which the extender verbs "
              "(one pod at a time) do not replay; `gpufleet place` places them");
  }
  const std::string queued = write("queued.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: any}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: all}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: any
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: batch, namespace: ml}
spec: {clusterQueue: all}
---
apiVersion: batch/v1
kind: Job
metadata: {name: eval, namespace: ml, labels: {kueue.x-k8s.io/queue-name: batch}}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: "1", memory: 1Gi}}
)");
  try {
    replay({nodes}, {queued}, true);
    ADD_FAILURE() << "a Kueue workload was replayed";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--replay: ml/eval is queued to Kueue (LocalQueue batch), a gang"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpufleet::server
