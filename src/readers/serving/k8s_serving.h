// Reader for the Kubernetes objects of an LLM serving setup that users already write: the vLLM
// Deployment (apps/v1), its HorizontalPodAutoscaler (autoscaling/v2) and its KEDA ScaledObject
// (keda.sh/v1alpha1, prometheus triggers). Plain structs out; the simulator checks the names they
// refer to (metrics, catalog models, scale targets).
//
// Input: YAML (or JSON) files holding one or more documents (`---`); a directory contributes its
// *.yaml, *.yml and *.json files in sorted name order. `kind: List` is not unpacked.
//
// What each kind becomes:
//  - Deployment (apps/v1) with a vLLM container -> VllmDeployment. The vLLM container is the first
//    whose command + args (joined; a `sh -c` string is split on whitespace) run `vllm serve [model]`
//    or `python[3] -m vllm.entrypoints.openai.api_server`, or whose image is vllm/vllm-openai (its
//    entrypoint is the OpenAI server: args only). Engine flags go to inference::EngineArgs
//    (`--flag value` or `--flag=value`, underscores read as dashes as vLLM's FlexibleArgumentParser
//    does): --model / positional model, --tensor-parallel-size (-tp), --dtype (auto -> bf16, half /
//    float16, bfloat16), --quantization fp8, --kv-cache-dtype (auto = dtype, fp8*), --gpu-memory-
//    utilization, --max-num-seqs, --max-num-batched-tokens, --max-model-len (vLLM's human-readable
//    forms: 8k = 8000, 8K = 8192), --block-size, --[no-]enable-prefix-caching, --served-model-name.
//    Every other argument is kept, as written, in ignored_args (and one warning per Deployment):
//    never silently dropped. GPUs from the container's resources.limits (else requests):
//    nvidia.com/gpu N, or nvidia.com/mig-<profile> N. spec.replicas (default 1), the pod template's
//    nodeSelector and tolerations. A Deployment without a vLLM container is skipped with a warning.
//  - HorizontalPodAutoscaler (autoscaling/v2) -> ServingHpa: replica_autoscaling::HpaSpec as written (API
//    defaults not applied; HpaAutoscaler applies them). Metric types Resource, ContainerResource,
//    Pods, Object, External; targets Utilization (averageUtilization, Resource kinds only),
//    AverageValue (averageValue), Value (value); quantities read to milli-units as the controller
//    does (MilliValue). Metric names are not checked here.
//  - ScaledObject (keda.sh/v1alpha1) -> ServingScaledObject: replica_autoscaling::ScaledObjectSpec, triggers
//    of type prometheus only. The query is kept and reduced to the metric it reads and an aggregation:
//    `sum(...)` or `avg(...)` (optionally `by (...)`) around one metric selector, or a bare metric
//    (read as a sum, with a warning: KEDA needs a single-element result).
//  - Any other kind is skipped, one warning per kind.
//
// Errors throw InputError naming the file, 1-based line and column, and the field path (e.g.
// `spec.template.spec.containers[0].args[3]`, `spec.behavior.scaleUp.policies[0].periodSeconds`).
// Checked as the API server validates: HPA maxReplicas >= 1 and >= minReplicas, minReplicas >= 0,
// stabilizationWindowSeconds 0..3600, policy periodSeconds 1..1800 and value > 0, a non-empty
// policies list, selectPolicy Max|Min|Disabled, the target type matching the metric source and a
// positive target; ScaledObject pollingInterval / cooldownPeriod >= 0 (pollingInterval > 0),
// maxReplicaCount >= minReplicaCount, idleReplicaCount < minReplicaCount, a positive threshold;
// Deployment: a flag without its value, a non-numeric or out-of-range value, --dtype float32
// (not modelled), an unknown MIG profile, a tensor parallel size above the container's GPUs.
// Limits: readers/formats/input_limits.h YamlLimits (file size, documents, depth, nodes, scalar length).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "replica_autoscaling/hpa.h"
#include "replica_autoscaling/keda.h"
#include "inference/engine_args.h"
#include "model/scheduling_constraints.h"
#include "inputs/sim/workload.h"
#include "readers/formats/yaml_field.h"

namespace gpufleet::io {

/// Where an object or field was written, for errors reported later (e.g. an unknown metric name).
struct SourcePos {
  std::string file;
  int line = 0;    ///< 1-based; 0 = unknown
  int column = 0;  ///< 1-based; 0 = unknown
  std::string field;
};

struct VllmDeployment {
  std::string name;
  std::string namespace_name = "default";
  int32_t replicas = 1;               ///< spec.replicas (default 1)
  std::string container;              ///< the vLLM container's name
  std::string image;
  inference::EngineArgs engine;
  std::string served_model_name;      ///< --served-model-name; "" = the model
  int32_t gpus_per_pod = 0;           ///< nvidia.com/gpu
  std::string mig_profile;            ///< "" unless nvidia.com/mig-<profile>
  int32_t mig_devices_per_pod = 0;    ///< nvidia.com/mig-<profile> count
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  std::vector<std::string> ignored_args;  ///< arguments not modelled, as written ("--port 8000")
  /// spec.strategy (read_deployment_strategy); nullopt when absent (the API defaults, 25% / 25%).
  std::optional<sim::RollingUpdateStrategy> rolling_update;
  double min_ready_s = 0;             ///< spec.minReadySeconds
  bool has_min_ready = false;         ///< spec.minReadySeconds given
  SourcePos where;                    ///< the document's metadata.name
};

struct ServingHpa {
  replica_autoscaling::HpaSpec spec;
  SourcePos where;
  std::vector<SourcePos> metric_positions;  ///< parallel to spec.metrics: each metric's name
};

struct ServingScaledObject {
  replica_autoscaling::ScaledObjectSpec spec;
  SourcePos where;
  std::vector<SourcePos> trigger_positions;  ///< parallel to spec.triggers: each trigger's query
};

struct ServingObjects {
  std::vector<VllmDeployment> deployments;
  std::vector<ServingHpa> hpas;
  std::vector<ServingScaledObject> scaled_objects;
  std::vector<std::string> warnings;
};

/// The metric and aggregation a KEDA prometheus query reads (see the top of this file); throws
/// std::invalid_argument naming what is not supported. `bare` is set when the query had no
/// aggregation.
struct PromQuery {
  std::string metric;
  replica_autoscaling::QueryAggregation aggregation = replica_autoscaling::QueryAggregation::kSum;
  bool bare = false;
};
PromQuery parse_prometheus_query(std::string_view query);

/// Parses the documents of `text`; `source_name` names it in errors.
ServingObjects parse_k8s_serving_text(std::string_view text, const std::string& source_name);

/// Reads files and directories (see the top of this file).
ServingObjects read_k8s_serving(const std::vector<std::string>& paths);

/// A Deployment's spec.strategy (apps/v1), as the Deployment and the simulator's workload file write
/// it: type RollingUpdate (the default; Recreate is refused as not modelled) and rollingUpdate
/// {maxSurge, maxUnavailable}, each an integer in [0, max_count] or "N%" (N <= 100), a missing one 25%
/// (pkg/apis/apps/v1/defaults.go SetDefaults_Deployment); not both 0
/// (pkg/apis/apps/validation/validation.go ValidateRollingUpdateDeployment). InputError at the field.
sim::RollingUpdateStrategy read_deployment_strategy(const detail::Field& strategy, int64_t max_count);

}  // namespace gpufleet::io
