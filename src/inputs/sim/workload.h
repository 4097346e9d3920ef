// Workloads for the simulator: batch/training jobs and long-running services. Plain data, no I/O
// (the YAML reader is readers/sim/workload_file.h, the format docs/simulate.md; a seeded generator is
// inputs/sim/job_generator.h).
//
// A job is a gang: its `pods` identical pods start together (all or none, as a distributed training
// job needs every worker) and it completes after `duration_s` seconds of running. It checkpoints every
// `checkpoint_interval_s` seconds of running (0 = never); when any of its pods is interrupted (spot
// reclaim), every pod stops, the work since the last checkpoint is lost and the job is queued again.
// A service has `pods` replicas, each scheduled on its own, running until the end of the simulation;
// an interrupted replica is queued again and loses nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "model/dra.h"
#include "model/gpu_catalog.h"
#include "model/pod.h"
#include "model/resources.h"
#include "model/pod_disruption_budget.h"
#include "model/scheduling_constraints.h"
#include "queue/kueue_objects.h"
#include "queue/workload.h"
#include "inputs/sim/field_origin.h"
#include "inputs/sim/inference_service.h"
#include "replica_autoscaling/scaled_job.h"

namespace gpufleet::sim {

/// Label the simulator puts on every node: the Karpenter capacity-type label (karpenter.sh/v1,
/// well-known label `karpenter.sh/capacity-type`, values "spot" / "on-demand"). A pool's nodes
/// carry its capacity type; reserved coverage is a billing matter and does not change the label.
inline constexpr const char* kCapacityTypeLabel = "karpenter.sh/capacity-type";

enum class WorkloadKind { kJob, kService };

/// Where a workload may run, by capacity type.
enum class CapacityPreference {
  kOnDemand,  ///< never on spot nodes (default): affinity capacity-type NotIn [spot]
  kSpotOk,    ///< anywhere
  kSpot,      ///< only on spot nodes: affinity capacity-type In [spot]
};

/// A PodDisruptionBudget on one workload item (policy/v1 spec, minus the selector: it selects the
/// item's pods). Exactly one of the two is set; a percentage is 0..100.
struct DisruptionBudget {
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
};

/// The disruption controller's disruptionsAllowed for an item's budget: pdb_status_of_counts
/// (model/pod_disruption_budget.h, the kube rules) with expected = the item's pods (a job's gang size,
/// a service's replicas) and healthy = its pods bound now; desired = expected - scaled(maxUnavailable)
/// (at least 0) or scaled(minAvailable), percentages rounded up; allowed = max(0, healthy - desired),
/// 0 when expected is 0 (or, as kube, when the budget has neither field).
int32_t disruptions_allowed(const DisruptionBudget& budget, int32_t expected_pods, int32_t healthy_pods);

/// A Deployment's spec.strategy.rollingUpdate (apps/v1): how many pods above the wanted count a
/// rollout may create (maxSurge) and how many of the wanted count may be unavailable (maxUnavailable),
/// as counts or percentages of the wanted count; maxSurge rounds up, maxUnavailable down, and when
/// both resolve to 0 maxUnavailable is 1 (kubernetes/kubernetes
/// pkg/controller/deployment/util/deployment_util.go ResolveFenceposts). Defaults 25% and 25%
/// (pkg/apis/apps/v1/defaults.go SetDefaults_Deployment).
struct RollingUpdateStrategy {
  IntOrPercent max_surge{25, true};
  IntOrPercent max_unavailable{25, true};
};

/// One job or service.
struct WorkloadSpec {
  std::string name;                       ///< unique among the workload's items; pods are <name>-<i>
  std::string namespace_name = "default"; ///< the team, for chargeback
  WorkloadKind kind = WorkloadKind::kJob;
  double arrival_s = 0;                   ///< submission time, seconds from the start
  int32_t pods = 1;                       ///< job: pods per job (a gang); service: replicas
  int64_t cpu_milli = 0;                  ///< per pod
  int64_t memory_bytes = 0;                 ///< per pod
  int32_t num_gpu = 0;                    ///< per pod, 0..kMaxGpusPerPod
  int32_t gpu_milli = 0;                  ///< per GPU, 0..1000 (Pod convention; 0 iff num_gpu == 0)
  std::string gpu_spec;                   ///< allowed GPU models joined by '|' (openb gpu_spec); empty = any
  /// MIG devices per pod: the resource nvidia.com/mig-<profile> that the NVIDIA device plugin
  /// advertises with migStrategy mixed, as Pod::mig_requests: empty = none, or one entry (one profile,
  /// count 1..kMaxMigDevicesPerPod; the device plugin gives a container one device type). With
  /// devices, num_gpu must be 0. Such a pod runs only on nodes whose MIG layout has free devices of
  /// its profile (a pool's `mig`).
  std::vector<MigRequest> mig_requests;
  /// Dynamic Resource Allocation: the pod's spec.resourceClaims (model/dra.h), naming
  /// ResourceClaimTemplates (one claim per pod, generated when the pod is made: make_pod) or shared
  /// ResourceClaims of the pools file (ClusterConfig::dra). Empty = none.
  std::vector<PodResourceClaim> resource_claims;
  /// Memory-based GPU sharing (model/gpu_memory_share.h: HAMi's nvidia.com/gpumem & co., KAI's
  /// gpu-memory / gpu-fraction), as Pod::gpu_memory_share; then num_gpu is 0. HAMi pods run on HAMi
  /// pools (NodePool::hami_split_count), KAI pods on the other GPU pools. nullopt = none.
  std::optional<GpuMemoryShare> gpu_memory_share;
  double duration_s = 0;                  ///< job: running time needed; services: unused
  double checkpoint_interval_s = 0;       ///< job: seconds of running between checkpoints; 0 = none
  /// Job: seconds to write one checkpoint (>= 0; default 0). The job makes no progress while writing
  /// and its GPUs stay held; a checkpoint being written when the job stops is lost
  /// (sim/rules/checkpointing.h).
  double checkpoint_cost_s = 0;
  /// Job: on a spot interruption notice the job writes a checkpoint when checkpoint_cost_s fits in the
  /// notice window (the pool's spot_notice_s) and loses nothing; otherwise (and on node failures,
  /// drains, consolidation, Kueue preemption) it loses the work since its last checkpoint. Default
  /// false.
  bool checkpoint_on_notice = false;
  int32_t priority = 0;                   ///< pod priority (higher is scheduled first)
  CapacityPreference capacity = CapacityPreference::kOnDemand;
  std::vector<std::string> pools;         ///< allowed pools (affinity gpufleet.io/pool In ...); empty = any
  Labels node_selector;                   ///< extra nodeSelector
  std::vector<Toleration> tolerations;    ///< for tainted pools
  /// Voluntary disruptions (consolidation, scale-down moves) must leave disruptions_allowed >= the
  /// pods they stop at once; spot interruptions ignore it. None = no limit.
  std::optional<DisruptionBudget> disruption_budget;
  /// The pods carry karpenter.sh/do-not-disrupt: "true" (and, for the Cluster Autoscaler,
  /// cluster-autoscaler.kubernetes.io/safe-to-evict: "false"): no voluntary disruption (consolidation,
  /// scale-down moves) of a node holding one of them; spot interruptions and faults ignore it.
  /// Source: kubernetes-sigs/karpenter docs "Disruption" (Pod-Level Controls). Default false.
  bool do_not_disrupt = false;
  /// Kueue: the LocalQueue (in namespace_name) the job queues in, as the label
  /// kueue.x-k8s.io/queue-name; empty = not queued (the job goes straight to the scheduler). Needs
  /// Workload::queues. Jobs only.
  std::string queue_name;
  /// Topology request of the job's pods (Kueue's podset-required / podset-preferred-topology, a label
  /// of Workload::topology.levels); Mode::kNone = none.
  queue::TopologyRequest topology;
  /// Job: a template with no job of its own: a controller creates its jobs during the run
  /// (Units::create_job), named <name>-<n>; arrival_s is unused. A KEDA ScaledJob's jobTargetRef
  /// (Workload::scaled_jobs). Default false.
  bool on_demand = false;
  /// Service: the Deployment's rolling update strategy, used by its rollouts (Workload::rollouts).
  RollingUpdateStrategy rolling_update;
  /// Service: spec.minReadySeconds, >= 0: a new replica counts as available to a rollout this long
  /// after it is ready (a replica is ready when bound; an inference replica when its engine serves).
  double min_ready_s = 0;
  /// Where its pod count was read (`pods` or `replicas`, else the item; a generated job: the
  /// generator's `jobsPerHour`), for the work budget (inputs/sim/work_estimate.h). Empty: built in code.
  FieldOrigin origin;
};

/// The most pods of one item: a job's gang size, a service's replicas, and every other path to a
/// replica count (a vLLM Deployment's spec.replicas, an HPA's minReplicas and maxReplicas, a KEDA
/// ScaledObject's or ScaledJob's minReplicaCount and maxReplicaCount, the predictive scaler's). Far
/// above any one Deployment (Kubernetes supports 150,000 pods per cluster); the work budget
/// (inputs/sim/work_estimate.h) bounds the pods of a whole run.
inline constexpr int32_t kMaxReplicasPerItem = 100'000;

/// The most MIG devices of one profile a pod may request: every instance of a node with
/// kMaxGpusPerNode GPUs of kMigMaxInstances instances each (112). The device plugin sets no limit; a
/// request above what any node has could never run.
inline constexpr int32_t kMaxMigDevicesPerPod = kMaxGpusPerNode * kMigMaxInstances;

/// Topology of the simulated cluster and what crossing it costs.
///
/// A job whose pods span more than one domain of level L runs slower: its running time is multiplied
/// by (1 + slowdown[L]) for each such level (levels nest, so a job across two racks is also across two
/// NVLink domains and pays both). The default factors are gpufleet's assumptions, to be replaced by
/// measurements of one's own jobs: data-parallel training of a large model on 8 GPUs split over two
/// nodes without NVLink between them runs about 40% slower than inside one NVLink domain (the
/// all-reduce moves from NVLink, ~900 GB/s per H100, to the 400 Gb/s per GPU network: NVIDIA H100
/// datasheet; the NCCL tests' bus bandwidth shows the same order).
struct TopologySettings {
  std::vector<std::string> levels;   ///< node label keys, outermost first (Kueue Topology levels)
  std::vector<double> slowdown;      ///< per level, >= 0 (fraction of running time added)
  /// false: jobs' topology requests are ignored (placement without topology, the baseline); the
  /// slowdown still applies.
  bool aware = true;
};

/// Messages put on a ScaledJob's queue at a time.
struct QueueArrival {
  double at_s = 0;
  double messages = 0;  ///< > 0
};

/// A KEDA ScaledJob (keda.sh/v1alpha1) with one queue-length trigger (sim/controllers/scaled_job.h;
/// the decision: replica_autoscaling/scaled_job.h). Its jobs come from the on_demand job item of the
/// same name (its jobTargetRef); each job, when its pods start running, takes `target_value`
/// messages off the queue (as many as there are, if fewer).
struct ScaledJobSpec {
  std::string name;                       ///< the template item's name
  double polling_interval_s = 30;         ///< pollingInterval, > 0
  int64_t max_replica_count = 100;        ///< maxReplicaCount, >= 0
  int64_t min_replica_count = 0;          ///< minReplicaCount, 0..maxReplicaCount
  int64_t successful_jobs_history_limit = 100;
  int64_t failed_jobs_history_limit = 100;
  replica_autoscaling::ScaledJobStrategy strategy = replica_autoscaling::ScaledJobStrategy::kDefault;
  /// scalingStrategy.pendingPodConditions (PodScheduled, Initialized, ContainersReady, Ready): in the
  /// simulator a pod is bound and running at once, so every condition holds exactly when it runs
  /// and the count of pending jobs is the same with or without them.
  std::vector<std::string> pending_pod_conditions;
  double target_value = 1;                ///< the trigger's value: messages per job, > 0
  std::vector<QueueArrival> arrivals;     ///< in time order
  double arrivals_per_second = 0;         ///< constant arrivals on top (a fluid count), >= 0
  FieldOrigin origin;                     ///< where maxReplicaCount (else the ScaledJob) was read; for the work budget
};

/// A rollout of a service (a new pod template, hence a new ReplicaSet) at at_s: its replicas are
/// replaced under the service's rolling_update strategy (sim/controllers/rolling_update.h).
struct RolloutSpec {
  std::string service;  ///< a service item's name
  double at_s = 0;      ///< seconds from the start, within the horizon
};

/// An external metric as a metrics adapter serves it to the HPA (external.metrics.k8s.io, e.g. a
/// queue's depth), given as a step function: the value of the last point at or before t, none before
/// the first point (the HPA then has no sample). The whole metric, not per pod.
struct ExternalMetricSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (seconds, value), in time order, values finite
};

/// The replica autoscaler of a service without inference (a plain Deployment), reading the
/// workload's external metrics (sim/controllers/service_autoscaling.h). Only External and Object
/// metrics (HPA) or triggers (KEDA) whose names are external_metrics' names.
struct ServiceAutoscalerSpec {
  std::string service;
  replica_autoscaling::ReplicaAutoscalerSpec autoscaler;
  std::string description;  ///< e.g. "hpa api (queue_depth AverageValue 10)"
};

/// A workload: the items and the simulated time span.
struct Workload {
  double horizon_s = 0;                   ///< the simulation runs over [0, horizon_s]
  FieldOrigin horizon_origin;             ///< where horizon_s was read (`horizonSeconds`); empty: not from a file
  std::vector<WorkloadSpec> items;        ///< any order; the engine orders by arrival
  /// Services among the items whose replicas serve LLM requests (inputs/sim/inference_service.h); at most
  /// one entry per service.
  std::vector<InferenceServiceSpec> inference;
  /// Kueue's objects (ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, WorkloadPriorityClasses,
  /// Topologies and the Configuration: quota-only or placement-aware admission); nullopt = no queues.
  std::optional<queue::KueueObjects> queues;
  TopologySettings topology;
  /// KEDA ScaledJobs; each has an on_demand job item of its name.
  std::vector<ScaledJobSpec> scaled_jobs;
  /// Rollouts of services, any order.
  std::vector<RolloutSpec> rollouts;
  /// External metrics the service autoscalers read; names unique.
  std::vector<ExternalMetricSeries> external_metrics;
  /// Autoscalers of services without inference (at most one per service; an inference service's
  /// autoscaler is its InferenceServiceSpec::autoscaler).
  std::vector<ServiceAutoscalerSpec> service_autoscalers;
};

/// A spec's per-pod request as a Pod without name or constraints: namespace, CPU, memory, GPUs
/// (num_gpu, gpu_milli, gpu_spec), MIG devices (mig_requests), resource claims (without generated
/// names) and priority. make_pod starts from it.
Pod pod_request(const WorkloadSpec& spec);

/// The pod with index `index` of a spec: name <name>-<index>, the spec's request, namespace and
/// priority, and constraints: the spec's nodeSelector and tolerations, plus required node affinity
/// gpufleet.io/pool In pools (when pools is not empty) and karpenter.sh/capacity-type NotIn [spot]
/// (kOnDemand) or In [spot] (kSpot), ANDed in one node selector term. A template claim gets the
/// name the resourceclaim controller would generate (dra_generated_claim_name) with the suffix
/// `claim_suffix`; empty: "<pod>-<claim>", no suffix.
Pod make_pod(const WorkloadSpec& spec, int32_t index, const std::string& claim_suffix = {});

/// A deterministic stand-in for the 5 characters the API server appends to a generateName
/// (apiserver's names.SimpleNameGenerator draws them from k8s.io/apimachinery/pkg/util/rand's
/// alphabet "bcdfghjklmnpqrstvwxz2456789"): `counter` written in that alphabet, 5 digits, least
/// significant last (counter modulo 27^5).
std::string claim_name_suffix(uint64_t counter);

/// Checks one spec; throws std::invalid_argument naming the problem: empty name, pods < 1, negative
/// requests, num_gpu outside [0, kMaxGpusPerPod], gpu_milli outside its range or fractional with
/// num_gpu > 1, MIG requests together with GPUs, for more than one profile, for a profile no catalog
/// model has or with a count outside [1, kMaxMigDevicesPerPod], a job with a non-positive or
/// non-finite duration, negative checkpoint interval or checkpoint cost, or
/// arrival time, a disruption budget without exactly one of its fields or with a negative count or
/// a percentage above 100.
void validate_spec(const WorkloadSpec& spec);

/// Checks a spec against its workload item; throws std::invalid_argument naming the problem: no
/// service of that name, no traffic, a non-positive scrape interval, an autoscaler reading a
/// metric that no simulated component exports (exported_serving_metrics), engine arguments out of
/// range (tensor_parallel_size < 1, gpu_memory_utilization outside (0, 1], max_num_seqs < 1,
/// negative max_num_batched_tokens or max_model_len), negative cold-start times or non-positive
/// bandwidths, a negative timeout or SLO.
void validate_inference_service(const InferenceServiceSpec& spec, const std::vector<WorkloadSpec>& items);

/// The resolved (maxSurge, maxUnavailable) of a strategy for `replicas` wanted replicas:
/// ResolveFenceposts (surge rounded up, unavailable rounded down, both 0 -> unavailable 1).
std::pair<int32_t, int32_t> resolve_fenceposts(const RollingUpdateStrategy& strategy, int32_t replicas);

/// Checks the workload's rollouts, external metrics and service autoscalers against its items;
/// throws std::invalid_argument naming the problem: a rollout of a name that is not a service or at a
/// time outside [0, horizon]; a strategy with a negative value or a percentage above 100, or both 0;
/// a negative or non-finite min_ready_s; an external metric without points, with points out of time
/// order or not finite, or a duplicate name; a service autoscaler for a name that is not a service, for
/// an inference service, twice for one service, with an HPA metric other than External or Object,
/// or reading a metric that is not an external metric.
void validate_rollouts_and_autoscalers(const Workload& workload);

}  // namespace gpufleet::sim
