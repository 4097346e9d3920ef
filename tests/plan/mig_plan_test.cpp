// MIG in the planner (src/plan/search.h mig_layout_for_demand and mig_pool_choices, src/plan/candidate.h
// PoolChoice::mig_devices): the layout chosen for small hand-computed demands, the MIG pool a workload
// with MIG pods gets (instance type, layout, most nodes), the cluster candidate_cluster makes of it,
// the candidates of a workload with and without MIG pods, and a plan of a tiny MIG workload whose MIG
// pods all complete.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "support/plan_test_support.h"
#include "plan/candidate.h"
#include "plan/search.h"
#include "support/sim_test_support.h"

namespace gpufleet::plan {
namespace {

constexpr double kHour = 3600;
constexpr int64_t kGiB = int64_t{1} << 30;

const GpuModelInfo& model(const char* name) {
  const GpuModelInfo* m = find_gpu_model(name);
  if (m == nullptr) throw std::logic_error(name);
  return *m;
}

CostBoundOption p4d() { return testing::p4d_on_demand(); }

CostBoundOption g6() { return testing::on_demand_option("g6.xlarge", "L4", 1, 3920, 13, 0.8048); }  // not MIG-capable

sim::WorkloadSpec mig_job(std::string name, double arrival_s, double duration_s, int32_t pods, const std::string& profile,
                          int32_t count = 1) {
  sim::WorkloadSpec s = testing::gpu_item(std::move(name), sim::WorkloadKind::kJob, arrival_s, duration_s, pods, 0, 2000, 8 * kGiB);
  s.mig_requests = {MigRequest{profile, count}};
  return s;
}

// 6 pods of one 1g.5gb for 1 h and 2 pods of one 3g.20gb for 1 h (from 600 s), beside a whole-GPU job.
sim::Workload small_mig_workload() {
  sim::Workload w;
  w.horizon_s = 4 * kHour;
  w.items.push_back(testing::gpu_item("train", sim::WorkloadKind::kJob, 0, kHour, 1, 1, 2000, 8 * kGiB));
  w.items.push_back(mig_job("small", 0, kHour, 6, "1g.5gb"));
  w.items.push_back(mig_job("mid", 600, kHour, 2, "3g.20gb"));
  return w;
}

TEST(MigPlan, LayoutForAHandComputedDemand) {
  // A100-40GB, 6 device-hours of 1g.5gb and 2 of 3g.20gb. With one 3g.20gb (3 compute, 4 memory
  // slices) a GPU has 4 compute and 4 memory slices left: at most 4 1g.5gb. GPU-hours needed:
  // {4, 1}: max(6/4, 2/1) = 2; {3, 1}: max(2, 2) = 2 with a compute slice idle; {2, 1}: 3. Two 3g.20gb
  // take all 8 memory slices, so no 1g.5gb fits beside them. So {1g.5gb: 4, 3g.20gb: 1}.
  const std::map<std::string, int> layout = mig_layout_for_demand(model("A100-40GB"), {{"1g.5gb", 6}, {"3g.20gb", 2}});
  EXPECT_EQ(layout, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  EXPECT_TRUE(layout_for_counts(model("A100-40GB"), layout));
  // Mostly 3g.20gb: {1g.5gb: 1, 3g.20gb: 2} does not fit (memory), so one 3g.20gb per GPU still;
  // {1g.5gb: 1..4, 3g.20gb: 1} all need 12 GPU-hours; the most compute slices used wins.
  EXPECT_EQ(mig_layout_for_demand(model("A100-40GB"), {{"1g.5gb", 1}, {"3g.20gb", 12}}),
            (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  // One profile: as many as fit one GPU (7 1g.10gb on an H100: 7 compute slices, memory 0-6).
  EXPECT_EQ(mig_layout_for_demand(model("H100-80GB"), {{"1g.10gb", 3}}), (std::map<std::string, int>{{"1g.10gb", 7}}));
  EXPECT_EQ(mig_layout_for_demand(model("A100-40GB"), {{"3g.20gb", 5}}), (std::map<std::string, int>{{"3g.20gb", 2}}));
  // 7g.40gb excludes everything: one profile is left out, the one serving less demand: 1 device-hour
  // of 7g.40gb is 1 GPU-hour, 1 of 1g.5gb 1/7; with 14 of 1g.5gb (2 GPU-hours) the 1g.5gb stay.
  EXPECT_EQ(mig_layout_for_demand(model("A100-40GB"), {{"1g.5gb", 1}, {"7g.40gb", 1}}), (std::map<std::string, int>{{"7g.40gb", 1}}));
  EXPECT_EQ(mig_layout_for_demand(model("A100-40GB"), {{"1g.5gb", 14}, {"7g.40gb", 1}}), (std::map<std::string, int>{{"1g.5gb", 7}}));
  // Profiles the model lacks, zero demand and a model without MIG give nothing.
  EXPECT_TRUE(mig_layout_for_demand(model("A100-40GB"), {{"3g.40gb", 4}}).empty());
  EXPECT_TRUE(mig_layout_for_demand(model("A100-40GB"), {{"1g.5gb", 0}}).empty());
  EXPECT_TRUE(mig_layout_for_demand(model("L4"), {{"1g.5gb", 4}}).empty());
  // Every layout it returns fits one GPU, over many mixes.
  for (const char* m : {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200-180GB"}) {
    const GpuModelInfo& g = model(m);
    for (size_t a = 0; a < g.mig_profiles.size(); ++a)
      for (size_t b = a; b < g.mig_profiles.size(); ++b)
        for (double share : {0.1, 1.0, 10.0}) {
          const std::map<std::string, int> l =
              mig_layout_for_demand(g, {{g.mig_profiles[a].name, 1.0}, {g.mig_profiles[b].name, share}});
          SCOPED_TRACE(std::string(m) + " " + g.mig_profiles[a].name + " " + g.mig_profiles[b].name);
          ASSERT_FALSE(l.empty());
          EXPECT_TRUE(layout_for_counts(g, l));
        }
  }
}

TEST(MigPlan, PoolChoiceOfASmallWorkload) {
  const sim::Workload w = small_mig_workload();
  const std::vector<PoolChoice> pools = mig_pool_choices(w, {g6(), p4d()});
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].option.instance_type, "p4d.24xlarge");  // the L4 has no MIG
  EXPECT_EQ(pools[0].mig_devices, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  EXPECT_EQ(pools[0].reserved_nodes, 0);
  EXPECT_FALSE(pools[0].spot);
  // Most nodes: the peaks (6 1g.5gb at once, 2 3g.20gb, 20 cores, 64 GiB) over a node's (32 1g.5gb,
  // 8 3g.20gb, 95.69 cores, 1122 GiB): 3g.20gb binds at 0.25 node; ceil(0.25 x 1.5) + 2 = 3.
  EXPECT_EQ(pools[0].max_nodes, 3);
  // The nodes needed half of the horizon: none (the MIG jobs run 1 h 10 min of 4 h).
  std::vector<int32_t> median;
  mig_pool_choices(w, {g6(), p4d()}, &median);
  EXPECT_EQ(median, std::vector<int32_t>{0});
  // With a service of 20 notebooks of one 1g.5gb over the whole horizon: at most 26 1g.5gb devices
  // (0.81 of a node's 32) and 2 3g.20gb (0.25 of 8), so one node all the time: the median is 1.
  sim::Workload with_service = w;
  sim::WorkloadSpec notebooks = mig_job("notebooks", 0, 0, 20, "1g.5gb");
  notebooks.kind = sim::WorkloadKind::kService;
  with_service.items.push_back(notebooks);
  const std::vector<PoolChoice> two = mig_pool_choices(with_service, {g6(), p4d()}, &median);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].mig_devices, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  EXPECT_EQ(median, std::vector<int32_t>{1});
  // Without MIG pods: none.
  sim::Workload plain = w;
  plain.items.resize(1);
  EXPECT_TRUE(mig_pool_choices(plain, {g6(), p4d()}).empty());
  // No MIG-capable type: none either (the MIG pods fail in every plan).
  EXPECT_TRUE(mig_pool_choices(w, {g6()}).empty());
}

TEST(MigPlan, CandidateClusterHasTheLayout) {
  CostBoundOption c7i;
  c7i.instance_type = "c7i.24xlarge";
  c7i.zone = "us-east-1a";
  c7i.cpu_milli = 95690;
  c7i.memory_bytes = 181 * kGiB;
  c7i.on_demand_usd_per_hour = 4.284;
  PlanCandidate c;
  PoolChoice mig{p4d(), 0, false, 3, {{"1g.5gb", 4}, {"3g.20gb", 1}}};
  c.pools = {PoolChoice{p4d(), 0, false, 2, {}}, PoolChoice{c7i, 0, false, 2, {}}, mig};
  EXPECT_EQ(c.label(), "p4d.24xlarge us-east-1a + c7i.24xlarge us-east-1a (pods without GPUs) + p4d.24xlarge us-east-1a (MIG 1g.5gb x4, "
                       "3g.20gb x1), scale-down 600 s, gpufleet");
  const sim::ClusterConfig cluster = candidate_cluster(c);
  ASSERT_EQ(cluster.pools.size(), 3u);
  EXPECT_EQ(cluster.pools[0].pool.name, "p4d-24xlarge");
  EXPECT_FALSE(cluster.pools[0].pool.mig_devices);
  const NodePool& m = cluster.pools[2].pool;
  EXPECT_EQ(m.name, "p4d-24xlarge-mig");
  EXPECT_EQ(mig_pool_name("p4d.24xlarge"), "p4d-24xlarge-mig");
  ASSERT_TRUE(m.mig_devices);
  EXPECT_EQ(*m.mig_devices, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
  EXPECT_NE(std::find(m.labels.begin(), m.labels.end(), std::make_pair(std::string(kMigConfigLabel), std::string("p4d-24xlarge-mig"))),
            m.labels.end());
  // The whole-GPU pool is tainted for the CPU pool; the MIG pool is not (a MIG pod tolerates only its
  // own profile's taint).
  EXPECT_EQ(cluster.pools[0].pool.taints.size(), 1u);
  EXPECT_TRUE(m.taints.empty());
  EXPECT_EQ(m.max_nodes, 3);
  EXPECT_EQ(m.node_count, 0);
  // The pool expands to nodes whose GPUs have the layout.
  NodePool one = m;
  one.node_count = one.min_nodes = 1;
  const std::vector<Node> nodes = expand_pool(one);
  ASSERT_EQ(nodes.size(), 1u);
  // A layout on a model without MIG, or one that does not fit a GPU, is refused.
  PlanCandidate bad;
  bad.pools = {PoolChoice{g6(), 0, false, 1, {}}, PoolChoice{g6(), 0, false, 1, {{"1g.5gb", 1}}}};
  EXPECT_THROW(candidate_cluster(bad), std::invalid_argument);
  bad.pools = {PoolChoice{p4d(), 0, false, 1, {{"3g.20gb", 3}}}};
  EXPECT_THROW(candidate_cluster(bad), std::invalid_argument);
  // Two MIG choices of one type: refused (one pool name).
  bad.pools = {mig, mig};
  EXPECT_THROW(candidate_cluster(bad), std::invalid_argument);
}

TEST(MigPlan, EveryCandidateGetsTheMigPool) {
  const sim::Workload w = small_mig_workload();
  const std::vector<CostBoundOption> options = {g6(), p4d()};
  const PlanSearchOptions search;
  const std::vector<PlanCandidate> cands = plan_candidates(plan_bounds(w, options, PlanConstraints{}, search), options, PlanConstraints{}, w);
  ASSERT_FALSE(cands.empty());
  std::set<std::string> labels;
  for (const PlanCandidate& c : cands) {
    SCOPED_TRACE(c.label());
    EXPECT_TRUE(labels.insert(c.label()).second);
    ASSERT_GE(c.pools.size(), 2u);
    EXPECT_TRUE(c.pools.front().mig_devices.empty());
    EXPECT_EQ(c.pools.back().mig_devices, (std::map<std::string, int>{{"1g.5gb", 4}, {"3g.20gb", 1}}));
    EXPECT_NO_THROW(candidate_cluster(c));
  }
  // Without the MIG pods no candidate has MIG.
  sim::Workload plain = w;
  plain.items.resize(1);
  for (const PlanCandidate& c : plan_candidates(plan_bounds(plain, options, PlanConstraints{}, search), options, PlanConstraints{}, plain))
    for (const PoolChoice& p : c.pools) EXPECT_TRUE(p.mig_devices.empty()) << c.label();
}

TEST(MigPlan, PlanRunsTheMigPods) {
  const sim::Workload w = small_mig_workload();
  const std::vector<CostBoundOption> options = {g6(), p4d()};
  PlanSearchOptions search;
  search.threads = 2;
  search.refine_rounds = 1;
  const PlanBounds bounds = plan_bounds(w, options, PlanConstraints{}, search);
  EXPECT_TRUE(bounds.items_no_option_holds.empty());
  const std::vector<PlanCandidate> cands = plan_candidates(bounds, options, PlanConstraints{}, w);
  const PlanOutcome o = finish_plan(bounds, cands, race_shard(cands, w, search, 0, 1), w, options, PlanConstraints{}, search);
  ASSERT_TRUE(o.recommended.has_value()) << o.infeasible_reason;
  const CandidateResult& r = o.finalists[*o.recommended];
  EXPECT_EQ(r.pods_failed, 0) << r.label;
  EXPECT_EQ(r.pods_completed, 9) << r.label;  // train + 6 small + 2 mid
  EXPECT_EQ(o.baseline.pods_failed, 0);       // the baseline has the MIG pool too
  EXPECT_NE(r.label.find("(MIG 1g.5gb x4, 3g.20gb x1)"), std::string::npos) << r.label;
}

}  // namespace
}  // namespace gpufleet::plan
