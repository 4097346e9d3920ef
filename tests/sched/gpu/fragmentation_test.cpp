// FragmentationMeasure::node_frag_milli and typical_pod_mix, against hand-computed values
// (FGD simulator, hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go: NodeGpuShareFragAmount,
// GetTypicalPods).
#include <gtest/gtest.h>

#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/fragmentation.h"
#include "support/test_support.h"

namespace gpufleet::sched {
namespace {

using gpufleet::testing::make_node;
using gpufleet::testing::make_pod;

TypicalPod type(int64_t cpu, int32_t milli, int32_t num, std::string spec, double popularity) {
  TypicalPod t;
  t.cpu_milli = cpu;
  t.gpu_milli = milli;
  t.num_gpu = num;
  t.gpu_spec = std::move(spec);
  t.count = 1;
  t.popularity = popularity;
  return t;
}

double frag(const FragmentationMeasure& m, int64_t cpu_free, std::vector<int32_t> gpus, int32_t model_id = 0) {
  return m.node_frag_milli(cpu_free, std::span<const int32_t>(gpus), model_id);
}

// The simulator's unit vector (frag_test.go): one type {6000m, 465, 1, ""} with p=.0933 on a node
// with cpu free 1000 and GPUs [200,1000,1000,500]. Three GPUs have >= 465 free (enough for 1), but
// 1000 < 6000 CPU: Q4, so all idle counts: 0.0933 * (200+1000+1000+500) = 0.0933 * 2700 = 251.91.
TEST(FragmentationTest, SimulatorUnitVectorSingleType) {
  FragmentationMeasure m({type(6000, 465, 1, "", 0.0933)}, {"1080"});
  EXPECT_NEAR(frag(m, 1000, {200, 1000, 1000, 500}), 251.91, 1e-9);
}

struct FragCase {
  const char* label;
  TypicalPod t;
  int64_t cpu_free;
  std::vector<int32_t> gpus;
  double expected;
};

void PrintTo(const FragCase& c, std::ostream* os) { *os << c.label; }

class SingleTypeFrag : public ::testing::TestWithParam<FragCase> {};

TEST_P(SingleTypeFrag, MatchesHandValue) {
  const FragCase& c = GetParam();
  FragmentationMeasure m({c.t}, {"1080"});
  EXPECT_NEAR(frag(m, c.cpu_free, c.gpus), c.expected, 1e-9) << c.label;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SingleTypeFrag,
    ::testing::Values(
        // Q3: CPU 8000 >= 6000 and 3 GPUs >= 465: only GPUs with free < 465 count: 200 -> 0.0933*200 = 18.66.
        FragCase{"q3_share", type(6000, 465, 1, "", 0.0933), 8000, {200, 1000, 1000, 500}, 18.66},
        // Q3 exactly at the thresholds (>=): cpu 6000 >= 6000, GPU 465 >= 465; stranded 200+100=300 -> p=1 -> 300.
        FragCase{"q3_boundary", type(6000, 465, 1, "", 1.0), 6000, {200, 465, 100}, 300.0},
        // Q2: CPU fits but no GPU has >= 465 free: whole idle 200+400+0 = 600 counts.
        FragCase{"q2_no_gpu_fits", type(1000, 465, 1, "", 1.0), 8000, {200, 400, 0}, 600.0},
        // Q1: neither CPU (500 < 1000) nor GPU fits: idle 600.
        FragCase{"q1", type(1000, 465, 1, "", 0.5), 500, {200, 400, 0}, 300.0},
        // CPU-only type (milli 0), CPU fits (XL): all idle counts, 0.25 * 2700 = 675.
        FragCase{"cpu_only_xl", type(4000, 0, 0, "", 0.25), 8000, {200, 1000, 1000, 500}, 675.0},
        // CPU-only type, CPU does not fit (XR): all idle counts too, 0.25 * 2700 = 675.
        FragCase{"cpu_only_xr", type(4000, 0, 0, "", 0.25), 1000, {200, 1000, 1000, 500}, 675.0},
        // 2-GPU type needs 2 fully free GPUs: [1000,1000,300,0] has 2 -> Q3, stranded 300+0 = 300.
        FragCase{"multi_gpu_fits", type(8000, 1000, 2, "", 1.0), 16000, {1000, 1000, 300, 0}, 300.0},
        // Only one fully free GPU of [1000,900,900,0] -> count 1 < 2 -> Q2 -> all idle 2800; p=.5 -> 1400.
        FragCase{"multi_gpu_no_fit", type(8000, 1000, 2, "", 0.5), 16000, {1000, 900, 900, 0}, 1400.0},
        // Fully idle node where the type fits: no GPU is below 500 -> 0.
        FragCase{"empty_node_fits", type(1000, 500, 1, "", 1.0), 8000, {1000, 1000}, 0.0},
        // A fully allocated node has nothing idle: 0 whatever the class.
        FragCase{"full_node", type(1000, 500, 1, "", 1.0), 0, {0, 0, 0, 0}, 0.0}),
    [](const ::testing::TestParamInfo<FragCase>& info) { return std::string(info.param.label); });

// NoAccess by model: type "T4" on a node of model "V100M16" -> all idle counts; on "T4" the same
// state is Q3. Models: id 0 = "", 1 = "T4", 2 = "V100M16". Node cpu 8000, GPUs [1000, 300]:
//   V100M16 (id 2): NoAccess -> 1300 * 0.4 = 520;  T4 (id 1): Q3, stranded 300 -> 0.4*300 = 120.
TEST(FragmentationTest, NoAccessByModel) {
  FragmentationMeasure m({type(2000, 500, 1, "T4", 0.4)}, {"", "T4", "V100M16"});
  EXPECT_NEAR(frag(m, 8000, {1000, 300}, 2), 520.0, 1e-9);
  EXPECT_NEAR(frag(m, 8000, {1000, 300}, 1), 120.0, 1e-9);
}

// A '|' list allows each listed model; a model-less node (id 0, "") rejects a non-empty spec.
// Type "A10|T4", p=1, cpu free 8000, GPUs [1000, 300]: T4 -> Q3 300; V100M16 -> NoAccess 1300;
// "" -> NoAccess 1300.
TEST(FragmentationTest, SpecListAndEmptyModel) {
  FragmentationMeasure m({type(2000, 500, 1, "A10|T4", 1.0)}, {"", "T4", "V100M16"});
  EXPECT_NEAR(frag(m, 8000, {1000, 300}, 1), 300.0, 1e-9);
  EXPECT_NEAR(frag(m, 8000, {1000, 300}, 2), 1300.0, 1e-9);
  EXPECT_NEAR(frag(m, 8000, {1000, 300}, 0), 1300.0, 1e-9);
}

// Mix of three types summed: T1 {2000, 500, 1} p .5; T2 {4000, 1000, 1} p .3; T3 CPU-only {1000} p .2.
// Node cpu 3000, GPUs [1000, 600, 300, 0], L = 1900.
//   T1: 2 GPUs >= 500, cpu 3000 >= 2000 -> Q3, stranded 300+0 -> .5*300 = 150
//   T2: 1 GPU >= 1000 but cpu 3000 < 4000 -> Q4 -> .3*1900 = 570
//   T3: CPU-only -> .2*1900 = 380                                  F = 1100
TEST(FragmentationTest, MixSumsContributions) {
  FragmentationMeasure m({type(2000, 500, 1, "", 0.5), type(4000, 1000, 1, "", 0.3), type(1000, 0, 0, "", 0.2)}, {"V100M16"});
  EXPECT_NEAR(frag(m, 3000, {1000, 600, 300, 0}), 1100.0, 1e-9);
}

// The ClusterState overload reads cpu free, GPU free and model of node n.
// Node "a" (T4) and "b" (V100M16), each cpu 16000, 2 GPUs. Allocate a pod {cpu 6000, 1x700} on b GPU 1:
// b: cpu free 10000, GPUs [1000, 300]. Type {8000, 500, 1, "V100M16"} p=1:
//   a: NoAccess (T4) -> 2000;   b: Q3 (cpu 10000 >= 8000, GPU0 fits) -> stranded 300.
// After a second pod {cpu 4000} on b: cpu free 6000 < 8000 -> Q4 -> 1300.
TEST(FragmentationTest, ClusterStateOverload) {
  ClusterState state({make_node("a", 16000, 65536, 2, "T4"), make_node("b", 16000, 65536, 2, "V100M16")});
  state.allocate(1, make_pod("p", 6000, 1024, 1, 700), {.gpus = {1}});
  FragmentationMeasure m({type(8000, 500, 1, "V100M16", 1.0)}, state.gpu_models());
  EXPECT_NEAR(m.node_frag_milli(state, 0), 2000.0, 1e-9);
  EXPECT_NEAR(m.node_frag_milli(state, 1), 300.0, 1e-9);
  state.allocate(1, make_pod("q", 4000, 1024, 0, 0), {});
  EXPECT_NEAR(m.node_frag_milli(state, 1), 1300.0, 1e-9);
}

TEST(FragmentationTest, EmptyMixIsZero) {
  FragmentationMeasure m({}, {"V100M16"});
  EXPECT_EQ(frag(m, 1000, {200, 1000}), 0.0);
}

std::vector<Pod> repeat(const Pod& p, int n) { return std::vector<Pod>(static_cast<size_t>(n), p); }

// 20 pods:
//   A: 8 x {4000, 1x500, ""}          key (4000, 500, 1, "")
//   B: 2 x {cpu 0} + 2 x {cpu 100}    CPU-only, cpu 0 counts as 100 -> one key (100, 0, 0, ""), count 4
//   C: 3 x {8000, 1x1000, "V100M16"}
//   D: 3 x {8000, 1x1000, "T4"}       ties with C; key descending: "V100M16" > "T4" -> C first
//   E: 1 x {2000, 2x1000, ""}
//   F: 1 x {16000, 4x1000, ""}        ties with E; key descending: cpu 16000 > 2000 -> F first
// Order A(8) B(4) C(3) D(3) F(1) E(1); cumulative 8, 12, 15, 18, 19: 19 >= 0.95*20 = 19 -> stop.
// Mix = A, B, C, D, F (E falls outside 95%); popularity = count/19.
TEST(FragmentationMixTest, GroupsSortsCutsAndRenormalizes) {
  std::vector<Pod> pods;
  auto add = [&pods](const Pod& p, int n) {
    auto more = repeat(p, n);
    pods.insert(pods.end(), more.begin(), more.end());
  };
  add(make_pod("e", 2000, 1, 2, 1000), 1);
  add(make_pod("d", 8000, 1, 1, 1000, "T4"), 3);
  add(make_pod("b0", 0, 1, 0, 0), 2);
  add(make_pod("a", 4000, 1, 1, 500), 8);
  add(make_pod("c", 8000, 1, 1, 1000, "V100M16"), 3);
  add(make_pod("b1", 100, 1, 0, 0), 2);
  add(make_pod("f", 16000, 1, 4, 1000), 1);
  ASSERT_EQ(pods.size(), 20u);

  const auto mix = typical_pod_mix(pods);
  ASSERT_EQ(mix.size(), 5u);
  struct Want {
    int64_t cpu;
    int32_t milli, num;
    const char* spec;
    int64_t count;
  };
  const Want want[] = {{4000, 500, 1, "", 8}, {100, 0, 0, "", 4}, {8000, 1000, 1, "V100M16", 3},
                       {8000, 1000, 1, "T4", 3}, {16000, 1000, 4, "", 1}};
  double sum = 0;
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(mix[i].cpu_milli, want[i].cpu);
    EXPECT_EQ(mix[i].gpu_milli, want[i].milli);
    EXPECT_EQ(mix[i].num_gpu, want[i].num);
    EXPECT_EQ(mix[i].gpu_spec, want[i].spec);
    EXPECT_EQ(mix[i].count, want[i].count);
    EXPECT_NEAR(mix[i].popularity, static_cast<double>(want[i].count) / 19.0, 1e-12);
    sum += mix[i].popularity;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

// Coverage 1.0 keeps every shape (E last, after F), popularity = count/20.
TEST(FragmentationMixTest, FullCoverageKeepsAll) {
  std::vector<Pod> pods = repeat(make_pod("a", 4000, 1, 1, 500), 8);
  pods.push_back(make_pod("e", 2000, 1, 2, 1000));
  pods.push_back(make_pod("f", 16000, 1, 4, 1000));
  // 10 pods: A 8, F 1, E 1 (key desc among the 1-count ties).
  const auto mix = typical_pod_mix(pods, 1.0);
  ASSERT_EQ(mix.size(), 3u);
  EXPECT_EQ(mix[0].count, 8);
  EXPECT_EQ(mix[1].cpu_milli, 16000);
  EXPECT_EQ(mix[2].cpu_milli, 2000);
  EXPECT_NEAR(mix[0].popularity, 0.8, 1e-12);
  EXPECT_NEAR(mix[1].popularity, 0.1, 1e-12);
  EXPECT_NEAR(mix[2].popularity, 0.1, 1e-12);
}

// With the default 95%: 8/10 = 80% < 95%, 9/10 = 90% < 95%, 10/10 -> all three kept.
// With coverage 0.8: 8 >= 8 after A alone -> one type, popularity 1.
TEST(FragmentationMixTest, CoverageThreshold) {
  std::vector<Pod> pods = repeat(make_pod("a", 4000, 1, 1, 500), 8);
  pods.push_back(make_pod("e", 2000, 1, 2, 1000));
  pods.push_back(make_pod("f", 16000, 1, 4, 1000));
  EXPECT_EQ(typical_pod_mix(pods).size(), 3u);
  const auto mix = typical_pod_mix(pods, 0.8);
  ASSERT_EQ(mix.size(), 1u);
  EXPECT_EQ(mix[0].cpu_milli, 4000);
  EXPECT_NEAR(mix[0].popularity, 1.0, 1e-12);
}

TEST(FragmentationMixTest, EmptyInputGivesEmptyMix) {
  EXPECT_TRUE(typical_pod_mix(std::vector<Pod>{}).empty());
}

}  // namespace
}  // namespace gpufleet::sched
