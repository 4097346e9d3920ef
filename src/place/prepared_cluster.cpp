#include "place/prepared_cluster.h"

#include <memory>
#include <algorithm>
#include <numeric>
#include <string_view>

#include <fmt/format.h>

#include "sched/gpu/pod_mix_estimator.h"
#include "sched/framework/filter_cycle.h"
#include "sched/plugins/default_preemption.h"
#include "sched/plugins/gpu_memory_share_fit.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/registry.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/policy_registry.h"

namespace gpufleet::place {

std::unique_ptr<sched::Scheduler> make_scheduler(const ClusterState& state, const PlaceInput& input, const PlaceOptions& options) {
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(input.pods), state.gpu_models());
  // The policy's profile with kube's PostFilters: DynamicResources (it deallocates a claim that keeps
  // the pod off every node; kube's default profile has it before DefaultPreemption), then
  // DefaultPreemption.
  sched::ProfileConfig config = sched::policy_profile(options.policy);
  config.enable(sched::ExtensionPoint::kPostFilter, std::string(sched::DynamicResources::kName));
  config.enable(sched::ExtensionPoint::kPostFilter, std::string(sched::DefaultPreemption::kName));
  config.percentage_of_nodes_to_score = options.percentage_of_nodes_to_score;
  sched::Profile profile = sched::build_profile(
      config, sched::in_tree_registry(), sched::PolicyContext{frag, state.gpu_models(), &state, nullptr, input.pdbs, input.pods});
  // Score ties go to the node whose name sorts first (byte order): the order in which the API server
  // lists Nodes, hence `serve`'s order too, whatever order the input files give them in.
  std::vector<NodeId> by_name(state.node_count());
  std::iota(by_name.begin(), by_name.end(), NodeId{0});
  std::stable_sort(by_name.begin(), by_name.end(), [&](NodeId a, NodeId b) { return state.node(a).name < state.node(b).name; });
  std::vector<uint32_t> rank(state.node_count());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;
  auto scheduler = std::make_unique<sched::Scheduler>(std::move(profile), std::move(rank));
  scheduler->set_best_node_index(options.best_node_index);
  return scheduler;
}

PreparedCluster prepare_cluster(const PlaceInput& input, const PlaceOptions& options) {
  PreparedCluster out;
  out.state = std::make_unique<ClusterState>(input.nodes);
  ClusterState& state = *out.state;
  if (!input.dra.empty()) state.set_dra_catalog(std::make_shared<const DraCatalog>(input.dra));
  for (NodeId n = 0; n < state.node_count(); ++n) out.node_by_name.emplace(state.node(n).name, n);
  out.scheduler = make_scheduler(state, input, options);
  out.rng = GoRand(static_cast<int64_t>(options.seed));
  for (size_t i = 0; i < input.pods.size(); ++i) {
    const Pod& pod = input.pods[i];
    if (pod.node_name.empty()) continue;
    const auto it = out.node_by_name.find(pod.node_name);
    if (it == out.node_by_name.end()) {
      out.refused.push_back({i, fmt::format("node \"{}\" not found", pod.node_name)});
      continue;
    }
    if (std::string why = kubelet_rejection(pod, state, it->second); !why.empty()) {
      out.refused.push_back({i, std::move(why)});
      continue;
    }
    out.prebound.push_back({i, out.scheduler->bind_node_name(pod, state, it->second, out.rng)});
  }
  return out;
}

/// The kubelet's admission of a pod bound by spec.nodeName (pkg/kubelet/lifecycle/predicate.go
/// generalFilter): scheduler.AdmissionCheck (resources, including the device plugins' extended
/// resources; required node affinity and nodeSelector), then NoExecute taints only. NoSchedule taints
/// and inter-pod affinity belong to the scheduler, which such a pod bypasses. Returns the rejection
/// reason, empty when the pod is admitted: "OutOf" + resource name (OutOfcpu, OutOfnvidia.com/gpu,
/// ...) for resources, else "Predicate <plugin> failed: <reason>", the kubelet's first failure.
std::string kubelet_rejection(const Pod& pod, const ClusterState& state, NodeId n) {
  static const std::vector<std::shared_ptr<const sched::FilterPlugin>> kAdmission = {
      std::make_shared<sched::NodeResourcesFit>(), std::make_shared<sched::GpuShareFit>(),
      std::make_shared<sched::GpuMemoryShareFit>(), std::make_shared<sched::NodeAffinity>()};
  const sched::Rejection rejection = sched::FilterCycle(kAdmission, pod, state).run(state, n);
  if (!rejection.rejected()) {
    if (const Taint* taint = sched::find_untolerated_no_execute_taint(state.node(n).taints, pod.constraints.tolerations))
      return "Predicate TaintToleration failed: " + sched::untolerated_taint_reason(*taint);
    return {};
  }
  using sched::GpuShareFit, sched::NodeResourcesFit;
  const sched::FilterCode code = rejection.code;
  if (code == NodeResourcesFit::kInsufficientCpu) return "OutOfcpu";
  if (code == NodeResourcesFit::kInsufficientMemory) return "OutOfmemory";
  if (code == NodeResourcesFit::kTooManyPods) return "OutOfpods";
  if (code == GpuShareFit::kInsufficientGpu) return "OutOfnvidia.com/gpu";
  if (code == GpuShareFit::kInsufficientGpuShared) return "OutOfnvidia.com/gpu.shared";
  if (code == GpuShareFit::kInsufficientMig) {
    // The first profile the node lacks (GpuShareFit's words: "Insufficient nvidia.com/mig-<profile>").
    const std::string reason = rejection.node_reasons(pod, state, n).front();
    constexpr std::string_view kInsufficient = "Insufficient ";
    return "OutOf" + (reason.starts_with(kInsufficient) ? reason.substr(kInsufficient.size()) : reason);
  }
  if (code == sched::NodeAffinity::kNodeAffinityMismatch) return "Predicate NodeAffinity failed: " + std::string(code.reason());
  // The device plugin refuses the allocation (failRequestsGreaterThanOne; gpu_share_fit.h).
  if (code == GpuShareFit::kSharedRequestAboveOne) return "UnexpectedAdmissionError";
  return fmt::format("node {} cannot run the pod: {}", state.node(n).name, code.reason());
}

}  // namespace gpufleet::place
