// Plugins own their identity: one way to declare a name (NamedPlugin<"Name">: kName and name()).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "sched/fragmentation.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/resource_allocation_score.h"
#include "test_support.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;

TEST(PluginIdentity, EveryRegisteredPluginAnswersItsName) {
  const ClusterState state({make_node("n0", 8000, 16384, 1)});
  const auto frag = std::make_shared<const FragmentationMeasure>(std::vector<TypicalPod>{}, state.gpu_models());
  const PolicyContext context{frag, state.gpu_models(), &state};
  const Registry& registry = in_tree_registry();
  for (std::string_view name : registry.names()) {
    SCOPED_TRACE(name);
    EXPECT_EQ((*registry.find(name))(nullptr, context)->name(), name);
  }
  static_assert(NodeResourcesFit::kName == "NodeResourcesFit");
  static_assert(LeastAllocated::kName == "LeastAllocated" && MostAllocated::kName == "MostAllocated");
}

}  // namespace
}  // namespace gpufleet::sched
