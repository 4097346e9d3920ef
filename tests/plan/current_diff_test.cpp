// The plan against the current cluster (src/plan/current_diff.h) on hand-made cases with hand-computed
// rows: 3 g4dn.12xlarge on-demand nodes and 2 spot today against a plan of 1 reserved g4dn.12xlarge
// (max 4) and a g6.48xlarge pool with spot; keep and change by the plan's bounds and commitments; the
// nodes without an instance type or capacity type named in warnings; the current hourly cost from a
// priced pool file and the plan's mean.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/candidate.h"
#include "plan/current_diff.h"

namespace gpufleet::plan {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

CostBoundOption option(std::string type, int32_t gpus, double on_demand, std::optional<double> spot, std::optional<double> committed) {
  CostBoundOption o;
  o.instance_type = std::move(type);
  o.zone = "us-east-1a";
  o.gpu_model = gpus == 4 ? "T4" : "L4";
  o.gpus = gpus;
  o.cpu_milli = 47000;
  o.memory_bytes = 180 * kGiB;
  o.on_demand_usd_per_hour = on_demand;
  o.spot_usd_per_hour = spot;
  o.committed_usd_per_hour = committed;
  if (committed) o.commitment = "reserved1y";
  return o;
}

CurrentNodes node(std::string name, std::string type, sim::CapacityType capacity, bool labelled = true) {
  CurrentNodes n;
  n.name = std::move(name);
  n.instance_type = std::move(type);
  n.zone = "us-east-1a";
  n.capacity = capacity;
  n.capacity_labelled = labelled;
  return n;
}

// Today: 3 g4dn.12xlarge on-demand and 2 spot.
CurrentCluster today() {
  CurrentCluster c;
  c.source = "nodes.json";
  for (int i = 0; i < 3; ++i) c.entries.push_back(node("od-" + std::to_string(i), "g4dn.12xlarge", sim::CapacityType::kOnDemand));
  for (int i = 0; i < 2; ++i) c.entries.push_back(node("spot-" + std::to_string(i), "g4dn.12xlarge", sim::CapacityType::kSpot));
  return c;
}

// The plan: 1 reserved g4dn.12xlarge (no spot, max 4) and g6.48xlarge with a spot pool (max 2 each).
sim::ClusterConfig planned(int32_t g4dn_reserved) {
  PlanCandidate c;
  c.pools.push_back({option("g4dn.12xlarge", 4, 3.912, 1.5, 2.5), g4dn_reserved, false, 4});
  c.pools.push_back({option("g6.48xlarge", 8, 13.35, 6.0, std::nullopt), 0, true, 2});
  return candidate_cluster(c);
}

void expect_row(const DiffRow& r, const std::string& type, sim::CapacityType capacity, DiffKind kind, int32_t current, bool in_plan,
                int32_t min, int32_t max, int32_t committed) {
  SCOPED_TRACE(type + " " + std::string(sim::capacity_type_name(capacity)));
  EXPECT_EQ(r.instance_type, type);
  EXPECT_EQ(r.zone, "us-east-1a");
  EXPECT_EQ(r.capacity, capacity);
  EXPECT_EQ(diff_kind_name(r.kind), diff_kind_name(kind));
  EXPECT_EQ(r.current_nodes, current);
  EXPECT_EQ(r.current_committed, 0);
  EXPECT_EQ(r.in_plan, in_plan);
  EXPECT_EQ(r.plan_min, min);
  EXPECT_EQ(r.plan_max, max);
  EXPECT_EQ(r.plan_committed, committed);
}

TEST(CurrentDiff, GroupsTodaysNodesByInstanceTypeZoneAndCapacity) {
  const CurrentGroups g = group_current(today());
  ASSERT_EQ(g.groups.size(), 2u);
  EXPECT_EQ(g.groups[0].instance_type, "g4dn.12xlarge");
  EXPECT_EQ(g.groups[0].capacity, sim::CapacityType::kOnDemand);
  EXPECT_EQ(g.groups[0].nodes, 3);
  EXPECT_EQ(g.groups[1].capacity, sim::CapacityType::kSpot);
  EXPECT_EQ(g.groups[1].nodes, 2);
  EXPECT_EQ(g.nodes, 5);
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_FALSE(g.usd_per_hour.has_value());  // Nodes carry no prices
}

TEST(CurrentDiff, OneReservedG4dnAndAG6PoolAgainstToday) {
  // Hand-computed: g4dn on-demand 3 nodes, plan 1..4 with 1 committed: change (a commitment to buy);
  // g4dn spot 2 nodes, the plan has no g4dn spot pool: remove; g6.48xlarge on-demand 0..2 and its
  // spot pool 0..2: add, add.
  const CurrentDiff d = current_diff(group_current(today()), planned(1), 100, 7200);
  ASSERT_EQ(d.rows.size(), 4u);
  expect_row(d.rows[0], "g4dn.12xlarge", sim::CapacityType::kOnDemand, DiffKind::kChange, 3, true, 1, 4, 1);
  expect_row(d.rows[1], "g4dn.12xlarge", sim::CapacityType::kSpot, DiffKind::kRemove, 2, false, 0, 0, 0);
  expect_row(d.rows[2], "g6.48xlarge", sim::CapacityType::kOnDemand, DiffKind::kAdd, 0, true, 0, 2, 0);
  expect_row(d.rows[3], "g6.48xlarge", sim::CapacityType::kSpot, DiffKind::kAdd, 0, true, 0, 2, 0);
  ASSERT_TRUE(d.plan_usd_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*d.plan_usd_per_hour, 50.0);  // 100 USD over 2 h
}

TEST(CurrentDiff, KeepWithinTheBoundsChangeOutside) {
  // No commitment: 3 nodes within 0..4 is keep; 5 nodes above 4 is change.
  const CurrentDiff keep = current_diff(group_current(today()), planned(0), 10, 3600);
  EXPECT_EQ(diff_kind_name(keep.rows[0].kind), "keep");
  CurrentCluster five = today();
  for (int i = 3; i < 5; ++i) five.entries.push_back(node("od-" + std::to_string(i), "g4dn.12xlarge", sim::CapacityType::kOnDemand));
  const CurrentDiff change = current_diff(group_current(five), planned(0), 10, 3600);
  EXPECT_EQ(change.rows[0].current_nodes, 5);
  EXPECT_EQ(diff_kind_name(change.rows[0].kind), "change");
  // The same commitment today (1 reserved node among the 3): keep.
  CurrentCluster committed = today();
  committed.entries[0].committed = 1;
  EXPECT_EQ(diff_kind_name(current_diff(group_current(committed), planned(1), 10, 3600).rows[0].kind), "keep");
}

TEST(CurrentDiff, ADedicatedGpuPlanSaysItsTaintAndPlugin) {
  EXPECT_TRUE(current_diff(group_current(today()), planned(0), 10, 3600).notes.empty());
  sim::ClusterConfig dedicated = planned(0);
  dedicated.extended_resource_toleration = true;
  dedicated.pools[0].pool.taints.push_back({"nvidia.com/gpu", "", "NoSchedule"});
  const CurrentDiff d = current_diff(group_current(today()), dedicated, 10, 3600);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("taint the nodes of " + dedicated.pools[0].pool.name + " nvidia.com/gpu:NoSchedule"), std::string::npos)
      << d.notes[0];
  EXPECT_NE(d.notes[0].find("ExtendedResourceToleration"), std::string::npos) << d.notes[0];
}

TEST(CurrentDiff, UnlabelledNodesAreNamedNotDropped) {
  CurrentCluster c = today();
  c.entries.push_back(node("control-0", "", sim::CapacityType::kOnDemand, false));
  c.entries.push_back(node("t4-0", "g4dn.xlarge", sim::CapacityType::kOnDemand, false));
  const CurrentGroups g = group_current(c);
  EXPECT_EQ(g.nodes, 7);
  ASSERT_EQ(g.unlabelled, std::vector<std::string>{"control-0"});
  ASSERT_EQ(g.warnings.size(), 2u);
  EXPECT_NE(g.warnings[0].find("1 node without an instance type"), std::string::npos) << g.warnings[0];
  EXPECT_NE(g.warnings[0].find("control-0"), std::string::npos) << g.warnings[0];
  EXPECT_NE(g.warnings[1].find("taken as on-demand: t4-0"), std::string::npos) << g.warnings[1];
  // The unlabelled node is in no row; the g4dn.xlarge node is, as on-demand, to remove.
  const CurrentDiff d = current_diff(g, planned(1), 100, 7200);
  ASSERT_EQ(d.rows.size(), 5u);
  EXPECT_EQ(d.rows[2].instance_type, "g4dn.xlarge");
  EXPECT_EQ(diff_kind_name(d.rows[2].kind), "remove");
}

TEST(CurrentDiff, HourlyCostOfAPricedPoolFile) {
  // Pools: 3 on-demand nodes with 1 committed (reserved 2.5, on-demand 3.912) and 2 spot (1.5):
  // 1 x 2.5 + 2 x 3.912 + 2 x 1.5 = 13.324 USD/h.
  CurrentCluster c;
  c.source = "pools.yaml";
  CurrentNodes od = node("g4dn", "g4dn.12xlarge", sim::CapacityType::kOnDemand);
  od.pool = true;
  od.nodes = 3;
  od.committed = 1;
  od.on_demand_usd_per_hour = 3.912;
  od.reserved_usd_per_hour = 2.5;
  CurrentNodes spot = node("g4dn-spot", "g4dn.12xlarge", sim::CapacityType::kSpot);
  spot.pool = true;
  spot.nodes = 2;
  spot.on_demand_usd_per_hour = 3.912;
  spot.spot_usd_per_hour = 1.5;
  c.entries = {od, spot};
  const CurrentGroups g = group_current(c);
  ASSERT_TRUE(g.usd_per_hour.has_value());
  EXPECT_NEAR(*g.usd_per_hour, 13.324, 1e-9);
  const CurrentDiff d = current_diff(g, planned(1), 100, 7200);
  EXPECT_EQ(d.rows[0].current_committed, 1);
  EXPECT_EQ(diff_kind_name(d.rows[0].kind), "keep");  // 3 within 1..4, 1 committed on both sides
  // A spot pool without a spot price: the cost is unknown, not wrong.
  c.entries[1].spot_usd_per_hour.reset();
  EXPECT_FALSE(group_current(c).usd_per_hour.has_value());
}

TEST(CurrentDiff, RefusesAHorizonOfZero) {
  EXPECT_THROW(current_diff(group_current(today()), planned(1), 100, 0), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::plan
