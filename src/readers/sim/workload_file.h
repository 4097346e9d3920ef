// Reader for `gpufleet simulate --workload FILE`: jobs, services and an optional generator.
//
//   apiVersion: sim.gpufleet.io/v1
//   kind: Workload
//   horizonSeconds: 86400              # required, in (0, 1e8]: the simulation covers [0, horizon]
//   jobs:
//   - name: train-llm                  # required, unique among jobs and services
//     namespace: team-a                # default "default"; chargeback groups by it
//     arrivalSeconds: 0                # default 0
//     pods: 2                          # pods started together (a gang); default 1
//     gpus: 8                          # per pod, 0..8; default 0
//     gpuMilli: 1000                   # per GPU, 1..1000, default 1000; below 1000 needs gpus: 1
//     mig: 3g.40gb                     # instead of gpus: one nvidia.com/mig-<profile> device per pod,
//                                      # or {3g.40gb: 2}: one profile -> count (1..112); catalog profiles
//     cpu: "32"                        # per pod, Kubernetes quantity; default 0
//     memory: 256Gi                    # per pod, Kubernetes quantity; default 0
//     durationSeconds: 7200            # required, > 0: running time to complete
//     checkpointIntervalSeconds: 600   # default 0 = never checkpoints
//     checkpointCostSeconds: 60        # seconds to write one checkpoint (no progress meanwhile); default 0
//     checkpointOnNotice: true         # write a checkpoint on a spot notice when the cost fits in the
//                                      # notice window (then nothing is lost); default false
//     priority: 100                    # default 0
//     capacity: spot-ok                # on-demand (default) | spot-ok | spot
//     pools: [training-h100]           # optional; names from the pools file
//     nodeSelector: {k: v}             # optional
//     tolerations: [{key, operator, value, effect}]   # optional
//     disruptionBudget: {maxUnavailable: 1}            # optional PodDisruptionBudget over the item's
//                                      # pods: minAvailable or maxUnavailable, an integer or "N%"
//     queueName: team-a                # optional: the Kueue LocalQueue (in the job's namespace) it
//                                      # queues in (label kueue.x-k8s.io/queue-name); needs queues:
//     topology: {required: nvidia.com/gpu.clique}   # optional: or {preferred: <level>}; a level of
//                                      # topology.levels (Kueue's podset-*-topology annotations)
//   services:
//   - name: chat                       # same fields as a job, except:
//     replicas: 3                      #   replicas instead of pods (each scheduled alone)
//     startSeconds: 0                  #   instead of arrivalSeconds
//                                      #   no durationSeconds / checkpoint* fields
//     inference: {...}                 #   optional: the replicas serve LLM requests (readers/serving/sim_inference.h)
//     minReadySeconds: 60              #   Deployment spec.minReadySeconds, an integer >= 0, default 0
//     strategy:                        #   Deployment spec.strategy: type RollingUpdate (default; Recreate refused)
//       rollingUpdate: {maxSurge: 1, maxUnavailable: 0}   # ints or "N%" (N <= 100), each default 25%; not both 0
//     autoscaler: {kubernetes: hpa.yaml}   # only without inference: one HPA or ScaledObject, read as the
//                                      #   inference block's (readers/serving/sim_inference.h parse_autoscaler) but
//                                      #   its metrics are externalMetrics names, HPA metric types External or
//                                      #   Object only, no predictive
//   rollouts:                          # optional: rollouts of services (a new ReplicaSet)
//   - {service: chat, atSeconds: 600}  # a service of the file; in [0, horizonSeconds]
//   externalMetrics:                   # optional: metrics a metrics adapter serves, as step functions
//   - name: queue_depth                # required, unique
//     points: [{timeSeconds: 0, value: 100}]   # at least one, in time order; values finite
//   hpaController:                     # optional: the kube-controller-manager's HPA flags, for every HPA
//     syncPeriodSeconds: 15            # 1..86400
//     tolerance: 0.1                   # >= 0
//     downscaleStabilizationSeconds: 300   # at most 1e8
//     perPodWithinTolerance: specReplicas  # | statusReplicas (before kubernetes/kubernetes PR 141134)
//   queues:                            # optional: Kueue admission of the jobs with a queueName
//     objects: [kueue.yaml]            # files or folders of Kueue objects (ResourceFlavor, ClusterQueue,
//                                      # Cohort, LocalQueue, WorkloadPriorityClass, Topology,
//                                      # Configuration), relative to this file (readers/k8s/k8s_yaml.h)
//     admission: quota                 # quota (Kueue's: quota only) | placement (only what fits now)
//   topology:                          # optional: topology levels and the cost of crossing them
//     levels: [example.com/rack, nvidia.com/gpu.clique, kubernetes.io/hostname]   # outermost first
//     slowdown: {nvidia.com/gpu.clique: 0.4}   # per level, >= 0: running time x (1 + s) for a job
//                                      # whose pods span several domains of the level; default 0
//     placement: aware                 # aware (default) | ignore: jobs' topology requests are ignored
//   scaledJobs:                        # optional: KEDA ScaledJobs (keda.sh/v1alpha1) on a queue
//   - name: embed                      # required, unique among the items; jobs embed-0, embed-1, ...
//     namespace: default               # default "default"
//     pollingInterval: 30              # seconds, 1..86400, default 30
//     maxReplicaCount: 10              # default 100
//     minReplicaCount: 0               # default 0, at most maxReplicaCount
//     successfulJobsHistoryLimit: 100  # default 100 (counters: Jobs kept and deleted)
//     failedJobsHistoryLimit: 100      # default 100
//     scalingStrategy: {strategy: accurate, pendingPodConditions: [Ready]}   # default | accurate | eager
//     jobTargetRef: {gpus: 1, durationSeconds: 600}   # job fields without name, namespace, arrival,
//                                      # queueName, checkpoints; durationSeconds required
//     trigger:
//       queueLength:
//         targetValue: 1               # messages per job, > 0, default 1
//         arrivals: [{timeSeconds: 0, value: 3}]   # messages put on the queue, in time order
//         arrivalsPerSecond: 0.05      # constant arrivals on top, default 0
//     # other KEDA fields (rollout, envSourceContainerName, ...): warned as not modelled
//   generate:                          # optional: a seeded job stream (inputs/sim/job_generator.h)
//     jobsPerHour: 20                  # x (endSeconds - startSeconds) / 3600 at most 1e7
//     diurnalAmplitude: 0.5
//     peakHour: 14
//     startSeconds: 0                  # default 0
//     endSeconds: 86400                # default horizonSeconds
//     durationSeconds: {min: 300, max: 86400, paretoShape: 1.2}
//     maxJobs: 1000000
//     namePrefix: gen
//     templates:                       # job fields without name, arrival and duration, plus weight
//     - {weight: 3, namespace: research, gpus: 1, cpu: "4", memory: 16Gi, capacity: spot-ok}
//
// Errors throw InputError with file, line, column and field path: YAML syntax, unknown keys,
// missing required fields, negative or non-numeric times, a horizon above kMaxHorizonSeconds, a
// non-positive duration, GPU counts out of range, a fraction of a GPU with gpus != 1, mig together
// with gpus, a MIG profile no catalog model has, more than one MIG profile, a MIG count out of range, an unknown capacity
// preference, an unknown pool, a duplicate name, generator parameters out of range, a
// generator expected to make more than kMaxGeneratedJobs jobs, a disruption budget with both or
// neither of minAvailable and maxUnavailable, a negative count or a bad or above-100 percentage, a
// queueName that is no LocalQueue of the job's namespace (or without queues:), a topology level not in
// topology.levels, errors in the Kueue objects (readers/k8s/k8s_yaml.h), a queues: without a ClusterQueue, a
// rollout of a name that is not a service or after the horizon, a Recreate or unknown strategy type,
// maxSurge and maxUnavailable both 0, a duplicate external metric name or points out of time order, an
// autoscaler: beside inference:, an autoscaler metric that is not an external metric (at its line in
// the HPA or ScaledObject file), hpaController values out of range; sim::validate_rollouts_and_autoscalers
// runs last. Full description: docs/simulate.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inference/catalog.h"
#include "readers/k8s/k8s_yaml.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/workload.h"
#include "inputs/sim/job_generator.h"

namespace gpufleet::io {

/// The longest simulated horizon (sim::kMaxHorizonSeconds, inputs/sim/cluster_config.h), checked here with a position
/// for horizonSeconds and by cli/workload_source.h for `--openb-pods` replays.
inline constexpr double kMaxHorizonSeconds = sim::kMaxHorizonSeconds;

/// The most jobs the generator may be asked for: its mean rate times its window,
/// jobsPerHour x (endSeconds - startSeconds) / 3600, at most 1e7 (maxJobs does not lift it: a rate
/// that would make more jobs than this crowds them into a burst no run can work through).
inline constexpr double kMaxGeneratedJobs = 1e7;

/// A workload file: the items it lists and, if it has one, the generator to run with the seed.
struct SimWorkloadFile {
  sim::Workload workload;
  std::optional<sim::GeneratorParams> generator;
  /// Where each of workload.topology.levels was read (for checks against the pools, cli/workload_source.h).
  std::vector<SourcePosition> topology_levels_at;
  /// Where each job's and service's resourceClaims name a ResourceClaimTemplate or ResourceClaim, for
  /// readers/k8s/dra_yaml.h check_dra_claim_references against the pools file's objects (cli/workload_source.h).
  std::vector<DraClaimReference> claim_references;
  /// "file:line:col: field '<path>': not modelled, ignored" for a ScaledJob's KEDA fields the
  /// simulator does not model.
  std::vector<std::string> warnings;
};

/// As the only entry of `pool_names`: any name in `pools:` is accepted (`gpufleet plan`, which makes
/// the pools itself, reads workloads written for other pools files this way).
inline constexpr const char* kAnyPoolName = "*";

/// Reads a workload file; `pool_names` are the pools the names in `pools:` must come from. A
/// service's `inference:` block (readers/serving/sim_inference.h) is read with `catalog` (nullptr: the built-in
/// serving catalog); its trace paths are relative to the file's folder. Throws InputError.
SimWorkloadFile read_sim_workload_file(const std::string& path, const std::vector<std::string>& pool_names,
                                       const inference::ServingCatalog* catalog = nullptr);

/// Parses workload text; `source_name` names it in errors (and its folder resolves relative paths).
/// Throws InputError.
SimWorkloadFile parse_sim_workload_text(std::string_view text, const std::string& source_name,
                                        const std::vector<std::string>& pool_names,
                                        const inference::ServingCatalog* catalog = nullptr);

}  // namespace gpufleet::io
