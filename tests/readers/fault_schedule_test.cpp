// The fault schedule reader (readers/sim/fault_schedule.h): every key, the pools file and --faults forms,
// the errors with their positions, the limitChanges NodePool check, and the fuzz seeds replayed
// (fuzz/corpus/fault_schedule_fuzz: valid seeds parse, bad-* ones are InputErrors).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/expect_input_error.h"
#include "readers/sim/fault_schedule.h"
#include "readers/formats/input_limits.h"
#include "readers/sim/sim_pools.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using testing::expect_input_error;

// The pools the schedules name (the same as fuzz/fault_schedule_fuzz.cpp's kPools).
constexpr const char* kPools = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: h100
  gpu: {model: H100-80GB, count: 8}
  cpu: "190"
  memory: 1900Gi
  nodes: 2
  min: 0
  max: 4
  labels: {topology.kubernetes.io/zone: us-east-1a}
  prices: {onDemand: 98.32}
- name: spot
  gpu: {model: L4, count: 1}
  cpu: "4"
  memory: 16Gi
  nodes: 2
  min: 0
  max: 8
  labels: {topology.kubernetes.io/zone: us-east-1b}
  prices: {onDemand: 0.8, spot: 0.3}
---
apiVersion: sim.gpufleet.io/v1
kind: Autoscaling
pools:
  spot: {capacityType: spot}
)";

const sim::ClusterConfig& cluster() {
  static const sim::ClusterConfig c = parse_sim_cluster_text(kPools, "pools.yaml");
  return c;
}

sim::FaultSchedule parse(const std::string& text) { return *parse_fault_schedule_text(text, "f.yaml", cluster().pools, true); }

const std::string kHead = "apiVersion: sim.gpufleet.io/v1\nkind: FaultSchedule\n";

std::filesystem::path corpus() { return std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "fault_schedule_fuzz"; }

TEST(FaultScheduleReader, ReadsEveryKindOfFault) {
  const sim::FaultSchedule s = read_fault_schedule_file((corpus() / "all-faults.yaml").string(), cluster().pools);
  ASSERT_EQ(s.seed, 7u);
  ASSERT_EQ(s.faults.size(), 5u);
  EXPECT_EQ(s.faults[0].kind, sim::FaultKind::kXid);
  EXPECT_EQ(s.faults[0].target.node, "h100-1");
  EXPECT_DOUBLE_EQ(s.faults[0].at_s, 60);
  EXPECT_EQ(s.faults[0].xid, 94);
  EXPECT_EQ(s.faults[0].gpu, 3);
  EXPECT_DOUBLE_EQ(s.faults[0].recover_after_s, -1);  // default: never
  EXPECT_EQ(s.faults[1].gpu, -1);                     // default: drawn
  EXPECT_DOUBLE_EQ(s.faults[1].recover_after_s, 3600);
  EXPECT_EQ(s.faults[2].kind, sim::FaultKind::kNodeFailure);
  EXPECT_EQ(s.faults[2].target.zone, "us-east-1a");
  EXPECT_DOUBLE_EQ(s.faults[2].rate_per_node_hour, 0.01);
  EXPECT_DOUBLE_EQ(s.faults[2].to_s, 86400);
  EXPECT_DOUBLE_EQ(s.faults[2].at_s, -1);
  EXPECT_EQ(s.faults[3].kind, sim::FaultKind::kDevicePluginFailure);
  EXPECT_EQ(s.faults[4].kind, sim::FaultKind::kSpotInterruption);
}

TEST(FaultScheduleReader, ReadsCapacityLimitsAndUpgrades) {
  const sim::FaultSchedule s = read_fault_schedule_file((corpus() / "capacity.yaml").string(), cluster().pools);
  EXPECT_FALSE(s.seed);
  ASSERT_EQ(s.outages.size(), 2u);
  EXPECT_EQ(s.outages[0].pool, "spot");
  EXPECT_EQ(s.outages[0].zone, "us-east-1b");
  EXPECT_EQ(s.outages[0].capacity_type, "spot");
  EXPECT_DOUBLE_EQ(s.outages[0].to_s, 3600);
  EXPECT_EQ(s.outages[1].pool, "");  // matches every pool
  ASSERT_EQ(s.limit_changes.size(), 1u);
  EXPECT_EQ(s.limit_changes[0].node_pool, "default");
  EXPECT_EQ(s.limit_changes[0].limits,
            (std::vector<std::pair<std::string, int64_t>>{{"cpu", 16000}, {"memory", int64_t{64} << 30}, {"nvidia.com/gpu", 8}}));
  ASSERT_EQ(s.upgrades.size(), 2u);
  EXPECT_EQ(s.upgrades[0].max_unavailable.value, 25);
  EXPECT_TRUE(s.upgrades[0].max_unavailable.percent);
  EXPECT_EQ(s.upgrades[1].max_unavailable.value, 2);
  EXPECT_FALSE(s.upgrades[1].max_unavailable.percent);
  EXPECT_DOUBLE_EQ(s.upgrades[1].upgrade_s, 600);        // default
  EXPECT_DOUBLE_EQ(s.upgrades[1].drain_timeout_s, 300);  // default: ClusterPolicy drain.timeoutSeconds
  EXPECT_EQ(s.upgrades[0].max_parallel_upgrades, 1);     // default: ClusterPolicy maxParallelUpgrades
  EXPECT_EQ(s.upgrades[1].max_parallel_upgrades, 0);     // no limit but maxUnavailable
}

TEST(FaultScheduleReader, FuzzSeedsReplay) {
  int good = 0, bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(corpus())) {
    const std::string name = e.path().filename().string();
    if (name.rfind("bad-", 0) == 0) {
      EXPECT_THROW(read_fault_schedule_file(e.path().string(), cluster().pools), InputError) << name;
      ++bad;
    } else {
      EXPECT_NO_THROW(read_fault_schedule_file(e.path().string(), cluster().pools)) << name;
      ++good;
    }
  }
  EXPECT_EQ(good, 2);
  EXPECT_EQ(bad, 7);
}

TEST(FaultScheduleReader, InThePoolsFile) {
  const sim::ClusterConfig c =
      parse_sim_cluster_text(std::string(kPools) + "---\n" + kHead + "faults:\n- {kind: spot-interruption, pool: spot, at: 5}\n", "p.yaml");
  ASSERT_EQ(c.faults.faults.size(), 1u);
  EXPECT_DOUBLE_EQ(c.faults.faults[0].at_s, 5);
  EXPECT_TRUE(parse_sim_cluster_text(kPools, "p.yaml").faults.empty());
  // A second one in the same file.
  expect_input_error([&] { parse_sim_cluster_text(std::string(kPools) + "---\n" + kHead + "---\n" + kHead, "p.yaml"); }, "p.yaml", 32, 7,
                     "kind", "a second FaultSchedule document (one per file)");
  // A pools file may hold other documents; a --faults file may not, and needs one.
  EXPECT_FALSE(parse_fault_schedule_text(kPools, "p.yaml", cluster().pools, false));
  expect_input_error([&] { parse_fault_schedule_text("", "f.yaml", cluster().pools, true); }, "f.yaml", 0, 0, "kind",
                     "no FaultSchedule document in the file");
}

TEST(FaultScheduleReader, ErrorsNameTheField) {
  expect_input_error([] { parse(kHead + "faults:\n- {kind: xid, node: h100-0, at: 0, xid: {code: 12}}\n"); }, "f.yaml", 4, 48,
                     "faults[0].xid.code", "unknown XID 12 (known: 8, 13, 31");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: xid, node: spot-0, at: 0, xid: {code: 79, gpu: 1}}\n"); }, "f.yaml", 4, 57,
                     "faults[0].xid.gpu", "1 is not a GPU of the target (0..0)");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, node: h100-4, at: 0}\n"); }, "f.yaml", 4, 30, "faults[0].node",
                     "no node 'h100-4' (nodes are <pool>-<index> below the pool's maxNodes; pools: h100, spot)");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, zone: eu-west-1a, at: 0}\n"); }, "f.yaml", 4, 30,
                     "faults[0].zone", "no node is in zone 'eu-west-1a' (zones: us-east-1a, us-east-1b)");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, pool: h100, node: h100-0, at: 0}\n"); }, "f.yaml", 4, 3,
                     "faults[0]", "exactly one of them names the target");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, pool: h100}\n"); }, "f.yaml", 4, 3, "faults[0]",
                     "at or rate is required");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, pool: h100, rate: {perNodeHour: 61}}\n"); }, "f.yaml", 4, 56,
                     "faults[0].rate.perNodeHour", "61 is above the maximum of 60 per node-hour");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, pool: h100, at: 0, recoverAfterSeconds: -1}\n"); }, "f.yaml", 4,
                     64, "faults[0].recoverAfterSeconds", "-1 is negative");
  expect_input_error([] { parse(kHead + "faults:\n- {kind: node-failure, pool: h100, at: 0, xid: {code: 94}}\n"); }, "f.yaml", 4, 43,
                     "faults[0].xid", "xid is only for kind xid");
  expect_input_error([] { parse(kHead + "capacityOutages:\n- {capacityType: reserved, from: 0, to: 1}\n"); }, "f.yaml", 4, 18,
                     "capacityOutages[0].capacityType", "unknown capacity type 'reserved' (expected on-demand, spot)");
  expect_input_error([] { parse(kHead + "driverUpgrades:\n- {pool: h100, at: 0, maxUnavailable: 0}\n"); }, "f.yaml", 4, 39,
                     "driverUpgrades[0].maxUnavailable", "must be at least 1 node or 1%");
}

TEST(FaultScheduleReader, EntriesAreBounded) {
  std::string text = kHead + "capacityOutages:\n";
  for (size_t i = 0; i <= kFaultScheduleLimits.max_capacity_outages; ++i) text += "- {from: 0, to: 1}\n";
  expect_input_error([&] { parse(text); }, "f.yaml", 4, 1, "capacityOutages",
                     "more than 10000 capacity outages (limit FaultScheduleLimits::max_capacity_outages, docs/input-limits.md)");
}

TEST(FaultScheduleReader, LimitChangeNodePoolsAreCheckedWhenKnown) {
  const std::string file = (corpus() / "capacity.yaml").string();
  const std::vector<std::string> both{"gpu", "default"}, one{"gpu"};
  EXPECT_NO_THROW(read_fault_schedule_file(file, cluster().pools, &both));
  // capacity.yaml line 7: "- {at: 3600, nodePool: default, ...}"; the value starts at column 24.
  expect_input_error([&] { read_fault_schedule_file(file, cluster().pools, &one); }, file, 7, 24,
                     "limitChanges[0].nodePool", "no NodePool 'default' (NodePools: gpu)");
}

TEST(FaultScheduleReader, ExamplesParse) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "faults";
  const sim::ClusterConfig c = read_sim_cluster_file((dir / "pools.yaml").string());
  ASSERT_EQ(c.faults.faults.size(), 1u);
  EXPECT_EQ(c.faults.faults[0].xid, 94);
  EXPECT_EQ(read_fault_schedule_file((dir / "xid79.yaml").string(), c.pools).faults[0].xid, 79);
}

}  // namespace
}  // namespace gpufleet::io
