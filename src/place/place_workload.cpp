#include "place/place_workload.h"

#include <numeric>
#include <queue>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "sched/fit_error.h"
#include "sched/fragmentation.h"
#include "sched/plugins/gpu_share_fit.h"
#include "sched/plugins/node_resources_fit.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"

namespace gpufleet::place {
namespace {

/// The kubelet's admission reason for a pod bound by spec.nodeName that does not fit its node
/// (pkg/kubelet/lifecycle/predicate.go: "OutOf" + resource name, e.g. OutOfcpu, OutOfnvidia.com/gpu).
std::string kubelet_rejection(const Pod& pod, const ClusterState& state, NodeId n) {
  const sched::NodeResourcesFit resources;
  const sched::GpuShareFit gpus;
  sched::FilterCode code = resources.filter(pod, state, n);
  if (code == sched::FilterCode::kFits) code = gpus.filter(pod, state, n);
  switch (code) {
    case sched::FilterCode::kFits: return {};
    case sched::FilterCode::kInsufficientCpu: return "OutOfcpu";
    case sched::FilterCode::kInsufficientMemory: return "OutOfmemory";
    case sched::FilterCode::kTooManyPods: return "OutOfpods";
    case sched::FilterCode::kInsufficientGpu: return "OutOfnvidia.com/gpu";
    default: return fmt::format("node {} cannot run the pod: {}", state.node(n).name, sched::filter_reason(code));
  }
}

/// Devices for a pod bound by name: the lowest free whole GPUs, or the best-fitting GPU for a share.
std::vector<int32_t> kubelet_devices(const Pod& pod, const ClusterState& state, NodeId n) {
  if (pod.is_share_pod()) return {sched::best_fit_gpu(state.gpu_free_milli(n), pod.gpu_milli)};
  if (pod.is_gpu_pod()) return sched::lowest_free_gpus(state, n, pod.num_gpu);
  return {};
}

}  // namespace

std::string pod_key(const Pod& pod) {
  return fmt::format("{}/{}", pod.namespace_name.empty() ? "default" : pod.namespace_name, pod.name);
}

PlaceResult place_workload(const PlaceInput& input, const PlaceOptions& options) {
  PlaceResult result;
  result.policy = options.policy;
  result.node_count = input.nodes.size();

  ClusterState state(input.nodes);
  std::unordered_map<std::string, NodeId> node_by_name;
  for (NodeId n = 0; n < state.node_count(); ++n) node_by_name.emplace(state.node(n).name, n);

  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(input.pods), state.gpu_models());
  sched::Policy policy = sched::make_policy(options.policy, sched::PolicyContext{frag, state.gpu_models()});
  std::vector<uint32_t> rank(state.node_count());
  std::iota(rank.begin(), rank.end(), 0u);
  sched::Scheduler scheduler(std::move(policy), std::move(rank));
  GoRand rng(static_cast<int64_t>(options.seed));
  admit::QuotaTracker quotas(input.quotas);

  const size_t pod_count = input.pods.size();
  constexpr size_t kNotPlaced = SIZE_MAX;
  std::vector<size_t> placement_of(pod_count, kNotPlaced);  // pod index -> index in result.placements
  std::vector<NodeId> node_of(pod_count, sched::kNoNode);
  std::vector<bool> removed;                                // per placement: evicted later

  auto record = [&](size_t i, NodeId n, std::vector<int32_t> gpus, bool prebound) {
    const Pod& pod = input.pods[i];
    placement_of[i] = result.placements.size();
    node_of[i] = n;
    result.placements.push_back(Placement{pod_key(pod), state.node(n).name, std::move(gpus), std::nullopt, {}, pod.priority, prebound});
    removed.push_back(false);
  };

  // 1. Pods already bound by spec.nodeName, in input order (they exist: quota only counts them).
  for (size_t i = 0; i < pod_count; ++i) {
    const Pod& pod = input.pods[i];
    if (pod.node_name.empty()) continue;
    quotas.admit(pod);
    auto it = node_by_name.find(pod.node_name);
    if (it == node_by_name.end()) {
      result.pending.push_back({pod_key(pod), fmt::format("node \"{}\" not found", pod.node_name), pod.priority});
      continue;
    }
    if (std::string why = kubelet_rejection(pod, state, it->second); !why.empty()) {
      result.pending.push_back({pod_key(pod), std::move(why), pod.priority});
      continue;
    }
    std::vector<int32_t> gpus = kubelet_devices(pod, state, it->second);
    state.allocate(it->second, pod, gpus);
    record(i, it->second, std::move(gpus), true);
  }

  // 2. ResourceQuota admission in creation order; 3. the queue: priority, then creation order.
  using QueueEntry = std::pair<int64_t, size_t>;  // (-priority, creation index): smallest first
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>> queue;
  for (size_t i = 0; i < pod_count; ++i) {
    const Pod& pod = input.pods[i];
    if (!pod.node_name.empty()) continue;
    if (admit::AdmitResult admitted = quotas.admit(pod); !admitted) {
      result.quota_rejected.push_back({pod_key(pod), admitted.message, pod.priority});
      continue;
    }
    queue.push({-int64_t{pod.priority}, i});
  }

  while (!queue.empty()) {
    const size_t i = queue.top().second;
    queue.pop();
    const Pod& pod = input.pods[i];
    sched::ScheduleResult scheduled = scheduler.schedule_one(pod, state, rng);
    if (scheduled.scheduled()) {
      record(i, scheduled.node, std::move(scheduled.gpus), false);
      continue;
    }
    const sched::ReasonHistogram histogram = sched::rejection_histogram(scheduler.policy(), pod, state);
    std::string post_filter;
    if (!pod.preempt_lower_priority) post_filter = "preemption: not eligible due to preemptionPolicy=Never.";
    result.pending.push_back({pod_key(pod), sched::fit_error_message(histogram, state.node_count(), post_filter), pod.priority});
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

}  // namespace gpufleet::place
