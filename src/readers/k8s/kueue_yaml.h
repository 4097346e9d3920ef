// Reader of Kueue's objects, of the jobs queued to Kueue and of gang PodGroups, as users write them.
// Not called directly: the Kubernetes reader (readers/k8s/k8s_yaml.h, read_k8s_inputs / parse_k8s_text) hands
// it every object of these kinds and puts the results in K8sObjects::kueue, queued_workloads and
// pod_groups. Internal to the readers (namespace io::detail).
//
// Kinds (kubernetes-sigs/kueue apis/kueue/v1beta1/*_types.go, apis/config/v1beta1/configuration_types.go,
// site/content/en/docs/concepts/*.md and site/content/en/docs/reference/labels-and-annotations.md):
//  - kueue.x-k8s.io ResourceFlavor: spec.nodeLabels, nodeTaints, tolerations, topologyName.
//  - ClusterQueue: spec.cohort (v1beta2: cohortName), queueingStrategy (BestEffortFIFO, StrictFIFO),
//    resourceGroups[].coveredResources / flavors[].name / flavors[].resources[] {name, nominalQuota,
//    borrowingLimit, lendingLimit}, preemption {withinClusterQueue, reclaimWithinCohort,
//    borrowWithinCohort {policy, maxPriorityThreshold}}, flavorFungibility {whenCanBorrow,
//    whenCanPreempt}, fairSharing.weight (a quantity, e.g. 1 or 0.5), namespaceSelector (absent =
//    no namespace, as Kueue: a warning; {} = every namespace).
//    Quotas are Kubernetes quantities in queue::amount_unit_scale units: cpu milli-cores, memory
//    bytes, nvidia.com/gpu gpu_milli (1 GPU = 1000), anything else whole units.
//  - Cohort (kueue.x-k8s.io/v1alpha1): spec.parentName (spec.parent in early releases), resourceGroups
//    (as a ClusterQueue's), fairSharing.weight.
//  - LocalQueue: metadata.namespace (default "default"), spec.clusterQueue.
//  - WorkloadPriorityClass: value (int32).
//  - Topology: spec.levels[].nodeLabel, outermost first, 1 to 16 distinct label keys.
//  - config.kueue.x-k8s.io Configuration: fairSharing.enable, waitForPodsReady.enable,
//    waitForPodsReady.timeout (a Go duration, e.g. "5m"), waitForPodsReady.requeuingStrategy
//    .backoffBaseSeconds / backoffMaxSeconds. gpufleet's extension, ignored by Kueue: the top-level
//    block `gpufleet: {placementAwareAdmission: true}` selects placement-aware admission
//    (queue::KueueConfiguration::placement_aware). At most one Configuration.
//  - Jobs with the label kueue.x-k8s.io/queue-name (metadata.labels) become queue::Workload, NOT pods:
//    batch/v1 Job (one pod set "main", count = parallelism (default 1) capped at completions;
//    annotation kueue.x-k8s.io/job-min-parallelism = min_count, 1 .. count-1, Kueue's partial
//    admission), jobset.x-k8s.io JobSet (one pod set per replicatedJobs[] entry, named after it, count
//    = replicas x the Job's pods as above), kubeflow.org PyTorchJob (spec.pytorchReplicaSpecs Master
//    and Worker, pod sets "master" then "worker", count = replicas, default 1). At most 8 pod sets
//    (Kueue's limit). A JobSet or PyTorchJob without the label is skipped like any unmodelled kind;
//    a Job without it is expanded into pods as before.
//    Pod templates are parsed as a Pod's (readers/k8s/k8s_yaml.h). Priority: the WorkloadPriorityClass named by
//    the job's label kueue.x-k8s.io/priority-class, else the PriorityClass of the first pod set that
//    names one, resolved as for a pod (globalDefault included), else 0. creation_s:
//    metadata.creationTimestamp (RFC 3339) minus the earliest one among the queued jobs; 0 when absent.
//    Topology: the pod template's annotations kueue.x-k8s.io/podset-required-topology,
//    podset-preferred-topology, podset-unconstrained-topology ("true"/"false") (at most one of the
//    three), podset-slice-required-topology with podset-slice-size (1 .. count) -> PodSet::topology.
//  - Gangs: scheduling.x-k8s.io PodGroup (scheduler-plugins) and scheduling.volcano.sh PodGroup:
//    spec.minMember (default 1), scheduleTimeoutSeconds (default 60), queue. Members: pods (and pod
//    templates of queued jobs, count pods each) with the label scheduling.x-k8s.io/pod-group; a pod
//    with Volcano's annotation scheduling.k8s.io/group-name gets that label.
//
// Errors (InputError with file, line, column, field path), beside wrong types: unknown enum values;
// unknown keys in the quota, preemption and fungibility blocks (typos would drop a limit);
// duplicate names (ResourceFlavor, ClusterQueue, Cohort, WorkloadPriorityClass, Topology cluster-
// wide; LocalQueue, PodGroup per namespace; queued jobs per namespace, across the three kinds); a
// resource in two resource groups of one queue, or a flavor in two; quotas for a resource not in
// coveredResources, a covered resource without quota; a negative or malformed quota, a lendingLimit
// above nominalQuota, a borrowingLimit or lendingLimit without a cohort (a ClusterQueue) or parent
// (a Cohort); more than 16 resource groups; fairSharing.weight negative. Checked once every input
// is read, at the recorded positions: a ClusterQueue or Cohort naming an unknown flavor; a cohort
// loop (a Cohort its own ancestor through parentName); a LocalQueue naming an unknown ClusterQueue;
// a flavor naming an unknown Topology; a job naming a LocalQueue its namespace lacks, or an unknown
// WorkloadPriorityClass; a topology level no Topology defines, or (when Nodes are among the inputs)
// no node carries as a label; a PodGroup whose minMember exceeds its member pods.
// Limits (readers/formats/input_limits.h): ObjectLimits::max_kueue_objects, max_queued_workloads,
// max_pod_groups; the pods of queued jobs count toward max_pods.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "readers/k8s/k8s_objects.h"
#include "readers/formats/yaml_field.h"
#include "model/pod.h"
#include "model/pod_group.h"
#include "model/scheduling_constraints.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"

namespace gpufleet::io::detail {

/// Labels and annotations Kueue reads on jobs and pod templates.
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kWorkloadPriorityClassLabel = "kueue.x-k8s.io/priority-class";
inline constexpr const char* kJobMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism";
inline constexpr const char* kPodSetRequiredTopology = "kueue.x-k8s.io/podset-required-topology";
inline constexpr const char* kPodSetPreferredTopology = "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr const char* kPodSetUnconstrainedTopology = "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr const char* kPodSetSliceRequiredTopology = "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr const char* kPodSetSliceSize = "kueue.x-k8s.io/podset-slice-size";

/// The Kubernetes reader's own rules that this reader reuses (readers/k8s/k8s_yaml.cpp; one implementation).
class K8sTemplateParser {
 public:
  /// Parses a pod template (its metadata and spec) in namespace `ns` exactly as a Pod's. Returns the
  /// pod and an id for resolve_priority.
  virtual std::pair<Pod, size_t> parse_pod_template(const Field& meta, const Field& spec, const std::string& ns) = 0;
  /// Once every input is read: sets the template's priority, priority_class_name and preemption policy
  /// from the PriorityClasses, as for a pod (throws InputError for an unknown class).
  virtual void resolve_priority(Pod& pod, size_t id) const = 0;
  /// Pods read so far (for ObjectLimits::max_pods).
  virtual size_t pod_count() const = 0;

 protected:
  ~K8sTemplateParser() = default;
};

/// Reads the kinds above, object by object, then checks references in finish().
class KueueReader {
 public:
  KueueReader(K8sTemplateParser& templates, const ObjectLimits& limits);
  ~KueueReader();
  KueueReader(const KueueReader&) = delete;
  KueueReader& operator=(const KueueReader&) = delete;

  /// Reads `v` (a mapping of kind `kind`) when it is one of this reader's objects; false otherwise
  /// (the caller reads or skips it).
  bool object(const Field& v, const std::string& kind);

  /// Gives a pod (template) with Volcano's annotation scheduling.k8s.io/group-name (in `meta`, the
  /// metadata) the label kPodGroupLabel with the same value, unless it has that label already.
  static void add_group_label(const Field& meta, Labels& labels);

  /// Adds a pod group that another object implies (a LeaderWorkerSet's groups), with the checks of a
  /// read PodGroup: ObjectLimits::max_pod_groups, no duplicate (namespace, name), enough members in
  /// finish(); `at` is where errors point. Throws InputError.
  void add_pod_group(PodGroup g, const Field& at);

  /// Once every input is read (`out` holds the nodes and pods): resolves priorities, runs the
  /// cross-object checks and moves the results into out.kueue, out.queued_workloads, out.pod_groups;
  /// warnings go to out.warnings. Throws InputError.
  void finish(K8sObjects& out);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpufleet::io::detail
