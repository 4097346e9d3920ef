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
