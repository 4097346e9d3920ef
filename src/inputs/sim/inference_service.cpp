#include "inputs/sim/inference_service.h"

#include <stdexcept>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "util/input_error.h"

namespace gpufleet::sim {

const std::vector<std::string>& exported_serving_metrics() {
  static const std::vector<std::string> names = {kMetricRequestsWaiting, kMetricRequestsRunning, kMetricKvCacheUsage,
                                                 kMetricGpuUtil,         kMetricRouterWaiting,   kMetricRequestRate};
  return names;
}

std::unique_ptr<replica_autoscaling::ReplicaAutoscaler> make_replica_autoscaler(const ReplicaAutoscalerSpec& spec) {
  std::unique_ptr<replica_autoscaling::ReplicaAutoscaler> reactive;
  if (spec.hpa) reactive = std::make_unique<replica_autoscaling::HpaAutoscaler>(*spec.hpa);
  else if (spec.keda) reactive = std::make_unique<replica_autoscaling::KedaAutoscaler>(*spec.keda);
  if (spec.predictive) return std::make_unique<replica_autoscaling::PredictiveAutoscaler>(*spec.predictive, std::move(reactive));
  return reactive;
}

void fail_inference_service(const InferenceServiceSpec& spec, const std::string& what) {
  const std::string message = fmt::format("inference service '{}': {}", spec.service, what);
  if (!spec.origin.file.empty())
    throw InputError(spec.origin.file, spec.origin.line, spec.origin.field, message, spec.origin.column);
  throw std::invalid_argument(message);
}

}  // namespace gpufleet::sim
