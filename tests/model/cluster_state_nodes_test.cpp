// ClusterState nodes at run time: add_node / remove_node and their slots, the indexes that follow
// them (totals, GPU model ids, anti-affinity nodes) and versions that never repeat. Hand-computed.
#include "model/cluster_state.h"

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

// The totals recomputed from the live nodes must equal the state's own.
void expect_totals_match_nodes(const ClusterState& s) {
  int64_t capacity = 0, used = 0, anti = 0;
  size_t live = 0;
  for (NodeId n = 0; n < s.node_count(); ++n) {
    if (!s.has_node(n)) {
      EXPECT_TRUE(s.pods_on(n).empty()) << n;
      EXPECT_EQ(s.gpu_free_milli(n).size(), 0u) << n;
      continue;
    }
    ++live;
    capacity += int64_t{s.node(n).gpu_count} * 1000;
    used += int64_t{s.node(n).gpu_count} * 1000 - s.gpu_free_milli_total(n);
    anti += s.anti_affinity_pod_count(n);
    int64_t cpu = 0;
    for (const BoundPod& b : s.pods_on(n)) cpu += b.pod.cpu_milli;
    EXPECT_EQ(s.cpu_used_milli(n), cpu) << n;
    EXPECT_EQ(s.pod_count(n), static_cast<int32_t>(s.pods_on(n).size())) << n;
  }
  EXPECT_EQ(s.live_node_count(), live);
  EXPECT_EQ(s.gpu_capacity_milli(), capacity);
  EXPECT_EQ(s.gpu_used_milli(), used);
  EXPECT_EQ(s.anti_affinity_pod_count(), anti);
  EXPECT_EQ(static_cast<int64_t>(s.anti_affinity_nodes().size()),
            std::count_if(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end(),
                          [&](NodeId n) { return s.has_node(n) && s.anti_affinity_pod_count(n) > 0; }));
}

Pod with_anti_affinity(Pod p) {
  PodAffinityTerm t;
  t.topology_key = "kubernetes.io/hostname";
  t.has_label_selector = true;
  t.label_selector.match_labels = {{"app", "db"}};
  p.constraints.required_anti_affinity.push_back(t);
  return p;
}

TEST(ClusterStateNodes, AddFillsTheGivenOrLowestEmptySlot) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("n1", 4000, 8192, 2)});
  EXPECT_EQ(s.node_count(), 2u);
  EXPECT_EQ(s.live_node_count(), 2u);
  EXPECT_EQ(s.gpu_capacity_milli(), 6000);

  EXPECT_EQ(s.add_node(make_node("n2", 8000, 8192, 8)), 2u);  // no empty slot: a new one
  EXPECT_EQ(s.node_count(), 3u);
  EXPECT_EQ(s.gpu_capacity_milli(), 14000);

  EXPECT_EQ(s.add_node(make_node("n5", 1000, 1024, 1), 5), 5u);  // beyond the slots: 3 and 4 stay empty
  EXPECT_EQ(s.node_count(), 6u);
  EXPECT_EQ(s.live_node_count(), 4u);
  EXPECT_FALSE(s.has_node(3));
  EXPECT_FALSE(s.has_node(4));
  EXPECT_TRUE(s.has_node(5));
  EXPECT_FALSE(s.has_node(6));
  EXPECT_EQ(s.gpu_capacity_milli(), 15000);
  // An empty slot describes no node.
  EXPECT_EQ(s.node(4).name, "");
  EXPECT_EQ(s.gpu_free_milli(4).size(), 0u);
  EXPECT_EQ(s.gpu_model_id(4), -1);
  EXPECT_TRUE(s.pods_on(4).empty());
  EXPECT_FALSE(s.can_allocate(4, make_pod("p", 0, 0, 0, 0), {}));
  EXPECT_THROW(s.allocate(4, make_pod("p", 0, 0, 0, 0), {}), InvariantViolation);

  EXPECT_EQ(s.add_node(make_node("n3", 1000, 1024, 0)), 3u);  // the lowest empty slot

  const Node out = s.remove_node(1);
  EXPECT_EQ(out.name, "n1");
  EXPECT_EQ(out.gpu_count, 2);
  EXPECT_FALSE(s.has_node(1));
  EXPECT_EQ(s.node_count(), 6u);  // slots never shrink
  EXPECT_EQ(s.live_node_count(), 4u);
  EXPECT_EQ(s.gpu_capacity_milli(), 13000);

  // The removed slot is reused, by another node.
  EXPECT_EQ(s.add_node(make_node("x", 2000, 2048, 4)), 1u);
  EXPECT_EQ(s.node(1).name, "x");
  EXPECT_EQ(s.gpu_free_milli(1).size(), 4u);
  for (int32_t f : s.gpu_free_milli(1)) EXPECT_EQ(f, 1000);
  EXPECT_EQ(s.cpu_free_milli(1), 2000);
  EXPECT_EQ(s.gpu_capacity_milli(), 17000);
  expect_totals_match_nodes(s);
}

TEST(ClusterStateNodes, RefusedAddChangesNothing) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  const uint64_t version = s.version(0);
  EXPECT_THROW(s.add_node(make_node("y", 1000, 1024, 1), 0), InvariantViolation);  // slot taken
  EXPECT_THROW(s.add_node(make_node("y", 1000, 1024, 1), UINT32_MAX), InvariantViolation);
  EXPECT_THROW(s.add_node(make_node("bad", -1, 1024, 1)), std::invalid_argument);
  Node mig = make_node("t4mig", 1000, 1024, 1, "T4");
  mig.mig = {GpuMig{true, {}}};
  EXPECT_THROW(s.add_node(mig, 7), std::invalid_argument);  // T4 is not MIG-capable
  EXPECT_EQ(s.node_count(), 1u);
  EXPECT_EQ(s.live_node_count(), 1u);
  EXPECT_EQ(s.gpu_capacity_milli(), 4000);
  EXPECT_EQ(s.gpu_models(), (std::vector<std::string>{"V100M16"}));
  EXPECT_EQ(s.version(0), version);
}

TEST(ClusterStateNodes, RemovingANodeWithPodsThrowsAndChangesNothing) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  const Pod a = make_pod("a", 1000, 1024, 1, 500);
  s.allocate(0, a, {.gpus = {1}});
  const uint64_t version = s.version(0);
  EXPECT_THROW(s.remove_node(0), InvariantViolation);
  EXPECT_TRUE(s.has_node(0));
  EXPECT_EQ(s.live_node_count(), 1u);
  ASSERT_EQ(s.pods_on(0).size(), 1u);
  EXPECT_EQ(s.cpu_used_milli(0), 1000);
  EXPECT_EQ(s.gpu_free_milli(0)[1], 500);
  EXPECT_EQ(s.gpu_capacity_milli(), 4000);
  EXPECT_EQ(s.gpu_used_milli(), 500);
  EXPECT_EQ(s.version(0), version);

  s.release(0, a);
  s.remove_node(0);
  EXPECT_EQ(s.live_node_count(), 0u);
  EXPECT_EQ(s.gpu_capacity_milli(), 0);
  EXPECT_EQ(s.gpu_used_milli(), 0);
  EXPECT_THROW(s.remove_node(0), InvariantViolation);  // already empty
  EXPECT_THROW(s.remove_node(1), InvariantViolation);  // no such slot
}

// Slot versions: each change adds 1; a node added to a slot starts above every version handed out.
// n0, n1 start at 1 (highest 1). allocate on 0: 2. remove 1: 3. add z to 1: 4. allocate on 1: 5.
// release on 1: 6. add w to slot 3: slots 2 and 3 are created at 7, w takes 8.
TEST(ClusterStateNodes, VersionsOfASlotNeverRepeat) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("n1", 4000, 8192, 4)});
  EXPECT_EQ(s.version(0), 1u);
  EXPECT_EQ(s.version(1), 1u);
  s.allocate(0, make_pod("a", 0, 0, 0, 0), {});
  EXPECT_EQ(s.version(0), 2u);
  s.remove_node(1);
  EXPECT_EQ(s.version(1), 3u);
  EXPECT_EQ(s.add_node(make_node("z", 1000, 1024, 1)), 1u);
  EXPECT_EQ(s.version(1), 4u);
  const Pod b = make_pod("b", 0, 0, 1, 1000);
  s.allocate(1, b, {.gpus = {0}});
  EXPECT_EQ(s.version(1), 5u);
  s.release(1, b);
  EXPECT_EQ(s.version(1), 6u);
  EXPECT_EQ(s.add_node(make_node("w", 1000, 1024, 1), 3), 3u);
  EXPECT_EQ(s.version(2), 7u);
  EXPECT_EQ(s.version(3), 8u);
  EXPECT_EQ(s.version(0), 2u);  // untouched
}

TEST(ClusterStateNodes, GpuModelIdsStayWhenTheirNodesGo) {
  ClusterState s({make_node("a", 1000, 1024, 2, "V100M16")});
  EXPECT_EQ(s.register_gpu_model("A100"), 1);
  EXPECT_EQ(s.register_gpu_model("T4"), 2);
  EXPECT_EQ(s.register_gpu_model("V100M16"), 0);
  const NodeId t4 = s.add_node(make_node("t", 1000, 1024, 4, "T4"));
  EXPECT_EQ(s.gpu_model_id(t4), 2);
  s.remove_node(t4);
  s.remove_node(0);
  EXPECT_EQ(s.gpu_models(), (std::vector<std::string>{"V100M16", "A100", "T4"}));
  const NodeId cpu = s.add_node(make_node("cpu", 1000, 1024, 0));
  EXPECT_EQ(s.gpu_model_id(cpu), 3);  // "" is new
  const NodeId v100 = s.add_node(make_node("v", 1000, 1024, 1, "V100M16"));
  EXPECT_EQ(s.gpu_model_id(v100), 0);
  EXPECT_EQ(s.gpu_models(), (std::vector<std::string>{"V100M16", "A100", "T4", ""}));
  // An empty state with its models registered up front.
  ClusterState empty;
  EXPECT_EQ(empty.node_count(), 0u);
  EXPECT_EQ(empty.register_gpu_model("H100-80GB"), 0);
  EXPECT_EQ(empty.add_node(make_node("h", 1000, 1024, 8, "H100-80GB")), 0u);
  EXPECT_EQ(empty.gpu_model_id(0), 0);
}

// A slot's GPU and MIG arrays are reused by the next node of the same size: nothing of the old
// node's kinds, replicas or MIG devices shows through.
TEST(ClusterStateNodes, ReusedDeviceBlocksStartClean) {
  Node mig = make_node("mig", 64000, 524288, 1, "H100-80GB");
  mig.mig = {GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}}};
  Node sliced = make_node("sliced", 16000, 65536, 1, "T4");
  sliced.time_slicing = TimeSlicing{4, false, false};
  ClusterState s({mig, sliced});
  Pod three = make_pod("three", 0, 0, 0, 0);
  three.mig_requests = {{"3g.40gb", 1}};
  s.allocate(0, three, {.mig = {{0, 4, "3g.40gb"}}});
  s.allocate(1, make_pod("r", 0, 0, 1, 1000), {.gpus = {0}});
  s.release(0, three);
  s.release(1, make_pod("r", 0, 0, 1, 1000));
  s.remove_node(0);
  s.remove_node(1);
  // Plain 1-GPU nodes take both GPU blocks back.
  EXPECT_EQ(s.add_node(make_node("p0", 1000, 1024, 1)), 0u);
  EXPECT_EQ(s.add_node(make_node("p1", 1000, 1024, 1)), 1u);
  for (NodeId n : {0u, 1u}) {
    EXPECT_EQ(s.gpu_kind(n, 0), GpuKind::kPlain);
    EXPECT_EQ(s.replicas_used(n, 0), 0);
    EXPECT_FALSE(s.has_gpu_sharing(n));
    EXPECT_TRUE(s.can_allocate(n, make_pod("w", 0, 0, 1, 1000), {.gpus = {0}}));
  }
  // A MIG node of two instances takes the freed MIG block: both free.
  mig.name = "mig2";
  const NodeId m = s.add_node(mig);
  EXPECT_EQ(m, 2u);
  EXPECT_EQ(s.gpu_kind(m, 0), GpuKind::kMig);
  EXPECT_EQ(s.mig_free_count(m, "3g.40gb"), 1);
  EXPECT_EQ(s.mig_free_count(m, "4g.40gb"), 1);
  EXPECT_EQ(s.gpu_free_milli(m)[0], 1000);
  expect_totals_match_nodes(s);
}

TEST(ClusterStateNodes, AntiAffinityNodesFollowRemovals) {
  ClusterState s({make_node("n0", 4000, 8192, 0), make_node("n1", 4000, 8192, 0), make_node("n2", 4000, 8192, 0)});
  const Pod a = with_anti_affinity(make_pod("a", 100, 0, 0, 0));
  const Pod b = with_anti_affinity(make_pod("b", 100, 0, 0, 0));
  s.allocate(0, a, {});
  s.allocate(2, b, {});
  s.release(0, a);
  s.remove_node(0);
  EXPECT_EQ(std::vector<NodeId>(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end()), std::vector<NodeId>{2});
  EXPECT_EQ(s.anti_affinity_pod_count(), 1);
  EXPECT_EQ(s.add_node(make_node("m", 4000, 8192, 0)), 0u);
  s.allocate(0, a, {});
  EXPECT_EQ(std::vector<NodeId>(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end()),
            (std::vector<NodeId>{2, 0}));
  EXPECT_EQ(s.anti_affinity_pod_count(), 2);
  expect_totals_match_nodes(s);
}

// Seeded churn of nodes and pods: after every step the totals equal the sums over the live nodes,
// and each slot's version only grows (also across remove and add).
TEST(ClusterStateNodes, InvariantsHoldUnderChurn) {
  std::mt19937 gen(7);
  ClusterState s({make_node("n0", 8000, 8192, 4), make_node("n1", 8000, 8192, 8)});
  struct Placed {
    NodeId n;
    Pod pod;
  };
  std::vector<Placed> placed;
  std::vector<uint64_t> last_version;
  int adds = 0, removes = 0, binds = 0;
  for (int step = 0; step < 2000; ++step) {
    const int op = static_cast<int>(gen() % 10);
    if (op == 0) {
      const int32_t gpus = static_cast<int32_t>(gen() % 3) * 4;
      std::optional<NodeId> slot;
      if (gen() % 4 == 0) slot = static_cast<NodeId>(gen() % (s.node_count() + 3));
      if (slot && s.has_node(*slot)) continue;
      s.add_node(make_node("a" + std::to_string(step), 8000, 8192, gpus), slot);
      ++adds;
    } else if (op == 1 && s.node_count() > 0) {
      const auto n = static_cast<NodeId>(gen() % s.node_count());
      if (!s.has_node(n) || !s.pods_on(n).empty()) continue;
      s.remove_node(n);
      ++removes;
    } else if (op < 6 && s.node_count() > 0) {
      const auto n = static_cast<NodeId>(gen() % s.node_count());
      if (!s.has_node(n)) continue;
      const int32_t g = s.node(n).gpu_count;
      Pod p = make_pod("p" + std::to_string(step), static_cast<int64_t>(gen() % 3000), 0, g > 0 ? 1 : 0, g > 0 ? 500 : 0);
      DeviceAssignment d;
      if (g > 0) d.gpus = {static_cast<int32_t>(gen() % static_cast<uint32_t>(g))};
      if (!s.can_allocate(n, p, d)) continue;
      s.allocate(n, p, d);
      placed.push_back({n, p});
      ++binds;
    } else if (!placed.empty()) {
      const size_t i = gen() % placed.size();
      const BoundPod out = s.release(placed[i].n, placed[i].pod);
      EXPECT_EQ(out.pod.name, placed[i].pod.name);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(i));
    }
    last_version.resize(s.node_count(), 0);
    for (NodeId n = 0; n < s.node_count(); ++n) {
      EXPECT_GE(s.version(n), last_version[n]) << step;
      last_version[n] = s.version(n);
    }
    expect_totals_match_nodes(s);
    if (HasFailure()) break;
  }
  EXPECT_GT(adds, 50);
  EXPECT_GT(removes, 20);
  EXPECT_GT(binds, 300);
}

}  // namespace
}  // namespace gpufleet
