// ClusterState: allocate/release keep the documented invariants; a refused call changes nothing.
#include "model/cluster_state.h"

#include <array>
#include <ostream>
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
using Gpus = std::vector<int32_t>;

// Everything observable about one node plus the cluster totals, to compare before/after.
struct Snapshot {
  int64_t cpu_used = 0;
  int64_t cpu_free = 0;
  int64_t mem_free = 0;
  int32_t pods = 0;
  std::vector<int32_t> gpu_free;
  int32_t gpu_free_total = 0;
  std::array<int32_t, kMaxGpusPerPod + 1> kinds{};
  uint32_t version = 0;
  int64_t cluster_gpu_used = 0;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snap(const ClusterState& s, NodeId n) {
  Snapshot out;
  out.cpu_used = s.cpu_used_milli(n);
  out.cpu_free = s.cpu_free_milli(n);
  out.mem_free = s.memory_free_bytes(n);
  out.pods = s.pod_count(n);
  auto f = s.gpu_free_milli(n);
  out.gpu_free.assign(f.begin(), f.end());
  out.gpu_free_total = s.gpu_free_milli_total(n);
  out.kinds = s.gpu_pod_kinds(n);
  out.version = s.version(n);
  out.cluster_gpu_used = s.gpu_used_milli();
  return out;
}

Node node_with_max_pods(int32_t max_pods) {
  Node n = make_node("n0", 4000, 8192, 4);
  n.max_pods = max_pods;
  return n;
}

TEST(ClusterState, FreshStateHasEverythingFree) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("cpu", 2000, 1024, 0)});
  EXPECT_EQ(s.node_count(), 2u);
  EXPECT_EQ(s.cpu_free_milli(0), 4000);
  EXPECT_EQ(s.memory_free_bytes(0), 8192 * kBytesPerMib);
  EXPECT_EQ(s.pod_count(0), 0);
  EXPECT_EQ(s.gpu_free_milli(0).size(), 4u);
  for (int32_t f : s.gpu_free_milli(0)) EXPECT_EQ(f, 1000);
  EXPECT_EQ(s.gpu_free_milli(1).size(), 0u);
  EXPECT_EQ(s.gpu_free_milli_total(0), 4000);
  EXPECT_EQ(s.gpu_free_milli_total(1), 0);
  EXPECT_EQ(s.gpu_fully_free_count(0), 4);
  EXPECT_EQ(s.version(0), 1u);
  EXPECT_EQ(s.version(1), 1u);
  EXPECT_EQ(s.gpu_capacity_milli(), 4000);
  EXPECT_EQ(s.gpu_count(), 4);
  EXPECT_EQ(s.gpu_used_milli(), 0);
  for (int32_t k : s.gpu_pod_kinds(0)) EXPECT_EQ(k, 0);
}

TEST(ClusterState, SharingPodsFillOneGpuToExactly1000) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  s.allocate(0, make_pod("a", 1000, 1024, 1, 600), {.gpus = {0}});
  EXPECT_EQ(s.gpu_used_milli(0, 0), 600);
  EXPECT_EQ(s.gpu_free_milli(0)[0], 400);
  EXPECT_EQ(s.gpu_free_milli_total(0), 3400);
  EXPECT_EQ(s.gpu_fully_free_count(0), 3);
  EXPECT_EQ(s.gpu_used_milli(), 600);
  EXPECT_EQ(s.cpu_free_milli(0), 3000);
  EXPECT_EQ(s.cpu_used_milli(0), 1000);
  EXPECT_EQ(s.memory_free_bytes(0), 7168 * kBytesPerMib);
  EXPECT_EQ(s.pod_count(0), 1);

  // 500 does not fit in the 400 left on GPU 0 ...
  const Snapshot before = snap(s, 0);
  EXPECT_FALSE(s.can_allocate(0, make_pod("b", 0, 0, 1, 500), {.gpus = {0}}));
  EXPECT_THROW(s.allocate(0, make_pod("b", 0, 0, 1, 500), {.gpus = {0}}), InvariantViolation);
  EXPECT_EQ(snap(s, 0), before);
  // ... but exactly 400 does, and leaves the GPU at 1000 used, 0 free.
  EXPECT_TRUE(s.can_allocate(0, make_pod("c", 0, 0, 1, 400), {.gpus = {0}}));
  s.allocate(0, make_pod("c", 0, 0, 1, 400), {.gpus = {0}});
  EXPECT_EQ(s.gpu_used_milli(0, 0), 1000);
  EXPECT_EQ(s.gpu_free_milli(0)[0], 0);
  EXPECT_EQ(s.gpu_pod_kinds(0)[0], 2);
  EXPECT_EQ(s.gpu_used_milli(), 1000);
  // Now even 1 milli is refused on GPU 0 but accepted on GPU 3.
  EXPECT_THROW(s.allocate(0, make_pod("d", 0, 0, 1, 1), {.gpus = {0}}), InvariantViolation);
  s.allocate(0, make_pod("d", 0, 0, 1, 1), {.gpus = {3}});
  EXPECT_EQ(s.gpu_used_milli(0, 3), 1);
  EXPECT_EQ(s.gpu_free_milli_total(0), 2999);
}

// Each case: a node n0 (4000 cpu, 8192 MiB, 4 GPUs, max_pods 3) preloaded with `setup`, then one
// allocate that must be refused with the state left exactly as it was.
struct RefusedCase {
  const char* what;
  std::vector<std::pair<Pod, Gpus>> setup;
  Pod pod;
  Gpus gpus;
};

void PrintTo(const RefusedCase& c, std::ostream* os) { *os << c.what; }

class RefusedAllocate : public ::testing::TestWithParam<RefusedCase> {};

TEST_P(RefusedAllocate, ThrowsAndLeavesStateUnchanged) {
  const RefusedCase& c = GetParam();
  ClusterState s({node_with_max_pods(3), make_node("other", 1000, 1000, 1)});
  for (const auto& [p, g] : c.setup) s.allocate(0, p, {.gpus = g});
  const Snapshot before = snap(s, 0);
  const Snapshot other_before = snap(s, 1);
  EXPECT_FALSE(s.can_allocate(0, c.pod, {.gpus = c.gpus})) << c.what;
  EXPECT_THROW(s.allocate(0, c.pod, {.gpus = c.gpus}), InvariantViolation) << c.what;
  EXPECT_EQ(snap(s, 0), before) << c.what;
  EXPECT_EQ(snap(s, 1), other_before) << c.what;
}

INSTANTIATE_TEST_SUITE_P(
    ClusterState, RefusedAllocate,
    ::testing::Values(
        RefusedCase{"cpu above allocatable", {}, make_pod("p", 4001, 0, 0, 0), {}},
        RefusedCase{"cpu above what is left", {{make_pod("x", 3000, 0, 0, 0), {}}}, make_pod("p", 1001, 0, 0, 0), {}},
        RefusedCase{"memory above allocatable", {}, make_pod("p", 0, 8193, 0, 0), {}},
        RefusedCase{"memory above what is left", {{make_pod("x", 0, 8000, 0, 0), {}}}, make_pod("p", 0, 193, 0, 0), {}},
        RefusedCase{"max_pods reached",
                    {{make_pod("x", 0, 0, 0, 0), {}}, {make_pod("y", 0, 0, 0, 0), {}}, {make_pod("z", 0, 0, 0, 0), {}}},
                    make_pod("p", 0, 0, 0, 0),
                    {}},
        RefusedCase{"sharing pod without GPU index", {}, make_pod("p", 0, 0, 1, 500), {}},
        RefusedCase{"sharing pod with two indices", {}, make_pod("p", 0, 0, 1, 500), {0, 1}},
        RefusedCase{"cpu-only pod with a GPU index", {}, make_pod("p", 0, 0, 0, 0), {0}},
        RefusedCase{"2-GPU pod with one index", {}, make_pod("p", 0, 0, 2, 1000), {1}},
        RefusedCase{"2-GPU pod with three indices", {}, make_pod("p", 0, 0, 2, 1000), {0, 1, 2}},
        RefusedCase{"duplicate GPU index", {}, make_pod("p", 0, 0, 2, 1000), {1, 1}},
        RefusedCase{"GPU index == gpu_count", {}, make_pod("p", 0, 0, 1, 100), {4}},
        RefusedCase{"negative GPU index", {}, make_pod("p", 0, 0, 1, 100), {-1}},
        RefusedCase{"whole GPU on a partly used GPU", {{make_pod("x", 0, 0, 1, 1), {2}}}, make_pod("p", 0, 0, 1, 1000), {2}},
        RefusedCase{"multi-GPU pod needs fully free GPUs",
                    {{make_pod("x", 0, 0, 1, 100), {0}}},
                    make_pod("p", 0, 0, 2, 1000),
                    {0, 1}},
        RefusedCase{"4-GPU pod when one GPU is partly used",
                    {{make_pod("x", 0, 0, 1, 999), {3}}},
                    make_pod("p", 0, 0, 4, 1000),
                    {0, 1, 2, 3}},
        RefusedCase{"gpu_milli above 1000", {}, make_pod("p", 0, 0, 1, 1001), {0}},
        RefusedCase{"negative cpu request", {}, make_pod("p", -1, 0, 0, 0), {}},
        RefusedCase{"negative memory request", {}, make_pod("p", 0, -1, 0, 0), {}}),
    [](const ::testing::TestParamInfo<RefusedCase>& info) { return "case" + std::to_string(info.index); });

TEST(ClusterState, NodeIdOutOfRangeIsRefused) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  EXPECT_FALSE(s.can_allocate(1, make_pod("p", 0, 0, 0, 0), {}));
  EXPECT_THROW(s.allocate(1, make_pod("p", 0, 0, 0, 0), {}), InvariantViolation);
  EXPECT_THROW(s.release(1, make_pod("p", 0, 0, 0, 0)), InvariantViolation);
}

TEST(ClusterState, MultiGpuPodTakesWholeFreeGpus) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  s.allocate(0, make_pod("share", 0, 0, 1, 300), {.gpus = {0}});
  s.allocate(0, make_pod("two", 0, 0, 2, 1000), {.gpus = {1, 3}});
  EXPECT_EQ(s.gpu_used_milli(0, 0), 300);
  EXPECT_EQ(s.gpu_used_milli(0, 1), 1000);
  EXPECT_EQ(s.gpu_used_milli(0, 2), 0);
  EXPECT_EQ(s.gpu_used_milli(0, 3), 1000);
  EXPECT_EQ(s.gpu_fully_free_count(0), 1);
  EXPECT_EQ(s.gpu_free_milli_total(0), 700 + 1000);
  EXPECT_EQ(s.gpu_used_milli(), 2300);
  EXPECT_EQ(s.gpu_pod_kinds(0)[0], 1);
  EXPECT_EQ(s.gpu_pod_kinds(0)[2], 1);
  // Only GPU 2 is fully free now: a second 2-GPU pod fits nowhere.
  for (Gpus g : {Gpus{0, 2}, Gpus{1, 2}, Gpus{2, 3}})
    EXPECT_THROW(s.allocate(0, make_pod("two-b", 0, 0, 2, 1000), {.gpus = g}), InvariantViolation);
  s.allocate(0, make_pod("one", 0, 0, 1, 1000), {.gpus = {2}});
  EXPECT_EQ(s.gpu_fully_free_count(0), 0);
  EXPECT_EQ(s.gpu_pod_kinds(0)[1], 1);
}

TEST(ClusterState, GpuPodKindsCountsByKind) {
  ClusterState s({make_node("n0", 64000, 65536, 16)});
  s.allocate(0, make_pod("cpu", 100, 100, 0, 0), {});
  s.allocate(0, make_pod("s1", 0, 0, 1, 250), {.gpus = {0}});
  s.allocate(0, make_pod("s2", 0, 0, 1, 999), {.gpus = {1}});
  s.allocate(0, make_pod("w1", 0, 0, 1, 1000), {.gpus = {2}});
  s.allocate(0, make_pod("w2", 0, 0, 2, 1000), {.gpus = {3, 4}});
  s.allocate(0, make_pod("w8", 0, 0, 8, 1000), {.gpus = {5, 6, 7, 8, 9, 10, 11, 12}});
  s.allocate(0, make_pod("w2b", 0, 0, 2, 1000), {.gpus = {13, 15}});
  const std::array<int32_t, kMaxGpusPerPod + 1> want{2, 1, 2, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(s.gpu_pod_kinds(0), want);
  EXPECT_EQ(s.pod_count(0), 7);
  EXPECT_EQ(s.gpu_used_milli(), 250 + 999 + 1000 + 2000 + 8000 + 2000);
  EXPECT_EQ(s.gpu_fully_free_count(0), 1);  // GPU 14
  s.release(0, make_pod("w2", 0, 0, 2, 1000));
  const std::array<int32_t, kMaxGpusPerPod + 1> want2{2, 1, 1, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(s.gpu_pod_kinds(0), want2);
}

TEST(ClusterState, ReleaseRestoresExactly) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("n1", 4000, 8192, 2)});
  s.allocate(0, make_pod("base", 500, 512, 1, 200), {.gpus = {1}});
  const Snapshot before = snap(s, 0);
  const std::vector<std::pair<Pod, Gpus>> steps = {
      {make_pod("cpu", 1000, 1000, 0, 0), {}},
      {make_pod("share", 300, 300, 1, 700), {1}},
      {make_pod("two", 200, 200, 2, 1000), {0, 3}},
  };
  for (const auto& [p, g] : steps) s.allocate(0, p, {.gpus = g});
  EXPECT_EQ(s.version(0), before.version + 3);
  EXPECT_EQ(s.gpu_used_milli(0, 1), 900);
  // Release in another order than allocated.
  s.release(0, steps[1].first);
  s.release(0, steps[0].first);
  s.release(0, steps[2].first);
  Snapshot after = snap(s, 0);
  EXPECT_EQ(after.version, before.version + 6);
  after.version = before.version;
  EXPECT_EQ(after, before);
}

TEST(ClusterState, ReleaseOfSomethingNotReservedThrows) {
  ClusterState s({make_node("n0", 4000, 8192, 4)});
  const Snapshot fresh = snap(s, 0);
  // Nothing reserved at all.
  EXPECT_THROW(s.release(0, make_pod("p", 0, 0, 0, 0)), InvariantViolation);
  EXPECT_THROW(s.release(0, make_pod("p", 0, 0, 1, 500)), InvariantViolation);
  EXPECT_EQ(snap(s, 0), fresh);

  s.allocate(0, make_pod("a", 1000, 1000, 1, 600), {.gpus = {0}});
  const Snapshot before = snap(s, 0);
  const std::vector<std::pair<Pod, Gpus>> bad = {
      {make_pod("more-cpu", 1001, 1000, 1, 600), {0}},   // more CPU than is used
      {make_pod("more-mem", 1000, 1001, 1, 600), {0}},   // more memory than is used
      {make_pod("other-gpu", 1000, 1000, 1, 600), {1}},  // GPU 1 holds nothing
      {make_pod("too-much", 1000, 1000, 1, 700), {0}},   // GPU 0 would go above 1000 free
      {make_pod("whole", 0, 0, 1, 1000), {0}},           // no whole-GPU pod on the node
      {make_pod("wrong-count", 1000, 1000, 1, 600), {}},
      {make_pod("dup", 0, 0, 2, 1000), {0, 0}},
      {make_pod("range", 1000, 1000, 1, 600), {4}},
  };
  for (const auto& [p, g] : bad) {
    EXPECT_THROW(s.release(0, p), InvariantViolation) << p.name;
    EXPECT_EQ(snap(s, 0), before) << p.name;
  }
  s.release(0, make_pod("a", 1000, 1000, 1, 600));
  EXPECT_THROW(s.release(0, make_pod("a", 1000, 1000, 1, 600)), InvariantViolation);  // twice

  // Right resources, wrong kind: a whole GPU is held, no sharing pod was ever placed.
  s.allocate(0, make_pod("whole", 1000, 1000, 1, 1000), {.gpus = {2}});
  const Snapshot held = snap(s, 0);
  EXPECT_THROW(s.release(0, make_pod("share", 0, 0, 1, 500)), InvariantViolation);
  EXPECT_EQ(snap(s, 0), held);
}

TEST(ClusterState, VersionBumpsOnlyForTheChangedNode) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("n1", 4000, 8192, 4)});
  EXPECT_EQ(s.version(0), 1u);
  s.allocate(0, make_pod("a", 0, 0, 1, 100), {.gpus = {0}});
  EXPECT_EQ(s.version(0), 2u);
  EXPECT_EQ(s.version(1), 1u);
  s.allocate(0, make_pod("b", 0, 0, 0, 0), {});
  EXPECT_EQ(s.version(0), 3u);
  s.release(0, make_pod("a", 0, 0, 1, 100));
  EXPECT_EQ(s.version(0), 4u);
  EXPECT_EQ(s.version(1), 1u);
  s.allocate(1, make_pod("c", 0, 0, 1, 100), {.gpus = {3}});
  EXPECT_EQ(s.version(0), 4u);
  EXPECT_EQ(s.version(1), 2u);
}

TEST(ClusterState, GpuModelsAreInternedInFirstSeenOrder) {
  ClusterState s({make_node("a", 1000, 1000, 2, "V100M16"), make_node("b", 1000, 1000, 0),
                  make_node("c", 1000, 1000, 8, "T4"), make_node("d", 1000, 1000, 1, "V100M16"),
                  make_node("e", 1000, 1000, 0), make_node("f", 1000, 1000, 4, "A100")});
  EXPECT_EQ(s.gpu_models(), (std::vector<std::string>{"V100M16", "", "T4", "A100"}));
  const std::vector<int32_t> want{0, 1, 2, 0, 1, 3};
  for (NodeId n = 0; n < s.node_count(); ++n) {
    EXPECT_EQ(s.gpu_model_id(n), want[n]) << n;
    EXPECT_EQ(s.gpu_models()[static_cast<size_t>(s.gpu_model_id(n))], s.node(n).gpu_model);
  }
  EXPECT_EQ(s.gpu_capacity_milli(), 15000);
  EXPECT_EQ(s.gpu_count(), 15);
}

TEST(ClusterState, GpuUsedMilliTotalsAcrossNodes) {
  ClusterState s({make_node("a", 8000, 8192, 2), make_node("b", 8000, 8192, 3)});
  s.allocate(0, make_pod("p1", 0, 0, 1, 250), {.gpus = {1}});
  s.allocate(1, make_pod("p2", 0, 0, 2, 1000), {.gpus = {0, 2}});
  s.allocate(1, make_pod("p3", 0, 0, 1, 125), {.gpus = {1}});
  s.allocate(0, make_pod("cpu", 100, 0, 0, 0), {});
  EXPECT_EQ(s.gpu_used_milli(), 250 + 2000 + 125);
  EXPECT_EQ(s.gpu_used_milli(0, 1), 250);
  EXPECT_EQ(s.gpu_used_milli(1, 0), 1000);
  EXPECT_EQ(s.gpu_used_milli(1, 1), 125);
  EXPECT_EQ(s.gpu_free_milli_total(0), 1750);
  EXPECT_EQ(s.gpu_free_milli_total(1), 875);
  s.release(1, make_pod("p2", 0, 0, 2, 1000));
  EXPECT_EQ(s.gpu_used_milli(), 375);
  EXPECT_EQ(s.gpu_capacity_milli(), 5000);
}

struct CtorCase {
  const char* what;
  Node node;
  bool ok;
};

Node with(Node n, void (*edit)(Node&)) {
  edit(n);
  return n;
}

TEST(ClusterState, ConstructorValidatesNodes) {
  const std::vector<CtorCase> cases = {
      {"16 GPUs ok", make_node("n", 1000, 1000, 16), true},
      {"17 GPUs", make_node("n", 1000, 1000, 17), false},
      {"zero capacity ok", make_node("n", 0, 0, 0), true},
      {"negative cpu", make_node("n", -1, 1000, 1), false},
      {"negative memory", make_node("n", 1000, -1, 1), false},
      {"negative gpu count", with(make_node("n", 1000, 1000, 0), [](Node& n) { n.gpu_count = -1; }), false},
      {"negative max_pods", with(make_node("n", 1000, 1000, 1), [](Node& n) { n.max_pods = -1; }), false},
  };
  for (const CtorCase& c : cases) {
    if (c.ok) {
      EXPECT_NO_THROW(ClusterState({make_node("fine", 1, 1, 1), c.node})) << c.what;
    } else {
      EXPECT_THROW(ClusterState({make_node("fine", 1, 1, 1), c.node}), std::invalid_argument) << c.what;
    }
  }
}

// Random allocate/release sequence checked against a shadow model of the invariants.
TEST(ClusterState, RandomSequenceKeepsInvariants) {
  std::mt19937 gen(12345);
  std::vector<Node> nodes = {make_node("a", 16000, 32768, 8), make_node("b", 8000, 16384, 4), make_node("c", 4000, 4096, 0)};
  nodes[1].max_pods = 6;
  ClusterState s(nodes);
  struct Placed {
    NodeId n;
    Pod pod;
    Gpus gpus;
  };
  std::vector<Placed> placed;
  const std::vector<int32_t> milli_choices{100, 250, 500, 750, 1000};
  int allocated = 0, refused = 0;
  for (int step = 0; step < 3000; ++step) {
    if (!placed.empty() && gen() % 3 == 0) {
      const size_t i = gen() % placed.size();
      const uint32_t v = s.version(placed[i].n);
      s.release(placed[i].n, placed[i].pod);
      EXPECT_EQ(s.version(placed[i].n), v + 1);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      const auto n = static_cast<NodeId>(gen() % nodes.size());
      Pod p = make_pod("p" + std::to_string(step), static_cast<int64_t>(gen() % 3000), static_cast<int64_t>(gen() % 5000), 0, 0);
      const int kind = static_cast<int>(gen() % 4);  // 0 cpu, 1 share, 2 whole x1, 3 whole x2
      Gpus g;
      const int32_t gc = nodes[n].gpu_count;
      if (kind == 1) {
        p.num_gpu = 1;
        p.gpu_milli = milli_choices[gen() % 4];
      } else if (kind >= 2) {
        p.num_gpu = kind - 1;
        p.gpu_milli = 1000;
      }
      for (int k = 0; k < p.num_gpu; ++k) g.push_back(gc > 0 ? static_cast<int32_t>(gen() % static_cast<uint32_t>(gc)) : 0);
      // Shadow check of the documented rules.
      bool fits = p.cpu_milli <= s.cpu_free_milli(n) && p.memory_bytes <= s.memory_free_bytes(n) &&
                  s.pod_count(n) < nodes[n].max_pods;
      for (size_t k = 0; k < g.size(); ++k) {
        fits = fits && g[k] < gc && s.gpu_free_milli(n)[static_cast<size_t>(g[k])] >= p.gpu_milli;
        for (size_t j = 0; j < k; ++j) fits = fits && g[j] != g[k];
      }
      const Snapshot before = snap(s, n);
      EXPECT_EQ(s.can_allocate(n, p, {.gpus = g}), fits) << step;
      if (fits) {
        s.allocate(n, p, {.gpus = g});
        placed.push_back({n, p, g});
        ++allocated;
      } else {
        EXPECT_THROW(s.allocate(n, p, {.gpus = g}), InvariantViolation) << step;
        EXPECT_EQ(snap(s, n), before) << step;
        ++refused;
      }
    }
    // Invariants on every node, and totals against the list of placed pods.
    int64_t used_total = 0;
    for (NodeId n = 0; n < nodes.size(); ++n) {
      int64_t cpu = 0, mem = 0;
      int32_t pods = 0;
      std::vector<int32_t> used(static_cast<size_t>(nodes[n].gpu_count), 0);
      for (const Placed& pl : placed) {
        if (pl.n != n) continue;
        cpu += pl.pod.cpu_milli;
        mem += pl.pod.memory_bytes;
        ++pods;
        for (int32_t gi : pl.gpus) used[static_cast<size_t>(gi)] += pl.pod.gpu_milli;
      }
      ASSERT_EQ(s.cpu_used_milli(n), cpu);
      ASSERT_LE(cpu, nodes[n].cpu_milli);
      ASSERT_EQ(s.memory_free_bytes(n), nodes[n].memory_bytes - mem);
      ASSERT_LE(mem, nodes[n].memory_bytes);
      ASSERT_EQ(s.pod_count(n), pods);
      ASSERT_LE(pods, nodes[n].max_pods);
      int32_t free_total = 0;
      for (int32_t gi = 0; gi < nodes[n].gpu_count; ++gi) {
        ASSERT_LE(used[static_cast<size_t>(gi)], 1000);
        ASSERT_EQ(s.gpu_used_milli(n, gi), used[static_cast<size_t>(gi)]);
        free_total += 1000 - used[static_cast<size_t>(gi)];
        used_total += used[static_cast<size_t>(gi)];
      }
      ASSERT_EQ(s.gpu_free_milli_total(n), free_total);
    }
    ASSERT_EQ(s.gpu_used_milli(), used_total);
  }
  // The sequence exercised both paths.
  EXPECT_GT(allocated, 200);
  EXPECT_GT(refused, 200);
}

TEST(ClusterState, KeepsTheBoundPodsOfEachNode) {
  ClusterState s({make_node("n0", 4000, 8192, 4), make_node("n1", 4000, 8192, 2)});
  s.allocate(0, make_pod("a", 1000, 1000, 1, 600), {.gpus = {2}});
  s.allocate(0, make_pod("b", 1000, 1000, 0, 0), {});
  s.allocate(1, make_pod("c", 0, 0, 2, 1000), {.gpus = {0, 1}});
  ASSERT_EQ(s.pods_on(0).size(), 2u);
  EXPECT_EQ(s.pods_on(0)[0].pod.name, "a");
  EXPECT_EQ(s.pods_on(0)[0].gpus, (Gpus{2}));
  EXPECT_EQ(s.pods_on(0)[1].pod.name, "b");
  EXPECT_EQ(s.pods_on(1)[0].gpus, (Gpus{0, 1}));
  // Same request, other name: not the bound pod.
  EXPECT_THROW(s.release(0, make_pod("z", 1000, 1000, 1, 600)), InvariantViolation);
  s.release(0, make_pod("a", 1000, 1000, 1, 600));
  ASSERT_EQ(s.pods_on(0).size(), 1u);
  EXPECT_EQ(s.pods_on(0)[0].pod.name, "b");
}

}  // namespace
}  // namespace gpufleet
