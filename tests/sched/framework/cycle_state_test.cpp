// CycleState reads are type-checked, as kube's plugins check theirs (getPreFilterState in
// pkg/scheduler/framework/plugins/noderesources/fit.go): data written as one type and read as
// another is a CycleStateError, never a cast.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/cluster_state.h"
#include "sched/framework/cycle_state.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "support/test_support.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

struct Counter final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Counter>(*this); }
  int value = 7;
};
struct Other final : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Other>(*this); }
};

TEST(CycleStateTypedRead, WrongTypeIsAnErrorNotACast) {
  enum class Written { kNothing, kCounter, kOther, kNull };
  struct Row {
    const char* name;
    Written written;
    bool throws;
    bool found;
  };
  const Row rows[] = {
      {"absent: PreFilter did not run", Written::kNothing, false, false},
      {"the writer's type", Written::kCounter, false, true},
      {"another type", Written::kOther, true, false},
      {"written as nullptr", Written::kNull, false, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    CycleState cycle;
    switch (r.written) {
      case Written::kNothing: break;
      case Written::kCounter: cycle.write("Key", std::make_unique<Counter>()); break;
      case Written::kOther: cycle.write("Key", std::make_unique<Other>()); break;
      case Written::kNull: cycle.write("Key", nullptr); break;
    }
    if (r.throws) {
      EXPECT_THROW(cycle.read_as<Counter>("Key"), CycleStateError);
      continue;
    }
    const Counter* c = cycle.read_as<Counter>("Key");
    EXPECT_EQ(c != nullptr, r.found);
    if (c != nullptr) {
      EXPECT_EQ(c->value, 7);
    }
  }
  CycleState cycle;
  cycle.write("Key", std::make_unique<Other>());
  try {
    cycle.read_as<Counter>("Key");
    FAIL() << "no error";
  } catch (const CycleStateError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reading \"Key\" from cycleState: the data is a gpufleet::sched::(anonymous namespace)::Other, not a "
              "gpufleet::sched::(anonymous namespace)::Counter");
  }
}

// A plugin's own read is checked: data of another type under InterPodAffinity's key is an error,
// not a misread of its counts.
TEST(CycleStateTypedRead, PluginReadsAreChecked) {
  const ClusterState state({make_node("n0", 8000, 16384, 0)});
  const InterPodAffinity plugin;
  CycleState cycle;
  cycle.write(InterPodAffinity::kName, std::make_unique<Counter>());
  EXPECT_THROW(plugin.filter(make_pod("p", 100, 128, 0, 0), state, 0, cycle), CycleStateError);
}

}  // namespace
}  // namespace gpufleet::sched
