// fits() (node_resources_fit.h), the one fit check: pods, CPU, memory, then the GPU rules of
// GpuShareFit, first shortfall wins; the same answer as the NodeResourcesFit and GpuShareFit
// filters run in order; and the same on a template node (a ClusterState holding one empty node per
// pool, as the autoscaler's estimate uses).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/node_resources_fit.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

// n0: 8 CPUs, 16 GiB, 2 V100M16, max 2 pods, one pod {2000m, 4 GiB, 1x500 on GPU 0} bound:
//     free cpu 6000m, memory 12 GiB (12288 MiB), GPUs [500, 1000], 1 pod slot.
// n1: H100 with GPU 0 MIG 4g+3g and GPU 1 plain.  n2: T4 x2 time-sliced 4 ways (not renamed).
// n3: CPU-only, 4 CPUs.
ClusterState cluster() {
  Node n0 = make_node("n0", 8000, 16384, 2);
  n0.max_pods = 2;
  Node n1 = make_node("n1", 64000, 524288, 2, "H100-80GB");
  n1.mig = {GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}}, GpuMig{}};
  Node n2 = make_node("n2", 16000, 65536, 2, "T4");
  n2.time_slicing = TimeSlicing{4, false, false};
  ClusterState s({n0, n1, n2, make_node("n3", 4000, 8192, 0)});
  s.allocate(0, make_pod("a", 2000, 4096, 1, 500), {.gpus = {0}});
  return s;
}

TEST(FitsTest, FirstShortfallInOrder) {
  const ClusterState state = cluster();
  Pod mig = make_pod("mig", 1000, 1024, 0, 0);
  mig.mig_requests = {{"3g.40gb", 1}};
  Pod two_mig = mig;
  two_mig.mig_requests = {{"3g.40gb", 2}};
  Pod a100 = make_pod("a100", 1000, 1024, 1, 1000);
  a100.gpu_spec = "A100";
  struct Row {
    const char* what;
    Pod pod;
    NodeId node;
    FilterCode want;
  };
  const Row rows[] = {
      {"fits: 500m fraction on GPU 0", make_pod("p", 1000, 1024, 1, 500), 0, FilterCode::kFits},
      {"cpu short", make_pod("p", 7000, 1024, 0, 0), 0, NodeResourcesFit::kInsufficientCpu},
      {"memory short", make_pod("p", 1000, 13000, 0, 0), 0, NodeResourcesFit::kInsufficientMemory},
      {"cpu before memory", make_pod("p", 7000, 13000, 0, 0), 0, NodeResourcesFit::kInsufficientCpu},
      {"resources before GPUs", make_pod("p", 7000, 1024, 2, 1000), 0, NodeResourcesFit::kInsufficientCpu},
      {"two whole GPUs: one is half used", make_pod("p", 1000, 1024, 2, 1000), 0, GpuShareFit::kInsufficientGpu},
      {"GPU model constraint", a100, 0, GpuShareFit::kGpuModelMismatch},
      {"GPU pod on a CPU-only node", make_pod("p", 1000, 1024, 1, 1000), 3, GpuShareFit::kInsufficientGpu},
      {"CPU pod on a CPU-only node", make_pod("p", 1000, 1024, 0, 0), 3, FilterCode::kFits},
      {"one MIG 3g device", mig, 1, FilterCode::kFits},
      {"two 3g devices: one on the node", two_mig, 1, GpuShareFit::kInsufficientMig},
      {"MIG on a plain node", mig, 0, GpuShareFit::kInsufficientMig},
      {"whole GPU on the MIG node: the plain GPU 1", make_pod("p", 1000, 1024, 1, 1000), 1, FilterCode::kFits},
      {"two whole GPUs on the MIG node", make_pod("p", 1000, 1024, 2, 1000), 1, GpuShareFit::kInsufficientGpu},
      {"replicas on the time-sliced node", make_pod("p", 1000, 1024, 8, 1000), 2, FilterCode::kFits},
      {"nine replicas", make_pod("p", 1000, 1024, 9, 1000), 2, GpuShareFit::kInsufficientGpu},
      {"a fraction never fits a time-sliced GPU", make_pod("p", 1000, 1024, 1, 500), 2, GpuShareFit::kInsufficientGpu},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.what);
    EXPECT_EQ(fits(r.pod, state, r.node), r.want);
  }
  // The last pod slot taken: n0 is full before anything else is checked.
  ClusterState full = state;
  full.allocate(0, make_pod("b", 0, 0, 0, 0), {});
  EXPECT_EQ(fits(make_pod("p", 7000, 13000, 2, 1000), full, 0), NodeResourcesFit::kTooManyPods);
}

// fits() answers what the NodeResourcesFit then GpuShareFit filters answer, on every node, for
// seeded random requests.
TEST(FitsTest, SameAsTheTwoFilters) {
  const ClusterState state = cluster();
  const NodeResourcesFit resources;
  const GpuShareFit gpus;
  GoRand rng(3);
  for (int i = 0; i < 2000; ++i) {
    Pod p = make_pod("p", rng.intn(9000), rng.intn(20000), static_cast<int32_t>(rng.intn(4)), static_cast<int32_t>(rng.intn(11) * 100));
    if (rng.intn(5) == 0) p.mig_requests = {{rng.intn(2) == 0 ? "3g.40gb" : "4g.40gb", static_cast<int32_t>(1 + rng.intn(2))}};
    for (NodeId n = 0; n < state.node_count(); ++n) {
      FilterCode want = resources.filter(p, state, n);
      if (want == FilterCode::kFits) want = gpus.filter(p, state, n);
      ASSERT_EQ(fits(p, state, n), want) << i << " node " << n;
    }
  }
}

// Template nodes: one empty node per pool in a ClusterState of their own. A 4g.40gb MIG pod fits
// the H100 pool's template (empty: every device free) and not the T4 pool's.
TEST(FitsTest, TemplateNodes) {
  Node h100 = make_node("h100-template", 64000, 524288, 1, "H100-80GB");
  h100.mig = {GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}}};
  const ClusterState templates({h100, make_node("t4-template", 16000, 65536, 4, "T4")});
  Pod mig = make_pod("m", 1000, 1024, 0, 0);
  mig.mig_requests = {{"4g.40gb", 1}};
  EXPECT_EQ(fits(mig, templates, 0), FilterCode::kFits);
  EXPECT_EQ(fits(mig, templates, 1), GpuShareFit::kInsufficientMig);
  EXPECT_EQ(fits(make_pod("w", 1000, 1024, 4, 1000), templates, 1), FilterCode::kFits);
  EXPECT_EQ(fits(make_pod("w", 1000, 1024, 1, 1000), templates, 0), GpuShareFit::kInsufficientGpu);  // its one GPU is MIG
  EXPECT_EQ(fits(make_pod("big", 65000, 1024, 0, 0), templates, 0), NodeResourcesFit::kInsufficientCpu);
}

}  // namespace
}  // namespace gpufleet::sched
