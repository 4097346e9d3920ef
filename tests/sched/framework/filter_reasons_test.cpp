// Filter plugins owning their reasons (sched/framework/status.h, node_to_status.h): each in-tree
// Filter plugin's registered reasons and resolvability, the profile's numbering of them
// (FilterReasonTable), and the per-node record of which plugin rejected each node (NodeToStatus,
// kube's). Every expected value is worked out by hand in the comments.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/framework/node_to_status.h"
#include "sched/framework/profile.h"
#include "sched/plugins/best_fit_score.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/pod_topology_spread.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_resource_topology_match.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/node_unschedulable.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/node_status_support.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::expect_node_status;
using testing::identity_ranks;
using testing::make_node;
using testing::NodeStatusRow;
using testing::make_pod;

// ---------------------------------------------------------------------------------------------
// Registration: every in-tree Filter plugin's reasons, in its order, with kube's code.

TEST(FilterReasons, EachPluginRegistersItsOwn) {
  struct Row {
    std::shared_ptr<const FilterPlugin> plugin;
    size_t index;     // in the plugin's filter_reasons()
    FilterCode code;  // the plugin's constant for it
    const char* reason;
    bool resolvable;
    bool per_node;
  };
  const auto unschedulable = std::make_shared<NodeUnschedulable>();
  const auto taint = std::make_shared<TaintToleration>();
  const auto affinity = std::make_shared<NodeAffinity>();
  const auto resources = std::make_shared<NodeResourcesFit>();
  const auto gpus = std::make_shared<GpuShareFit>();
  const auto numa = std::make_shared<NodeResourceTopologyMatch>();
  const auto spread = std::make_shared<PodTopologySpread>();
  const auto pods = std::make_shared<InterPodAffinity>();
  const Row rows[] = {
      {unschedulable, 0, NodeUnschedulable::kNodeUnschedulable, "node(s) were unschedulable", false, false},
      {taint, 0, TaintToleration::kUntoleratedTaint, "node(s) had untolerated taint(s)", false, true},
      {affinity, 0, NodeAffinity::kNodeAffinityMismatch, "node(s) didn't match Pod's node affinity/selector", false, false},
      {resources, 0, NodeResourcesFit::kInsufficientCpu, "Insufficient cpu", true, false},
      {resources, 1, NodeResourcesFit::kInsufficientMemory, "Insufficient memory", true, false},
      {resources, 2, NodeResourcesFit::kTooManyPods, "Too many pods", true, false},
      {gpus, 0, GpuShareFit::kInsufficientGpu, "Insufficient nvidia.com/gpu", true, false},
      {gpus, 1, GpuShareFit::kGpuModelMismatch, "node(s) didn't match pod's GPU model constraint", false, false},
      {gpus, 2, GpuShareFit::kInsufficientMig, "Insufficient nvidia.com/mig-<profile>", true, true},
      {gpus, 3, GpuShareFit::kInsufficientGpuShared, "Insufficient nvidia.com/gpu.shared", true, false},
      {gpus, 4, GpuShareFit::kSharedRequestAboveOne,
       "node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)", false, false},
      {numa, 0, NodeResourceTopologyMatch::kCannotAlign, "cannot align pod", true, true},
      {spread, 0, PodTopologySpread::kConstraintsNotMatch, "node(s) didn't match pod topology spread constraints", true, false},
      {spread, 1, PodTopologySpread::kMissingRequiredLabel,
       "node(s) didn't match pod topology spread constraints (missing required label)", false, false},
      {pods, 0, InterPodAffinity::kAntiAffinityRulesNotMatch, "node(s) didn't match pod anti-affinity rules", true, false},
      {pods, 1, InterPodAffinity::kExistingAntiAffinityRulesNotMatch, "node(s) didn't satisfy existing pods anti-affinity rules", true,
       false},
      {pods, 2, InterPodAffinity::kAffinityRulesNotMatch, "node(s) didn't match pod affinity rules", false, false},
  };
  std::map<const FilterPlugin*, size_t> rows_of;
  for (const Row& r : rows) {
    SCOPED_TRACE(r.reason);
    ++rows_of[r.plugin.get()];
    const std::span<const FilterReason> reasons = r.plugin->filter_reasons();
    ASSERT_LT(r.index, reasons.size());
    EXPECT_EQ(r.code.get(), &reasons[r.index]);  // the constant names that very reason
    EXPECT_EQ(r.code.reason(), r.reason);
    EXPECT_EQ(r.code.resolvable(), r.resolvable);
    EXPECT_EQ(reasons[r.index].per_node, r.per_node);
    EXPECT_EQ(r.code.code(), r.resolvable ? Code::kUnschedulable : Code::kUnschedulableAndUnresolvable);
  }
  for (const auto& [plugin, count] : rows_of) EXPECT_EQ(plugin->filter_reasons().size(), count) << plugin->name();
  // kFits is no reason at all.
  EXPECT_FALSE(FilterCode::kFits.rejected());
  EXPECT_EQ(FilterCode::kFits.reason(), "");
  EXPECT_TRUE(FilterCode::kFits.status().is_success());
}

// The policies' profile numbers the reasons filter by filter, in the profile's filter order.
TEST(FilterReasons, ProfileNumbersThemInFilterOrder) {
  const Profile p = make_policy("bestfit", PolicyContext{});
  const FilterReasonTable table(p.filters);
  struct Row {
    uint8_t number;
    const char* plugin;
    FilterCode code;
  };
  const Row rows[] = {
      {0, "", FilterCode::kFits},
      {1, "NodeUnschedulable", NodeUnschedulable::kNodeUnschedulable},
      {2, "TaintToleration", TaintToleration::kUntoleratedTaint},
      {3, "NodeAffinity", NodeAffinity::kNodeAffinityMismatch},
      {4, "NodeResourcesFit", NodeResourcesFit::kInsufficientCpu},
      {5, "NodeResourcesFit", NodeResourcesFit::kInsufficientMemory},
      {6, "NodeResourcesFit", NodeResourcesFit::kTooManyPods},
      {7, "GpuShareFit", GpuShareFit::kInsufficientGpu},
      {11, "GpuShareFit", GpuShareFit::kSharedRequestAboveOne},
      {12, "GpuMemoryShareFit", GpuMemoryShareFit::kNoHamiDevices},
      {22, "GpuMemoryShareFit", GpuMemoryShareFit::kKaiInsufficientGpuMemory},
      {23, "NodeResourceTopologyMatch", NodeResourceTopologyMatch::kCannotAlign},
      {24, "PodTopologySpread", PodTopologySpread::kConstraintsNotMatch},
      {25, "PodTopologySpread", PodTopologySpread::kMissingRequiredLabel},
      {26, "InterPodAffinity", InterPodAffinity::kAntiAffinityRulesNotMatch},
      {28, "InterPodAffinity", InterPodAffinity::kAffinityRulesNotMatch},
      {29, "DynamicResources", DynamicResources::kCannotAllocate},
      {31, "DynamicResources", DynamicResources::kAllocationError},
  };
  ASSERT_EQ(table.size(), 31u);
  for (const Row& r : rows) {
    SCOPED_TRACE(static_cast<int>(r.number));
    const Rejection rejection = table.rejection(r.number);
    EXPECT_EQ(rejection.plugin_name(), r.plugin);
    EXPECT_EQ(rejection.code, r.code);
    if (r.number == 0) continue;
    size_t filter = 0;
    while (p.filters[filter]->name() != r.plugin) ++filter;
    EXPECT_EQ(table.number(filter, r.code), r.number);
  }
  EXPECT_THROW(table.rejection(32), std::out_of_range);
}

// A filter with `count` reasons of its own ("reason 0", ...), each Unschedulable; its filter
// returns reason `answer` (-1: kFits), or another plugin's reason when `foreign`.
class ManyReasons final : public FilterPlugin {
 public:
  ManyReasons(std::string name, size_t count, int answer = -1, bool foreign = false)
      : name_(std::move(name)), words_(count), answer_(answer), foreign_(foreign) {
    for (size_t i = 0; i < count; ++i) words_[i] = "reason " + std::to_string(i);
    for (const std::string& w : words_) reasons_.push_back({w, true});
  }
  std::string_view name() const override { return name_; }
  std::span<const FilterReason> filter_reasons() const override { return reasons_; }
  using FilterPlugin::filter;
  FilterCode filter(const Pod&, const ClusterState&, NodeId, const CycleState&) const override {
    if (foreign_) return NodeResourcesFit::kInsufficientCpu;
    return answer_ < 0 ? FilterCode::kFits : FilterCode(reasons_[static_cast<size_t>(answer_)]);
  }

 private:
  std::string name_;
  std::vector<std::string> words_;
  std::vector<FilterReason> reasons_;
  int answer_;
  bool foreign_;
};

// A filter whose one reason has no words.
struct Mute final : FilterPlugin, NamedPlugin<"Mute"> {
  static constexpr FilterReason kReasons[] = {{"", true}};
  std::span<const FilterReason> filter_reasons() const override { return kReasons; }
  using FilterPlugin::filter;
  FilterCode filter(const Pod&, const ClusterState&, NodeId, const CycleState&) const override { return FilterCode::kFits; }
};

std::vector<std::shared_ptr<const FilterPlugin>> filters_with(std::vector<size_t> counts) {
  std::vector<std::shared_ptr<const FilterPlugin>> out;
  for (size_t i = 0; i < counts.size(); ++i) out.push_back(std::make_shared<ManyReasons>("F" + std::to_string(i), counts[i]));
  return out;
}

// A profile holds up to 255 reasons in all (a byte per node; 0 is "not rejected").
TEST(FilterReasons, TableLimitsAndRefusals) {
  struct Row {
    std::vector<size_t> counts;
    bool ok;
  };
  const Row rows[] = {{{}, true}, {{0, 3}, true}, {{255}, true}, {{200, 55}, true}, {{256}, false}, {{200, 56}, false}};
  for (const Row& r : rows) {
    SCOPED_TRACE(::testing::PrintToString(r.counts));
    const auto filters = filters_with(r.counts);
    if (r.ok) {
      EXPECT_EQ(FilterReasonTable(filters).size(), std::accumulate(r.counts.begin(), r.counts.end(), size_t{0}));
    } else {
      EXPECT_THROW(FilterReasonTable{filters}, std::invalid_argument);
    }
  }
  // A reason without words.
  const std::vector<std::shared_ptr<const FilterPlugin>> mute = {std::make_shared<Mute>()};
  EXPECT_THROW(FilterReasonTable{mute}, std::invalid_argument);
  // A plugin returning a reason it did not register: the Scheduler refuses it.
  ClusterState state({make_node("n0", 8000, 16384, 0)});
  Scheduler s(testing::profile_of("foreign", {std::make_shared<ManyReasons>("Foreign", 1, -1, true)},
                                  std::make_shared<BestFitScore>(), std::make_shared<BestFitGpuSelector>()),
              {0});
  GoRand rng(1);
  EXPECT_THROW(s.decide(make_pod("p", 1000, 1024, 0, 0), state, rng), std::logic_error);
}

// ---------------------------------------------------------------------------------------------
// NodeToStatus: the Scheduler records, per node, the plugin that rejected it and why.

// n0 cordoned; n1 tainted {dedicated: train}; n2 no label gpu=a100 (the pod's selector); n3 1000m of
// CPU; n4 GPU model T4 (the pod wants V100M16); n5 holds a pod the incoming one refuses on its host
// (anti-affinity, InterPodAffinity: not cached, run after the others); n6 an empty slot; n7 fits.
TEST(NodeToStatusTest, RecordsTheRejectingPluginPerNode) {
  std::vector<Node> nodes;
  for (int i = 0; i < 8; ++i) {
    Node n = make_node("n" + std::to_string(i), 8000, 16384, 1);
    n.labels.emplace_back(std::string(kHostnameLabel), n.name);
    if (i != 2) n.labels.emplace_back("gpu", "a100");
    nodes.push_back(std::move(n));
  }
  nodes[0].unschedulable = true;
  nodes[1].taints.push_back({"dedicated", "train", "NoSchedule"});
  nodes[3].cpu_milli = 1000;
  nodes[4].gpu_model = "T4";
  ClusterState state(nodes);
  Pod db = make_pod("db", 100, 128, 0, 0);
  db.labels = {{"app", "db"}};
  state.allocate(5, db, {});
  state.remove_node(6);
  Pod pod = make_pod("p", 2000, 1024, 1, 500, "V100M16");
  pod.constraints.node_selector = {{"gpu", "a100"}};
  PodAffinityTerm anti;
  anti.label_selector.match_labels = {{"app", "db"}};
  anti.topology_key = std::string(kHostnameLabel);
  pod.constraints.required_anti_affinity.push_back(anti);

  const NodeStatusRow rows[] = {
      {0, "NodeUnschedulable", NodeUnschedulable::kNodeUnschedulable, Code::kUnschedulableAndUnresolvable, "node(s) were unschedulable"},
      {1, "TaintToleration", TaintToleration::kUntoleratedTaint, Code::kUnschedulableAndUnresolvable,
       "node(s) had untolerated taint {dedicated: train}"},
      {2, "NodeAffinity", NodeAffinity::kNodeAffinityMismatch, Code::kUnschedulableAndUnresolvable,
       "node(s) didn't match Pod's node affinity/selector"},
      {3, "NodeResourcesFit", NodeResourcesFit::kInsufficientCpu, Code::kUnschedulable, "Insufficient cpu"},
      {4, "GpuShareFit", GpuShareFit::kGpuModelMismatch, Code::kUnschedulableAndUnresolvable,
       "node(s) didn't match pod's GPU model constraint"},
      {5, "InterPodAffinity", InterPodAffinity::kAntiAffinityRulesNotMatch, Code::kUnschedulable,
       "node(s) didn't match pod anti-affinity rules"},
      {6, "", FilterCode::kFits, Code::kSuccess, ""},
  };
  Scheduler s(make_policy("bestfit", PolicyContext{}), identity_ranks(8));
  GoRand rng(1);
  for (int round = 0; round < 2; ++round) {  // the second round answers from the memo
    SCOPED_TRACE(round);
    NodeEvaluation evaluation;
    const ScheduleResult r = s.evaluate(pod, state, rng, evaluation);
    ASSERT_EQ(r.node, 7u);                       // a node fits: the result records nothing,
    EXPECT_TRUE(r.node_to_status.empty());       // the evaluation every node
    const NodeToStatus& statuses = evaluation.node_to_status;
    ASSERT_EQ(statuses.size(), 8u);
    for (const NodeStatusRow& row : rows) expect_node_status(statuses, pod, state, row);
    EXPECT_FALSE(statuses.at(7).rejected());
    const std::vector<int32_t> counts = statuses.counts();
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), 6);
    EXPECT_EQ(statuses.count(TaintToleration::kUntoleratedTaint), 1);
  }
  // Without n7 no node fits: the result records the same, and kube's FitError message reads it.
  state.remove_node(7);
  const ScheduleResult r = s.decide(pod, state, rng);
  ASSERT_FALSE(r.scheduled());
  for (const NodeStatusRow& row : rows) EXPECT_EQ(r.node_to_status.at(row.node).code, row.code) << row.node;
  EXPECT_EQ(testing::fit_error_of(r, pod, state),
            "0/8 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, "
            "1 node(s) didn't match pod anti-affinity rules, 1 node(s) didn't match pod's GPU model constraint, "
            "1 node(s) had untolerated taint {dedicated: train}, 1 node(s) were unschedulable.");
}

TEST(NodeToStatusTest, RefusesNumbersOutsideItsTable) {
  auto table = std::make_shared<const FilterReasonTable>(filters_with({2}));
  EXPECT_NO_THROW(NodeToStatus(table, {0, 1, 2}));
  EXPECT_THROW(NodeToStatus(table, {3}), std::invalid_argument);
  EXPECT_THROW(NodeToStatus(nullptr, {0}), std::invalid_argument);
  const NodeToStatus statuses(table, {2, 0, 2});
  EXPECT_EQ(statuses.counts(), (std::vector<int32_t>{0, 0, 2}));
  EXPECT_EQ(statuses.at(0).plugin_name(), "F0");
  EXPECT_EQ(statuses.at(0).code.reason(), "reason 1");
  EXPECT_TRUE(NodeToStatus().empty());
}

}  // namespace
}  // namespace gpufleet::sched
