#include "sim/inference_service.h"

#include <stdexcept>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "sim/workload.h"
#include "util/input_error.h"

namespace gpufleet::sim {

const std::vector<std::string>& exported_serving_metrics() {
  static const std::vector<std::string> names = {kMetricRequestsWaiting, kMetricRequestsRunning, kMetricKvCacheUsage,
                                                 kMetricGpuUtil,         kMetricRouterWaiting,   kMetricRequestRate};
  return names;
}

std::unique_ptr<autoscaling::ReplicaAutoscaler> make_replica_autoscaler(const ReplicaAutoscalerSpec& spec) {
  std::unique_ptr<autoscaling::ReplicaAutoscaler> reactive;
  if (spec.hpa) reactive = std::make_unique<autoscaling::HpaAutoscaler>(*spec.hpa);
  else if (spec.keda) reactive = std::make_unique<autoscaling::KedaAutoscaler>(*spec.keda);
  if (spec.predictive) return std::make_unique<autoscaling::PredictiveAutoscaler>(*spec.predictive, std::move(reactive));
  return reactive;
}

void fail_inference_service(const InferenceServiceSpec& spec, const std::string& what) {
  const std::string message = fmt::format("inference service '{}': {}", spec.service, what);
  if (!spec.origin.file.empty())
    throw InputError(spec.origin.file, spec.origin.line, spec.origin.field, message, spec.origin.column);
  throw std::invalid_argument(message);
}

void validate_inference_service(const InferenceServiceSpec& spec, const std::vector<WorkloadSpec>& items) {
  auto fail = [&](const std::string& what) { fail_inference_service(spec, what); };
  bool found = false;
  for (const WorkloadSpec& item : items)
    if (item.name == spec.service) {
      if (item.kind != WorkloadKind::kService) fail("is a job, not a service");
      if (item.num_gpu == 0 && item.mig_requests.empty()) fail("its replicas request no GPU");
      found = true;
    }
  if (!found) fail("no service of that name in the workload");
  if (std::holds_alternative<std::monostate>(spec.traffic)) fail("no traffic (a trace or a generator)");
  if (!(spec.scrape_interval_s > 0)) fail("scrape interval must be > 0 s");
  const inference::EngineArgs& e = spec.engine;
  if (e.model.empty()) fail("no model");
  if (e.tensor_parallel_size < 1) fail("tensor_parallel_size must be >= 1");
  if (!(e.gpu_memory_utilization > 0 && e.gpu_memory_utilization <= 1)) fail("gpu_memory_utilization must be in (0, 1]");
  if (e.max_num_seqs < 1) fail("max_num_seqs must be >= 1");
  if (e.max_num_batched_tokens < 0) fail("max_num_batched_tokens must be >= 0");
  if (e.max_model_len < 0) fail("max_model_len must be >= 0");
  if (e.block_size < 1) fail("block_size must be >= 1");
  const inference::ColdStartSpec& c = spec.cold_start;
  if (c.image_pull_s < 0 || c.engine_start_s < 0 || c.snapshot_restore_s < 0) fail("cold-start times must be >= 0");
  if (!(c.weight_load_bandwidth_gb_s > 0) || !(c.cached_weight_load_bandwidth_gb_s > 0))
    fail("weight load bandwidths must be > 0");
  if (spec.router.request_timeout_s < 0) fail("request timeout must be >= 0");
  if (spec.router.max_outstanding_per_replica < 0) fail("maxOutstandingPerReplica must be >= 0");
  if ((spec.slo.ttft_p99_s && !(*spec.slo.ttft_p99_s > 0)) || (spec.slo.tpot_p99_s && !(*spec.slo.tpot_p99_s > 0)))
    fail("SLO limits must be > 0");
  if (const std::unique_ptr<autoscaling::ReplicaAutoscaler> autoscaler = make_replica_autoscaler(spec.autoscaler)) {
    const std::vector<std::string>& exported = exported_serving_metrics();
    for (const std::string& m : autoscaler->metrics()) {
      bool ok = false;
      for (const std::string& x : exported) ok = ok || x == m;
      if (!ok)
        fail(fmt::format("the autoscaler reads metric '{}', which no simulated component exports (exported: {})", m,
                         fmt::join(exported, ", ")));
    }
  }
}

}  // namespace gpufleet::sim
