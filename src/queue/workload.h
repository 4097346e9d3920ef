// A Kueue Workload: what a job asks the queues for (kueue.x-k8s.io/v1beta1 Workload spec). The job
// reader (readers/k8s/kueue_yaml.h) builds one per batch/v1 Job, JobSet, PyTorchJob or pod group naming a
// LocalQueue with the label kueue.x-k8s.io/queue-name. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/pod.h"
#include "queue/kueue_objects.h"

namespace gpufleet::queue {

/// Topology request of a pod set, from the pod template's annotations
/// (kueue site/content/en/docs/concepts/topology_aware_scheduling.md):
///   kueue.x-k8s.io/podset-required-topology: <level label>    all pods in one domain of that level
///   kueue.x-k8s.io/podset-preferred-topology: <level label>   that level if possible, else each level
///                                                             up, else spread
///   kueue.x-k8s.io/podset-unconstrained-topology: "true"      any domains (still topology-accounted)
///   kueue.x-k8s.io/podset-slice-required-topology + podset-slice-size: each slice of N pods in one domain
struct TopologyRequest {
  enum class Mode { kNone, kRequired, kPreferred, kUnconstrained };
  Mode mode = Mode::kNone;
  std::string level;               ///< node label key of the level (kRequired, kPreferred)
  std::string slice_level;         ///< slice-required level; empty = none
  int32_t slice_size = 0;          ///< pods per slice (> 0 with slice_level)
};

/// A PodSet: `count` pods of one template.
struct PodSet {
  std::string name;                ///< e.g. "main", "master", "worker"
  int32_t count = 1;               ///< pods, >= 1
  /// Partial admission (spec.podSets[].minCount): the fewest pods the workload may be admitted with;
  /// nullopt = count (no partial admission).
  std::optional<int32_t> min_count;
  /// The pod template: per-pod requests (cpu_milli, memory_bytes, num_gpu x gpu_milli, MIG devices),
  /// scheduling constraints and priority. Pods are named <workload>-<podset>-<i>.
  Pod pod_template;
  TopologyRequest topology;
};

/// A Workload.
struct Workload {
  std::string namespace_name = "default";
  std::string name;
  std::string local_queue;         ///< label kueue.x-k8s.io/queue-name
  int32_t priority = 0;            ///< WorkloadPriorityClass value, else the pods' PriorityClass value
  std::string priority_class_name;
  /// Whether other workloads may preempt it (gpufleet: KAI's non-preemptible classes, priority >= 100
  /// in KAI; here set explicitly). A non-preemptible workload is admitted only within nominal quota
  /// (it never borrows), because borrowed capacity must stay reclaimable.
  bool preemptible = true;
  double creation_s = 0;           ///< creationTimestamp, seconds from the start
  std::vector<PodSet> pod_sets;    ///< in the job's order (at most 8, as Kueue)
  /// Gang: the pods that must be bound together (Volcano PodGroup minMember, scheduler-plugins
  /// PodGroup minMember); 0 = all pods of the admitted pod sets.
  int32_t min_member = 0;
  /// Run time once every pod runs (simulate); 0 = until the end (place ignores it).
  double duration_s = 0;

  /// "namespace/name".
  std::string key() const { return namespace_name + "/" + name; }
  /// Sum over pod sets of count.
  int32_t pod_count() const;
};

/// Pod requests per pod, as Kueue counts them for quota: cpu (milli), memory (bytes), nvidia.com/gpu
/// (num_gpu * gpu_milli, gpu_milli: a 2 x 60% request is 1200), each MIG profile
/// (nvidia.com/mig-<profile>: devices), nvidia.com/gpu.shared (replicas). Resources with amount 0
/// are left out. Sorted by name.
std::vector<std::pair<std::string, ResourceAmount>> pod_resource_requests(const Pod& pod);

}  // namespace gpufleet::queue
