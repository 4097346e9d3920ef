// gpufleet's policy (sched/plugins/gpufleet_score.h): its estimates and terms, by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "model/cluster_state.h"
#include "sched/plugins/fgd_score.h"
#include "sched/plugins/gpufleet_score.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

TEST(GpufleetScore, RatiosAndStrandedGpus) {
  const ClusterState state({make_node("n", 96000, 393216, 8, "G2")});
  GpufleetScore plugin(state);
  EXPECT_EQ(plugin.stranded_milli(8000, 0, 0), 0.0);  // nothing seen: no ratio, nothing stranded
  // 12000 CPU milli and 49152 MiB for 1500 gpu_milli: r_cpu = 8, r_mem = 32.768 per gpu_milli.
  plugin.observe(make_pod("a", 8000, 32768, 1, 1000), state);
  plugin.observe(make_pod("b", 4000, 16384, 1, 500), state);
  EXPECT_DOUBLE_EQ(plugin.cpu_per_gpu_milli(), 8.0);
  EXPECT_DOUBLE_EQ(plugin.memory_per_gpu_milli(), 32.768 * kBytesPerMib);  // bytes
  // 2000 gpu_milli free, 8000 CPU: the CPU feeds 1000 of them, 1000 are stranded.
  constexpr int64_t kLots = int64_t{1} << 50;
  EXPECT_DOUBLE_EQ(plugin.stranded_milli(2000, 8000, kLots), 1000.0);
  // Memory short instead: 16384 MiB feed 500 gpu_milli, 1500 stranded.
  EXPECT_DOUBLE_EQ(plugin.stranded_milli(2000, 100000, 16384 * kBytesPerMib), 1500.0);
  // The worse of the two counts; never more than the free GPU milli, never negative.
  EXPECT_DOUBLE_EQ(plugin.stranded_milli(2000, 8000, 16384 * kBytesPerMib), 1500.0);
  EXPECT_DOUBLE_EQ(plugin.stranded_milli(2000, 0, 0), 2000.0);
  EXPECT_DOUBLE_EQ(plugin.stranded_milli(1000, 100000, kLots), 0.0);
  // CPU-only pods do not move the ratios (4 pods seen: a refresh point).
  plugin.observe(make_pod("c", 32000, 1024, 0, 0), state);
  plugin.observe(make_pod("d", 32000, 1024, 0, 0), state);
  EXPECT_DOUBLE_EQ(plugin.cpu_per_gpu_milli(), 8.0);
}

TEST(GpufleetScore, ModelPressure) {
  // 4 T4 and 4 G2 GPUs, CPU and memory to spare (nothing stranded).
  ClusterState state({make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 64000, 262144, 4, "G2")});
  const int32_t t4 = state.gpu_model_id(0), g2 = state.gpu_model_id(1);
  GpufleetScore plugin(state);
  // A quarter of the GPU demand allows only T4; the cluster is empty: L = 8000, U(T4) = 4000,
  // share = 0.25 x 8000 / 4000 = 0.5, p = (0.5 - 0.15) / 0.85 for a pod allowed any model.
  plugin.observe(make_pod("pinned", 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free1", 8000, 1024, 1, 1000), state);
  plugin.observe(make_pod("free2", 8000, 1024, 1, 1000, "T4|G2"), state);  // every model: not constrained
  plugin.observe(make_pod("free3", 8000, 1024, 1, 1000), state);
  EXPECT_NEAR(plugin.model_pressure(t4), 0.35 / 0.85, 1e-12);
  EXPECT_NEAR(plugin.model_pressure(t4, "T4|G2"), 0.35 / 0.85, 1e-12);
  EXPECT_EQ(plugin.model_pressure(g2), 0.0);
  EXPECT_EQ(plugin.model_pressure(t4, "T4"), 0.0);  // a pod pinned to T4 pays nothing for T4's own pods
  EXPECT_EQ(plugin.model_pressure(99), 0.0);        // unknown model id
  // Other pods fill T4 early: 3 of its 4 GPUs are taken. Half the demand is pinned to T4 now (8 pods
  // seen, a refresh point): L = 5000, U(T4) = 1000, share = 0.5 x 5000 / 1000 = 2.5, p = 1.
  state.allocate(0, make_pod("early", 8000, 1024, 3, 1000), {.gpus = {0, 1, 2}});
  const uint64_t before = plugin.generation();
  for (int i = 0; i < 3; ++i) plugin.observe(make_pod("pinned" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free4", 8000, 1024, 1, 1000), state);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(t4), 1.0);
  EXPECT_GT(plugin.generation(), before);  // the scheduler drops its cached scores
  // Once T4 is full the pinned pods can claim nothing more there: U(T4) = 0 counts as 1 milli, but
  // with T4 and G2 both full L = 0 and the share is 0.
  state.allocate(0, make_pod("last", 8000, 1024, 1, 1000), {.gpus = {3}});
  state.allocate(1, make_pod("g2full", 8000, 1024, 4, 1000), {.gpus = {0, 1, 2, 3}});
  for (int i = 0; i < 8; ++i) plugin.observe(make_pod("more" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
  EXPECT_EQ(plugin.model_pressure(t4), 0.0);  // refreshed at 16 pods seen (a refresh point)
}

// A node that the outlook lists but the state does not hold yet (a pool's node not launched) counts
// as an empty node of its shape: the same pressures as ModelPressure, whose state holds both nodes.
TEST(GpufleetScore, OutlookCountsAbsentNodesAsEmpty) {
  const ClusterState full({make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 64000, 262144, 4, "G2")});
  ClusterState state;
  state.register_gpu_model("T4");
  const int32_t g2 = state.register_gpu_model("G2");
  state.add_node(make_node("t4", 64000, 262144, 4, "T4"), 0);  // slot 1 (g2) stays empty
  GpufleetScore plugin(state, CapacityOutlook::of(full));
  ASSERT_EQ(plugin.shape().classes.size(), 2u);
  EXPECT_EQ(plugin.shape().classes[1].model_id, g2);
  // L = 8000 (the outlook's capacity), U(T4) = 4000: share 0.5, p = 0.35 / 0.85.
  plugin.observe(make_pod("pinned", 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free1", 8000, 1024, 1, 1000), state);
  plugin.observe(make_pod("free2", 8000, 1024, 1, 1000, "T4|G2"), state);
  plugin.observe(make_pod("free3", 8000, 1024, 1, 1000), state);
  EXPECT_NEAR(plugin.model_pressure(0), 0.35 / 0.85, 1e-12);
  // 3 T4 GPUs taken: L = 8000 - 3000, U(T4) = 1000, share 2.5, p = 1.
  state.allocate(0, make_pod("early", 8000, 1024, 3, 1000), {.gpus = {0, 1, 2}});
  for (int i = 0; i < 3; ++i) plugin.observe(make_pod("pinned" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free4", 8000, 1024, 1, 1000), state);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(0), 1.0);
  // Without the outlook the absent G2 node is no capacity: L = 1000 = U(T4), share 0.5.
  GpufleetScore live_only(state);
  EXPECT_EQ(live_only.shape().classes.size(), 1u);
}

// A plugin made on the state's own nodes (as `serve` makes it) re-reads them when told the node set
// changed, keeping the pods it saw: with the G2 node added it holds ModelPressure's first figures (a
// plugin made with both nodes that saw the same pods); with it removed again, T4 is every model and
// the pods pinned to it are no constrained set. A plugin made with an outlook keeps its classes.
TEST(GpufleetScore, NodesChangedRereadsTheNodeSet) {
  ClusterState state;
  const int32_t t4 = state.register_gpu_model("T4");
  const int32_t g2 = state.register_gpu_model("G2");
  state.add_node(make_node("t4", 64000, 262144, 4, "T4"));
  GpufleetScore plugin(state);
  GpufleetScore planned(state, CapacityOutlook::of(state));
  for (GpufleetScore* p : {&plugin, &planned}) {
    p->observe(make_pod("pinned", 8000, 1024, 1, 1000, "T4"), state);
    p->observe(make_pod("free1", 8000, 1024, 1, 1000), state);
    p->observe(make_pod("free2", 8000, 1024, 1, 1000, "T4|G2"), state);
    p->observe(make_pod("free3", 8000, 1024, 1, 1000), state);
  }
  ASSERT_EQ(plugin.shape().classes.size(), 1u);
  EXPECT_EQ(plugin.model_pressure(t4), 0.0);  // T4 is every model: nothing is constrained
  const uint64_t before = plugin.generation();
  state.add_node(make_node("g2", 64000, 262144, 4, "G2"));
  plugin.nodes_changed(state);
  planned.nodes_changed(state);
  ASSERT_EQ(plugin.shape().classes.size(), 2u);
  EXPECT_EQ(plugin.shape().classes[1].model_id, g2);
  // L = 8000, U(T4) = 4000, a quarter of the demand pinned to T4: share 0.5, p = 0.35 / 0.85.
  EXPECT_NEAR(plugin.model_pressure(t4), 0.35 / 0.85, 1e-12);
  EXPECT_EQ(plugin.model_pressure(g2), 0.0);
  EXPECT_EQ(plugin.model_pressure(t4, "T4"), 0.0);
  EXPECT_GT(plugin.generation(), before);  // the scheduler drops its cached scores
  EXPECT_EQ(planned.shape().classes.size(), 1u);
  EXPECT_EQ(planned.model_pressure(t4), 0.0);
  // The pods seen go on counting: 3 T4 GPUs taken and four more pods, half the demand pinned to T4
  // (ModelPressure's second figure): L = 5000, U(T4) = 1000, share 2.5, p = 1.
  state.allocate(0, make_pod("early", 8000, 1024, 3, 1000), {.gpus = {0, 1, 2}});
  for (int i = 0; i < 3; ++i) plugin.observe(make_pod("pinned" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free4", 8000, 1024, 1, 1000), state);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(t4), 1.0);
  state.remove_node(1);
  plugin.nodes_changed(state);
  EXPECT_EQ(plugin.shape().classes.size(), 1u);
  EXPECT_EQ(plugin.model_pressure(t4), 0.0);
  // A node of a class there is: the classes stand, the pressures (all 0) do not move, so the
  // scheduler keeps its scores.
  const uint64_t kept = plugin.generation();
  state.add_node(make_node("t4b", 64000, 262144, 4, "T4"));
  plugin.nodes_changed(state);
  ASSERT_EQ(plugin.shape().classes.size(), 1u);
  EXPECT_EQ(plugin.shape().classes[0].gpus, 8);
  EXPECT_EQ(plugin.generation(), kept);
}

// A node joining a class the cluster has moves the pressures by the capacity it brings: with a
// second G2 node, L = 12000 and U(T4) = 4000, share 0.25 x 12000 / 4000 = 0.75, p = 0.6 / 0.85.
TEST(GpufleetScore, NodesChangedInAClassRefreshesThePressures) {
  ClusterState state({make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 64000, 262144, 4, "G2")});
  const int32_t t4 = state.gpu_model_id(0);
  GpufleetScore plugin(state);
  plugin.observe(make_pod("pinned", 8000, 1024, 1, 1000, "T4"), state);
  plugin.observe(make_pod("free1", 8000, 1024, 1, 1000), state);
  plugin.observe(make_pod("free2", 8000, 1024, 1, 1000, "T4|G2"), state);
  plugin.observe(make_pod("free3", 8000, 1024, 1, 1000), state);
  EXPECT_NEAR(plugin.model_pressure(t4), 0.35 / 0.85, 1e-12);
  const uint64_t before = plugin.generation();
  state.add_node(make_node("g2b", 64000, 262144, 4, "G2"));
  plugin.nodes_changed(state);
  ASSERT_EQ(plugin.shape().classes.size(), 2u);
  EXPECT_EQ(plugin.shape().classes[1].gpus, 8);
  EXPECT_NEAR(plugin.model_pressure(t4), 0.6 / 0.85, 1e-12);
  EXPECT_GT(plugin.generation(), before);
}

// Pods allowed several models but not all (V100M16|V100M32) are a constrained set of their own: a pod
// allowed any model pays on both models, a pod of the set itself does not.
TEST(GpufleetScore, ModelSetPressure) {
  ClusterState state({make_node("a", 64000, 262144, 2, "V100M16"), make_node("b", 64000, 262144, 2, "V100M32"),
                      make_node("c", 64000, 262144, 4, "T4")});
  GpufleetScore plugin(state);
  // 2000 of 4000 gpu_milli seen allow V100M16|V100M32: share = 0.5 x 8000 / 4000 = 1, p = 1.
  plugin.observe(make_pod("v1", 8000, 1024, 1, 1000, "V100M16|V100M32"), state);
  plugin.observe(make_pod("v2", 8000, 1024, 1, 1000, "V100M16|V100M32"), state);
  plugin.observe(make_pod("any1", 8000, 1024, 1, 1000), state);
  plugin.observe(make_pod("any2", 8000, 1024, 1, 1000), state);
  const int32_t m16 = state.gpu_model_id(0), m32 = state.gpu_model_id(1), t4 = state.gpu_model_id(2);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(m16), 1.0);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(m32), 1.0);
  EXPECT_EQ(plugin.model_pressure(t4), 0.0);
  EXPECT_EQ(plugin.model_pressure(m16, "V100M16|V100M32"), 0.0);
  EXPECT_EQ(plugin.model_pressure(m32, "V100M32|V100M16"), 0.0);  // the same set, any order
}

// The pressures follow the free capacity between the mix's refresh points: every kPressureRefreshPods
// pods, and a change empties the scheduler's cache (generation() moves) even when the mix and the
// ratios stand still.
TEST(GpufleetScore, PressureRefreshCadence) {
  ClusterState state({make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 64000, 262144, 4, "G2")});
  const int32_t t4 = state.gpu_model_id(0);
  GpufleetScore plugin(state);
  const auto observe = [&](int64_t i) {
    plugin.observe(i % 2 == 0 ? make_pod("pin", 8000, 1024, 1, 1000, "T4") : make_pod("any", 8000, 1024, 1, 1000), state);
  };
  // 1279 pods, half pinned to T4, on an empty cluster: share = 0.5 x 8000 / 4000 = 1, p = 1.
  for (int64_t i = 0; i < 1279; ++i) observe(i);
  ASSERT_DOUBLE_EQ(plugin.model_pressure(t4), 1.0);
  // G2 fills: L = 4000, U(T4) = 4000, share 0.5, p = 0.35 / 0.85. Not seen before pod 1280 =
  // 1024 + 256 (no mix refresh point: 1024, then 2048).
  state.allocate(1, make_pod("g2full", 8000, 1024, 4, 1000), {.gpus = {0, 1, 2, 3}});
  const uint64_t before = plugin.generation();
  EXPECT_EQ(kPressureRefreshPods, 256);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(t4), 1.0);
  observe(1279);
  EXPECT_NEAR(plugin.model_pressure(t4), 0.35 / 0.85, 1e-12);
  EXPECT_EQ(plugin.generation(), before + 1);  // the pressure alone moved
  // Two T4 GPUs taken: L = 2000, U(T4) = 2000, share still 0.5 - and no refresh before pod 1536.
  state.allocate(0, make_pod("t4half", 8000, 1024, 2, 1000), {.gpus = {0, 1}});
  observe(1280);
  EXPECT_EQ(plugin.generation(), before + 1);
  // T4 full, G2 full: nothing usable left on T4 (and L = 0): nothing to keep, p = 0.
  state.allocate(0, make_pod("t4full", 8000, 1024, 2, 1000), {.gpus = {2, 3}});
  for (int64_t i = 1281; i < 1536; ++i) observe(i);
  EXPECT_EQ(plugin.model_pressure(t4), 0.0);
  EXPECT_EQ(plugin.generation(), before + 2);
}

// A model set with no usable GPU left has nothing to protect: its share is 0 even while the rest of
// the cluster has free GPUs, so a CPU-only pod may use the CPU there without paying.
TEST(GpufleetScore, NoPressureWhereNothingIsLeft) {
  ClusterState state({make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 40000, 262144, 4, "G2")});
  GpufleetScore plugin(state);
  for (int i = 0; i < 4; ++i) plugin.observe(make_pod("pin" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(state.gpu_model_id(0)), 1.0);  // 1 x 8000 / 4000 = 2
  state.allocate(0, make_pod("t4full", 32000, 4096, 4, 1000), {.gpus = {0, 1, 2, 3}});
  for (int i = 0; i < 4; ++i) plugin.observe(make_pod("any" + std::to_string(i), 8000, 1024, 1, 1000), state);
  EXPECT_EQ(plugin.model_pressure(state.gpu_model_id(0)), 0.0);  // U(T4) = 0 at the 8-pod refresh
  EXPECT_EQ(plugin.class_pressure(0), 0.0);
}

// A pod of a model set seen for the first time pays that set's pressure at once, not only at the
// next refresh.
TEST(GpufleetScore, NewModelSetGetsItsPressureAtOnce) {
  ClusterState state({make_node("p100", 64000, 262144, 2, "P100"), make_node("v32", 64000, 262144, 2, "V100M32"),
                      make_node("t4", 64000, 262144, 4, "T4")});
  GpufleetScore plugin(state);
  for (int i = 0; i < 4; ++i) plugin.observe(make_pod("pin" + std::to_string(i), 8000, 1024, 1, 1000, "P100"), state);
  // Pod 5 (no refresh point) is the first P100|V100M32 pod: it pays for the P100-only pods on P100
  // (share 0.8 x 8000 / 2000 = 3.2, p = 1), as any pod allowed more than P100 does.
  plugin.observe(make_pod("either", 8000, 1024, 1, 1000, "P100|V100M32"), state);
  EXPECT_DOUBLE_EQ(plugin.model_pressure(state.gpu_model_id(0), "P100|V100M32"), 1.0);
  EXPECT_EQ(plugin.model_pressure(state.gpu_model_id(1), "P100|V100M32"), 0.0);
}

// score = int(100 * sigmoid(x / 2000)), x = F gain + S gain - pressure, each computed by hand-checked
// parts; the sharing pod's GPU is the one with the largest F gain.
TEST(GpufleetScore, ScoreIsTheDocumentedSum) {
  ClusterState state({make_node("t4", 40000, 65536, 4, "T4"), make_node("g2", 96000, 393216, 8, "G2")});
  state.allocate(0, make_pod("x", 8000, 4096, 1, 700), {.gpus = {1}});
  state.allocate(1, make_pod("y", 30000, 8192, 1, 300), {.gpus = {0}});
  GpufleetScore plugin(state);
  for (const Pod& p : {make_pod("a", 12000, 16384, 1, 500, "T4"), make_pod("b", 8000, 8192, 1, 1000),
                       make_pod("c", 4000, 2048, 0, 0), make_pod("d", 12000, 16384, 1, 250, "T4")})
    plugin.observe(p, state);
  for (const Pod& probe : {make_pod("s", 4000, 1024, 1, 250), make_pod("w", 16000, 8192, 2, 1000),
                           make_pod("c", 20000, 2048, 0, 0), make_pod("pin", 4000, 1024, 1, 500, "T4")}) {
    for (NodeId n = 0; n < state.node_count(); ++n) {
      SCOPED_TRACE(probe.name + " on " + state.node(n).name);
      std::array<double, kMaxGpusPerNode> after{};
      const double before = fgd_frag_before_after(plugin.measure(), probe, state, n, after);
      double gain = before - after[0];
      int32_t gpu = -1;
      if (probe.is_share_pod()) {
        const auto free = state.gpu_free_milli(n);
        for (size_t i = 0; i < free.size(); ++i)
          if (free[i] >= probe.gpu_milli && (gpu < 0 || before - after[i] > gain)) gain = before - after[i], gpu = static_cast<int32_t>(i);
      }
      const int64_t g = state.gpu_free_milli_total(n);
      const double strand = plugin.stranded_milli(g, state.cpu_free_milli(n), state.memory_free_bytes(n)) -
                            plugin.stranded_milli(g - probe.gpu_request_milli(), state.cpu_free_milli(n) - probe.cpu_milli,
                                                  state.memory_free_bytes(n) - probe.memory_bytes);
      // Pinned to T4, the model and (an empty node of) the t4 class: no model or class pressure there.
      const bool pinned = probe.gpu_spec == "T4";
      double pressure = probe.is_gpu_pod() ? 2.0 * plugin.model_pressure(state.gpu_model_id(n), probe.gpu_spec) *
                                                 static_cast<double>(probe.gpu_request_milli())
                                           : 0.0;
      const double size = std::max(static_cast<double>(probe.gpu_request_milli()), probe.cpu_milli / plugin.cpu_per_gpu_milli());
      if (!(pinned && n == 0)) pressure += 1.0 * plugin.class_pressure(static_cast<int32_t>(n)) * size;
      const double x = (gain + strand - pressure) / 2000.0;
      EXPECT_EQ(plugin.score(probe, state, n, CycleState{}), static_cast<int32_t>(100.0 / (1.0 + std::exp(-x))));
      GoRand rng(1);
      if (probe.is_share_pod()) {
        EXPECT_EQ(plugin.select_share_gpu(probe, state, n, rng), gpu);
      }
    }
  }
  // 750 of 1750 gpu_milli seen are pinned to T4. r_cpu = 32000 / 1750: the t4 node's 32000 free CPU
  // feeds 1750 of its 3300 free gpu_milli, so U(T4) = 1750; L = 11000; share = (3/7) x 11000 / 1750
  // > 1, p = 1. The t4 node is its own class (class 0), so the same holds for the class; nothing is
  // pinned to the g2 class (class 1).
  EXPECT_DOUBLE_EQ(plugin.model_pressure(state.gpu_model_id(0)), 1.0);
  EXPECT_EQ(plugin.model_pressure(state.gpu_model_id(0), "T4"), 0.0);
  EXPECT_DOUBLE_EQ(plugin.class_pressure(0), 1.0);
  EXPECT_EQ(plugin.class_pressure(1), 0.0);
}

// A node without GPUs: F is 0 before and after any placement that takes no GPU share (the score
// skips the passes over the mix there), so a CPU-only pod scores sigmoid(0) = 50: no stranding
// (no free GPU), no model pressure (not a GPU pod), no class pressure (no pod pinned to a class
// without GPUs). A sharing pod finds no GPU there: 0.
TEST(GpufleetScore, NodeWithoutGpusHasNoFragmentationTerm) {
  ClusterState state({make_node("g2", 96000, 393216, 8, "G2"), make_node("cpu", 96000, 393216, 0)});
  state.allocate(1, make_pod("x", 90000, 4096, 0, 0), {});
  GpufleetScore plugin(state);
  for (const Pod& p : {make_pod("a", 12000, 16384, 1, 500), make_pod("b", 8000, 8192, 1, 1000), make_pod("c", 4000, 2048, 0, 0)})
    plugin.observe(p, state);
  for (const Pod& probe : {make_pod("c1", 4000, 1024, 0, 0), make_pod("c2", 20000, 2048, 0, 0)}) {
    std::array<double, kMaxGpusPerNode> after{};
    after[0] = 1.0;
    EXPECT_EQ(fgd_frag_before_after(plugin.measure(), probe, state, 1, after), 0.0);
    EXPECT_EQ(after[0], 0.0);
    EXPECT_EQ(plugin.score(probe, state, 1, CycleState{}), 50);
  }
  EXPECT_EQ(plugin.score(make_pod("s", 4000, 1024, 1, 250), state, 1, CycleState{}), 0);
}

// A CPU-only pod: online FGD sees no difference between a GPU-dense node and a CPU-rich one and
// takes the better-ranked dense node; gpufleet keeps the dense node's CPU for its GPUs.
TEST(GpufleetScore, CpuOnlyPodGoesWhereItStrandsNoGpu) {
  const std::vector<Node> nodes = {make_node("dense", 64000, 262144, 8, "G2"), make_node("rich", 104000, 262144, 2, "G2")};
  ClusterState state(nodes);
  PolicyContext ctx{nullptr, state.gpu_models(), &state};
  Scheduler gpufleet(make_policy("gpufleet", ctx), {0, 1});
  Scheduler online(make_policy("fgd-online", ctx), {0, 1});
  for (Scheduler* s : {&gpufleet, &online}) s->observe(make_pod("gpu", 8000, 1024, 1, 1000), state);  // r_cpu = 8
  const Pod cpu_only = make_pod("etl", 16000, 1024, 0, 0);
  GoRand rng(1);
  EXPECT_EQ(online.decide(cpu_only, state, rng).node, 0u);
  // On "dense" S goes from 0 to 8000 - 48000/8 = 2000: x = -2000, score 26; on "rich" x = 0, score 50.
  const ScheduleResult r = gpufleet.decide(cpu_only, state, rng);
  EXPECT_EQ(r.node, 1u);
  EXPECT_EQ(r.score, 50);
}

// Half the demand is pinned to T4, half of the GPUs are T4 and the cluster is empty: share(T4) = 1,
// pressure 2000 per whole GPU.
// A flexible pod on the CPU-poor G2 node loses FGD points (the flexible type no longer fits its CPU:
// F gain 500 - 1500 = -1000, score 37); on T4 it loses none (x = 0, score 50) but pays the model
// pressure and, the t4 node being the class the pinned pods fit, the class pressure too (x = -3000,
// score 18). With the pressures it leaves T4 to the pinned pods; without them, it takes T4.
TEST(GpufleetScore, FlexiblePodsLeavePressedModels) {
  const std::vector<Node> nodes = {make_node("t4", 64000, 262144, 4, "T4"), make_node("g2", 12000, 262144, 4, "G2")};
  const Pod flexible = make_pod("any", 8000, 1024, 1, 1000);
  for (bool pressure : {true, false}) {
    SCOPED_TRACE(pressure ? "with pressure" : "without");
    ClusterState state(nodes);
    Profile policy = make_policy("gpufleet", PolicyContext{nullptr, state.gpu_models(), &state});
    if (!pressure) {
      GpufleetParams no_pressure;
      no_pressure.model_pressure_weight = 0;
      no_pressure.class_pressure_weight = 0;  // the t4 node is also the class the pinned pods fit
      auto plugin = std::make_shared<GpufleetScore>(state, no_pressure);
      policy.scores.back().plugin = plugin;
      policy.gpu_selector = plugin;
    }
    Scheduler s(std::move(policy), {0, 1});
    for (int i = 0; i < 4; ++i) {
      s.observe(make_pod("pin" + std::to_string(i), 8000, 1024, 1, 1000, "T4"), state);
      s.observe(make_pod("free" + std::to_string(i), 8000, 1024, 1, 1000), state);
    }
    GoRand rng(1);
    const ScheduleResult r = s.decide(flexible, state, rng);
    EXPECT_EQ(r.node, pressure ? 1u : 0u);
    EXPECT_EQ(r.score, pressure ? 37 : 50);
    EXPECT_EQ(s.decide(make_pod("pinned", 8000, 1024, 1, 1000, "T4"), state, rng).node, 0u);
  }
}

// Pods that fit only the 128-core 8-GPU nodes (8 GPUs, 120 cores) press that class; a CPU-only pod
// then pays by the GPUs its CPU would feed and goes to the 96-core class instead, which FGD-style
// fragmentation alone would not do here.
TEST(GpufleetScore, SmallPodsLeaveTheOnlyNodesBigPodsFit) {
  const std::vector<Node> nodes = {make_node("big", 128000, 786432, 8, "G2"), make_node("small", 96000, 393216, 8, "G2")};
  ClusterState state(nodes);
  const ClusterShape shape = ClusterShape::of(state);
  ASSERT_EQ(shape.classes.size(), 2u);
  EXPECT_EQ(shape.class_of_node, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(shape.classes[0].gpus, 8);
  GpufleetScore plugin(state);
  // 8000 of 16000 gpu_milli pinned to "big" (half the GPUs, all free, its CPU feeds them all at
  // r_cpu = 128000 / 16000 = 8): share = 0.5 x 16000 / 8000 = 1, p = 1.
  plugin.observe(make_pod("train", 120000, 65536, 8, 1000), state);
  plugin.observe(make_pod("infer", 8000, 1024, 8, 1000), state);
  EXPECT_DOUBLE_EQ(plugin.class_pressure(0), 1.0);
  EXPECT_EQ(plugin.class_pressure(1), 0.0);
  EXPECT_EQ(ClusterShape::of(state).classes[1].cpu_milli, 96000);
  Scheduler s(make_policy("gpufleet", PolicyContext{nullptr, state.gpu_models(), &state}), {0, 1});
  s.observe(make_pod("train", 120000, 65536, 8, 1000), state);
  s.observe(make_pod("infer", 8000, 1024, 8, 1000), state);
  GoRand rng(1);
  // 8000 CPU milli = 1000 gpu_milli at r_cpu 8: pressure 1000 on "big"; on "small" S stays 0 (96000
  // CPU still feeds 8000 gpu_milli... 88000 / 8 = 11000 >= 8000).
  EXPECT_EQ(s.decide(make_pod("etl", 8000, 1024, 0, 0), state, rng).node, 1u);
  // The pinned pod itself is not pressed away from its class.
  EXPECT_EQ(s.decide(make_pod("train2", 120000, 65536, 8, 1000), state, rng).node, 0u);
}

TEST(GpufleetScore, RejectsParametersOutOfRange) {
  const ClusterState state({make_node("n", 8000, 16384, 1, "T4")});
  EXPECT_NO_THROW(GpufleetScore(state, GpufleetParams{}));
  for (auto broken : {&GpufleetParams::sigmoid_scale_milli, &GpufleetParams::mix_coverage}) {
    GpufleetParams p;
    p.*broken = 0;
    EXPECT_THROW(GpufleetScore(state, p), std::invalid_argument);
  }
  GpufleetParams p;
  p.model_pressure_threshold = 1;  // would divide by zero
  EXPECT_THROW(GpufleetScore(state, p), std::invalid_argument);
  p = GpufleetParams{};
  p.strand_weight = -1;
  EXPECT_THROW(GpufleetScore(state, p), std::invalid_argument);
}

// Nodes of one model and GPU count within 5% in CPU and memory (allocatable varies a little between
// identical machines) form one class with the largest capacity; further apart, separate classes.
TEST(GpufleetScore, NodeClassesTolerateSmallCapacityDifferences) {
  const ClusterState state({make_node("a", 96000, 393216, 8, "G2"), make_node("b", 95500, 390000, 8, "G2"),
                            make_node("c", 128000, 393216, 8, "G2"), make_node("d", 96000, 393216, 4, "G2"),
                            make_node("e", 96000, 393216, 8, "T4"), make_node("f", 100800, 393216, 8, "G2")});
  const ClusterShape shape = ClusterShape::of(state);
  // f: 100800 is 5% above a's 96000 (the class keeps its first node's reference), so it joins.
  EXPECT_EQ(shape.class_of_node, (std::vector<int32_t>{0, 0, 1, 2, 3, 0}));
  ASSERT_EQ(shape.classes.size(), 4u);
  EXPECT_EQ(shape.classes[0].cpu_milli, 100800);
  EXPECT_EQ(shape.classes[0].memory_bytes, 393216 * kBytesPerMib);
  EXPECT_EQ(shape.classes[0].gpus, 24);
  EXPECT_EQ(shape.classes[2].gpu_count, 4);
}

// A sharing pod that no GPU of the node can take scores 0 and gets no GPU (no NaN reaches the
// integer score); FGD's helpers refuse a too-short `after`.
TEST(GpufleetScore, NoFittingGpuScoresZero) {
  ClusterState state({make_node("n", 32000, 65536, 2, "T4")});
  state.allocate(0, make_pod("x", 1000, 1024, 1, 800), {.gpus = {0}});
  state.allocate(0, make_pod("y", 1000, 1024, 1, 900), {.gpus = {1}});
  GpufleetScore plugin(state);
  plugin.observe(make_pod("p", 1000, 1024, 1, 500), state);
  const Pod probe = make_pod("probe", 1000, 1024, 1, 500);
  EXPECT_EQ(plugin.score(probe, state, 0, CycleState{}), 0);
  GoRand rng(1);
  EXPECT_EQ(plugin.select_share_gpu(probe, state, 0, rng), -1);
  std::array<double, 1> too_short{};
  EXPECT_THROW(fgd_frag_before_after(plugin.measure(), probe, state, 0, too_short), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::sched
