// The KEDA metrics-api routes of `gpufleet serve` (server/http_server.h): observations of inference services
// in, the live replica recommendation (live/inference_scaler.h) out, as JSON for KEDA's `metrics-api`
// trigger (keda-docs content/docs/2.x/scalers/metrics-api.md). docs/live.md "KEDA external scaler and
// metrics-api" has the ScaledObject.
//
//   POST /v1/services/<namespace>/<name>/observations
//        body: readers/kube_api/scaler_observation.h (one observation or {"observations": [...]}, oldest first)
//        200 {"service": "<ns>/<name>", "accepted": <n>, "observations": <total>}
//        the body is decoded with read_request_body (server/http_server.h): gzip or deflate inflated
//        within `limits`, else 413, 415 or 400 as there (408 and the body as sent: the server's limits)
//        400 one line: the reader's InputError ("<source>:line:column: field 'f': ..."), an invalid
//            namespace or name, or time going backwards
//   GET  /v1/services/<namespace>/<name>/scale?targetRequestRatePerReplica=8&maxReplicaCount=20...
//        query: the trigger keys of live::parse_scaler_trigger, except `service` (the path names it)
//        200 {"service", "basis": "request_rate"|"queue_depth", "active", "desiredReplicas", "value",
//             "forecastRequestRate" (null for the queue basis), "rateReplicas", "queueReplicas",
//             "observation": {"time_s", "request_rate_rps", "num_requests_waiting",
//             "num_requests_running", "current_replicas", "age_s"}, "observations"}
//        The trigger reads valueLocation `desiredReplicas` with targetValue 1 (metricType
//        AverageValue, KEDA's default): the HPA computes ceil(desiredReplicas / 1).
//        400 bad query (one line), 404 no observation, 503 stale observation (live::unavailable_reason).
// Error bodies are text/plain, one line ending in "\n".
#pragma once

#include <functional>

#include "live/inference_scaler.h"
#include "readers/kube_api/scaler_observation.h"
#include "server/http_server.h"

namespace gpufleet::server {

/// Registers the two routes (ServerHooks::add_routes). `scaler` must outlive the server. `clock` gives
/// now in seconds on the observations' time base (default: Unix time from the system clock). `limits`
/// bound an observations body, decoded (default: ScalerObservationLimits::max_body_bytes).
void add_scaler_routes(Routes& routes, live::InferenceScaler& scaler, std::function<double()> clock = {},
                       BodyLimits limits = {io::kScalerObservationLimits.max_body_bytes});

}  // namespace gpufleet::server
