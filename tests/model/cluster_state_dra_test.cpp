// ClusterState::deallocate_dra_claim: a claim the catalog allocated and no bound pod holds is
// deallocated (its device free again), a fork's discard allocates it back, and a claim a bound pod
// holds stays.
#include <gtest/gtest.h>

#include <memory>

#include "model/cluster_state.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

std::shared_ptr<DraCatalog> two_claims() {
  auto catalog = std::make_shared<DraCatalog>();
  for (const char* name : {"free", "used"}) {
    ResourceClaim c;
    c.namespace_name = "default";
    c.name = name;
    DraAllocation a;
    a.devices = {{"gpu", "gpu.example.com", "n0", std::string("gpu-") + name}};
    c.allocation = a;
    catalog->claims.emplace(std::string("default/") + name, c);
  }
  return catalog;
}

TEST(ClusterStateDra, DeallocateClaimOfNoPod) {
  const auto catalog = two_claims();
  ClusterState state({testing::make_node("n0", 8000, 8192, 0)});
  state.set_dra_catalog(catalog);
  DeviceAssignment devices;
  devices.claims = {{"default/used", *catalog->claims.at("default/used").allocation}};
  state.allocate(0, testing::make_pod("p", 1000, 1024, 0, 0), devices);
  EXPECT_FALSE(state.deallocate_dra_claim("default/used"));  // p holds it
  EXPECT_FALSE(state.deallocate_dra_claim("default/none"));
  ASSERT_NE(state.dra_device_holder("gpu.example.com/n0/gpu-free"), nullptr);
  {
    ClusterState::Fork fork = state.fork();
    EXPECT_TRUE(state.deallocate_dra_claim("default/free"));
    EXPECT_EQ(state.dra_claim("default/free"), nullptr);
    EXPECT_EQ(state.dra_device_holder("gpu.example.com/n0/gpu-free"), nullptr);
    fork.discard();
  }
  ASSERT_NE(state.dra_claim("default/free"), nullptr);
  EXPECT_TRUE(state.dra_claim("default/free")->from_catalog);
  EXPECT_EQ(*state.dra_device_holder("gpu.example.com/n0/gpu-free"), "default/free");
  EXPECT_TRUE(state.deallocate_dra_claim("default/free"));
  EXPECT_EQ(state.dra_device_holder("gpu.example.com/n0/gpu-free"), nullptr);
  EXPECT_NE(state.dra_claim("default/used"), nullptr);
}

}  // namespace
}  // namespace gpufleet
