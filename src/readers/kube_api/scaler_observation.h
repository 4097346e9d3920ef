// The body of POST /v1/services/<namespace>/<name>/observations (server/scaler_routes.h): what a
// router or a Prometheus recording job saw of one inference service, for the live replica
// recommendation (live/inference_scaler.h). docs/live.md "KEDA external scaler and metrics-api".
//
// Body: one observation, or {"observations": [ ... ]} with up to max_observations of them (a backfill
// of history, oldest first). One observation:
//   {"time_s": 1764650000, "request_rate_rps": 12.5, "num_requests_waiting": 3,
//    "num_requests_running": 40, "current_replicas": 2}
//   time_s                 required  when it was observed, seconds (Unix time as the live server's
//                                    clock reads it; any monotone clock if the caller supplies `now`)
//   request_rate_rps       required  requests/s arriving at the service, e.g. the router's
//                                    sum(rate(vllm:request_success_total[1m])) or its own counter
//   num_requests_waiting   default 0 requests queued, sum of vLLM's vllm:num_requests_waiting gauge
//                                    over the service's pods (vllm-project/vllm vllm/v1/metrics/loggers.py)
//   num_requests_running   default 0 requests in the running batch, sum of vllm:num_requests_running
//   current_replicas       optional  the Deployment's spec.replicas when observed
// Unknown fields are refused (a misspelt field would otherwise be silently 0).
//
// Errors: InputError with `source` as the file. A JSON syntax error names the 1-based line and column
// (readers/formats/json_request.h); a field error names the field path ("observations[2].request_rate_rps") with no
// position; a limit crossed names the limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "readers/formats/input_limits.h"

namespace gpufleet::io {

/// One observation of one service. Units in the names.
struct ScalerObservation {
  double time_s = 0;
  double request_rate_rps = 0;
  double num_requests_waiting = 0;
  double num_requests_running = 0;
  std::optional<int32_t> current_replicas;
};

/// Limits of the observation body (listed in docs/input-limits.md). The JSON parser's own limits are
/// JsonRequestLimits with max_body_bytes = this max_body_bytes.
struct ScalerObservationLimits {
  /// Largest body, bytes: max_observations of about 100 bytes each.
  size_t max_body_bytes = 2 * kMiB;
  /// Most observations in one body: a week of one per minute is 10,080 (the predictive scaler keeps a
  /// week and a day of history).
  size_t max_observations = 20'000;
  /// Latest time_s: year 2286 in Unix time, far beyond any clock that is right.
  double max_time_s = 1e10;
  /// Largest request rate, requests/s, and largest waiting or running count.
  double max_request_rate_rps = 1e9;
  double max_requests = 1e9;
  /// Most replicas (a Deployment's spec.replicas is an int32; KEDA's maxReplicaCount default is 100).
  int32_t max_replicas = 1'000'000;
};

inline constexpr ScalerObservationLimits kScalerObservationLimits{};

/// Parses the body. Observations are returned in body order; time order is the caller's check (the
/// recommendation refuses time going backwards). Throws InputError.
std::vector<ScalerObservation> parse_scaler_observations(std::string_view body, const std::string& source,
                                                         const ScalerObservationLimits& limits = kScalerObservationLimits);

}  // namespace gpufleet::io
