// GPU sockets (NUMA nodes) inside a node and the kubelet's Topology Manager: the
// NodeResourceTopologyMatch filter, the NUMA-aligned choice of whole GPUs (sched/gpu/device_select.h), the
// NodeResourceTopology reader (readers/k8s/node_resource_topology.h) and the pool key `numa`.
//
// The scenario: pytorch/ci-infra issue 696 (github.com/pytorch/ci-infra/issues/696). 8x H100 nodes in
// two NUMA sockets ran the single-numa-node policy; 1-GPU pods were spread over both sockets, so
// 4-GPU pods were bound and then rejected by the kubelet (TopologyAffinityError), again and again.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "support/expect_input_error.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/pool_file.h"
#include "model/cluster_state.h"
#include "model/node_pool.h"
#include "sched/gpu/device_select.h"
#include "sched/fit_error.h"
#include "sched/plugins/node_resource_topology_match.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "sim/rules/cluster_autoscaler.h"
#include "support/test_support.h"
#include "util/go_rand.h"
#include "util/input_error.h"

namespace gpufleet {
namespace {

using sched::FilterCode;
using sched::NodeResourceTopologyMatch;
using sched::kNoNode;
using sched::Scheduler;
using sched::ScheduleResult;
using testing::make_node;
using testing::make_pod;
using Gpus = std::vector<int32_t>;

// h1: 8 H100, GPUs 0-3 on NUMA node 0 and 4-7 on NUMA node 1, single-numa-node, scope pod.
Node h1(TopologyManagerPolicy policy = TopologyManagerPolicy::kSingleNumaNode,
        TopologyManagerScope scope = TopologyManagerScope::kPod) {
  Node n = make_node("h1", 96000, 1024 * 1024, 8, "H100-80GB");
  n.gpu_numa_node = {0, 0, 0, 0, 1, 1, 1, 1};
  n.topology_manager_policy = policy;
  n.topology_manager_scope = scope;
  return n;
}

Pod gpus(const std::string& name, int32_t n) { return make_pod(name, 1000, 1024, n, 1000); }

sched::Profile packing(const ClusterState& state) {
  sched::PolicyContext ctx;
  ctx.gpu_models = state.gpu_models();
  ctx.cluster = &state;
  return sched::make_policy("packing", ctx);
}

void run_on(ClusterState& state, NodeId n, const Pod& pod, Gpus devices) {
  DeviceAssignment d;
  d.gpus = std::move(devices);
  ASSERT_TRUE(state.can_allocate(n, pod, d));
  state.allocate(n, pod, d);
}

// S21 as reported: a on GPU0, b on GPU4 (one per socket). C (4 GPUs) must not be bound to h1, in any
// number of cycles; d and e go to a socket that already has a pod, and C still does not fit.
TEST(NumaAlignmentTest, S21FourGpuPodIsNeverBoundWhereNoSocketHasFour) {
  ClusterState state({h1()});
  run_on(state, 0, gpus("a", 1), {0});
  run_on(state, 0, gpus("b", 1), {4});
  Scheduler s(packing(state), {0});
  GoRand rng(1);
  const Pod c = gpus("C", 4);
  for (int cycle = 0; cycle < 3; ++cycle) {  // every retry gives the same answer: no bind
    const ScheduleResult r = s.decide(c, state, rng);
    EXPECT_EQ(r.node, kNoNode);
    EXPECT_EQ(r.status.code(), sched::Code::kUnschedulable);  // upstream: Unschedulable
    EXPECT_EQ(testing::fit_error_of(r, c, state), "0/1 nodes are available: 1 cannot align pod.");
  }
  // d: both sockets have 3 free; the lower NUMA ID on the tie. e: socket 0 (2 free) over socket 1 (3).
  const ScheduleResult d = s.schedule_one(gpus("d", 1), state, rng);
  ASSERT_EQ(d.node, 0u);
  EXPECT_EQ(d.gpus, Gpus{1});
  const ScheduleResult e = s.schedule_one(gpus("e", 1), state, rng);
  ASSERT_EQ(e.node, 0u);
  EXPECT_EQ(e.gpus, Gpus{2});
  // 4 GPUs free on the node (3, 5, 6, 7) but 1 and 3 per socket: still refused.
  EXPECT_EQ(state.gpu_free_milli_total(0), 4000);
  EXPECT_EQ(s.decide(c, state, rng).node, kNoNode);
}

// With a second node without NUMA information, C goes there (GPUs 0-3) instead of pending.
TEST(NumaAlignmentTest, S21FourGpuPodGoesToAnotherNode) {
  ClusterState state({h1(), make_node("h2", 96000, 1024 * 1024, 4, "H100-80GB")});
  run_on(state, 0, gpus("a", 1), {0});
  run_on(state, 0, gpus("b", 1), {4});
  Scheduler s(packing(state), {0, 1});
  GoRand rng(1);
  const ScheduleResult r = s.schedule_one(gpus("C", 4), state, rng);
  ASSERT_EQ(r.node, 1u);
  EXPECT_EQ(r.gpus, (Gpus{0, 1, 2, 3}));
}

// From an empty node: a, b, then C, d, e. The 1-GPU pods pack into socket 0 (best fit), so socket 1
// stays whole and C binds there.
TEST(NumaAlignmentTest, S21FromEmptyPacksOneSocketAndCBinds) {
  ClusterState state({h1()});
  Scheduler s(packing(state), {0});
  GoRand rng(1);
  std::vector<Gpus> got;
  for (const Pod& p : {gpus("a", 1), gpus("b", 1), gpus("C", 4), gpus("d", 1), gpus("e", 1)}) {
    const ScheduleResult r = s.schedule_one(p, state, rng);
    ASSERT_EQ(r.node, 0u) << p.name;
    got.push_back(r.gpus);
  }
  EXPECT_EQ(got, (std::vector<Gpus>{{0}, {1}, {4, 5, 6, 7}, {2}, {3}}));
  EXPECT_EQ(state.gpu_free_milli_total(0), 0);
}

// Without a NUMA layout the same sequence takes the lowest GPUs: C spans both sockets (2-5), the
// placement the kubelet of S21 rejects. Existing inputs keep this behaviour.
TEST(NumaAlignmentTest, WithoutLayoutLowestIndicesAsBefore) {
  Node plain = h1();
  plain.gpu_numa_node.clear();
  ClusterState state({plain});
  Scheduler s(packing(state), {0});
  GoRand rng(1);
  std::vector<Gpus> got;
  for (const Pod& p : {gpus("a", 1), gpus("b", 1), gpus("C", 4)}) got.push_back(s.schedule_one(p, state, rng).gpus);
  EXPECT_EQ(got, (std::vector<Gpus>{{0}, {1}, {2, 3, 4, 5}}));
}

TEST(NumaAlignmentTest, FilterReasonsAndPolicies) {
  const sched::NodeResourceTopologyMatch f;
  const Pod c = gpus("C", 4);
  auto code_with = [&](Node n) {
    ClusterState state({std::move(n)});
    run_on(state, 0, gpus("a", 1), {0});
    run_on(state, 0, gpus("b", 1), {4});
    return f.filter(c, state, 0);
  };
  EXPECT_EQ(code_with(h1()), NodeResourceTopologyMatch::kCannotAlign);
  EXPECT_EQ(code_with(h1(TopologyManagerPolicy::kSingleNumaNode, TopologyManagerScope::kContainer)), NodeResourceTopologyMatch::kCannotAlign);
  // Upstream filters only single-numa-node (filterHandlerFromTopologyManager).
  EXPECT_EQ(code_with(h1(TopologyManagerPolicy::kRestricted)), FilterCode::kFits);
  EXPECT_EQ(code_with(h1(TopologyManagerPolicy::kBestEffort)), FilterCode::kFits);
  EXPECT_EQ(code_with(h1(TopologyManagerPolicy::kNone)), FilterCode::kFits);
  EXPECT_EQ(NodeResourceTopologyMatch::kCannotAlign.reason(), "cannot align pod");
  EXPECT_TRUE(NodeResourceTopologyMatch::kCannotAlign.resolvable());  // Unschedulable: preemption may help

  // The fit error spells each node's scope (upstream: "cannot align container" with scope container).
  ClusterState two({h1(), h1(TopologyManagerPolicy::kSingleNumaNode, TopologyManagerScope::kContainer)});
  for (NodeId n = 0; n < 2; ++n) {
    run_on(two, n, gpus("a", 1), {0});
    run_on(two, n, gpus("b", 1), {4});
  }
  Scheduler s(packing(two), {0, 1});
  GoRand rng(1);
  const ScheduleResult r = s.decide(c, two, rng);
  EXPECT_EQ(r.node, kNoNode);
  EXPECT_EQ(testing::fit_error_of(r, c, two), "0/2 nodes are available: 1 cannot align container, 1 cannot align pod.");

  // A fraction of a GPU is on one NUMA node: never refused. An 8-GPU pod on a 4+4 node: always.
  ClusterState empty({h1()});
  EXPECT_EQ(f.filter(make_pod("frac", 1000, 1024, 1, 500), empty, 0), FilterCode::kFits);
  EXPECT_EQ(f.filter(gpus("eight", 8), empty, 0), NodeResourceTopologyMatch::kCannotAlign);
  EXPECT_EQ(f.filter(gpus("four", 4), empty, 0), FilterCode::kFits);
}

// best-effort: aligned when one socket holds the pod, else spread over the lowest free GPUs (the
// kubelet admits it).
TEST(NumaAlignmentTest, BestEffortAlignsWhenItCanAndSpreadsOtherwise) {
  ClusterState state({h1(TopologyManagerPolicy::kBestEffort)});
  run_on(state, 0, gpus("a", 1), {0});
  run_on(state, 0, gpus("b", 1), {4});
  EXPECT_EQ(sched::select_whole_gpus(state, 0, 2), (Gpus{1, 2}));     // socket 0: 3 free, socket 1: 3; lower ID
  EXPECT_EQ(sched::select_whole_gpus(state, 0, 4), (Gpus{1, 2, 3, 5}));  // no socket has 4
}

TEST(NumaAlignmentTest, NumaNodeForWholeGpusIsBestFit) {
  ClusterState state({h1()});
  run_on(state, 0, gpus("a", 1), {0});  // socket 0: 3 free, socket 1: 4 free
  EXPECT_EQ(sched::numa_node_for_whole_gpus(state, 0, 1), 0);
  EXPECT_EQ(sched::numa_node_for_whole_gpus(state, 0, 3), 0);
  EXPECT_EQ(sched::numa_node_for_whole_gpus(state, 0, 4), 1);
  EXPECT_EQ(sched::numa_node_for_whole_gpus(state, 0, 5), -1);
  EXPECT_EQ(sched::select_whole_gpus(state, 0, 3), (Gpus{1, 2, 3}));
  EXPECT_EQ(sched::select_whole_gpus(state, 0, 4), (Gpus{4, 5, 6, 7}));
  ClusterState plain({make_node("p", 8000, 1024, 8, "H100-80GB")});
  EXPECT_EQ(sched::numa_node_for_whole_gpus(plain, 0, 1), -1);  // no layout
}

// Whatever the order of arrivals and departures, a pod the scheduler binds to h1 has all its GPUs on
// one NUMA node (what the kubelet admits), and the filter refuses h1 exactly when no NUMA node has
// the pod's GPUs free.
TEST(NumaAlignmentTest, EveryBindIsOneNumaNodeUnderChurn) {
  ClusterState state({h1()});
  Scheduler s(packing(state), {0});
  GoRand rng(1);
  std::mt19937_64 gen(696);
  const int32_t sizes[] = {1, 1, 1, 2, 4};
  std::vector<Pod> running;
  int32_t binds = 0, refusals = 0;
  for (int step = 0; step < 400; ++step) {
    if (!running.empty() && gen() % 3 == 0) {
      const size_t i = gen() % running.size();
      state.release(0, running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    const Pod p = gpus("p" + std::to_string(step), sizes[gen() % std::size(sizes)]);
    std::array<int32_t, 2> free{};
    for (int32_t g = 0; g < 8; ++g)
      if (state.gpu_free_milli(0)[static_cast<size_t>(g)] == 1000) ++free[static_cast<size_t>(g / 4)];
    const bool one_socket_holds = free[0] >= p.num_gpu || free[1] >= p.num_gpu;
    const ScheduleResult r = s.schedule_one(p, state, rng);
    ASSERT_EQ(r.node == 0u, one_socket_holds) << step;
    if (r.node != 0u) {
      ++refusals;
      continue;
    }
    ++binds;
    running.push_back(p);
    for (const int32_t g : r.gpus) EXPECT_EQ(g / 4, r.gpus.front() / 4) << step;
  }
  EXPECT_GT(binds, 100);
  EXPECT_GT(refusals, 10);
}

// The simulator's scale-up estimate packs by the same rule: on h1 two 3-GPU pods take one socket
// each, so a 2-GPU pod needs a second node (without the layout all three share one node), and an
// 8-GPU pod helps no scale-up at all (it would never be bound there).
TEST(NumaAlignmentTest, ScaleUpEstimateKeepsPodsInOneSocket) {
  const Pod p3a = gpus("x", 3), p3b = gpus("y", 3), p2 = gpus("z", 2), p8 = gpus("w", 8);
  const std::vector<const Pod*> three = {&p3a, &p3b, &p2};
  const sim::ScaleUpOption aligned = sim::estimate_scale_up(0, h1(), three, 4);
  EXPECT_EQ(aligned.nodes, 2);
  EXPECT_EQ(aligned.pods_helped, 3);
  Node plain = h1();
  plain.gpu_numa_node.clear();
  const sim::ScaleUpOption spread = sim::estimate_scale_up(0, plain, three, 4);
  EXPECT_EQ(spread.nodes, 1);
  EXPECT_EQ(spread.pods_helped, 3);
  const std::vector<const Pod*> eight = {&p8};
  EXPECT_EQ(sim::estimate_scale_up(0, h1(), eight, 4).pods_helped, 0);
  EXPECT_EQ(sim::estimate_scale_up(0, plain, eight, 4).pods_helped, 1);
}

// ---------------------------------------------------------------------------------------------
// NodeResourceTopology reader

const char* kNodeH1 = R"(---
apiVersion: v1
kind: Node
metadata:
  name: h1
  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  allocatable: {cpu: "96", memory: 1Ti, nvidia.com/gpu: "8", pods: "110"}
)";

std::string nrt(const std::string& attributes, const std::string& zones) {
  return "---\napiVersion: topology.node.k8s.io/v1alpha2\nkind: NodeResourceTopology\nmetadata: {name: h1}\n" +
         attributes + zones;
}

const char* kPodScope =
    "attributes:\n"
    "  - {name: topologyManagerPolicy, value: single-numa-node}\n"
    "  - {name: topologyManagerScope, value: pod}\n";
const char* kTwoZones =
    "zones:\n"
    "  - name: node-0\n"
    "    type: Node\n"
    "    resources:\n"
    "      - {name: cpu, capacity: \"48\", allocatable: \"48\", available: \"40\"}\n"
    "      - {name: nvidia.com/gpu, capacity: \"4\", allocatable: \"4\", available: \"3\"}\n"
    "  - {name: node-1, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"4\"}]}\n";

TEST(NodeResourceTopologyReaderTest, ReadsLayoutPolicyAndScope) {
  // The NodeResourceTopology first: it applies once every input is read.
  const io::K8sObjects k = io::parse_k8s_text(nrt(kPodScope, kTwoZones) + kNodeH1, "in.yaml");
  ASSERT_EQ(k.nodes.size(), 1u);
  const Node& n = k.nodes[0];
  EXPECT_EQ(n.gpu_numa_node, (std::vector<int8_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(n.topology_manager_policy, TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(n.topology_manager_scope, TopologyManagerScope::kPod);
  EXPECT_TRUE(n.requires_single_numa_node());
  EXPECT_EQ(k.skipped_kinds.count("NodeResourceTopology"), 0u);
}

TEST(NodeResourceTopologyReaderTest, ZoneOrderDefaultsAndLegacyPolicies) {
  // GPUs in zone order: node-1's two first, then node-0's six; a Socket zone is not a NUMA node.
  const std::string zones =
      "zones:\n"
      "  - {name: node-1, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"2\"}]}\n"
      "  - {name: socket-0, type: Socket}\n"
      "  - {name: node-0, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"6\"}]}\n";
  io::K8sObjects k = io::parse_k8s_text(std::string(kNodeH1) + nrt("", zones), "in.yaml");
  EXPECT_EQ(k.nodes[0].gpu_numa_node, (std::vector<int8_t>{1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(k.nodes[0].topology_manager_policy, TopologyManagerPolicy::kNone);  // defaults: none, container
  EXPECT_EQ(k.nodes[0].topology_manager_scope, TopologyManagerScope::kContainer);
  // The deprecated topologyPolicies list; attributes override it.
  k = io::parse_k8s_text(std::string(kNodeH1) + nrt("topologyPolicies: [SingleNUMANodeContainerLevel]\n", kTwoZones), "in.yaml");
  EXPECT_EQ(k.nodes[0].topology_manager_policy, TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(k.nodes[0].topology_manager_scope, TopologyManagerScope::kContainer);
  k = io::parse_k8s_text(
      std::string(kNodeH1) + nrt(std::string("topologyPolicies: [BestEffortContainerLevel]\n") + kPodScope, kTwoZones), "in.yaml");
  EXPECT_EQ(k.nodes[0].topology_manager_policy, TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(k.nodes[0].topology_manager_scope, TopologyManagerScope::kPod);
  // No zone reports nvidia.com/gpu: the GPUs have no NUMA affinity; the layout stays unknown.
  k = io::parse_k8s_text(std::string(kNodeH1) + nrt(kPodScope, "zones: [{name: node-0, type: Node}]\n"), "in.yaml");
  EXPECT_TRUE(k.nodes[0].gpu_numa_node.empty());
  EXPECT_FALSE(k.nodes[0].requires_single_numa_node());
  // An object for a node that is not among the inputs: a warning.
  k = io::parse_k8s_text(nrt(kPodScope, kTwoZones), "in.yaml");
  ASSERT_EQ(k.warnings.size(), 1u);
  EXPECT_EQ(k.warnings[0], "in.yaml:2:1: NodeResourceTopology 'h1' names no Node among the inputs: ignored");
}

void expect_error(const std::string& text, int line, int column, const std::string& field, const std::string& message) {
  testing::expect_input_error([&] { io::parse_k8s_text(text, "in.yaml"); }, "in.yaml", line, column, field, message);
}

TEST(NodeResourceTopologyReaderTest, BadInputNamesLineAndField) {
  // Line numbers count from the NodeResourceTopology document (line 1 is its "---").
  expect_error(nrt("attributes:\n  - {name: topologyManagerPolicy, value: single-numa}\n", kTwoZones), 6, 42,
               "attributes[0].value", "unknown topologyManagerPolicy 'single-numa'");
  expect_error(nrt("attributes:\n  - {name: topologyManagerScope, value: node}\n", kTwoZones), 6, 41,
               "attributes[0].value", "unknown topologyManagerScope 'node'");
  expect_error(nrt(kPodScope, "zones:\n  - {name: numa0, type: Node}\n"), 9, 12, "zones[0].name",
               "zone name 'numa0' is not node-<NUMA ID> with an ID in 0..7");
  expect_error(nrt(kPodScope, "zones:\n  - {name: node-0, type: Node}\n  - {name: node-0, type: Node}\n"), 10, 12,
               "zones[1].name", "NUMA node 0 appears twice");
  expect_error(nrt(kPodScope, "zones:\n  - {name: node-0, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"1.5\"}]}\n"),
               9, 77, "zones[0].resources[0].capacity", "'1.5' is not a whole number of GPUs");
  expect_error("---\napiVersion: topology.node.k8s.io/v1beta9\nkind: NodeResourceTopology\nmetadata: {name: h1}\n", 2, 13,
               "apiVersion", "unsupported apiVersion 'topology.node.k8s.io/v1beta9'");
  // The zones hold 6 GPUs, the Node has 8: at the object.
  const std::string six =
      "zones:\n  - {name: node-0, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"3\"}]}\n"
      "  - {name: node-1, type: Node, resources: [{name: nvidia.com/gpu, capacity: \"3\"}]}\n";
  expect_error(std::string(kNodeH1) + nrt(kPodScope, six), 10, 1, "zones", "the zones hold 6 nvidia.com/gpu, node 'h1' has 8");
  expect_error(std::string(kNodeH1) + nrt(kPodScope, kTwoZones) + nrt(kPodScope, kTwoZones), 24, 1, "metadata.name",
               "a second NodeResourceTopology for node 'h1'");
}

// ---------------------------------------------------------------------------------------------
// Pool key numa

const char* kPool =
    "apiVersion: gpufleet.io/v1\n"
    "kind: NodePoolSet\n"
    "pools:\n"
    "  - name: h100\n"
    "    gpu: {model: H100-80GB, count: 8}\n"
    "    cpu: \"96\"\n"
    "    memory: 1Ti\n"
    "    nodes: 2\n"
    "    prices: {onDemand: 98.32}\n";

TEST(NumaPoolKeyTest, SplitsGpusEvenly) {
  const std::vector<NodePool> pools = io::parse_pool_text(std::string(kPool) + "    numa: {nodes: 2, policy: single-numa-node, scope: pod}\n", "p.yaml");
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].numa_nodes, 2);
  const std::vector<Node> nodes = expand_pool(pools[0]);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[1].gpu_numa_node, (std::vector<int8_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(nodes[1].topology_manager_policy, TopologyManagerPolicy::kSingleNumaNode);
  EXPECT_EQ(nodes[1].topology_manager_scope, TopologyManagerScope::kPod);
  // nodes: 4 -> two GPUs per NUMA node; defaults none / container.
  const std::vector<Node> four = expand_pool(io::parse_pool_text(std::string(kPool) + "    numa: {nodes: 4}\n", "p.yaml")[0]);
  EXPECT_EQ(four[0].gpu_numa_node, (std::vector<int8_t>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(four[0].topology_manager_policy, TopologyManagerPolicy::kNone);
  EXPECT_EQ(four[0].topology_manager_scope, TopologyManagerScope::kContainer);
  // Without the key: no layout.
  EXPECT_TRUE(expand_pool(io::parse_pool_text(kPool, "p.yaml")[0])[0].gpu_numa_node.empty());
}

TEST(NumaPoolKeyTest, BadValuesNameTheField) {
  auto error_of = [](const std::string& numa) -> std::string {
    try {
      io::parse_pool_text(std::string(kPool) + "    numa: " + numa + "\n", "p.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of("{nodes: 3}"), "p.yaml:10:19: field 'pools[0].numa.nodes': 8 GPUs per node do not split evenly over 3 NUMA nodes");
  EXPECT_EQ(error_of("{nodes: 9}"), "p.yaml:10:19: field 'pools[0].numa.nodes': 9 is out of range [1, 8]");
  EXPECT_EQ(error_of("{nodes: 2, policy: strict}"),
            "p.yaml:10:30: field 'pools[0].numa.policy': unknown policy 'strict' (expected none, best-effort, restricted, "
            "single-numa-node)");
  EXPECT_EQ(error_of("{nodes: 2, sockets: 2}"), "p.yaml:10:22: field 'pools[0].numa.sockets': unknown key 'sockets' (expected nodes, policy, scope)");
}

}  // namespace
}  // namespace gpufleet
