// The planner's search (src/plan/search.h) and its candidates (src/plan/candidate.h): the cluster a
// hand-made candidate becomes, the inconsistent candidates refused, meets() naming each constraint it
// misses, the race's workload, the candidate list of a hand-computed demand curve (count and order),
// finish_plan refusing a missing or repeated result, and finish_plan on a tiny workload: a plan that
// meets the constraints, costs no less than the lower bound and no more than any other finalist that
// meets them, a frontier sorted by cost, and the same outcome from two shards as from one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/plan_test_support.h"
#include "plan/candidate.h"
#include "plan/search.h"
#include "support/sim_test_support.h"

namespace gpufleet::plan {
namespace {

constexpr double kHour = 3600;
constexpr int64_t kGiB = int64_t{1} << 30;

CostBoundOption p4d() {
  CostBoundOption o = testing::p4d_on_demand();
  o.spot_usd_per_hour = 13.11;
  o.committed_usd_per_hour = 19.22;
  o.commitment = "reserved1y";
  o.spot_interruptions_per_hour = 0.0001;
  return o;
}

PlanCandidate p4d_candidate() {
  PlanCandidate c;
  c.pools = {PoolChoice{p4d(), 3, true, 10, {}}};
  c.scale_down_unneeded_s = 60;
  c.consolidation = true;
  c.consolidation_threshold = 0.5;
  return c;
}

bool has_label(const NodePool& p, const std::string& key, const std::string& value) {
  return std::find(p.labels.begin(), p.labels.end(), std::make_pair(key, value)) != p.labels.end();
}

TEST(PlanCandidate, LabelAndStem) {
  EXPECT_EQ(p4d_candidate().label(), "p4d.24xlarge us-east-1a (3 reserved1y, spot), scale-down 60 s, consolidation 0.5, gpufleet");
  EXPECT_EQ(pool_stem("p4d.24xlarge"), "p4d-24xlarge");
  EXPECT_EQ(pool_stem("My_Type.X"), "my-type-x");
  PlanCandidate plain;
  plain.pools = {PoolChoice{p4d(), 0, false, 1, {}}};
  EXPECT_EQ(plain.label(), "p4d.24xlarge us-east-1a, scale-down 600 s, gpufleet");
  EXPECT_EQ(p4d_candidate().max_nodes(), 20);  // the spot pool counts apart
  EXPECT_EQ(p4d_candidate().reserved_nodes(), 3);
}

TEST(PlanCandidate, Cluster) {
  const sim::ClusterConfig c = candidate_cluster(p4d_candidate());
  ASSERT_EQ(c.pools.size(), 2u);
  const sim::SimPool& od = c.pools[0];
  EXPECT_EQ(od.pool.name, "p4d-24xlarge");
  EXPECT_EQ(od.pool.instance_type, "p4d.24xlarge");
  EXPECT_EQ(od.pool.gpu_model, "A100-40GB");
  EXPECT_EQ(od.pool.gpus_per_node, 8);
  EXPECT_EQ(od.pool.cpu_milli, 95690);
  EXPECT_EQ(od.pool.memory_bytes, 1122 * kGiB);
  EXPECT_EQ(od.pool.node_count, 3);
  EXPECT_EQ(od.pool.min_nodes, 3);
  EXPECT_EQ(od.pool.max_nodes, 10);
  EXPECT_TRUE(has_label(od.pool, "topology.kubernetes.io/zone", "us-east-1a"));
  EXPECT_DOUBLE_EQ(od.pool.on_demand_usd_per_hour, 32.77);
  ASSERT_TRUE(od.pool.reserved_usd_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*od.pool.reserved_usd_per_hour, 19.22);
  EXPECT_FALSE(od.pool.spot_usd_per_hour.has_value());
  EXPECT_EQ(od.settings.capacity_type, sim::CapacityType::kOnDemand);
  EXPECT_EQ(od.settings.reserved_nodes, 3);
  EXPECT_DOUBLE_EQ(od.settings.provision_s, sim::kProvisionKarpenterS);

  const sim::SimPool& spot = c.pools[1];
  EXPECT_EQ(spot.pool.name, "p4d-24xlarge-spot");
  EXPECT_EQ(spot.pool.node_count, 0);
  EXPECT_EQ(spot.pool.min_nodes, 0);
  EXPECT_EQ(spot.pool.max_nodes, 10);
  EXPECT_TRUE(has_label(spot.pool, "topology.kubernetes.io/zone", "us-east-1a"));
  ASSERT_TRUE(spot.pool.spot_usd_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*spot.pool.spot_usd_per_hour, 13.11);
  EXPECT_FALSE(spot.pool.reserved_usd_per_hour.has_value());
  EXPECT_EQ(spot.settings.capacity_type, sim::CapacityType::kSpot);
  EXPECT_EQ(spot.settings.reserved_nodes, 0);
  EXPECT_DOUBLE_EQ(spot.settings.provision_s, sim::kProvisionKarpenterS);
  EXPECT_DOUBLE_EQ(spot.settings.spot_interruptions_per_hour, 0.0001);

  EXPECT_EQ(c.autoscaler.expander, sim::Expander::kPrice);
  EXPECT_DOUBLE_EQ(c.autoscaler.scale_down_unneeded_s, 60);
  EXPECT_DOUBLE_EQ(c.autoscaler.scale_down_delay_after_add_s, 60);
  EXPECT_TRUE(c.consolidation.enabled);
  EXPECT_DOUBLE_EQ(c.consolidation.threshold, 0.5);
}

TEST(PlanCandidate, ClusterWithoutSpotOrReservations) {
  PlanCandidate c = p4d_candidate();
  c.pools[0].reserved_nodes = 0;
  c.pools[0].spot = false;
  c.consolidation = false;
  c.scale_down_unneeded_s = 600;
  const sim::ClusterConfig cluster = candidate_cluster(c);
  ASSERT_EQ(cluster.pools.size(), 1u);
  EXPECT_EQ(cluster.pools[0].pool.node_count, 0);
  EXPECT_EQ(cluster.pools[0].pool.min_nodes, 0);
  EXPECT_FALSE(cluster.pools[0].pool.reserved_usd_per_hour.has_value());
  EXPECT_FALSE(cluster.consolidation.enabled);
  EXPECT_DOUBLE_EQ(cluster.autoscaler.scale_down_unneeded_s, 600);
}

TEST(PlanCandidate, ACpuPoolDedicatesTheGpuNodes) {
  const CostBoundOption c7i = testing::c7i_on_demand();
  PlanCandidate c = p4d_candidate();
  EXPECT_FALSE(c.dedicated_gpu_nodes());
  EXPECT_FALSE(candidate_cluster(c).extended_resource_toleration);
  for (const sim::SimPool& p : candidate_cluster(c).pools) EXPECT_TRUE(p.pool.taints.empty()) << p.pool.name;
  c.pools.push_back(PoolChoice{c7i, 0, false, 4, {}});
  EXPECT_TRUE(c.dedicated_gpu_nodes());
  EXPECT_EQ(c.label(),
            "p4d.24xlarge us-east-1a (3 reserved1y, spot) + c7i.24xlarge us-east-1a (pods without GPUs), scale-down 60 s, "
            "consolidation 0.5, gpufleet");
  const sim::ClusterConfig cluster = candidate_cluster(c);
  EXPECT_TRUE(cluster.extended_resource_toleration);
  ASSERT_EQ(cluster.pools.size(), 3u);
  // Both p4d pools (on-demand and spot) carry nvidia.com/gpu:NoSchedule; the CPU pool none.
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(cluster.pools[i].pool.taints.size(), 1u) << i;
    EXPECT_EQ(cluster.pools[i].pool.taints[0].key, "nvidia.com/gpu");
    EXPECT_EQ(cluster.pools[i].pool.taints[0].value, "");
    EXPECT_EQ(cluster.pools[i].pool.taints[0].effect, "NoSchedule");
  }
  EXPECT_EQ(cluster.pools[2].pool.name, "c7i-24xlarge");
  EXPECT_EQ(cluster.pools[2].pool.gpus_per_node, 0);
  EXPECT_TRUE(cluster.pools[2].pool.taints.empty());
}

TEST(PlanCandidate, InconsistentCandidatesThrow) {
  PlanCandidate c = p4d_candidate();
  c.pools[0].option.committed_usd_per_hour.reset();
  c.pools[0].option.commitment = "";
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // reserved nodes without a committed price
  c.pools[0].reserved_nodes = 0;
  EXPECT_NO_THROW(candidate_cluster(c));
  c.pools[0].option.spot_usd_per_hour.reset();
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // a spot pool without a spot price
  c = p4d_candidate();
  c.pools[0].max_nodes = 0;
  c.pools[0].reserved_nodes = 0;
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // no node at all
  c = p4d_candidate();
  c.pools[0].reserved_nodes = 11;
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // more reserved than max
  c = p4d_candidate();
  c.pools.push_back(c.pools[0]);
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // one instance type twice
  c.pools.clear();
  EXPECT_THROW(candidate_cluster(c), std::invalid_argument);  // no pools
}

// A result meeting the default constraints (production p99 60 s, no spot limit, no budget).
CandidateResult good_result() {
  CandidateResult r;
  r.cost_usd = 100;
  r.gpu_billed_hours = 10;
  r.spot_billed_gpu_hours = 0;
  r.production_pending_p99_s = 30;
  r.pods_failed = 1;
  return r;
}

TEST(PlanSearch, MeetsNamesTheConstraintMissed) {
  PlanConstraints k;
  std::string why = "untouched", which = "untouched";
  EXPECT_TRUE(meets(good_result(), k, 1, &why, &which));
  EXPECT_EQ(why, "untouched");
  EXPECT_EQ(which, "untouched");

  CandidateResult r = good_result();
  r.pods_failed = 2;
  EXPECT_FALSE(meets(r, k, 1, &why, &which));
  EXPECT_EQ(which, "pods");
  EXPECT_NE(why.find("2 pods failed"), std::string::npos) << why;

  r = good_result();
  r.production_pending_p99_s = 120;
  EXPECT_FALSE(meets(r, k, 1, &why, &which));
  EXPECT_EQ(which, "productionP99PendingSeconds");
  EXPECT_EQ(why, "production p99 pending 120 s > 60 s (slo.productionP99PendingSeconds)");
  r.production_pending_p99_s = 60;  // at the limit: met
  EXPECT_TRUE(meets(r, k, 1, nullptr, nullptr));
  r.production_pending_p99_s.reset();  // no production pods: nothing to miss
  EXPECT_TRUE(meets(r, k, 1, nullptr, nullptr));

  r = good_result();
  r.spot_billed_gpu_hours = 6;  // 60% of 10
  k.max_spot_share = 0.5;
  EXPECT_FALSE(meets(r, k, 1, &why, &which));
  EXPECT_EQ(which, "maxSpotShare");
  EXPECT_EQ(why, "spot share 60.0% of the GPU-hours billed > 50.0% (maxSpotShare)");
  r.spot_billed_gpu_hours = 5;  // exactly the share
  EXPECT_TRUE(meets(r, k, 1, nullptr, nullptr));

  r = good_result();
  k = PlanConstraints{};
  k.budget_usd = 50;
  EXPECT_FALSE(meets(r, k, 1, &why, &which));
  EXPECT_EQ(which, "budgetUsd");
  EXPECT_EQ(why, "cost 100.00 USD > 50.00 USD (budgetUsd)");
  k.budget_usd = 100;
  EXPECT_TRUE(meets(r, k, 1, nullptr, nullptr));

  // The first one missed, in the documented order: pods, SLO, spot share, budget.
  r = good_result();
  r.production_pending_p99_s = 120;
  r.spot_billed_gpu_hours = 10;
  k.budget_usd = 1;
  k.max_spot_share = 0;
  EXPECT_FALSE(meets(r, k, 1, &why, &which));
  EXPECT_EQ(which, "productionP99PendingSeconds");
}

sim::WorkloadSpec item(std::string name, sim::WorkloadKind kind, double arrival_s, double duration_s, int32_t pods, int32_t num_gpu,
                       sim::CapacityPreference capacity = sim::CapacityPreference::kOnDemand, int32_t priority = 0) {
  sim::WorkloadSpec s = testing::gpu_item(std::move(name), kind, arrival_s, duration_s, pods, num_gpu);
  s.capacity = capacity;
  s.priority = priority;
  return s;
}

TEST(PlanSearch, RaceWorkloadKeepsServicesAndCutsJobs) {
  sim::Workload w;
  w.horizon_s = 1000;
  w.items = {item("svc", sim::WorkloadKind::kService, 0, 0, 2, 1), item("j0", sim::WorkloadKind::kJob, 0, 100, 1, 1),
             item("j499", sim::WorkloadKind::kJob, 499, 100, 1, 1), item("j500", sim::WorkloadKind::kJob, 500, 100, 1, 1),
             item("late-svc", sim::WorkloadKind::kService, 900, 0, 1, 1), item("j800", sim::WorkloadKind::kJob, 800, 100, 1, 1)};
  const sim::Workload half = race_workload(w, 0.5);
  EXPECT_DOUBLE_EQ(half.horizon_s, 500);
  std::vector<std::string> names;
  for (const auto& s : half.items) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"svc", "j0", "j499", "late-svc"}));

  const sim::Workload whole = race_workload(w, 1);
  EXPECT_DOUBLE_EQ(whole.horizon_s, 1000);
  EXPECT_EQ(whole.items.size(), 6u);
  EXPECT_THROW(race_workload(w, 0), std::invalid_argument);
  EXPECT_THROW(race_workload(w, 1.5), std::invalid_argument);
  EXPECT_THROW(race_workload(w, -0.1), std::invalid_argument);
}

// Over 4 h: a service of 8 x 1 GPU all the time, a job of 2 x 8 GPUs in the first 2 h, and a spot-ok
// job of 1 x 8 GPUs in the last hour. On-demand-only GPUs per hour: 24, 24, 8, 8; all: 24, 24, 8, 16.
sim::Workload four_hours() {
  sim::Workload w;
  w.horizon_s = 4 * kHour;
  w.items = {item("svc", sim::WorkloadKind::kService, 0, 0, 8, 1), item("big", sim::WorkloadKind::kJob, 0, 2 * kHour, 2, 8),
             item("spotty", sim::WorkloadKind::kJob, 3 * kHour, kHour, 1, 8, sim::CapacityPreference::kSpotOk)};
  return w;
}

CostBoundOption plain_option(std::string type, int32_t gpus, double on_demand) {
  CostBoundOption o;
  o.instance_type = std::move(type);
  o.zone = "z1";
  o.gpu_model = "A100-40GB";
  o.gpus = gpus;
  o.cpu_milli = 192000;
  o.memory_bytes = 1024 * kGiB;
  o.on_demand_usd_per_hour = on_demand;
  return o;
}

TEST(PlanSearch, CandidatesOfAHandComputedCurve) {
  const sim::Workload w = four_hours();
  const DemandCurve d = workload_demand(w, kHour, 1000);
  ASSERT_EQ(d.buckets.size(), 4u);
  EXPECT_DOUBLE_EQ(d.peak_gpus, 24);
  // A: 8 GPUs, committed and spot. Its quantiles of the on-demand-only GPUs (24, 24, 8, 8): 10, 25 and
  // 50% -> 8 GPUs -> 1 node; 75% -> 24 -> 3 nodes: reserved {0, 1, 3}. Max nodes ceil(24/8 x 1.5) + 2 = 7.
  CostBoundOption a = plain_option("a8", 8, 10);
  a.committed_usd_per_hour = 6;
  a.commitment = "reserved1y";
  a.spot_usd_per_hour = 4;
  CostBoundOption a_other_zone = a;  // the same prices in another zone: skipped
  a_other_zone.zone = "z2";
  // B: 8 GPUs, on-demand only: reserved {0}, no spot. Max nodes 7.
  CostBoundOption b = plain_option("b8", 8, 9);
  // C: 4 GPUs cannot hold the 8-GPU pods: left out.
  CostBoundOption c = plain_option("c4", 4, 1);
  const std::vector<CostBoundOption> options = {a, a_other_zone, c, b};
  const PlanSearchOptions search;
  const std::vector<PlanCandidate> cands = plan_candidates(plan_bounds(w, options, PlanConstraints{}, search), options, PlanConstraints{}, w);
  // The grid. A alone: 3 reserved x 2 spot x 2 scale-down x 2 consolidation = 24; A with each of the
  // two other types of at most 8 GPUs, cheapest per useful GPU first (C at 1/4 USD, then B at 9/8), as
  // a secondary pool: 24 + 24 more; B alone: 1 x 1 x 2 x 2 = 4; B with C, then with A: 4 + 4. Then
  // the lower bound's mix (origin "lp").
  ASSERT_GT(cands.size(), 84u);
  // The order: option, secondary (none first), reserved (0 first), spot (without first), scale-down
  // (600 first), consolidation (off first).
  const std::vector<int32_t> reserved_of_blocks = {0, 1, 3};
  for (size_t i = 0; i < 72; ++i) {
    const PlanCandidate& p = cands[i];
    SCOPED_TRACE(i);
    ASSERT_EQ(p.pools.size(), i < 24 ? 1u : 2u);
    EXPECT_EQ(p.pools[0].option.instance_type, "a8");
    EXPECT_EQ(p.pools[0].option.zone, "z1");
    EXPECT_EQ(p.pools[0].reserved_nodes, reserved_of_blocks[(i % 24) / 8]);
    EXPECT_EQ(p.pools[0].spot, (i / 4) % 2 == 1);
    EXPECT_DOUBLE_EQ(p.scale_down_unneeded_s, (i / 2) % 2 == 0 ? 600 : 60);
    EXPECT_EQ(p.consolidation, i % 2 == 1);
    EXPECT_EQ(p.pools[0].max_nodes, 7);
    EXPECT_EQ(p.policy, "gpufleet");
    EXPECT_EQ(p.origin, "grid");
    if (i >= 24) {
      // C: 4 GPUs; ceil(24 / 4 x 1.5) + 2 = 11 nodes at most; B: 7. Never committed or spot.
      EXPECT_EQ(p.pools[1].option.instance_type, i < 48 ? "c4" : "b8");
      EXPECT_EQ(p.pools[1].max_nodes, i < 48 ? 11 : 7);
      EXPECT_EQ(p.pools[1].reserved_nodes, 0);
      EXPECT_FALSE(p.pools[1].spot);
    }
  }
  for (size_t i = 72; i < 84; ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(cands[i].pools.size(), i < 76 ? 1u : 2u);
    EXPECT_EQ(cands[i].pools[0].option.instance_type, "b8");
    EXPECT_EQ(cands[i].pools[0].reserved_nodes, 0);
    EXPECT_FALSE(cands[i].pools[0].spot);
    EXPECT_EQ(cands[i].pools[0].max_nodes, 7);
    if (i >= 76) EXPECT_EQ(cands[i].pools[1].option.instance_type, i < 80 ? "c4" : "a8");
  }
  for (size_t i = 84; i < cands.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(cands[i].origin, "lp");
    // The mix is led by a type that holds the 8-GPU pods.
    EXPECT_EQ(cands[i].pools[0].option.gpus, 8);
  }
  // Labels are unique (the shard files and the fingerprint rely on them).
  std::vector<std::string> labels;
  for (const auto& p : cands) labels.push_back(p.label() + "|" + std::to_string(p.max_nodes()));
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(std::adjacent_find(labels.begin(), labels.end()), labels.end());

  // No spot allowed: no candidate has a spot pool.
  PlanConstraints no_spot;
  no_spot.max_spot_share = 0;
  const std::vector<CostBoundOption> ab = {a, b};
  for (const PlanCandidate& p : plan_candidates(plan_bounds(w, ab, no_spot, search), ab, no_spot, w)) EXPECT_FALSE(p.any_spot()) << p.label();
  // No pod accepts spot: no spot pool either. The on-demand-only GPUs are then 24, 24, 8, 16: 10 and
  // 25% -> 8 (1 node), 50% -> 16 (2 nodes), 75% -> 24 (3 nodes): reserved {0, 1, 2, 3} x 2 x 2 = 16
  // grid candidates of A alone.
  sim::Workload od = w;
  od.items[2].capacity = sim::CapacityPreference::kOnDemand;
  const std::vector<CostBoundOption> only_a = {a};
  const std::vector<PlanCandidate> od_cands = plan_candidates(plan_bounds(od, only_a, PlanConstraints{}, search), only_a, PlanConstraints{}, od);
  size_t grid = 0;
  for (size_t i = 0; i < od_cands.size(); ++i) {
    EXPECT_FALSE(od_cands[i].any_spot()) << i;
    if (od_cands[i].origin != "grid") continue;
    EXPECT_EQ(od_cands[i].pools[0].reserved_nodes, static_cast<int32_t>(i / 4)) << i;
    ++grid;
  }
  EXPECT_EQ(grid, 16u);
}

TEST(PlanSearch, FinishPlanRefusesAMissingOrRepeatedResult) {
  const sim::Workload w = four_hours();
  const std::vector<CostBoundOption> options = {plain_option("b8", 8, 9)};
  const PlanBounds bounds = plan_bounds(w, options, PlanConstraints{}, PlanSearchOptions{});
  const std::vector<PlanCandidate> cands = plan_candidates(bounds, options, PlanConstraints{}, w);
  ASSERT_GE(cands.size(), 4u);
  auto results = [](std::vector<size_t> indexes) {
    std::vector<CandidateResult> r;
    for (size_t i : indexes) {
      r.emplace_back();
      r.back().index = i;
    }
    return r;
  };
  const PlanSearchOptions search;
  std::vector<size_t> all(cands.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto without_last = all;
  without_last.pop_back();
  auto repeated = without_last;
  repeated.push_back(without_last.back());
  auto out_of_range = without_last;
  out_of_range.push_back(cands.size());
  auto one_more = all;
  one_more.push_back(all.back());
  EXPECT_THROW(finish_plan(bounds, cands, results(without_last), w, options, PlanConstraints{}, search), std::invalid_argument);
  EXPECT_THROW(finish_plan(bounds, cands, results(repeated), w, options, PlanConstraints{}, search), std::invalid_argument);
  EXPECT_THROW(finish_plan(bounds, cands, results(out_of_range), w, options, PlanConstraints{}, search), std::invalid_argument);
  EXPECT_THROW(finish_plan(bounds, cands, results(one_more), w, options, PlanConstraints{}, search), std::invalid_argument);
}

TEST(PlanSearch, FinishPlanOnATinyWorkload) {
  // 2 h: one production replica of 1 GPU all the time, a 1-GPU production job, two spot-ok 1-GPU jobs.
  sim::Workload w;
  w.horizon_s = 2 * kHour;
  w.items = {item("api", sim::WorkloadKind::kService, 0, 0, 1, 1, sim::CapacityPreference::kOnDemand, 1000),
             item("prod", sim::WorkloadKind::kJob, 600, 1800, 1, 1, sim::CapacityPreference::kOnDemand, 1000),
             item("batch-a", sim::WorkloadKind::kJob, 0, 3600, 1, 1, sim::CapacityPreference::kSpotOk),
             item("batch-b", sim::WorkloadKind::kJob, 3000, 1800, 1, 1, sim::CapacityPreference::kSpotOk)};
  CostBoundOption l4 = plain_option("g6.xlarge", 1, 0.8048);
  l4.gpu_model = "L4";
  l4.cpu_milli = 3920;
  l4.memory_bytes = 13 * kGiB;
  l4.spot_usd_per_hour = 0.3219;
  l4.committed_usd_per_hour = 0.472;
  l4.commitment = "reserved1y";
  const std::vector<CostBoundOption> options = {l4};
  PlanConstraints k;
  k.production_p99_pending_s = 600;
  k.max_spot_share = 0.5;
  PlanSearchOptions search;
  search.threads = 1;
  search.finalists = 4;
  const PlanBounds bounds = plan_bounds(w, options, k, search);
  const std::vector<PlanCandidate> cands = plan_candidates(bounds, options, k, w);
  ASSERT_GE(cands.size(), 8u);

  const PlanOutcome one = finish_plan(bounds, cands, race_shard(cands, w, search, 0, 1), w, options, k, search);
  ASSERT_EQ(one.race.size(), cands.size());
  for (size_t i = 0; i < one.race.size(); ++i) EXPECT_EQ(one.race[i].index, i);
  ASSERT_GE(one.finalists.size(), 4u);  // the race's 4, then the local search's neighbours
  ASSERT_TRUE(one.recommended.has_value()) << one.infeasible_reason;
  const CandidateResult& plan = one.finalists[*one.recommended];
  int64_t most_failed = one.baseline.pods_failed;
  for (const auto& f : one.finalists) most_failed = std::min(most_failed, f.pods_failed);
  std::string why;
  EXPECT_TRUE(meets(plan, k, most_failed, &why)) << why;
  for (const auto& f : one.finalists)
    if (meets(f, k, most_failed, nullptr)) {
      EXPECT_LE(plan.cost_usd, f.cost_usd) << f.label;
    }
  EXPECT_GE(plan.cost_usd, one.bound.cost_usd - 1e-6);
  EXPECT_GT(plan.cost_usd, 0);
  EXPECT_EQ(plan.label, one.candidates[plan.index].label());
  EXPECT_TRUE(one.infeasible_reason.empty());
  ASSERT_FALSE(one.frontier.empty());
  for (size_t i = 1; i < one.frontier.size(); ++i)
    EXPECT_LE(one.finalists[one.frontier[i - 1]].cost_usd, one.finalists[one.frontier[i]].cost_usd);
  // The cheapest finalist is on the frontier.
  double cheapest = one.finalists[0].cost_usd;
  for (const auto& f : one.finalists) cheapest = std::min(cheapest, f.cost_usd);
  EXPECT_DOUBLE_EQ(one.finalists[one.frontier[0]].cost_usd, cheapest);
  ASSERT_GE(one.waterfall.size(), 2u);
  EXPECT_DOUBLE_EQ(one.waterfall.front().result.cost_usd, one.baseline.cost_usd);
  EXPECT_DOUBLE_EQ(one.waterfall.back().result.cost_usd, plan.cost_usd);

  // Two shards, merged in either order, give the same outcome.
  std::vector<CandidateResult> merged = race_shard(cands, w, search, 1, 2);
  for (const auto& r : race_shard(cands, w, search, 0, 2)) merged.push_back(r);
  const PlanOutcome two = finish_plan(bounds, cands, merged, w, options, k, search);
  ASSERT_EQ(two.race.size(), one.race.size());
  for (size_t i = 0; i < one.race.size(); ++i) EXPECT_EQ(two.race[i].cost_usd, one.race[i].cost_usd);
  ASSERT_TRUE(two.recommended.has_value());
  EXPECT_EQ(two.finalists[*two.recommended].index, plan.index);
  EXPECT_EQ(two.finalists[*two.recommended].cost_usd, plan.cost_usd);
  EXPECT_EQ(two.frontier, one.frontier);

  // A budget below every plan: none recommended, the budget named.
  PlanConstraints poor = k;
  poor.budget_usd = 0.01;
  const PlanOutcome none = finish_plan(bounds, cands, race_shard(cands, w, search, 0, 1), w, options, poor, search);
  EXPECT_FALSE(none.recommended.has_value());
  EXPECT_EQ(none.binding_constraint, "budgetUsd");
  EXPECT_NE(none.infeasible_reason.find("(budgetUsd)"), std::string::npos) << none.infeasible_reason;
}

}  // namespace
}  // namespace gpufleet::plan

namespace gpufleet::plan {
namespace {

TEST(PlanUtilization, EveryStrideThRowWithinTheLimit) {
  std::vector<sim::TimeseriesRow> rows(3001);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].time_s = 60.0 * static_cast<double>(i);
    rows[i].gpu_allocated_milli = static_cast<int64_t>(i) * 500;  // i/2 GPUs
    rows[i].gpu_capacity_milli = 8000;
    rows[i].cost_usd_per_hour = 32.77;
    rows[i].pending_pods = static_cast<int64_t>(i % 7);
  }
  // 3,001 rows over a limit of 1,500: stride ceil(3001 / 1500) = 3, rows 0, 3, ..., 3000: 1,001 samples.
  const UtilizationSeries u = utilization_series(rows);
  ASSERT_EQ(u.time_s.size(), 1001u);
  ASSERT_EQ(u.gpus_allocated.size(), 1001u);
  ASSERT_EQ(u.pending_pods.size(), 1001u);
  EXPECT_DOUBLE_EQ(u.time_s[1], 180);
  EXPECT_DOUBLE_EQ(u.gpus_allocated[1], 1.5);
  EXPECT_DOUBLE_EQ(u.gpus_billed[1000], 8);
  EXPECT_DOUBLE_EQ(u.cost_usd_per_hour[5], 32.77);
  EXPECT_EQ(u.pending_pods[1000], 3000 % 7);
  // Within the limit every row stays.
  rows.resize(kMaxUtilizationSamples);
  EXPECT_EQ(utilization_series(rows).time_s.size(), kMaxUtilizationSamples);
  EXPECT_TRUE(utilization_series({}).time_s.empty());
}

}  // namespace
}  // namespace gpufleet::plan
