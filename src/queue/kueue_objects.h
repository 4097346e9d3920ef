// Kueue's objects as users write them (API kueue.x-k8s.io/v1beta1; v1beta2's spec.cohortName is read
// as spec.cohort), plus the gang and topology objects gpufleet reads beside them. Plain data, no I/O:
// the reader is readers/k8s/kueue_yaml.h, the semantics queue/kueue_scheduler.h.
//
// Upstream: kubernetes-sigs/kueue site/content/en/docs/concepts/{cluster_queue,cohort,local_queue,
// resource_flavor,workload_priority_class,topology_aware_scheduling}.md and apis/kueue/v1beta1/*.go.
//
// Resource amounts (ResourceAmount) are int64 in the unit the rest of gpufleet uses for the resource:
//   cpu             milli-cores ("500m" = 500, "2" = 2000)
//   memory          bytes
//   nvidia.com/gpu  gpu_milli (1 GPU = 1000, so that fractional GPU requests are charged exactly)
//   anything else   whole units (e.g. nvidia.com/mig-1g.10gb: devices; pods)
// amount_unit_scale() gives the factor from a whole Kubernetes quantity to that unit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/scheduling_constraints.h"

namespace gpufleet::queue {

/// An amount of one resource in its gpufleet unit (see the top of this file).
using ResourceAmount = int64_t;

/// The resource names Kueue quotas most often cover.
inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kGpu = "nvidia.com/gpu";

/// The most nominalQuota plus borrowingLimit of one (flavor, resource) summed over every ClusterQueue
/// and Cohort: 2^62 units (4 EiB of memory, 4.6e15 CPUs or GPUs in milli), so that the quota tree's
/// sums of quotas, usage and one request never overflow int64.
inline constexpr ResourceAmount kMaxQuotaTotal = ResourceAmount{1} << 62;

/// Units of `resource` per whole Kubernetes quantity unit: 1000 for cpu and nvidia.com/gpu, 1 for
/// memory (bytes) and every other resource.
int64_t amount_unit_scale(std::string_view resource);

/// ResourceFlavor (spec): a variant of the resources (GPU model, spot or on-demand). Its nodeLabels
/// are added to the admitted pods' node selectors and its nodeTaints must be tolerated by them.
struct ResourceFlavor {
  std::string name;
  Labels node_labels;               ///< spec.nodeLabels
  std::vector<Taint> node_taints;   ///< spec.nodeTaints
  std::vector<Toleration> tolerations;  ///< spec.tolerations, added to the admitted pods
  std::string topology_name;        ///< spec.topologyName: a Topology; empty = no topology-aware scheduling
};

/// One resource's quota in one flavor (ResourceQuota in a FlavorQuotas). Unset limits: a ClusterQueue
/// may borrow up to what its cohort tree has unused, and may lend all of its nominal quota.
struct ResourceQuotaLimits {
  std::string name;                            ///< resource name, e.g. nvidia.com/gpu
  ResourceAmount nominal_quota = 0;            ///< nominalQuota, >= 0
  std::optional<ResourceAmount> borrowing_limit;  ///< borrowingLimit, >= 0; nullopt = unlimited
  std::optional<ResourceAmount> lending_limit;    ///< lendingLimit, 0..nominal_quota; nullopt = all
};

/// FlavorQuotas: a flavor's quotas for the covered resources of its group.
struct FlavorQuotas {
  std::string name;                            ///< a ResourceFlavor's name
  std::vector<ResourceQuotaLimits> resources;  ///< one entry per covered resource, in coveredResources order
};

/// ResourceGroup: resources whose flavor is chosen together. Flavors are tried in order (the first
/// that fits wins, subject to flavorFungibility); a flavor belongs to at most one group.
struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;
};

enum class QueueingStrategy {
  kBestEffortFifo,  ///< BestEffortFIFO (default): an inadmissible head does not block later workloads
  kStrictFifo,      ///< StrictFIFO: the head blocks the queue until it is admitted
};

/// preemption.withinClusterQueue.
enum class WithinClusterQueue { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
/// preemption.reclaimWithinCohort.
enum class ReclaimWithinCohort { kNever, kLowerPriority, kAny };
/// preemption.borrowWithinCohort.policy.
enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };

/// ClusterQueue spec.preemption; the defaults are Kueue's (never preempt).
struct PreemptionPolicy {
  WithinClusterQueue within_cluster_queue = WithinClusterQueue::kNever;
  ReclaimWithinCohort reclaim_within_cohort = ReclaimWithinCohort::kNever;
  BorrowWithinCohortPolicy borrow_within_cohort = BorrowWithinCohortPolicy::kNever;
  /// borrowWithinCohort.maxPriorityThreshold: only workloads with priority <= this may be preempted
  /// while borrowing; nullopt = any lower priority.
  std::optional<int32_t> max_priority_threshold;
};

/// ClusterQueue spec.flavorFungibility (defaults: Borrow, TryNextFlavor).
struct FlavorFungibility {
  bool when_can_borrow_try_next = false;  ///< whenCanBorrow: Borrow (false) or TryNextFlavor (true)
  bool when_can_preempt_try_next = true;  ///< whenCanPreempt: TryNextFlavor (true) or Preempt (false)
};

/// ClusterQueue (cluster-scoped).
struct ClusterQueue {
  std::string name;
  std::string cohort;                  ///< spec.cohort (v1beta2 cohortName); empty = none
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFifo;
  std::vector<ResourceGroup> resource_groups;
  PreemptionPolicy preemption;
  FlavorFungibility flavor_fungibility;
  int64_t fair_sharing_weight_milli = 1000;  ///< spec.fairSharing.weight (default 1), in thousandths; 0 allowed
  /// spec.namespaceSelector matchLabels as given; empty = all namespaces ({}), nullopt = none (nil).
  std::optional<LabelSelector> namespace_selector = LabelSelector{};
};

/// Cohort (kueue.x-k8s.io/v1alpha1): a node of the cohort tree. A cohort named by a ClusterQueue but
/// never declared exists implicitly with no quota and no parent.
struct Cohort {
  std::string name;
  std::string parent;                        ///< spec.parentName (parent in early releases); empty = root
  std::vector<ResourceGroup> resource_groups;  ///< quota held by the cohort itself, lent to its subtree
  int64_t fair_sharing_weight_milli = 1000;
};

/// LocalQueue (namespaced): where jobs of a namespace queue; it points at one ClusterQueue.
struct LocalQueue {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
};

/// WorkloadPriorityClass: a priority for Kueue's ordering and preemption that does not change the
/// pods' priority (label kueue.x-k8s.io/priority-class on a job).
struct WorkloadPriorityClass {
  std::string name;
  int32_t value = 0;
};

/// Topology: node labels from the outermost level to the innermost (e.g. block, rack, hostname).
struct Topology {
  std::string name;
  std::vector<std::string> levels;  ///< node label keys, outermost first, distinct, at least one
};

/// Kueue's Configuration, the parts gpufleet models.
struct KueueConfiguration {
  /// fairSharing.enable: order admission by weighted share and preempt the highest share
  /// (preemptionStrategies LessThanOrEqualToFinalShare, LessThanInitialShare).
  bool fair_sharing = false;
  /// waitForPodsReady.enable: an admitted workload whose pods are not all running within
  /// `wait_for_pods_ready_timeout_s` is evicted (reason PodsReadyTimeout) and requeued after a backoff
  /// of requeuingStrategy.backoffBaseSeconds * 2^(n-1) seconds (n = its eviction count; Kueue's default
  /// base 60 s, capped at backoffMaxSeconds 3600 s).
  bool wait_for_pods_ready = false;
  double wait_for_pods_ready_timeout_s = 300;  ///< waitForPodsReady.timeout, default 5m
  double backoff_base_s = 60;                  ///< requeuingStrategy.backoffBaseSeconds
  double backoff_max_s = 3600;                 ///< requeuingStrategy.backoffMaxSeconds
  /// Admission mode: false = Kueue's (quota only; placement is the scheduler's business afterwards);
  /// true = gpufleet's placement-aware admission: a workload is admitted only when the cluster can
  /// hold all its pods now (the caller's PlacementCheck, kueue_scheduler.h).
  bool placement_aware = false;
};

/// Every Kueue object of one input.
struct KueueObjects {
  std::vector<ResourceFlavor> flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::vector<LocalQueue> local_queues;
  std::vector<WorkloadPriorityClass> priority_classes;
  std::vector<Topology> topologies;
  KueueConfiguration configuration;
};

/// Checks references and values; throws std::invalid_argument naming the object and field: a
/// ClusterQueue or Cohort quota for an unknown flavor, a flavor in two resource groups, quotas for
/// resources not in coveredResources (or a covered resource without quota), a negative quota or limit,
/// a lendingLimit above nominalQuota, a cohort loop (a cohort its own ancestor), a LocalQueue naming
/// an unknown ClusterQueue, a flavor naming an unknown Topology, duplicate names, quotas of one
/// (flavor, resource) summing above kMaxQuotaTotal. Readers check the
/// same with file positions first (readers/k8s/kueue_yaml.h); this is the domain's own guard.
void validate(const KueueObjects& objects);

}  // namespace gpufleet::queue
