// Reproduces the FGD paper's published results on the real Alibaba openb trace (skipped with a
// message when ../shared/traces or $GPUFLEET_TRACES is absent). Reference: the authors' cached
// curves, fgd_expected_results/analysis_allo_discrete.csv (USENIX ATC'23 artifact).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "readers/traces/fgd_reference.h"
#include "readers/traces/openb_csv.h"
#include "pack/pack_experiment.h"
#include "pack/reference_check.h"
#include "sched/policy_registry.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

class OpenbReference : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::openb_dir();
    if (dir_.empty()) GTEST_SKIP() << "openb trace not found (set GPUFLEET_TRACES or provide ../shared/traces); skipping";
    nodes_ = io::read_openb_nodes(dir_ + "/csv/openb_node_list_gpu_node.csv");
    pods_ = io::read_openb_pods(dir_ + "/csv/openb_pod_list_default.csv");
    reference_ = io::read_fgd_reference(dir_ + "/fgd_expected_results/analysis_allo_discrete.csv");
  }
  const pack::ReferenceRun& ref(const std::string& policy, int64_t seed) const {
    for (const auto& r : reference_)
      if (r.workload == "openb_pod_list_default" && r.policy == policy && r.seed == seed) return r;
    throw std::runtime_error("no reference row for " + policy);
  }
  std::string dir_;
  std::vector<Node> nodes_;
  std::vector<Pod> pods_;
  std::vector<pack::ReferenceRun> reference_;
};

TEST_F(OpenbReference, ClusterAndTraceShape) {
  ASSERT_EQ(nodes_.size(), 1213u);
  int64_t gpus = 0;
  for (const auto& n : nodes_) gpus += n.gpu_count;
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(pods_.size(), 8152u);
  const auto mix = sched::typical_pod_mix(pods_);
  EXPECT_EQ(mix.size(), 35u);  // reference: "The default trace gives 35 of 91 types"
}

// Seeds 42 and 43, the six paper policies: the tuned workload is the simulator's exactly, so every
// curve equals the reference bucket for bucket until pods start failing (above 85% arrived for
// the deterministic policies); the 2-seed mean at 100% arrived is within 1.0 point of the
// reference's mean of the same seeds (1.5 for Random), and within 1.5 points at every bucket.
TEST_F(OpenbReference, PaperPoliciesMatchPublishedCurvesForTwoSeeds) {
  for (const std::string& policy : sched::paper_policy_names()) {
    std::vector<pack::PackRun> runs;
    for (int64_t seed : {42, 43}) {
      runs.push_back(pack::run_pack(nodes_, pods_, policy, seed, 1.3));
      const auto& r = runs.back();
      const auto& theirs = ref(policy, seed);
      const int exact_until = policy == "random" ? 45 : 85;
      for (int x = 0; x <= exact_until; ++x)
        EXPECT_NEAR(r.allocation_pct[x], theirs.curve[x], 0.005) << policy << " seed " << seed << " at " << x << "%";
    }
    const auto cmp = pack::compare_with_reference(runs, reference_, "openb_pod_list_default", 1.3);
    ASSERT_EQ(cmp.size(), 1u);
    EXPECT_EQ(cmp[0].seeds, 2);
    EXPECT_NEAR(cmp[0].ours_at_100, cmp[0].reference_at_100, policy == "random" ? 1.5 : 1.0) << policy;
    EXPECT_LE(cmp[0].max_abs_diff, 1.5) << policy << " at " << cmp[0].max_diff_at << "%";
  }
}

// The 10-seed protocol for the two best published policies: mean at 100% within 0.5 points and
// every bucket within 1.0 (the acceptance bar).
TEST_F(OpenbReference, FgdAndBestFitTenSeedMeansWithinHalfPoint) {
  for (const std::string policy : {"fgd", "bestfit"}) {
    std::vector<pack::PackRun> runs;
    for (int64_t seed = 42; seed <= 51; ++seed) runs.push_back(pack::run_pack(nodes_, pods_, policy, seed, 1.3));
    const auto cmp = pack::compare_with_reference(runs, reference_, "openb_pod_list_default", 1.3);
    ASSERT_EQ(cmp.size(), 1u);
    EXPECT_EQ(cmp[0].seeds, 10);
    EXPECT_NEAR(cmp[0].ours_at_100, cmp[0].reference_at_100, 0.5) << policy;
    EXPECT_LE(cmp[0].max_abs_diff, 1.0) << policy;
    // Invariants of every run: allocation never above 100% and never decreasing (nothing departs).
    for (const auto& r : runs) {
      double prev = 0;
      for (double v : r.allocation_pct) {
        if (std::isnan(v)) continue;
        EXPECT_LE(v, 100.0);
        EXPECT_GE(v, prev);
        prev = v;
      }
      EXPECT_GT(r.failed_pods, 0);
    }
  }
}

}  // namespace
}  // namespace gpufleet
