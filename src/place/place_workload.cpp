#include "place/place_workload.h"
#include "place/prepared_cluster.h"
#include "place/queued_placement.h"

#include <numeric>
#include <map>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "model/gpu_catalog.h"
#include "sched/fit_error.h"
#include "sched/gpu/fragmentation.h"
#include "sched/framework/filter_cycle.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/node_affinity.h"
#include "sched/plugins/default_preemption.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/plugins/taint_toleration.h"
#include "sched/plugins/registry.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::place {
namespace {

// The MPS share of `pod` on `node` (Placement::mps): set when the node shares its GPUs by MPS and the
// pod asks for the resource the replicas are advertised under.
std::optional<MpsShare> mps_share(const Pod& pod, const Node& node) {
  if (!node.time_slicing || !node.time_slicing->mps()) return std::nullopt;
  const TimeSlicing& ts = *node.time_slicing;
  if (ts.renamed ? pod.shared_replicas == 0 : !pod.is_gpu_pod()) return std::nullopt;
  const GpuModelInfo* model = find_gpu_model(node.gpu_model);
  return MpsShare{ts.replicas, mps_pinned_device_mem_limit_mib(model != nullptr ? model->memory_mib : 0, ts.replicas),
                  mps_active_thread_percentage(ts.replicas)};
}

}  // namespace

std::string pod_key(const Pod& pod) { return sched::pod_key(pod); }

PlaceResult place_workload(const PlaceInput& input, const PlaceOptions& options) {
  PlaceResult result;
  result.policy = options.policy;
  result.node_count = input.nodes.size();

  PreparedCluster prepared = prepare_cluster(input, options);
  ClusterState& state = *prepared.state;
  const std::unordered_map<std::string, NodeId>& node_by_name = prepared.node_by_name;
  sched::Scheduler& scheduler = *prepared.scheduler;
  GoRand& rng = prepared.rng;
  admit::QuotaTracker quotas(input.quotas);

  const size_t pod_count = input.pods.size();
  constexpr size_t kNotPlaced = SIZE_MAX;
  std::vector<size_t> placement_of(pod_count, kNotPlaced);  // pod index -> index in result.placements
  std::vector<bool> removed;                                // per placement: evicted later

  std::unordered_map<std::string, size_t> pod_index;
  for (size_t i = 0; i < pod_count; ++i) pod_index.emplace(pod_key(input.pods[i]), i);

  auto record = [&](size_t i, const sched::ScheduleResult& r, bool prebound) -> Placement& {
    const Pod& pod = input.pods[i];
    placement_of[i] = result.placements.size();
    std::optional<std::string> mig;
    if (!r.mig.empty()) mig = r.mig_profiles();
    result.placements.push_back(Placement{pod_key(pod), state.node(r.node).name, r.gpu_indices(), std::move(mig), {}, pod.priority, prebound,
                                          mps_share(pod, state.node(r.node))});
    removed.push_back(false);
    return result.placements.back();
  };

  const auto refuse = [&](const RefusedPod& r) {
    const Pod& pod = input.pods[r.pod];
    if (node_by_name.count(pod.node_name) == 0) quotas.charge_existing(pod);  // Pending on a missing node
    result.pending.push_back({pod_key(pod), r.reason, pod.priority});
  };

  // 1. Pods already bound by spec.nodeName (prepare_cluster bound them). Quota counts every such pod
  // that is not terminal (they exist already; admission does not run again): a pod on a missing node
  // stays Pending and counts; one the kubelet refuses is Failed and does not. Reported in input order.
  {
    size_t next_refused = 0;
    for (const PreboundPod& bound : prepared.prebound) {
      for (; next_refused < prepared.refused.size() && prepared.refused[next_refused].pod < bound.pod; ++next_refused)
        refuse(prepared.refused[next_refused]);
      quotas.charge_existing(input.pods[bound.pod]);
      record(bound.pod, bound.result, true);
    }
    for (; next_refused < prepared.refused.size(); ++next_refused) refuse(prepared.refused[next_refused]);
  }

  // 2. ResourceQuota admission in creation order; 3. the queue, in the profile's QueueSort order
  // (PrioritySort: priority, then queue order). Queue order = creation index, or after all of them
  // for re-created victims.
  const sched::QueueSortPlugin& sort = *scheduler.profile().queue_sort;
  using QueueEntry = std::pair<uint64_t, size_t>;  // (queue order, pod index)
  const auto after = [&](const QueueEntry& a, const QueueEntry& b) {
    return sort.less({&input.pods[b.second], b.first}, {&input.pods[a.second], a.first});
  };
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, decltype(after)> queue(after);
  std::map<std::pair<std::string, std::string>, size_t> group_index;  // (namespace, name) -> pod group
  for (size_t g = 0; g < input.pod_groups.size(); ++g)
    group_index.emplace(std::make_pair(input.pod_groups[g].namespace_name, input.pod_groups[g].name), g);
  std::vector<std::vector<Pod>> group_members(input.pod_groups.size());
  for (size_t i = 0; i < pod_count; ++i) {
    const Pod& pod = input.pods[i];
    if (!pod.node_name.empty()) continue;
    if (admit::AdmitResult admitted = quotas.admit(pod); !admitted) {
      result.quota_rejected.push_back({pod_key(pod), admitted.message, pod.priority});
      continue;
    }
    if (const std::string* group = find_label(pod.labels, kPodGroupLabel); group != nullptr) {
      const auto g = group_index.find({pod.namespace_name.empty() ? "default" : pod.namespace_name, *group});
      if (g != group_index.end()) {
        group_members[g->second].push_back(pod);
        continue;
      }
    }
    queue.push({i, i});
  }

  // 3a. Kueue workloads and pod groups, all or nothing.
  std::unordered_map<std::string, size_t> gang_placement;  // gang pod key -> index in result.placements
  std::unordered_map<std::string, std::vector<std::string>> gang_pods;  // gang -> its bound pods' keys
  std::unordered_map<std::string, const Pod*> gang_pod;  // gang pod key -> the pod as bound
  QueuedOutcome queued = place_queued(state, scheduler, rng, input.kueue, input.queued_workloads, input.pod_groups, group_members);
  result.admissions = std::move(queued.admissions);
  for (const GangPod& gp : queued.placed) {
    gang_placement[pod_key(gp.pod)] = result.placements.size();
    gang_pods[gp.gang].push_back(pod_key(gp.pod));
    gang_pod[pod_key(gp.pod)] = &gp.pod;
    result.placements.push_back(Placement{pod_key(gp.pod), state.node(gp.node).name, gp.gpus,
                                          gp.mig.empty() ? std::nullopt : std::optional<std::string>(gp.mig), {}, gp.pod.priority, false,
                                          mps_share(gp.pod, state.node(gp.node))});
    removed.push_back(false);
  }
  std::unordered_map<std::string, std::string> gang_of_pod;
  for (const GangPod& gp : queued.placed) gang_of_pod[pod_key(gp.pod)] = gp.gang;
  for (size_t k = 0; k < queued.pending.size(); ++k)
    result.pending.push_back({queued.pending[k].first, queued.pending[k].second, queued.pending_priority[k]});
  // A single pod's preemption evicted gang member `key`: the whole gang goes (released, pending).
  const auto tear_down_gang = [&](const std::string& key, const std::string& preemptor) {
    const std::string gang = gang_of_pod.at(key);
    int32_t priority = 0;
    for (const std::string& member : gang_pods[gang]) {
      const size_t k = gang_placement.at(member);
      if (removed[k]) continue;
      removed[k] = true;
      priority = result.placements[k].priority;
      if (member == key) continue;  // the victim itself: preemption released it
      state.release(node_by_name.at(result.placements[k].node), *gang_pod.at(member));
    }
    result.pending.push_back({gang, fmt::format("gang torn down: member {} was preempted by {}", key, preemptor), priority});
  };

  uint64_t requeued = 0;  // victims re-created, queued behind the pods of their priority
  while (!queue.empty()) {
    const size_t i = queue.top().second;
    queue.pop();
    const Pod& pod = input.pods[i];
    sched::ScheduleResult scheduled = scheduler.schedule_one(pod, state, rng);
    if (scheduled.scheduled()) {
      record(i, scheduled, false);
      continue;
    }
    if (scheduled.node_to_status.empty()) {  // kube's Error status: no preemption, the pod stays pending
      result.pending.push_back({pod_key(pod), scheduled.status.message(), pod.priority});
      continue;
    }
    // PostFilter (DefaultPreemption) ran in the cycle: it evicted its victims and nominated a node.
    const sched::PostFilterResult& preemption = scheduled.post_filter;
    if (preemption.nominated_node == sched::kNoNode) {
      const sched::ReasonHistogram histogram = sched::rejection_histogram(scheduled.node_to_status, pod, state);
      result.pending.push_back(
          {pod_key(pod), sched::fit_error_message(histogram, state.live_node_count(), scheduled.post_filter_status.message()), pod.priority});
      continue;
    }
    std::vector<size_t> victims;
    std::vector<std::string> gang_victims;
    for (const BoundPod& v : preemption.victims) {
      if (gang_of_pod.count(pod_key(v.pod)) != 0) {
        gang_victims.push_back(pod_key(v.pod));
        continue;
      }
      const size_t vi = pod_index.at(pod_key(v.pod));
      victims.push_back(vi);
      removed[placement_of[vi]] = true;
      placement_of[vi] = kNotPlaced;
      quotas.release(v.pod);
    }
    // The next cycle of the same pod (already observed), with the freed node nominated.
    const sched::ScheduleResult bound = scheduler.schedule_cycle(pod, state, rng, preemption.nominated_node);
    if (!bound.scheduled())
      throw std::logic_error(fmt::format("preemption for {} freed node {} but the pod does not fit there", pod_key(pod),
                                         state.node(preemption.nominated_node).name));
    for (const std::string& key : gang_victims) tear_down_gang(key, pod_key(pod));
    Placement& placed = record(i, bound, false);
    for (const std::string& key : gang_victims) placed.preempted.push_back(key);
    result.preemptions += static_cast<int32_t>(victims.size() + gang_victims.size());
    for (size_t vi : victims) {
      const Pod& victim = input.pods[vi];
      placed.preempted.push_back(pod_key(victim));
      // Re-created by its controller: admitted again, then queued at its priority.
      if (admit::AdmitResult admitted = quotas.admit(victim); !admitted) {
        result.quota_rejected.push_back({pod_key(victim), admitted.message, victim.priority});
        continue;
      }
      queue.push({pod_count + requeued++, vi});
    }
  }

  // Drop the entries of evicted pods (they were re-queued: placed again or pending).
  std::vector<Placement> kept;
  kept.reserve(result.placements.size());
  for (size_t k = 0; k < result.placements.size(); ++k)
    if (!removed[k]) kept.push_back(std::move(result.placements[k]));
  result.placements = std::move(kept);
  result.gpu_capacity_milli = state.gpu_capacity_milli();
  result.gpu_used_milli = state.gpu_used_milli();
  return result;
}

PreparedCluster prepare_cluster(const PlaceInput& input, const PlaceOptions& options) {
  PreparedCluster out;
  out.state = std::make_unique<ClusterState>(input.nodes);
  ClusterState& state = *out.state;
  for (NodeId n = 0; n < state.node_count(); ++n) out.node_by_name.emplace(state.node(n).name, n);
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(input.pods), state.gpu_models());
  // The policy's profile with kube's DefaultPreemption as its PostFilter.
  sched::ProfileConfig config = sched::policy_profile(options.policy);
  config.enable(sched::ExtensionPoint::kPostFilter, std::string(sched::DefaultPreemption::kName));
  sched::Profile profile = sched::build_profile(
      config, sched::in_tree_registry(), sched::PolicyContext{frag, state.gpu_models(), &state, nullptr, input.pdbs, input.pods});
  std::vector<uint32_t> rank(state.node_count());
  std::iota(rank.begin(), rank.end(), 0u);
  out.scheduler = std::make_unique<sched::Scheduler>(std::move(profile), std::move(rank));
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
      std::make_shared<sched::NodeResourcesFit>(), std::make_shared<sched::GpuShareFit>(), std::make_shared<sched::NodeAffinity>()};
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
