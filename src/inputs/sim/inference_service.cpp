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

void fail_inference_service(const InferenceServiceSpec& spec, const std::string& what) {
  const std::string message = fmt::format("inference service '{}': {}", spec.service, what);
  if (!spec.origin.file.empty())
    throw InputError(spec.origin.file, spec.origin.line, spec.origin.field, message, spec.origin.column);
  throw std::invalid_argument(message);
}

}  // namespace gpufleet::sim
