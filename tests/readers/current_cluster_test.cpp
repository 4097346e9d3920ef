// The reader of `plan --current` (src/readers/plan/current_cluster.h) on the hand-made fixtures of
// tests/data: a kubectl-style List of Nodes (instance type, zone and capacity-type labels, Karpenter's
// and EKS's), a priced node-pool file with the simulator's reservedNodes and capacityType, and an
// unknown capacity type refused at its label with line, column and field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/current_diff.h"
#include "readers/plan/current_cluster.h"
#include "support/expect_input_error.h"

namespace gpufleet::plan {
namespace {

TEST(CurrentClusterReader, ReadsKubectlNodesAndTheirLabels) {
  const std::string path = std::string(GPUFLEET_SOURCE_DIR) + "/tests/data/plan-current-nodes.json";
  std::vector<std::string> warnings;
  const CurrentCluster c = io::read_current_cluster(path, warnings);
  ASSERT_EQ(c.entries.size(), 8u);
  EXPECT_EQ(c.entries[0].instance_type, "g6.12xlarge");
  EXPECT_EQ(c.entries[0].zone, "us-east-1a");
  EXPECT_EQ(c.entries[0].capacity, sim::CapacityType::kOnDemand);
  EXPECT_TRUE(c.entries[0].capacity_labelled);
  EXPECT_EQ(c.entries[3].capacity, sim::CapacityType::kSpot);  // eks.amazonaws.com/capacityType: SPOT
  EXPECT_FALSE(c.entries[5].capacity_labelled);                // g6.xlarge without a capacity type
  EXPECT_EQ(c.entries[7].name, "control-0");
  EXPECT_EQ(c.entries[7].instance_type, "");
  EXPECT_FALSE(c.entries[0].on_demand_usd_per_hour.has_value());
}

TEST(CurrentClusterReader, ReadsAPricedPoolFileWithItsReservation) {
  const std::string path = std::string(GPUFLEET_SOURCE_DIR) + "/tests/data/plan-current-pools.yaml";
  std::vector<std::string> warnings;
  const CurrentCluster c = io::read_current_cluster(path, warnings);
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_TRUE(c.entries[0].pool);
  EXPECT_EQ(c.entries[0].nodes, 3);
  EXPECT_EQ(c.entries[0].committed, 1);
  EXPECT_EQ(c.entries[1].capacity, sim::CapacityType::kSpot);
  EXPECT_EQ(c.entries[1].nodes, 2);
  // 1 x 2.6989 + 2 x 4.6016 + 2 x 1.8406
  ASSERT_TRUE(group_current(c).usd_per_hour.has_value());
  EXPECT_NEAR(*group_current(c).usd_per_hour, 2.6989 + 2 * 4.6016 + 2 * 1.8406, 1e-9);
}

TEST(CurrentClusterReader, RefusesAnUnknownCapacityTypeAtItsLabel) {
  const std::string path = std::string(GPUFLEET_SOURCE_DIR) + "/tests/data/plan-current-bad-capacity.json";
  std::vector<std::string> warnings;
  testing::expect_input_error([&] { io::read_current_cluster(path, warnings); }, path, 97, 55,
                              "items[3].metadata.labels.eks.amazonaws.com/capacityType", "capacity type 'SPOTT' is not one of");
}

}  // namespace
}  // namespace gpufleet::plan
