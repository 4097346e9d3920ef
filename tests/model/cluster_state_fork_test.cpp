// ClusterState::Fork: the changes of a dry run vanish on discard (everything observable as before,
// versions excepted) and land on commit. Hand-computed values on a small mixed cluster.
#include "model/cluster_state.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

struct PodView {
  std::string namespace_name, name;
  std::vector<int32_t> gpus, shared;
  std::vector<MigDevice> mig;
  uint64_t bind_seq;
  bool operator==(const PodView&) const = default;
};

struct SlotView {
  bool live = false;
  std::string name;
  int64_t cpu_free = 0, memory_free = 0;
  int32_t pods = 0;
  std::vector<int32_t> gpu_free;
  int32_t gpu_free_total = 0;
  std::array<int32_t, kMaxGpusPerPod + 1> kinds{};
  std::vector<int32_t> replicas_used;
  std::vector<bool> mig_taken;
  int32_t anti_pods = 0;
  int32_t model_id = 0;
  std::vector<PodView> pods_on;
  bool operator==(const SlotView&) const = default;
};

// Everything observable but versions.
struct Snapshot {
  std::vector<SlotView> slots;
  size_t live = 0;
  int64_t capacity = 0, used = 0, anti = 0;
  std::vector<NodeId> anti_nodes;
  std::vector<std::string> models;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const ClusterState& s) {
  Snapshot out;
  for (NodeId n = 0; n < s.node_count(); ++n) {
    SlotView v;
    v.live = s.has_node(n);
    v.name = s.node(n).name;
    v.cpu_free = s.cpu_free_milli(n);
    v.memory_free = s.memory_free_bytes(n);
    v.pods = s.pod_count(n);
    v.gpu_free.assign(s.gpu_free_milli(n).begin(), s.gpu_free_milli(n).end());
    v.gpu_free_total = s.gpu_free_milli_total(n);
    v.kinds = s.gpu_pod_kinds(n);
    for (int32_t g = 0; g < s.node(n).gpu_count; ++g) v.replicas_used.push_back(s.replicas_used(n, g));
    for (size_t g = 0; g < s.node(n).mig.size(); ++g)
      for (size_t i = 0; i < s.node(n).mig[g].instances.size(); ++i)
        v.mig_taken.push_back(s.mig_device_taken(n, static_cast<int32_t>(g), i));
    v.anti_pods = s.anti_affinity_pod_count(n);
    v.model_id = s.gpu_model_id(n);
    for (const BoundPod& b : s.pods_on(n))
      v.pods_on.push_back({b.pod.namespace_name, b.pod.name, b.gpus, b.shared_replicas, b.mig, b.bind_seq});
    out.slots.push_back(std::move(v));
  }
  out.live = s.live_node_count();
  out.capacity = s.gpu_capacity_milli();
  out.used = s.gpu_used_milli();
  out.anti = s.anti_affinity_pod_count();
  out.anti_nodes.assign(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end());
  out.models = s.gpu_models();
  return out;
}

Pod anti(Pod p) {
  PodAffinityTerm t;
  t.topology_key = "kubernetes.io/hostname";
  t.has_label_selector = true;
  t.label_selector.match_labels = {{"app", "x"}};
  p.constraints.required_anti_affinity.push_back(t);
  return p;
}

// n0: 4 plain V100 GPUs. n1: an H100 with MIG 4g.40gb@0 + 3g.40gb@4. n2: 2 T4 GPUs time-sliced 4
// ways, renamed (nvidia.com/gpu.shared). n3: CPU only, empty.
// Pods: a (n0, GPU 0 x 500, seq 1), b (n0, anti-affinity, seq 2), c (n2, anti-affinity, 2 shared
// replicas on GPU 1, seq 3), d (n1, the 3g.40gb device, seq 4), e (n3, anti-affinity, seq 5).
// anti_affinity_nodes(): [0, 2, 3].
ClusterState build() {
  Node mig = make_node("n1", 64000, 524288, 1, "H100-80GB");
  mig.mig = {GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}}};
  Node sliced = make_node("n2", 16000, 65536, 2, "T4");
  sliced.time_slicing = TimeSlicing{4, true, false};
  ClusterState s({make_node("n0", 8000, 8192, 4), mig, sliced, make_node("n3", 4000, 4096, 0)});
  s.allocate(0, make_pod("a", 1000, 1024, 1, 500), {.gpus = {0}});
  s.allocate(0, anti(make_pod("b", 500, 0, 0, 0)), {});
  Pod c = anti(make_pod("c", 2000, 0, 0, 0));
  c.shared_replicas = 2;
  s.allocate(2, c, {.shared_replicas = {1, 1}});
  Pod d = make_pod("d", 4000, 0, 0, 0);
  d.mig_requests = {{"3g.40gb", 1}};
  s.allocate(1, d, {.mig = {{0, 4, "3g.40gb"}}});
  s.allocate(3, anti(make_pod("e", 100, 0, 0, 0)), {});
  return s;
}

// The changes of the discard and commit tests, with hand-computed values on the way.
void dry_run(ClusterState& s) {
  const BoundPod a = s.release(0, make_pod("a", 1000, 1024, 1, 500));
  EXPECT_EQ(a.bind_seq, 1u);
  EXPECT_EQ(a.gpus, std::vector<int32_t>{0});
  s.release(0, anti(make_pod("b", 500, 0, 0, 0)));  // n0 leaves the anti-affinity nodes: [3, 2]
  EXPECT_EQ(std::vector<NodeId>(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end()), (std::vector<NodeId>{3, 2}));
  EXPECT_EQ(s.allocate(0, make_pod("f", 2000, 0, 2, 1000), {.gpus = {2, 3}}), 6u);
  s.rebind(0, a);  // back in front of f
  Pod g = make_pod("g", 0, 0, 0, 0);
  g.shared_replicas = 1;
  EXPECT_EQ(s.allocate(2, g, {.shared_replicas = {0}}), 7u);
  s.release(3, anti(make_pod("e", 100, 0, 0, 0)));  // [2]
  EXPECT_EQ(s.remove_node(3).name, "n3");
  EXPECT_EQ(s.add_node(make_node("n4", 32000, 65536, 8, "A100")), 3u);
  EXPECT_EQ(s.add_node(make_node("i", 1000, 1024, 0), 6), 6u);
  EXPECT_EQ(s.allocate(3, make_pod("j", 0, 0, 8, 1000), {.gpus = {0, 1, 2, 3, 4, 5, 6, 7}}), 8u);
  Pod k = make_pod("k", 0, 0, 0, 0);
  k.mig_requests = {{"4g.40gb", 1}};
  EXPECT_EQ(s.allocate(1, k, {.mig = {{0, 0, "4g.40gb"}}}), 9u);

  // n0: a (1000 cpu, 500 on GPU 0) and f (2000 cpu, GPUs 2 and 3).
  EXPECT_EQ(s.cpu_free_milli(0), 5000);
  EXPECT_EQ(std::vector<int32_t>(s.gpu_free_milli(0).begin(), s.gpu_free_milli(0).end()), (std::vector<int32_t>{500, 1000, 0, 0}));
  ASSERT_EQ(s.pods_on(0).size(), 2u);
  EXPECT_EQ(s.pods_on(0)[0].bind_seq, 1u);
  EXPECT_EQ(s.pods_on(0)[1].bind_seq, 6u);
  EXPECT_EQ(std::vector<NodeId>(s.anti_affinity_nodes().begin(), s.anti_affinity_nodes().end()), std::vector<NodeId>{2});
  EXPECT_EQ(s.anti_affinity_pod_count(), 1);
  // 4 V100 + 1 H100 + 2 T4 + 8 A100 GPUs.
  EXPECT_EQ(s.gpu_capacity_milli(), 15000);
  // a 500 + f 2000 + c 2 x 250 + g 250 + d 3g 428 + k 4g 571 + j 8000.
  EXPECT_EQ(s.gpu_used_milli(), 12249);
  EXPECT_EQ(s.node_count(), 7u);
  EXPECT_EQ(s.live_node_count(), 5u);
  EXPECT_EQ(s.gpu_models(), (std::vector<std::string>{"V100M16", "H100-80GB", "T4", "", "A100"}));
}

TEST(ClusterStateFork, DiscardUndoesEverythingButVersions) {
  ClusterState s = build();
  const Snapshot before = snapshot(s);
  ASSERT_EQ(before.anti_nodes, (std::vector<NodeId>{0, 2, 3}));
  ASSERT_EQ(before.used, 1428);  // a 500 + c 500 + d 428
  std::vector<uint64_t> versions;
  for (NodeId n = 0; n < s.node_count(); ++n) versions.push_back(s.version(n));
  const uint64_t anti_version = s.anti_affinity_version();
  const uint64_t node_set_version = s.node_set_version();

  ClusterState::Fork fork = s.fork();
  EXPECT_EQ(s.open_fork_count(), 1u);
  dry_run(s);
  fork.discard();
  EXPECT_FALSE(fork.open());
  EXPECT_EQ(s.open_fork_count(), 0u);

  EXPECT_EQ(snapshot(s), before);
  for (NodeId n = 0; n < s.node_count(); ++n) EXPECT_GT(s.version(n), versions[n]) << n;  // every slot was touched
  EXPECT_NE(s.anti_affinity_version(), anti_version);
  EXPECT_NE(s.node_set_version(), node_set_version);
  // The next bind_seq is the one before the fork: 6.
  EXPECT_EQ(s.allocate(3, make_pod("probe", 0, 0, 0, 0), {}), 6u);
  // The A100 model registered in the fork is gone: a new model takes id 4 again.
  EXPECT_EQ(s.register_gpu_model("L4"), 4);
}

TEST(ClusterStateFork, CommitKeepsTheChanges) {
  ClusterState reference = build();
  dry_run(reference);
  ClusterState s = build();
  ClusterState::Fork fork = s.fork();
  dry_run(s);
  fork.commit();
  EXPECT_FALSE(fork.open());
  EXPECT_EQ(snapshot(s), snapshot(reference));
  EXPECT_EQ(s.allocate(6, make_pod("probe", 0, 0, 0, 0), {}), 10u);
  // A committed fork is over: nothing is undone at its destruction or by a later fork.
  ClusterState::Fork later = s.fork();
  later.discard();
  EXPECT_EQ(s.pods_on(6).size(), 1u);
  EXPECT_EQ(s.node_count(), 7u);
}

TEST(ClusterStateFork, DestructorDiscards) {
  ClusterState s = build();
  const Snapshot before = snapshot(s);
  {
    ClusterState::Fork fork = s.fork();
    dry_run(s);
  }
  EXPECT_EQ(snapshot(s), before);
  EXPECT_EQ(s.open_fork_count(), 0u);
  // Also when the dry run ends by an exception.
  try {
    ClusterState::Fork fork = s.fork();
    s.allocate(3, make_pod("x", 0, 0, 0, 0), {});
    s.allocate(3, make_pod("too-big", 999999, 0, 0, 0), {});  // throws InvariantViolation
  } catch (const InvariantViolation&) {
  }
  EXPECT_EQ(snapshot(s), before);
}

TEST(ClusterStateFork, ForksNest) {
  ClusterState s = build();
  const Pod x = make_pod("x", 100, 0, 0, 0), y = make_pod("y", 100, 0, 0, 0), z = make_pod("z", 100, 0, 0, 0);
  const Snapshot before = snapshot(s);
  {
    ClusterState::Fork outer = s.fork();
    EXPECT_EQ(s.allocate(3, x, {}), 6u);
    ClusterState::Fork inner = s.fork();
    EXPECT_EQ(s.open_fork_count(), 2u);
    EXPECT_EQ(s.allocate(3, y, {}), 7u);
    EXPECT_THROW(outer.commit(), std::logic_error);  // the inner one is still open
    EXPECT_THROW(outer.discard(), std::logic_error);
    inner.commit();
    EXPECT_EQ(s.pods_on(3).size(), 3u);  // e, x, y
    outer.discard();                     // takes the inner fork's committed changes too
  }
  EXPECT_EQ(snapshot(s), before);

  ClusterState::Fork outer = s.fork();
  EXPECT_EQ(s.allocate(3, x, {}), 6u);
  {
    ClusterState::Fork inner = s.fork();
    EXPECT_EQ(s.allocate(3, y, {}), 7u);
    EXPECT_EQ(s.add_node(make_node("tmp", 1000, 1024, 1)), 4u);
  }  // discarded
  EXPECT_EQ(s.node_count(), 4u);
  EXPECT_EQ(s.allocate(3, z, {}), 7u);  // y's bind_seq is free again
  outer.commit();
  std::vector<uint64_t> seqs;
  for (const BoundPod& b : s.pods_on(3)) seqs.push_back(b.bind_seq);
  EXPECT_EQ(seqs, (std::vector<uint64_t>{5, 6, 7}));
  EXPECT_EQ(s.pods_on(3)[2].pod.name, "z");
  EXPECT_THROW(outer.commit(), std::logic_error);  // already ended

  // An outer fork that ends (here by its destructor) ends the forks opened inside it.
  std::optional<ClusterState::Fork> inner;
  const Snapshot committed = snapshot(s);
  {
    ClusterState::Fork o = s.fork();
    s.allocate(3, make_pod("u", 0, 0, 0, 0), {});
    inner.emplace(s.fork());
    s.allocate(3, make_pod("v", 0, 0, 0, 0), {});
  }
  EXPECT_EQ(snapshot(s), committed);
  EXPECT_FALSE(inner->open());
  EXPECT_THROW(inner->discard(), std::logic_error);
  EXPECT_EQ(s.open_fork_count(), 0u);
}

TEST(ClusterStateFork, CordonIsUndoneOnDiscardAndKeptOnCommit) {
  ClusterState s({make_node("a", 4000, 1024, 1), make_node("b", 4000, 1024, 1)});
  const uint64_t v = s.version(1);
  {
    ClusterState::Fork fork = s.fork();
    s.set_unschedulable(1, true);
    EXPECT_TRUE(s.node(1).unschedulable);
    EXPECT_NE(s.version(1), v);
  }
  EXPECT_FALSE(s.node(1).unschedulable);
  EXPECT_GT(s.version(1), v + 1);  // the set and its undo each moved it
  ClusterState::Fork fork = s.fork();
  s.set_unschedulable(1, true);
  fork.commit();
  EXPECT_TRUE(s.node(1).unschedulable);
  EXPECT_FALSE(s.node(0).unschedulable);
  const uint64_t w = s.version(1);
  s.set_unschedulable(1, true);  // no change, no new version
  EXPECT_EQ(s.version(1), w);
  s.remove_node(0);
  EXPECT_THROW(s.set_unschedulable(0, true), InvariantViolation);
}

TEST(ClusterStateFork, ACopyHasNoOpenFork) {
  ClusterState s = build();
  ClusterState::Fork fork = s.fork();
  s.allocate(3, make_pod("x", 0, 0, 0, 0), {});
  ClusterState copy = s;
  EXPECT_EQ(copy.open_fork_count(), 0u);
  fork.discard();
  EXPECT_EQ(s.pods_on(3).size(), 1u);
  EXPECT_EQ(copy.pods_on(3).size(), 2u);  // the copy keeps x
}

}  // namespace
}  // namespace gpufleet
