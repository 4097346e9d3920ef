// An inference service in the simulator: a service of the workload (inputs/sim/workload.h, kind service)
// whose replicas run a vLLM engine each and serve a stream of requests. Its pods are placed by the
// policy on the node pools like any other; a replica serves from the end of its cold start until
// its pod stops. Plain inputs, no I/O (the YAML reader is readers/sim/workload_file.h; the semantics are in
// sim/controllers/inference_services.h and docs/serving.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inputs/sim/field_origin.h"
#include "replica_autoscaling/autoscaler_spec.h"
#include "inference/cold_start.h"
#include "inference/deployment.h"
#include "inference/disaggregated_deployment.h"
#include "inference/engine_args.h"
#include "inference/request.h"
#include "inference/request_sources.h"

namespace gpufleet::sim {

/// The service level objective of a service: 99th percentiles over its requests; a request meets
/// it when its TTFT and TPOT are within both limits (unset = no limit); a request that timed out or
/// was dropped does not.
struct ServingSlo {
  std::optional<double> ttft_p99_s;
  std::optional<double> tpot_p99_s;
};

/// One role of a disaggregated service: llm-d's prefill or decode Deployment of vLLM pods
/// (llm-d.ai/docs/guides/pd-disaggregation, labels llm-d.ai/role=prefill|decode). Its replica pods
/// are the workload's service item `item` (<service>-prefill or <service>-decode, made by the reader
/// from the role's replicas, gpus, pools, nodeSelector and tolerations), placed and billed as any
/// service's pods; its autoscaler reads the metrics of that role's pods only.
struct DisaggregatedRoleSpec {
  std::string item;                        ///< the workload service item of its pods
  int32_t tensor_parallel_size = 1;        ///< = the item's gpus per pod
  int32_t replicas = 1;                    ///< at the start (the item's pods), >= 1
  /// Bounds on the replica count its autoscaler sets (the count stays as set without autoscaler);
  /// 0 <= min_replicas <= max_replicas.
  int32_t min_replicas = 0;
  int32_t max_replicas = 100'000;
  replica_autoscaling::ReplicaAutoscalerSpec autoscaler;  ///< empty = the count stays as set
  std::string autoscaler_description;
  FieldOrigin origin;                      ///< the role's block
};

/// Disaggregated prefill/decode serving of a service (inference/disaggregated_deployment.h holds the
/// rules: conditional disaggregation, the KV transfer, who gives the first token).
struct DisaggregationSpec {
  inference::KvTransferLink link = inference::kv_transfer_link("rdma");
  int32_t max_local_prefill_tokens = 0;    ///< Dynamo's max_local_prefill_length; 0 = all remote
  inference::FirstTokenFrom first_token = inference::FirstTokenFrom::kPrefill;
  DisaggregatedRoleSpec prefill, decode;
};

struct InferenceServiceSpec {
  std::string service;                     ///< a WorkloadSpec of kind service: its replicas serve
  /// Where the spec was read (the `model` field of its block), so that the simulator's errors about
  /// it (a model that does not fit its GPUs) name the file, line and field; empty file for specs
  /// built in code.
  using Origin = FieldOrigin;
  Origin origin;
  /// Where its traffic was read (the `traffic` block; for a generator its `meanRatePerSecond`, for a
  /// trace its `rateMultiplier` when given), for the work budget (inputs/sim/work_estimate.h).
  FieldOrigin traffic_origin;
  /// Where its scrape interval and its autoscaler were read (the service's `inference` block, or the
  /// autoscaler's field); for the work budget.
  FieldOrigin autoscaler_origin;
  inference::EngineArgs engine;            ///< the vLLM engine each replica runs
  /// A measured step-time table (inference/step_time.h) instead of the catalog's roofline; empty = roofline.
  std::vector<inference::StepProfileRow> step_profile;
  inference::RouterConfig router;
  ServingSlo slo;
  inference::ColdStartSpec cold_start;
  /// Seconds between Prometheus scrapes of the replicas' metrics (> 0; Prometheus scrape_interval,
  /// 15 s in most configurations, default 1 m upstream).
  double scrape_interval_s = 15;
  /// The requests (a trace or a generator); each run makes its source with
  /// inference::make_request_source and a seed drawn from the simulation's. Required.
  inference::TrafficSpec traffic;
  std::string traffic_description;         ///< for outputs, e.g. "trace AzureLLMInferenceTrace_conv.csv x2"
  /// The replica autoscaler, built once per run (make_replica_autoscaler); empty = the replica count
  /// stays as set.
  replica_autoscaling::ReplicaAutoscalerSpec autoscaler;
  std::string autoscaler_description;      ///< e.g. "keda vllm:num_requests_waiting > 5"
  /// Set: the service runs a prefill pool and a decode pool, each of its own pods (DisaggregatedRoleSpec:
  /// `service` then names no workload item and `autoscaler` is empty: each role has its own). Unset:
  /// aggregated replicas, the pods of the item `service`.
  std::optional<DisaggregationSpec> disaggregation;
  /// What the reader noticed and left out (vLLM arguments not modelled, objects skipped), copied to
  /// the result's notes.
  std::vector<std::string> notes;
};

/// The metrics the simulated components export and autoscalers may read, per replica pod:
/// vLLM's gauges (vllm/v1/metrics/loggers.py), DCGM's utilisation, and the router's queue and
/// arrival rate (an inference gateway's, as the KEDA HTTP add-on's interceptor counts pending
/// requests).
inline constexpr const char* kMetricRequestsWaiting = "vllm:num_requests_waiting";
inline constexpr const char* kMetricRequestsRunning = "vllm:num_requests_running";
inline constexpr const char* kMetricKvCacheUsage = "vllm:kv_cache_usage_perc";
inline constexpr const char* kMetricGpuUtil = "DCGM_FI_DEV_GPU_UTIL";
inline constexpr const char* kMetricRouterWaiting = "gpufleet:router_requests_waiting";
inline constexpr const char* kMetricRequestRate = "gpufleet:request_arrival_rate";
/// All of the above, in this order.
const std::vector<std::string>& exported_serving_metrics();


/// Throws the error `what` about `spec`: an InputError at spec.origin when it has a file (exit
/// status 2 in the CLI), else std::invalid_argument; both say "inference service '<name>': <what>".
[[noreturn]] void fail_inference_service(const InferenceServiceSpec& spec, const std::string& what);

}  // namespace gpufleet::sim
