// The `inference:` block of a service in a simulator workload file (readers/sim/workload_file.h): the vLLM
// engine its replicas run, where its requests come from, its router, SLO, cold start, metrics and
// replica autoscaler. Full description: docs/serving.md.
//
//   services:
//   - name: chat
//     replicas: 2                        # replicas at the start
//     gpus: 1                            # = engine.tensorParallelSize
//     inference:
//       model: Llama-3.1-8B              # a serving-catalog model or alias (required, unless deployment)
//       deployment: vllm-deployment.yaml # or: a vLLM Deployment (apps/v1) whose container args give the
//                                        # model and engine arguments; it also fills the item's replicas,
//                                        # gpus / mig, namespace, nodeSelector and tolerations when absent
//       engine: {tensorParallelSize: 1, dtype: bf16, kvCacheDtype: bf16, gpuMemoryUtilization: 0.9,
//                maxNumSeqs: 256, maxNumBatchedTokens: 0, maxModelLen: 0, blockSize: 16,
//                enablePrefixCaching: true, shutdownTimeoutSeconds: 0}   # vLLM's engine arguments;
//                                        # 0 = vLLM's default
//       stepProfile: [{numSeqs: 1, tokens: 1, stepSeconds: 0.008}, ...]  # optional measured table, or
//                                        # the path of a CSV (num_seqs,tokens,step_s; readers/serving/step_profile.h)
//       traffic:                         # required: a trace ...
//         trace: conv.csv                #   Azure LLM inference CSV or Mooncake JSONL, relative to this file
//         format: auto                   #   auto | azure | mooncake
//         timeScale: 1                   #   arrival times x this
//         rateMultiplier: 1              #   each request this many times (fractions drawn, seeded)
//         startSeconds: 0                #   window of the trace [start, end); start becomes time 0
//         endSeconds: ...
//         delaySeconds: 0                #   the first request this long after the simulation starts
//       # or: traffic: {generate: {meanRatePerSecond, peakToTrough: 1, peakHour: 14, weekendFactor: 1,
//       #       tokens: {fromTrace: FILE, law: lognormal | empirical} | {promptMean, promptMedian,
//       #       outputMean, outputMedian}, maxPromptTokens, maxOutputTokens}}
//       router: {policy: least-outstanding | round-robin | prefix-affinity | endpoint-picker,
//                maxOutstandingPerReplica: 0, requestTimeoutSeconds: 0,
//                endpointPickerConfig: epp.yaml,   # endpoint-picker: EndpointPickerConfig / InferencePool /
//                inferenceObjective: NAME}         # InferenceObjective (docs/inference-routing.md)
//       slo: {ttftP99Seconds: 2, tpotP99Seconds: 0.1}
//       coldStart: {imagePullSeconds: 120, weightLoadGBps: 1, cachedWeights: false,
//                   cachedWeightLoadGBps: 5, engineStartSeconds: 60, snapshotRestore: false,
//                   snapshotRestoreSeconds: 10}
//       scrapeIntervalSeconds: 15
//       disaggregation: {...}            # optional: prefill and decode roles (parse_disaggregation)
//       autoscaler:                      # optional (docs/serving.md)
//         kubernetes: keda.yaml          #   one HorizontalPodAutoscaler or ScaledObject, as users write them
//         predictive: {capacityRpsPerReplica, headroom: 1.2, leadSeconds: 0, minReplicas: 1,
//                      maxReplicas: 100, rateMetric: gpufleet:request_arrival_rate,
//                      evaluationPeriodSeconds: 60, forecast: {...}}   # with kubernetes: it floors it
#pragma once

#include <string>
#include <vector>

#include "inference/catalog.h"
#include "readers/formats/yaml_field.h"
#include "inputs/sim/inference_service.h"
#include "inputs/sim/workload.h"
#include "replica_autoscaling/autoscaler_spec.h"

namespace gpufleet::io {

/// What an `autoscaler:` block may read. An inference service's (inference.autoscaler): the serving
/// metrics (sim::exported_serving_metrics), any HPA metric type, predictive allowed. A service
/// without inference (services[i].autoscaler, readers/sim/workload_file.h): the workload's
/// externalMetrics, HPA metrics of type External or Object only, no predictive (it forecasts a
/// request rate such a service does not have).
struct AutoscalerRules {
  std::vector<std::string> metrics;   ///< the names HPA metrics, KEDA triggers and predictive.rateMetric may read
  std::string unknown_metric;         ///< why another name is refused: "is exported by no simulated component"
  std::string metrics_label;          ///< the list's label in that error: "exported" -> "(exported: a, b)"
  bool predictive = true;             ///< predictive: is allowed
  bool external_or_object_only = false;  ///< HPA metrics other than External and Object are refused
  std::string predictive_refused;     ///< the error at predictive: when it is not allowed
};

/// The rules of an inference service's autoscaler (see AutoscalerRules).
AutoscalerRules serving_autoscaler_rules();

/// A parsed `autoscaler:` block and its one-line description, e.g. "hpa chat (vllm:num_requests_waiting
/// AverageValue 5)", "keda chat (vllm:num_requests_waiting > 5)", "predictive 10 req/s per replica, lead
/// 0 s + keda ...".
struct ParsedAutoscaler {
  replica_autoscaling::ReplicaAutoscalerSpec spec;
  std::string description;
};

/// Parses an `autoscaler:` block: {kubernetes: FILE} (one HorizontalPodAutoscaler or ScaledObject,
/// read with read_k8s_serving, the path relative to `base_dir`), {predictive: {...}}, or both (the
/// predictive scaler with the Kubernetes one as its reactive floor), under `rules`. Errors in the
/// Kubernetes file (a metric name or type `rules` refuse, an invalid HPA or ScaledObject) are
/// reported at their position in that file; the others at the block's fields. Throws InputError.
/// spec.hpa_controller is left at its defaults (the workload's hpaController: sets it).
ParsedAutoscaler parse_autoscaler(const detail::Field& a, const std::string& base_dir, const AutoscalerRules& rules);

/// The workload item of a disaggregated service's role pods: "<service>-prefill", "<service>-decode"
/// (as llm-d's modelservice names its two Deployments).
std::string disaggregated_role_item(const std::string& service, const char* role);

/// Parses `inference.disaggregation` of the service `service` (docs/disaggregated-serving.md):
///   disaggregation:
///     kvTransferLink: rdma             # nvlink | rdma | tcp (inference::kv_transfer_link), or
///                                      # {gbps: 400, latencyMs: 1, perGpu: true}
///     maxLocalPrefillTokens: 0         # Dynamo's max_local_prefill_length; 0 = every prompt remote
///     firstTokenFrom: prefill          # prefill | decode (inference::FirstTokenFrom)
///     prefill: {replicas: 1, minReplicas: 0, maxReplicas: 100000, gpus: 1, pools: [h100],
///               nodeSelector: {...}, autoscaler: {kubernetes: FILE, predictive: {...}}}
///     decode:  {...the same keys}
/// `gpus` is required (the role's tensorParallelSize); replicas defaults to max(1, minReplicas) and
/// must lie in [minReplicas, maxReplicas]. The role items' pods (replicas, gpus, pools, nodeSelector)
/// are made by the workload reader (readers/sim/workload_file.h). Throws InputError.
sim::DisaggregationSpec parse_disaggregation(const detail::Field& d, const std::string& service, const std::string& base_dir);

/// Parses the block `f` of the service item `item`, whose fields are in `service` (already parsed; a
/// `deployment:` fills those the item leaves out); relative paths in it are resolved
/// against `base_dir` (the workload file's folder); a generator runs over [0, horizon_s). Defaults of the cold start come from `catalog`.
/// Throws InputError naming file, line, column and field.
sim::InferenceServiceSpec parse_inference_service(const detail::Field& f, const detail::Field& item,
                                                  sim::WorkloadSpec& service,
                                                  const std::string& base_dir, double horizon_s,
                                                  const inference::ServingCatalog& catalog);

}  // namespace gpufleet::io
