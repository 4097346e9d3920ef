// Plugins own their identity: one way to declare a name (NamedPlugin<"Name">: kName and name()),
// and observers apart from Score (ObserverPlugin, listed by the profile, told of every pod by the
// Scheduler, whose memo follows their generation()).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/gpu/fragmentation.h"
#include "sched/framework/profile.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/resource_allocation_score.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

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

template <class T>
concept Observes = requires(T& t, const Pod& pod, const ClusterState& state) { t.observe(pod, state); };
static_assert(!Observes<ScorePlugin>, "the Score interface is only scoring");
static_assert(Observes<ObserverPlugin>);

TEST(PluginIdentity, ProfilesListTheirObservers) {
  const ClusterState state({make_node("n0", 8000, 16384, 1)});
  const auto frag = std::make_shared<const FragmentationMeasure>(std::vector<TypicalPod>{}, state.gpu_models());
  const PolicyContext context{frag, state.gpu_models(), &state};
  for (const std::string& name : policy_names()) {
    SCOPED_TRACE(name);
    const Profile p = make_policy(name, context);
    const bool online = name == "fgd-online" || name == "gpufleet";
    ASSERT_EQ(p.observers.size(), online ? 1u : 0u);
    if (online) {
      EXPECT_EQ(dynamic_cast<const Plugin*>(p.observers[0].get()), dynamic_cast<const Plugin*>(p.scores.back().plugin.get()));
    }
  }
}

// An observer's generation moving empties the memo: the same pod then scores afresh.
class CountingObserver final : public ObserverPlugin, public ScorePlugin, public NamedPlugin<"CountingObserver"> {
 public:
  void observe(const Pod&, const ClusterState&) override { ++seen_; }
  uint64_t generation() const override { return static_cast<uint64_t>(seen_); }
  // Prefers node 1 until it saw two pods, then node 0.
  int64_t score(const Pod&, const ClusterState&, NodeId n, const CycleState&) const override {
    const int64_t v = n;
    return seen_ < 2 ? v : -v;
  }

 private:
  int seen_ = 0;
};

TEST(PluginIdentity, SchedulerTellsObserversAndDropsItsMemo) {
  const ClusterState state({make_node("n0", 8000, 16384, 0), make_node("n1", 8000, 16384, 0)});
  Scheduler s(testing::profile_of("observed", {std::make_shared<NodeResourcesFit>()}, std::make_shared<CountingObserver>(),
                                  std::make_shared<BestFitGpuSelector>()),
              {0, 1});
  ASSERT_EQ(s.profile().observers.size(), 1u);
  GoRand rng(1);
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  s.observe(pod, state);
  EXPECT_EQ(s.decide(pod, state, rng).node, 1u);
  s.observe(pod, state);
  EXPECT_EQ(s.decide(pod, state, rng).node, 0u);
}

}  // namespace
}  // namespace gpufleet::sched
