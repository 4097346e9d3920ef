// The framework's pieces apart from any policy: Status, CycleState, the registry, profile
// validation (errors naming the field, as kube's apis/config/validation), building a profile, and
// how Score plugins combine (NormalizeScore and weights in a weighted sum; the lexicographic order
// of the policy profiles). Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "sched/gpu/device_select.h"
#include "sched/framework/cycle_state.h"
#include "sched/framework/profile.h"
#include "sched/framework/registry.h"
#include "sched/framework/status.h"
#include "sched/framework/validation.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/gpufleet_score.h"
#include "sched/plugins/inter_pod_affinity.h"
#include "sched/plugins/pod_topology_spread.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_preference.h"
#include "sched/plugins/node_resource_topology_match.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/node_unschedulable.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "support/test_support.h"
#include "util/go_rand.h"

namespace gpufleet::sched {
namespace {

using testing::make_node;
using testing::make_pod;

// ---------------------------------------------------------------------------------------------
// Status

TEST(StatusTest, CodesAndMessages) {
  struct Row {
    Code code;
    const char* name;
    bool rejected;
  };
  const Row rows[] = {{Code::kSuccess, "Success", false},
                      {Code::kError, "Error", false},
                      {Code::kUnschedulable, "Unschedulable", true},
                      {Code::kUnschedulableAndUnresolvable, "UnschedulableAndUnresolvable", true},
                      {Code::kWait, "Wait", false},
                      {Code::kSkip, "Skip", false}};
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const Status s(r.code, std::vector<std::string>{"a", "b"});
    EXPECT_EQ(code_name(r.code), r.name);
    EXPECT_EQ(s.is_rejected(), r.rejected);
    EXPECT_EQ(s.is_success(), r.code == Code::kSuccess);
    EXPECT_EQ(s.message(), "a, b");  // kube Status.Message joins the reasons with ", "
  }
  EXPECT_TRUE(Status().is_success());
  EXPECT_EQ(Status().message(), "");
  Status s(Code::kUnschedulable, "Insufficient cpu");
  s.with_plugin("NodeResourcesFit");
  EXPECT_EQ(s.plugin(), "NodeResourcesFit");
}

// The in-tree filters' codes map onto kube's statuses: resources and anti-affinity are Unschedulable
// (preemption may help), the rest UnschedulableAndUnresolvable.
TEST(StatusTest, FilterStatusOfEachCode) {
  struct Row {
    FilterCode code;
    Code want;
    const char* reason;
  };
  const Row rows[] = {
      {FilterCode::kFits, Code::kSuccess, ""},
      {NodeResourcesFit::kInsufficientCpu, Code::kUnschedulable, "Insufficient cpu"},
      {NodeResourcesFit::kInsufficientMemory, Code::kUnschedulable, "Insufficient memory"},
      {NodeResourcesFit::kTooManyPods, Code::kUnschedulable, "Too many pods"},
      {GpuShareFit::kInsufficientGpu, Code::kUnschedulable, "Insufficient nvidia.com/gpu"},
      {GpuShareFit::kGpuModelMismatch, Code::kUnschedulableAndUnresolvable, "node(s) didn't match pod's GPU model constraint"},
      {TaintToleration::kUntoleratedTaint, Code::kUnschedulableAndUnresolvable, "node(s) had untolerated taint(s)"},
      {NodeAffinity::kNodeAffinityMismatch, Code::kUnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector"},
      {GpuShareFit::kInsufficientMig, Code::kUnschedulable, "Insufficient nvidia.com/mig-<profile>"},
      {GpuShareFit::kInsufficientGpuShared, Code::kUnschedulable, "Insufficient nvidia.com/gpu.shared"},
      {GpuShareFit::kSharedRequestAboveOne, Code::kUnschedulableAndUnresolvable,
       "node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)"},
      {PodTopologySpread::kConstraintsNotMatch, Code::kUnschedulable, "node(s) didn't match pod topology spread constraints"},
      {PodTopologySpread::kMissingRequiredLabel, Code::kUnschedulableAndUnresolvable,
       "node(s) didn't match pod topology spread constraints (missing required label)"},
      {InterPodAffinity::kAntiAffinityRulesNotMatch, Code::kUnschedulable, "node(s) didn't match pod anti-affinity rules"},
      {InterPodAffinity::kExistingAntiAffinityRulesNotMatch, Code::kUnschedulable, "node(s) didn't satisfy existing pods anti-affinity rules"},
      {InterPodAffinity::kAffinityRulesNotMatch, Code::kUnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules"},
      {NodeUnschedulable::kNodeUnschedulable, Code::kUnschedulableAndUnresolvable, "node(s) were unschedulable"},
      {NodeResourceTopologyMatch::kCannotAlign, Code::kUnschedulable, "cannot align pod"},
      {DynamicResources::kCannotAllocate, Code::kUnschedulableAndUnresolvable, "cannot allocate all claims"},
      {DynamicResources::kNotAvailable, Code::kUnschedulableAndUnresolvable, "resourceclaim not available on the node"},
      {DynamicResources::kAllocationError, Code::kUnschedulableAndUnresolvable, "resource claim allocation failed"},
      {GpuMemoryShareFit::kNoHamiDevices, Code::kUnschedulableAndUnresolvable,
       "node(s) have no HAMi-registered GPUs (NodeInsufficientDevice)"},
      {GpuMemoryShareFit::kNodeInsufficientDevice, Code::kUnschedulableAndUnresolvable,
       "node(s) have fewer GPUs than the pod asks vGPUs (NodeInsufficientDevice)"},
      {GpuMemoryShareFit::kCardTimeSlicingExhausted, Code::kUnschedulable, "node(s) had no free vGPU on a card (CardTimeSlicingExhausted)"},
      {GpuMemoryShareFit::kCardInsufficientMemory, Code::kUnschedulable,
       "node(s) had insufficient GPU memory on a card (CardInsufficientMemory)"},
      {GpuMemoryShareFit::kCardInsufficientCore, Code::kUnschedulable, "node(s) had insufficient GPU cores on a card (CardInsufficientCore)"},
      {GpuMemoryShareFit::kExclusiveDeviceAllocateConflict, Code::kUnschedulable,
       "node(s) had no unused card for gpucores 100 (ExclusiveDeviceAllocateConflict)"},
      {GpuMemoryShareFit::kCardComputeUnitsExhausted, Code::kUnschedulable,
       "node(s) had every card's cores taken (CardComputeUnitsExhausted)"},
      {GpuMemoryShareFit::kAllocatedCardsInsufficientRequest, Code::kUnschedulable,
       "node(s) had fewer fitting cards than the pod asks vGPUs (AllocatedCardsInsufficientRequest)"},
      {GpuMemoryShareFit::kNoShareableCard, Code::kUnschedulable, "node(s) had no card free of device-plugin pods"},
      {GpuMemoryShareFit::kKaiInsufficientGpus, Code::kUnschedulableAndUnresolvable, "node(s) didn't have enough resources: GPUs"},
      {GpuMemoryShareFit::kKaiInsufficientGpuMemory, Code::kUnschedulable, "node(s) didn't have enough resources: GPU memory"},
  };
  // Every reason the policies' filters register is a row.
  size_t registered = 0;
  for (const auto& f : make_policy("bestfit", PolicyContext{}).filters) registered += f->filter_reasons().size();
  ASSERT_EQ(std::size(rows), registered + 1);
  for (const Row& r : rows) {
    SCOPED_TRACE(r.reason);
    const Status s = r.code.status();
    EXPECT_EQ(s.code(), r.want);
    EXPECT_EQ(s.message(), r.reason);
  }
}

// ---------------------------------------------------------------------------------------------
// CycleState

struct Counter final : StateData {
  explicit Counter(int v) : value(v) {}
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Counter>(*this); }
  int value;
};

TEST(CycleStateTest, WriteReadCloneSkip) {
  CycleState c;
  EXPECT_EQ(c.read("A"), nullptr);
  c.write("A", std::make_unique<Counter>(1));
  c.write("B", std::make_unique<Counter>(2));
  c.write("A", std::make_unique<Counter>(3));  // replaces
  ASSERT_NE(c.read_as<Counter>("A"), nullptr);
  EXPECT_EQ(c.read_as<Counter>("A")->value, 3);
  c.skip_filter("InterPodAffinity");
  c.skip_score("NodeAffinity");
  CycleState copy = c.clone();
  c.read_as<Counter>("B")->value = 20;  // the clone is deep
  EXPECT_EQ(copy.read_as<Counter>("B")->value, 2);
  EXPECT_TRUE(copy.filter_skipped("InterPodAffinity"));
  EXPECT_FALSE(copy.filter_skipped("NodeAffinity"));
  EXPECT_TRUE(copy.score_skipped("NodeAffinity"));
  c.clear();
  EXPECT_EQ(c.read("A"), nullptr);
  EXPECT_FALSE(c.filter_skipped("InterPodAffinity"));
}

// ---------------------------------------------------------------------------------------------
// Registry

TEST(RegistryTest, InTreeNamesAndDuplicates) {
  const std::vector<std::string_view> want = {
      "PrioritySort",   "NodeUnschedulable", "TaintToleration",  "NodeAffinity",   "NodeResourcesFit", "NodeResourcesBalancedAllocation", "GpuShareFit",
      "GpuMemoryShareFit", "NodeResourceTopologyMatch", "DynamicResources", "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "RandomScore",    "DotProductScore", "GpuClusteringScore", "GpuPackingScore",
      "BestFitScore",   "FGDScore",          "OnlineFGDScore",   "GpufleetScore",  "LeastAllocated",   "MostAllocated",
      "best",           "random",            "fgd",              "Coscheduling",     "DefaultBinder"};
  EXPECT_EQ(in_tree_registry().names(), want);
  EXPECT_EQ(in_tree_registry().find("Nope"), nullptr);
  Registry r;
  r.add({"A", [](const PluginArgs*, const PolicyContext&) { return std::shared_ptr<Plugin>(); }});
  EXPECT_THROW(r.add({"A", [](const PluginArgs*, const PolicyContext&) { return std::shared_ptr<Plugin>(); }}),
               std::invalid_argument);
}

// Every gpufleet policy profile lists its plugins as policy_registry.h says (the default-scheduler
// ones: sched/plugins/kube_default_scoring_test.cpp).
TEST(RegistryTest, PolicyProfiles) {
  const ClusterState state({make_node("n", 8000, 16384, 1)});
  for (const std::string& name : policy_names()) {
    if (name.rfind("default-scheduler", 0) == 0) continue;
    SCOPED_TRACE(name);
    const ProfileConfig c = policy_profile(name);
    EXPECT_EQ(c.scheduler_name, name);
    EXPECT_EQ(c.score_combination, ScoreCombination::kLexicographic);
    EXPECT_TRUE(validate_profile(c, in_tree_registry()).empty());
    auto names = [&](ExtensionPoint p) {
      std::vector<std::string> out;
      for (const PluginRef& r : c.at(p).enabled) out.push_back(r.name);
      return out;
    };
    const std::string score = names(ExtensionPoint::kScore).back();
    EXPECT_EQ(names(ExtensionPoint::kQueueSort), std::vector<std::string>{"PrioritySort"});
    EXPECT_EQ(names(ExtensionPoint::kPreFilter),
              (std::vector<std::string>{"PodTopologySpread", "InterPodAffinity", "Coscheduling", "DynamicResources"}));
    EXPECT_EQ(names(ExtensionPoint::kReserve), std::vector<std::string>{"Coscheduling"});
    EXPECT_EQ(names(ExtensionPoint::kPermit), std::vector<std::string>{"Coscheduling"});
    EXPECT_EQ(names(ExtensionPoint::kScore), (std::vector<std::string>{"TaintToleration", "NodeAffinity", score}));
    std::vector<std::string> pre_score = {"TaintToleration", "NodeAffinity"};
    if (name == "random") pre_score.insert(pre_score.begin(), "RandomScore");
    EXPECT_EQ(names(ExtensionPoint::kPreScore), pre_score);
    EXPECT_TRUE(names(ExtensionPoint::kPostFilter).empty());
    EXPECT_EQ(names(ExtensionPoint::kBind), std::vector<std::string>{"DefaultBinder"});
    if (name == "fgd") continue;  // needs the measure (sched/policy_test builds it)
    const Profile p = make_policy(name, PolicyContext{nullptr, state.gpu_models(), &state});
    ASSERT_EQ(p.scores.size(), 3u);
    for (const auto& s : p.scores) EXPECT_EQ(s.weight, 1);
    // A plugin named at two points is one object (fgd-online and gpufleet: Score and selectGpu).
    if (name == "fgd-online" || name == "gpufleet") {
      EXPECT_EQ(dynamic_cast<const Plugin*>(p.gpu_selector.get()), dynamic_cast<const Plugin*>(p.scores.back().plugin.get()));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Validation: every error names its field.

ProfileConfig base_profile() { return policy_profile("bestfit"); }

template <class A>
std::shared_ptr<const PluginArgs> args(A a) {
  return std::make_shared<A>(std::move(a));
}

TEST(ValidationTest, ProfileErrorsNameTheField) {
  struct Case {
    const char* what;
    void (*edit)(ProfileConfig&);
    std::vector<std::string> want;  // FieldError::to_string() of each error, in order
  };
  const Case cases[] = {
      {"valid", [](ProfileConfig&) {}, {}},
      {"no name", [](ProfileConfig& c) { c.scheduler_name.clear(); }, {"schedulerName: Required value: name is required"}},
      {"duplicate filter", [](ProfileConfig& c) { c.enable(ExtensionPoint::kFilter, "NodeAffinity"); },
       {"plugins.filter.enabled[10].name: Duplicate value: \"NodeAffinity\""}},
      {"negative weight", [](ProfileConfig& c) { c.at(ExtensionPoint::kScore).enabled[2].weight = -1; },
       {"plugins.score.enabled[2].weight: Invalid value: -1: must be greater than or equal to 0"}},
      {"weight outside score", [](ProfileConfig& c) { c.at(ExtensionPoint::kFilter).enabled[0].weight = 2; },
       {"plugins.filter.enabled[0].weight: Invalid value: 2: a weight applies to score plugins only"}},
      {"weights that overflow", [](ProfileConfig& c) { c.at(ExtensionPoint::kScore).enabled[1].weight = std::numeric_limits<int64_t>::max() / 100; },
       {"plugins.score.enabled[1].weight: Invalid value: 92233720368547758: total score of Score plugins could overflow"}},
      {"two queue sorts", [](ProfileConfig& c) { c.enable(ExtensionPoint::kQueueSort, "PrioritySort"); },
       {"plugins.queueSort.enabled[1].name: Duplicate value: \"PrioritySort\"",
        "plugins.queueSort.enabled: Invalid value: 2 plugins: exactly one queue sort plugin is required"}},
      {"no bind", [](ProfileConfig& c) { c.at(ExtensionPoint::kBind).enabled.clear(); },
       {"plugins.bind.enabled: Required value: at least one bind plugin is needed"}},
      {"no GPU selector", [](ProfileConfig& c) { c.at(ExtensionPoint::kSelectGpu).enabled.clear(); },
       {"plugins.selectGpu.enabled: Invalid value: 0 plugins: exactly one GPU selection plugin is required"}},
      {"repeated plugin config",
       [](ProfileConfig& c) {
         c.plugin_config.push_back({"LeastAllocated", nullptr});
         c.plugin_config.push_back({"LeastAllocated", nullptr});
       },
       {"pluginConfig[1].name: Duplicate value: \"LeastAllocated\""}},
      {"resources",
       [](ProfileConfig& c) {
         ResourceAllocationArgs a;
         a.resources = {{"cpu", 1}, {"gpu", 1}, {"cpu", 0}, {"memory", 101}};
         c.plugin_config.push_back({"MostAllocated", args(a)});
       },
       {"pluginConfig[0].args.resources[1].name: Unsupported value: \"gpu\": supported values: cpu, memory, nvidia.com/gpu",
        "pluginConfig[0].args.resources[2].name: Duplicate value: \"cpu\"",
        "pluginConfig[0].args.resources[2].weight: Invalid value: 0: resource weight of cpu not in valid range [1, 100]",
        "pluginConfig[0].args.resources[3].weight: Invalid value: 101: resource weight of memory not in valid range [1, 100]"}},
      {"no resources",
       [](ProfileConfig& c) {
         ResourceAllocationArgs none;
         none.resources.clear();
         c.plugin_config.push_back({"LeastAllocated", args(none)});
       },
       {"pluginConfig[0].args.resources: Required value: at least one resource"}},
      {"online FGD",
       [](ProfileConfig& c) {
         OnlineFgdScoreArgs a;
         a.params = {0, -5};
         c.plugin_config.push_back({"OnlineFGDScore", args(a)});
       },
       {"pluginConfig[0].args.mixCoverage: Invalid value: 0: must be in (0, 1]",
        "pluginConfig[0].args.sigmoidScaleMilli: Invalid value: -5: must be greater than 0"}},
      {"gpufleet",
       [](ProfileConfig& c) {
         GpufleetScoreArgs a;
         a.params.mix_coverage = 1.5;
         a.params.strand_weight = -1;
         a.params.model_pressure_threshold = 1;
         a.params.class_pressure_weight = -0.5;
         c.plugin_config.push_back({"GpufleetScore", args(a)});
       },
       {"pluginConfig[0].args.mixCoverage: Invalid value: 1.5: must be in (0, 1]",
        "pluginConfig[0].args.strandWeight: Invalid value: -1: must be greater than or equal to 0",
        "pluginConfig[0].args.modelPressureThreshold: Invalid value: 1: must be in [0, 1)",
        "pluginConfig[0].args.classPressureWeight: Invalid value: -0.5: must be greater than or equal to 0"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ProfileConfig config = base_profile();
    c.edit(config);
    std::vector<std::string> got;
    for (const FieldError& e : validate_profile(config, in_tree_registry())) got.push_back(e.to_string());
    EXPECT_EQ(got, c.want);
    if (!c.want.empty()) {
      EXPECT_THROW(build_profile(config, in_tree_registry(), PolicyContext{}), ProfileError);
    }
  }
}

TEST(ValidationTest, UnknownPluginListsTheRegistered) {
  ProfileConfig c = base_profile();
  c.enable(ExtensionPoint::kScore, "Nope");
  const FieldErrors errs = validate_profile(c, in_tree_registry());
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "plugins.score.enabled[3].name");
  EXPECT_EQ(errs[0].type, FieldError::Type::kNotSupported);
  EXPECT_EQ(errs[0].to_string().rfind("plugins.score.enabled[3].name: Unsupported value: \"Nope\": supported values: \"PrioritySort\", ", 0), 0u);
}

TEST(ValidationTest, BuildRefusesWrongPointsArgsAndContext) {
  // A plugin listed at a point it does not implement.
  ProfileConfig c = base_profile();
  c.enable(ExtensionPoint::kScore, "NodeUnschedulable");
  try {
    build_profile(c, in_tree_registry(), PolicyContext{});
    ADD_FAILURE() << "no error";
  } catch (const ProfileError& e) {
    EXPECT_STREQ(e.what(), "plugins.score.enabled[3].name: Invalid value: \"NodeUnschedulable\": plugin does not extend the score extension point");
  }
  // Arguments of another plugin's type.
  c = policy_profile("leastallocated");
  c.plugin_config.push_back({"LeastAllocated", args(OnlineFgdScoreArgs{})});
  EXPECT_THROW(build_profile(c, in_tree_registry(), PolicyContext{}), std::invalid_argument);
  // Arguments for a plugin that takes none.
  c = base_profile();
  c.plugin_config.push_back({"BestFitScore", args(ResourceAllocationArgs{})});
  EXPECT_THROW(build_profile(c, in_tree_registry(), PolicyContext{}), std::invalid_argument);
  // The plugin's own constructor validates too (GpufleetScore, as kube's NewFit calls validation).
  const ClusterState state({make_node("n", 8000, 16384, 1)});
  GpufleetParams p;
  p.sigmoid_scale_milli = 0;
  try {
    GpufleetScore plugin(state, p);
    ADD_FAILURE() << "no error";
  } catch (const ProfileError& e) {
    EXPECT_STREQ(e.what(), "args.sigmoidScaleMilli: Invalid value: 0: must be greater than 0");
  }
}

// Arguments change what a plugin does: MostAllocated with cpu only (weight 5) scores the node by CPU.
// n0: 8000m CPU, 16 GiB, 1 GPU; pod 2000m, 8 GiB, no GPU -> cpu 2000*100/8000 = 25, memory 50.
TEST(ValidationTest, ArgumentsReachThePlugin) {
  const ClusterState state({make_node("n0", 8000, 16384, 1)});
  const Pod pod = make_pod("p", 2000, 8192, 0, 0);
  ProfileConfig c = policy_profile("mostallocated");
  const Profile defaults = build_profile(c, in_tree_registry(), PolicyContext{});
  EXPECT_EQ(defaults.scores.back().plugin->score(pod, state, 0, CycleState{}), (25 + 50) / 2);
  ResourceAllocationArgs cpu_only;
  cpu_only.resources = {{"cpu", 5}};
  c.plugin_config.push_back({"MostAllocated", args(cpu_only)});
  const Profile custom = build_profile(c, in_tree_registry(), PolicyContext{});
  EXPECT_EQ(custom.scores.back().plugin->score(pod, state, 0, CycleState{}), 25);
}

// ---------------------------------------------------------------------------------------------
// Score combination

// A Score plugin with fixed raw scores per node and an optional NormalizeScore (100 * s / max).
class FixedScore final : public ScorePlugin {
 public:
  FixedScore(std::string name, std::vector<int64_t> scores, bool normalize)
      : name_(std::move(name)), scores_(std::move(scores)), normalize_(normalize) {}
  std::string_view name() const override { return name_; }
  int64_t score(const Pod&, const ClusterState&, NodeId n, const CycleState&) const override { return scores_[n]; }
  bool has_normalize_score() const override { return normalize_; }
  void normalize_score(const Pod&, std::span<NodeScore> scores, const CycleState&) const override {
    int64_t max = 0;
    for (const NodeScore& s : scores) max = std::max(max, s.score);
    for (NodeScore& s : scores) s.score = max == 0 ? 0 : 100 * s.score / max;
  }

 private:
  std::string name_;
  std::vector<int64_t> scores_;
  bool normalize_;
};

Profile two_scores(int64_t weight_a, int64_t weight_b, ScoreCombination combination, std::vector<int64_t> b = {100, 60, 0}) {
  Profile p = testing::profile_of("two", {std::make_shared<NodeResourcesFit>()},
                                  std::make_shared<FixedScore>("A", std::vector<int64_t>{10, 20, 40}, true),
                                  std::make_shared<BestFitGpuSelector>());
  p.scores[0].weight = weight_a;
  p.scores.push_back({std::make_shared<FixedScore>("B", std::move(b), false), weight_b});
  p.score_combination = combination;
  return p;
}

// A raw [10, 20, 40] normalizes to [25, 50, 100]; B stays [100, 60, 0].
//   weights (1, 1): [125, 110, 100] -> n0 (125)      weights (3, 1): [175, 210, 300] -> n2 (300)
//   weights (1, 3): [325, 230, 100] -> n0 (325)      lexicographic: A's raw 40 is highest -> n2, score = B's 0
TEST(ScoreCombinationTest, NormalizeScoreAndWeights) {
  const ClusterState state({make_node("n0", 8000, 16384, 0), make_node("n1", 8000, 16384, 0), make_node("n2", 8000, 16384, 0)});
  const Pod pod = make_pod("p", 1000, 1024, 0, 0);
  struct Row {
    int64_t a, b;
    ScoreCombination combination;
    NodeId node;
    int64_t score;
  };
  const Row rows[] = {{1, 1, ScoreCombination::kWeightedSum, 0, 125},
                      {3, 1, ScoreCombination::kWeightedSum, 2, 300},
                      {1, 3, ScoreCombination::kWeightedSum, 0, 325},
                      {1, 1, ScoreCombination::kLexicographic, 2, 0}};
  for (const Row& r : rows) {
    SCOPED_TRACE(::testing::Message() << r.a << "," << r.b << "," << static_cast<int>(r.combination));
    Scheduler s(two_scores(r.a, r.b, r.combination), {0, 1, 2});
    GoRand rng(1);
    const ScheduleResult result = s.decide(pod, state, rng);
    EXPECT_TRUE(result.status.is_success());
    EXPECT_EQ(result.node, r.node);
    EXPECT_EQ(result.score, r.score);
  }
  // A score outside [0, 100] after NormalizeScore fails a weighted sum (kube), not a lexicographic order.
  Scheduler bad(two_scores(1, 1, ScoreCombination::kWeightedSum, {150, 0, 0}), {0, 1, 2});
  GoRand rng(1);
  const ScheduleResult r = bad.decide(pod, state, rng);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(r.status.code(), Code::kError);
  EXPECT_EQ(r.status.message(), "plugin \"B\" returns an invalid score 150, it should in the range of [0, 100] after normalizing");
  Scheduler lexicographic(two_scores(1, 1, ScoreCombination::kLexicographic, {150, 0, 0}), {0, 1, 2});
  EXPECT_EQ(lexicographic.decide(pod, state, rng).node, 2u);
}

// kube's NormalizeScore of TaintToleration (DefaultNormalizeScore(100, reverse)) and NodeAffinity
// (DefaultNormalizeScore(100, false)), from their raw scores.
TEST(ScoreCombinationTest, TaintAndAffinityNormalizeLikeKube) {
  struct Row {
    const char* what;
    std::vector<int64_t> raw;
    std::vector<int64_t> want;
  };
  const Row taint[] = {{"counts 0 1 2 0 3", {100, 99, 98, 100, 97}, {100, 67, 34, 100, 0}},
                       {"no taint anywhere", {100, 100}, {100, 100}},
                       {"counts 0 150 151: 100 - 100 * 150 / 151 = 1", {100, -50, -51}, {100, 1, 0}}};
  const TaintToleration tt;
  for (const Row& r : taint) {
    SCOPED_TRACE(r.what);
    std::vector<NodeScore> scores;
    for (size_t i = 0; i < r.raw.size(); ++i) scores.push_back({static_cast<NodeId>(i), r.raw[i]});
    tt.normalize_score(Pod{}, scores, CycleState{});
    for (size_t i = 0; i < r.raw.size(); ++i) EXPECT_EQ(scores[i].score, r.want[i]);
  }
  const Row affinity[] = {{"sums 0 50 200", {0, 50, 200}, {0, 25, 100}},
                          {"all 0", {0, 0}, {0, 0}},
                          {"150 and 151 of 200 merge to 75 (why the policies compare raw sums)", {150, 151, 200}, {75, 75, 100}}};
  const NodeAffinity na;
  for (const Row& r : affinity) {
    SCOPED_TRACE(r.what);
    std::vector<NodeScore> scores;
    for (size_t i = 0; i < r.raw.size(); ++i) scores.push_back({static_cast<NodeId>(i), r.raw[i]});
    na.normalize_score(Pod{}, scores, CycleState{});
    for (size_t i = 0; i < r.raw.size(); ++i) EXPECT_EQ(scores[i].score, r.want[i]);
  }
}

// The tier as the policy profiles run it (TaintToleration's raw score, then NodeAffinity's, compared
// lexicographically) orders every pair of nodes as NodePreference::preference's single key does
// (the proof is in node_preference.h). Seeded random pods and nodes: 0-3 PreferNoSchedule taints of
// 4 keys, 0-3 labels, 0-4 preferred terms of weight 1-100 and 0-3 tolerations.
TEST(ScoreCombinationTest, LexicographicTierEqualsTheOldPreferenceKey) {
  GoRand rng(7);
  const char* keys[] = {"a", "b", "c", "d"};
  std::vector<Node> nodes;
  for (int i = 0; i < 40; ++i) {
    Node n = make_node("n" + std::to_string(i), 8000, 16384, 0);
    for (int t = static_cast<int>(rng.intn(4)); t > 0; --t) n.taints.push_back({keys[rng.intn(4)], "v", "PreferNoSchedule"});
    for (int l = static_cast<int>(rng.intn(4)); l > 0; --l) n.labels.emplace_back(keys[rng.intn(4)], std::to_string(rng.intn(2)));
    nodes.push_back(std::move(n));
  }
  const ClusterState state(nodes);
  const TaintToleration tt;
  const NodeAffinity na;
  for (int k = 0; k < 200; ++k) {
    Pod pod = make_pod("p", 100, 100, 0, 0);
    for (int t = static_cast<int>(rng.intn(5)); t > 0; --t)
      pod.constraints.preferred_node_affinity.push_back(
          {static_cast<int32_t>(1 + rng.intn(100)), NodeSelectorTerm{{SelectorRequirement{keys[rng.intn(4)], "In", {std::to_string(rng.intn(2))}}}, {}}});
    for (int t = static_cast<int>(rng.intn(4)); t > 0; --t) pod.constraints.tolerations.push_back({keys[rng.intn(4)], "Exists", "", "", std::nullopt});
    for (NodeId i = 0; i < state.node_count(); ++i)
      for (NodeId j = 0; j < state.node_count(); ++j) {
        const std::pair<int64_t, int64_t> a{tt.score(pod, state, i, CycleState{}), na.score(pod, state, i, CycleState{})};
        const std::pair<int64_t, int64_t> b{tt.score(pod, state, j, CycleState{}), na.score(pod, state, j, CycleState{})};
        const int64_t pa = NodePreference::preference(pod, state.node(i)), pb = NodePreference::preference(pod, state.node(j));
        ASSERT_EQ(a < b, pa < pb) << k << " " << i << " " << j;
        ASSERT_EQ(a == b, pa == pb) << k << " " << i << " " << j;
      }
  }
}

// PreScore Skip: TaintToleration skips when no node has a PreferNoSchedule taint, NodeAffinity when
// the pod has no preferred term; NodeAffinity's PreScore fails the cycle on a term kube cannot parse,
// but only with two or more feasible nodes.
TEST(ScoreCombinationTest, PreScoreSkipAndError) {
  ClusterState plain({make_node("n0", 8000, 16384, 0), make_node("n1", 8000, 16384, 0)});
  Node tainted = make_node("n2", 8000, 16384, 0);
  tainted.taints = {{"spot", "", "PreferNoSchedule"}};
  ClusterState with_taint({make_node("n0", 8000, 16384, 0), tainted});
  const TaintToleration tt;
  const NodeAffinity na;
  GoRand rng(1);
  CycleState c;
  const std::vector<NodeId> two = {0, 1}, one = {0};
  Pod pod = make_pod("p", 100, 100, 0, 0);
  EXPECT_TRUE(tt.pre_score(pod, plain, two, c, rng).is_skip());
  EXPECT_TRUE(tt.pre_score(pod, with_taint, two, c, rng).is_success());
  EXPECT_TRUE(na.pre_score(pod, plain, two, c, rng).is_skip());
  pod.constraints.preferred_node_affinity = {{10, NodeSelectorTerm{{SelectorRequirement{"zone", "Gt", {"x"}}}, {}}}};
  const Status error = na.pre_score(pod, plain, two, c, rng);
  EXPECT_EQ(error.code(), Code::kError);
  EXPECT_TRUE(na.pre_score(pod, plain, one, c, rng).is_success());
  // Through the Scheduler: kube's message.
  Scheduler s(make_policy("bestfit", PolicyContext{}), {0, 1});
  const ScheduleResult r = s.decide(pod, plain, rng);
  EXPECT_FALSE(r.scheduled());
  EXPECT_EQ(r.status.code(), Code::kError);
  EXPECT_EQ(r.status.message(), "running PreScore plugin \"NodeAffinity\": " + error.message());
}

}  // namespace
}  // namespace gpufleet::sched
