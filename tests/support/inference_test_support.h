// Helpers shared by the tests of simulate's inference services (sim/controllers/inference_services.h):
// a service whose every engine step takes 0.5 s, fed a fixed list of requests. No GoogleTest here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "inference/request.h"
#include "inference/request_sources.h"
#include "inputs/sim/inference_service.h"

namespace gpufleet::testing {

/// Service `name` on Llama-3.1-8B (max_model_len 8192) whose every step takes 0.5 s (a one-row step
/// profile), cold start 10 s image pull + weights at 1 GB/s + 20 s engine start, serving `requests`
/// in order.
inline sim::InferenceServiceSpec half_second_step_service(const std::string& name, std::vector<inference::Request> requests) {
  sim::InferenceServiceSpec spec;
  spec.service = name;
  spec.engine.model = "Llama-3.1-8B";
  spec.engine.max_model_len = 8192;
  spec.step_profile = {{1, 1, 0.5}};
  spec.cold_start.image_pull_s = 10;
  spec.cold_start.weight_load_bandwidth_gb_s = 1.0;
  spec.cold_start.engine_start_s = 20;
  spec.traffic = inference::TraceTraffic{std::make_shared<const std::vector<inference::Request>>(std::move(requests)), {}, {}, {}};
  return spec;
}

}  // namespace gpufleet::testing
