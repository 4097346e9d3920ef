#include "place/place_workload.h"
#include "place/prepared_cluster.h"
#include "place/queued_placement.h"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "model/cluster_state.h"
#include "model/dra_gpu_share.h"
#include "model/gpu_catalog.h"
#include "sched/daemon_set.h"
#include "sched/fit_error.h"
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/priority_sort.h"
#include "sched/scheduler.h"
#include "util/go_rand.h"
#include "util/input_error.h"

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

std::optional<GpuMemoryShareInfo> gpu_memory_info(const Pod& pod, const Node& node) {
  if (!pod.gpu_memory_share) return std::nullopt;
  const GpuMemoryShare& r = *pod.gpu_memory_share;
  return GpuMemoryShareInfo{std::string(gpu_memory_scheduler_name(r.scheduler)), memory_share_request_mib(r, node.gpu_memory_mib),
                            r.scheduler == GpuMemoryScheduler::kHami ? std::min(r.cores_percentage, 100) : 0};
}

struct QueueEntry {
  uint64_t order;    // the queue timestamp: arrival order, then requeue order
  size_t index;      // the pod's index in the input
  int32_t priority;  // that pod's priority (PrioritySort compares it without reading the pod)
};

// The scheduling queue's order for std::priority_queue: `a` after `b` in the profile's QueueSort.
// PrioritySort (every built-in profile's) on the entries' own keys: 100,000 pods do not fit in the
// caches, and reading two of them per comparison cost more than the comparison.
struct QueueAfter {
  const sched::QueueSortPlugin* sort;
  const std::vector<Pod>* pods;
  bool by_priority = dynamic_cast<const sched::PrioritySort*>(sort) != nullptr;
  bool operator()(const QueueEntry& a, const QueueEntry& b) const {
    if (by_priority) return sched::PrioritySort::before(b.priority, b.order, a.priority, a.order);
    return sort->less({&(*pods)[b.index], b.order}, {&(*pods)[a.index], a.order});
  }
};

// One run of place_workload: the prepared cluster, the result so far, the scheduling queue and the
// gangs placed; one method per step of place/place_workload.h.
class Placer {
 public:
  Placer(const PlaceInput& input, const PlaceOptions& options);
  Placer(const Placer&) = delete;
  Placer& operator=(const Placer&) = delete;

  void bind_prebound_pods();
  std::vector<std::vector<Pod>> admit_pods(size_t begin, size_t end, bool gangs);
  void place_gangs(const std::vector<std::vector<Pod>>& group_members);
  void schedule_queue();
  PlaceResult finish();

 private:
  Placement& record(size_t i, const sched::ScheduleResult& r, bool prebound);
  void refuse(const RefusedPod& r);
  void preempt(size_t i, const sched::ScheduleResult& scheduled);
  void requeue_victims(Placement& placed, const std::vector<size_t>& victims);
  void tear_down_gang(const std::string& key, const std::string& preemptor);

  static constexpr size_t kNotPlaced = SIZE_MAX;
  const PlaceInput& input_;
  PlaceResult result_;
  PreparedCluster prepared_;
  ClusterState& state_;
  const std::unordered_map<std::string, NodeId>& node_by_name_;
  sched::Scheduler& scheduler_;
  GoRand& rng_;
  bool record_top_nodes_;
  admit::QuotaTracker quotas_;
  const size_t pod_count_;
  std::vector<size_t> placement_of_;  // pod index -> index in result_.placements
  std::vector<bool> removed_;         // per placement: evicted later
  std::unordered_map<std::string, size_t> pod_index_;
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, QueueAfter> queue_;
  uint64_t requeued_ = 0;  // victims re-created, queued behind the pods of their priority
  QueuedOutcome queued_;   // gang_pod_ points into its placed pods
  std::unordered_map<std::string, size_t> gang_placement_;  // gang pod key -> index in result_.placements
  std::unordered_map<std::string, std::vector<std::string>> gang_pods_;  // gang -> its bound pods' keys
  std::unordered_map<std::string, const Pod*> gang_pod_;  // gang pod key -> the pod as bound
  std::unordered_map<std::string, std::string> gang_of_pod_;
};

Placer::Placer(const PlaceInput& input, const PlaceOptions& options)
    : input_(input),
      prepared_(prepare_cluster(input, options)),
      state_(*prepared_.state),
      node_by_name_(prepared_.node_by_name),
      scheduler_(*prepared_.scheduler),
      rng_(prepared_.rng),
      record_top_nodes_(options.record_top_nodes),
      quotas_(input.quotas),
      pod_count_(input.pods.size()),
      placement_of_(pod_count_, kNotPlaced),
      queue_(QueueAfter{scheduler_.profile().queue_sort.get(), &input.pods}) {
  result_.policy = options.policy;
  result_.node_count = input.nodes.size();
  for (size_t i = 0; i < pod_count_; ++i) pod_index_.emplace(pod_key(input_.pods[i]), i);
}

Placement& Placer::record(size_t i, const sched::ScheduleResult& r, bool prebound) {
  const Pod& pod = input_.pods[i];
  placement_of_[i] = result_.placements.size();
  std::optional<std::string> mig;
  if (!r.mig.empty()) mig = r.mig_profiles();
  result_.placements.push_back(Placement{pod_key(pod), state_.node(r.node).name, r.gpu_indices(), std::move(mig), {}, pod.priority, prebound,
                                         mps_share(pod, state_.node(r.node)), gpu_memory_info(pod, state_.node(r.node)), {}, r.claims});
  removed_.push_back(false);
  return result_.placements.back();
}

void Placer::refuse(const RefusedPod& r) {
  const Pod& pod = input_.pods[r.pod];
  if (node_by_name_.count(pod.node_name) == 0) quotas_.charge_existing(pod);  // Pending on a missing node
  result_.pending.push_back({pod_key(pod), r.reason, pod.priority});
}

// 1. Pods already bound by spec.nodeName (prepare_cluster bound them). Quota counts every such pod
// that is not terminal (they exist already; admission does not run again): a pod on a missing node
// stays Pending and counts; one the kubelet refuses is Failed and does not. Reported in input order.
void Placer::bind_prebound_pods() {
  size_t next_refused = 0;
  for (const PreboundPod& bound : prepared_.prebound) {
    for (; next_refused < prepared_.refused.size() && prepared_.refused[next_refused].pod < bound.pod; ++next_refused)
      refuse(prepared_.refused[next_refused]);
    quotas_.charge_existing(input_.pods[bound.pod]);
    record(bound.pod, bound.result, true);
  }
  for (; next_refused < prepared_.refused.size(); ++next_refused) refuse(prepared_.refused[next_refused]);
}

// 2. ResourceQuota admission in creation order of the pods [begin, end). An admitted pod goes into the
// queue (step 3), queue order = creation index (re-created victims come after all of them), or, in a
// pod group (when `gangs`), to that group's members, returned: [g] for input.pod_groups[g], in
// creation order (step 3a).
std::vector<std::vector<Pod>> Placer::admit_pods(size_t begin, size_t end, bool gangs) {
  std::map<std::pair<std::string, std::string>, size_t> group_index;  // (namespace, name) -> pod group
  for (size_t g = 0; g < input_.pod_groups.size(); ++g)
    group_index.emplace(std::make_pair(input_.pod_groups[g].namespace_name, input_.pod_groups[g].name), g);
  std::vector<std::vector<Pod>> group_members(input_.pod_groups.size());
  for (size_t i = begin; i < end; ++i) {
    const Pod& pod = input_.pods[i];
    if (!pod.node_name.empty()) continue;
    if (admit::AdmitResult admitted = quotas_.admit(pod); !admitted) {
      result_.quota_rejected.push_back({pod_key(pod), admitted.message, pod.priority});
      continue;
    }
    if (const std::string* group = find_label(pod.labels, kPodGroupLabel); gangs && group != nullptr) {
      const auto g = group_index.find({pod.namespace_name.empty() ? "default" : pod.namespace_name, *group});
      if (g != group_index.end()) {
        group_members[g->second].push_back(pod);
        continue;
      }
    }
    queue_.push({i, i, pod.priority});
  }
  return group_members;
}

// 3a. Kueue workloads and pod groups, all or nothing.
void Placer::place_gangs(const std::vector<std::vector<Pod>>& group_members) {
  queued_ = place_queued(state_, scheduler_, rng_, input_.kueue, input_.queued_workloads, input_.pod_groups, group_members);
  result_.admissions = std::move(queued_.admissions);
  for (const GangPod& gp : queued_.placed) {
    gang_placement_[pod_key(gp.pod)] = result_.placements.size();
    gang_pods_[gp.gang].push_back(pod_key(gp.pod));
    gang_pod_[pod_key(gp.pod)] = &gp.pod;
    result_.placements.push_back(Placement{pod_key(gp.pod), state_.node(gp.node).name, gp.gpus,
                                           gp.mig.empty() ? std::nullopt : std::optional<std::string>(gp.mig), {}, gp.pod.priority, false,
                                           mps_share(gp.pod, state_.node(gp.node)), gpu_memory_info(gp.pod, state_.node(gp.node)), {}, gp.claims});
    removed_.push_back(false);
  }
  for (const GangPod& gp : queued_.placed) gang_of_pod_[pod_key(gp.pod)] = gp.gang;
  for (size_t k = 0; k < queued_.pending.size(); ++k)
    result_.pending.push_back({queued_.pending[k].first, queued_.pending[k].second, queued_.pending_priority[k]});
}

// A single pod's preemption evicted gang member `key`: the whole gang goes (released, pending).
void Placer::tear_down_gang(const std::string& key, const std::string& preemptor) {
  const std::string gang = gang_of_pod_.at(key);
  int32_t priority = 0;
  for (const std::string& member : gang_pods_[gang]) {
    const size_t k = gang_placement_.at(member);
    if (removed_[k]) continue;
    removed_[k] = true;
    priority = result_.placements[k].priority;
    if (member == key) continue;  // the victim itself: preemption released it
    state_.release(node_by_name_.at(result_.placements[k].node), *gang_pod_.at(member));
  }
  result_.pending.push_back({gang, fmt::format("gang torn down: member {} was preempted by {}", key, preemptor), priority});
}

// 3. The queue, in the profile's QueueSort order (PrioritySort: priority, then queue order): one
// scheduling cycle per pod; 4. preemption for a pod no node admits.
void Placer::schedule_queue() {
  while (!queue_.empty()) {
    const size_t i = queue_.top().index;
    queue_.pop();
    const Pod& pod = input_.pods[i];
    std::vector<std::string> top;
    if (record_top_nodes_) {  // on a copy of the generator: the cycle below draws as without it
      GoRand probe = rng_;
      sched::NodeEvaluation evaluation;
      scheduler_.evaluate(pod, state_, probe, evaluation);
      for (size_t j = 0; j < evaluation.top_count; ++j) top.push_back(state_.node(evaluation.ranked[j]).name);
    }
    sched::ScheduleResult scheduled = scheduler_.schedule_one(pod, state_, rng_);
    if (scheduled.scheduled()) {
      record(i, scheduled, false).top_nodes = std::move(top);
      continue;
    }
    if (scheduled.node_to_status.empty()) {  // kube's Error status: no preemption, the pod stays pending
      result_.pending.push_back({pod_key(pod), scheduled.status.message(), pod.priority});
      continue;
    }
    preempt(i, scheduled);
  }
}

// 4. PostFilter (DefaultPreemption) ran in the cycle of pod i: it evicted its victims and nominated a
// node, where the pod is bound; without a nominated node the pod stays pending with kube's FitError.
void Placer::preempt(size_t i, const sched::ScheduleResult& scheduled) {
  const Pod& pod = input_.pods[i];
  const sched::PostFilterResult& preemption = scheduled.post_filter;
  if (preemption.nominated_node == sched::kNoNode) {
    // DynamicResources' PostFilter deallocated one of the pod's claims: kube requeues the pod on the
    // claim's update, so it gets another cycle, after the pods queued before it.
    const auto& reasons = scheduled.post_filter_status.reasons();
    if (std::find(reasons.begin(), reasons.end(), sched::DynamicResources::kDeallocated) != reasons.end()) {
      queue_.push({pod_count_ + requeued_++, i, pod.priority});
      return;
    }
    const sched::ReasonHistogram histogram = sched::rejection_histogram(scheduled.node_to_status, pod, state_);
    result_.pending.push_back(
        {pod_key(pod), sched::fit_error_message(histogram, state_.live_node_count(), scheduled.post_filter_status.message()), pod.priority});
    return;
  }
  std::vector<size_t> victims;
  std::vector<std::string> gang_victims;
  for (const BoundPod& v : preemption.victims) {
    if (gang_of_pod_.count(pod_key(v.pod)) != 0) {
      gang_victims.push_back(pod_key(v.pod));
      continue;
    }
    const size_t vi = pod_index_.at(pod_key(v.pod));
    victims.push_back(vi);
    removed_[placement_of_[vi]] = true;
    placement_of_[vi] = kNotPlaced;
    quotas_.release(v.pod);
  }
  // The next cycle of the same pod (already observed), with the freed node nominated.
  const sched::ScheduleResult bound = scheduler_.schedule_cycle(pod, state_, rng_, preemption.nominated_node);
  if (!bound.scheduled())
    throw std::logic_error(fmt::format("preemption for {} freed node {} but the pod does not fit there", pod_key(pod),
                                       state_.node(preemption.nominated_node).name));
  for (const std::string& key : gang_victims) tear_down_gang(key, pod_key(pod));
  Placement& placed = record(i, bound, false);
  for (const std::string& key : gang_victims) placed.preempted.push_back(key);
  result_.preemptions += static_cast<int32_t>(victims.size() + gang_victims.size());
  requeue_victims(placed, victims);
}

// The single pods `placed` preempted, re-created by their controller: admitted again, then queued at
// their priority.
void Placer::requeue_victims(Placement& placed, const std::vector<size_t>& victims) {
  for (size_t vi : victims) {
    const Pod& victim = input_.pods[vi];
    placed.preempted.push_back(pod_key(victim));
    if (admit::AdmitResult admitted = quotas_.admit(victim); !admitted) {
      result_.quota_rejected.push_back({pod_key(victim), admitted.message, victim.priority, /*recreated=*/true});
      continue;
    }
    queue_.push({pod_count_ + requeued_++, vi, victim.priority});
  }
}

// Drops the entries of evicted pods (they were re-queued: placed again or pending).
PlaceResult Placer::finish() {
  std::vector<Placement> kept;
  kept.reserve(result_.placements.size());
  for (size_t k = 0; k < result_.placements.size(); ++k)
    if (!removed_[k]) kept.push_back(std::move(result_.placements[k]));
  result_.placements = std::move(kept);
  result_.gpu_capacity_milli = state_.gpu_capacity_milli();
  result_.gpu_used_milli = state_.gpu_used_milli();
  // DRA GPUs and the allocated claims' devices (model/dra_gpu_share.h), on the state's nodes only.
  if (const DraCatalog* dra = state_.dra_catalog()) {
    const std::map<std::string, int32_t> gpus = dra_gpus_by_node(*dra);
    for (NodeId n = 0; n < static_cast<NodeId>(state_.node_count()); ++n)
      if (auto it = gpus.find(state_.node(n).name); it != gpus.end()) result_.gpu_capacity_milli += int64_t{it->second} * kGpuMilliPerGpu;
    const DraGpuShares shares(*dra);
    for (const auto& [key, claim] : state_.dra_claims()) result_.gpu_used_milli += shares.allocation_milli(claim.allocation);
  }
  return std::move(result_);
}

}  // namespace

std::string pod_key(const Pod& pod) { return sched::pod_key(pod); }

namespace {

// `daemon_pods`: the first pods of input.pods are the DaemonSets' (step 1a).
PlaceResult place(const PlaceInput& input, const PlaceOptions& options, size_t daemon_pods) {
  Placer placer(input, options);
  placer.bind_prebound_pods();                                                          // 1
  placer.admit_pods(0, daemon_pods, false);                                             // 1a
  placer.schedule_queue();
  const std::vector<std::vector<Pod>> group_members = placer.admit_pods(daemon_pods, input.pods.size(), true);  // 2
  placer.place_gangs(group_members);                                                    // 3a
  placer.schedule_queue();                                                              // 3, 4
  return placer.finish();
}

}  // namespace

PlaceResult place_workload(const PlaceInput& input, const PlaceOptions& options) {
  if (input.daemon_sets.empty()) return place(input, options, 0);
  // Step 1a: the DaemonSets' pods exist before the workload's, in creation order before them.
  PlaceInput with = input;
  with.daemon_sets.clear();
  with.pods = sched::daemon_set_pods(input.daemon_sets, input.nodes);
  const size_t daemon_pods = with.pods.size();
  std::unordered_map<std::string, size_t> keys;
  for (size_t i = 0; i < daemon_pods; ++i) keys.emplace(pod_key(with.pods[i]), i);
  for (const Pod& pod : input.pods)
    if (keys.count(pod_key(pod)) != 0)
      throw UsageError(fmt::format("pod {} is also the name of a DaemonSet's pod (<daemonset>-<node>): rename one of them", pod_key(pod)));
  with.pods.insert(with.pods.end(), input.pods.begin(), input.pods.end());
  return place(with, options, daemon_pods);
}

}  // namespace gpufleet::place
