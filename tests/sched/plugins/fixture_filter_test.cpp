// A Filter plugin added as a test fixture (fixture_device_filter.h), listed in a policy's profile
// through a Registry and ProfileConfig as the in-tree plugins are, with no change to the framework:
// its reasons reach kube's FitError message, the live extender's FailedNodes /
// FailedAndUnresolvableNodes, and preemption (which tries only the nodes it rejected as resolvable).
// Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "fixture_device_filter.h"
#include "live/cluster_cache.h"
#include "live/extender.h"
#include "model/cluster_state.h"
#include "sched/fit_error.h"
#include "sched/framework/profile.h"
#include "sched/framework/registry.h"
#include "sched/plugins/default_preemption.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/registry.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/node_status_support.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::ExampleDeviceFilter;
using testing::expect_node_status;
using testing::identity_ranks;
using testing::make_node;
using testing::NodeStatusRow;
using testing::make_pod;

// The in-tree plugins and the fixture.
Registry fixture_registry() {
  Registry registry = in_tree_registry();
  registry.add({std::string(ExampleDeviceFilter::kName), [](const PluginArgs*, const PolicyContext&) -> std::shared_ptr<Plugin> {
                  return std::make_shared<ExampleDeviceFilter>();
                }});
  return registry;
}

// The bestfit policy's profile with the fixture as its last filter, and DefaultPreemption as in
// `place` when `preemption`.
Profile fixture_profile(const PolicyContext& context, bool preemption) {
  ProfileConfig config = policy_profile("bestfit");
  config.enable(ExtensionPoint::kFilter, std::string(ExampleDeviceFilter::kName));
  if (preemption) config.enable(ExtensionPoint::kPostFilter, std::string(DefaultPreemption::kName));
  return build_profile(config, fixture_registry(), context);
}

Node device_node(const std::string& name, const std::string& device_class, int count, int64_t cpu_milli = 8000) {
  Node n = make_node(name, cpu_milli, 16384, 0);
  if (!device_class.empty()) n.labels.emplace_back(std::string(ExampleDeviceFilter::kClassLabel), device_class);
  n.labels.emplace_back(std::string(ExampleDeviceFilter::kCountLabel), std::to_string(count));
  return n;
}

Pod claiming(const std::string& name, const std::string& device_class, int32_t priority = 0) {
  Pod p = make_pod(name, 1000, 1024, 0, 0);
  p.labels.emplace_back(std::string(ExampleDeviceFilter::kClaimLabel), device_class);
  p.priority = priority;
  return p;
}

TEST(FixtureFilter, ProfileNumbersItsReasonsAfterThePolicyFilters) {
  const Profile profile = fixture_profile(PolicyContext{}, false);
  ASSERT_EQ(profile.filters.back()->name(), "ExampleDeviceFilter");
  const FilterReasonTable table(profile.filters);
  const size_t last = profile.filters.size() - 1;
  size_t before = 0;
  for (size_t i = 0; i < last; ++i) before += profile.filters[i]->filter_reasons().size();
  ASSERT_EQ(table.size(), before + 2);
  EXPECT_EQ(table.number(last, ExampleDeviceFilter::kClassMismatch), before + 1);
  EXPECT_EQ(table.number(last, ExampleDeviceFilter::kInsufficientDevices), before + 2);
  const Rejection r = table.rejection(static_cast<uint8_t>(before + 2));
  EXPECT_EQ(r.plugin_name(), "ExampleDeviceFilter");
  EXPECT_EQ(r.code, ExampleDeviceFilter::kInsufficientDevices);
}

// n0: class a, 1 device, taken by `holder`; n1: class b; n2: no class; n3: class a but 500m of CPU
// (NodeResourcesFit rejects it first). The pod claims class a:
//   n0 Insufficient example.com/device (the fixture, Unschedulable)
//   n1 node(s) offered device class b, n2 ... none (the fixture, UnschedulableAndUnresolvable)
//   n3 Insufficient cpu (NodeResourcesFit)
TEST(FixtureFilter, ItsReasonsInTheFitErrorMessage) {
  ClusterState state({device_node("n0", "a", 1), device_node("n1", "b", 1), device_node("n2", "", 0), device_node("n3", "a", 2, 500)});
  state.allocate(0, claiming("holder", "a"), {});
  Scheduler scheduler(fixture_profile(PolicyContext{}, false), identity_ranks(4));
  GoRand rng(1);
  const Pod pod = claiming("p", "a");
  const ScheduleResult r = scheduler.decide(pod, state, rng);
  ASSERT_FALSE(r.scheduled());
  const NodeStatusRow rows[] = {
      {0, "ExampleDeviceFilter", ExampleDeviceFilter::kInsufficientDevices, Code::kUnschedulable, "Insufficient example.com/device"},
      {1, "ExampleDeviceFilter", ExampleDeviceFilter::kClassMismatch, Code::kUnschedulableAndUnresolvable,
       "node(s) offered device class b"},
      {2, "ExampleDeviceFilter", ExampleDeviceFilter::kClassMismatch, Code::kUnschedulableAndUnresolvable,
       "node(s) offered device class none"},
      {3, "NodeResourcesFit", NodeResourcesFit::kInsufficientCpu, Code::kUnschedulable, "Insufficient cpu"},
  };
  for (const NodeStatusRow& row : rows) expect_node_status(r.node_to_status, pod, state, row);
  EXPECT_EQ(testing::fit_error_of(r, pod, state),
            "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient example.com/device, 1 node(s) offered device class b, "
            "1 node(s) offered device class none.");
  // The stand-alone diagnosis (simulate's, running the filters again) words the nodes alike.
  EXPECT_EQ(fit_error_message(rejection_histogram(scheduler.profile(), pod, state), state.node_count()),
            testing::fit_error_of(r, pod, state));
}

// Preemption dry-runs only the nodes the fixture rejected as resolvable: n0 (a device held by a
// lower-priority pod) is a candidate, n1 (class b, with a low-priority pod that would free nothing
// useful) is "not helpful". With the holder at the pod's own priority, n0 has no victims.
TEST(FixtureFilter, PreemptionTriesOnlyResolvableNodes) {
  struct Row {
    const char* name;
    int32_t holder_priority;
    NodeId nominated;
    std::vector<std::string> victims;
    int32_t candidates;
    const char* message;  // place's pending message when nothing is nominated
  };
  const Row rows[] = {
      {"lower-priority holder", 0, 0, {"holder"}, 1, ""},
      {"holder of the same priority", 10, kNoNode, {}, 0,
       "0/2 nodes are available: 1 Insufficient example.com/device, 1 node(s) offered device class b. preemption: 0/2 nodes are "
       "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    ClusterState state({device_node("n0", "a", 1), device_node("n1", "b", 1)});
    state.allocate(0, claiming("holder", "a", row.holder_priority), {});
    state.allocate(1, claiming("bystander", "b", 0), {});
    Scheduler scheduler(fixture_profile(PolicyContext{}, true), identity_ranks(2));
    GoRand rng(1);
    const Pod pod = claiming("p", "a", 10);
    const ScheduleResult r = scheduler.schedule_one(pod, state, rng);
    ASSERT_FALSE(r.scheduled());
    EXPECT_TRUE(r.node_to_status.at(0).resolvable());
    EXPECT_FALSE(r.node_to_status.at(1).resolvable());
    EXPECT_EQ(r.post_filter.nominated_node, row.nominated);
    std::vector<std::string> victims;
    for (const BoundPod& v : r.post_filter.victims) victims.push_back(v.pod.name);
    EXPECT_EQ(victims, row.victims);
    EXPECT_EQ(r.post_filter.candidates, row.candidates);
    if (row.nominated == kNoNode) {
      EXPECT_EQ(fit_error_message(rejection_histogram(r.node_to_status, pod, state), state.live_node_count(),
                                  r.post_filter_status.message()),
                row.message);
      continue;
    }
    // The victim is gone; the pod's next cycle goes to the nominated node.
    EXPECT_EQ(state.pods_on(0).size(), 0u);
    EXPECT_EQ(scheduler.schedule_cycle(pod, state, rng, r.post_filter.nominated_node).node, row.nominated);
  }
}

}  // namespace
}  // namespace gpufleet::sched

namespace gpufleet::live {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& device_class) {
  const json resources = {{"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"resourceVersion", "10"},
            {"labels", {{"example.com/device-class", device_class}, {"example.com/device-count", "1"}}}}},
          {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

json pod(const std::string& name, const std::string& node_name) {
  const json requests = {{"cpu", "1"}, {"memory", "1Gi"}};
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}, {"labels", {{"example.com/device-class", "a"}}}}},
            {"spec", {{"containers", json::array({{{"name", "c"}, {"resources", {{"requests", requests}, {"limits", requests}}}}})}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

// a: class a, its device held by `holder`; b: class a, free; c: class b. The extender answers for
// `p` (claims a) with the fixture in the snapshot's profile: b passes, a failed (resolvable), c failed
// and unresolvable, each with the fixture's words.
TEST(FixtureFilter, ExtenderSortsItsRejectionsByResolvability) {
  ClusterCache cache(CacheOptions{});
  cache.replace_all({{"apiVersion", "v1"},
                     {"kind", "List"},
                     {"metadata", {{"resourceVersion", "100"}}},
                     {"items", json::array({node("a", "a"), node("b", "a"), node("c", "b"), pod("holder", "a"), pod("p", "")})}},
                    "test");
  const auto snapshot = cache.snapshot();
  place::PreparedCluster& cluster = snapshot->cluster;
  const ClusterState& state = *cluster.state;
  cluster.scheduler = std::make_unique<sched::Scheduler>(
      sched::fixture_profile(sched::PolicyContext{nullptr, state.gpu_models(), &state}, true), sched::identity_ranks(state.node_count()));
  const Pod& p = snapshot->inputs.input.pods.at(snapshot->pod_by_key.at("default/p"));
  const FilterAnswer answer = extender_filter(*snapshot, p, {"a", "b", "c"});
  EXPECT_EQ(answer.passed, std::vector<std::string>{"b"});
  EXPECT_EQ(answer.failed, (std::map<std::string, std::string>{{"a", "Insufficient example.com/device"}}));
  EXPECT_EQ(answer.failed_unresolvable, (std::map<std::string, std::string>{{"c", "node(s) offered device class b"}}));
  EXPECT_TRUE(answer.error.empty());
}

}  // namespace
}  // namespace gpufleet::live
