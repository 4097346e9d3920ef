// The live replica recommendation for LLM inference services: what the KEDA external scaler
// (server/keda_scaler.h) and the metrics-api route (server/scaler_routes.h) answer. No network code.
//
// Per service ("namespace/name") it keeps the observations posted to it (readers/kube_api/scaler_observation.h:
// time_s, request_rate_rps, num_requests_waiting, num_requests_running, current_replicas) and the
// request rate's history in the predictive scaler's forecaster (replica_autoscaling/predictive.h
// RateForecaster: persistence over the last 30 minutes with less than a day of history, then seasonal
// naive with a level correction). A trigger (ScalerTrigger, KEDA's trigger metadata) chooses the basis:
//
//  - request rate (targetRequestRatePerReplica given): value = the forecast rate at now +
//    leadTimeSeconds, requests/s; replicas = replica_autoscaling::replicas_for_rate(value) =
//    ceil(value x headroom / targetRequestRatePerReplica). If queue targets are given too, their
//    answer is a floor, as the predictive scaler floors at the reactive autoscaler it wraps.
//  - queue depth (no rate target): vLLM's gauges as the HPA reads two AverageValue metrics, the larger
//    answer wins: max(ceil(waiting / targetRequestsWaitingPerReplica), ceil(running /
//    targetRequestsRunningPerReplica)), each term only when its target is given (the pair
//    examples/serving/keda-chat-day.yaml configures as two prometheus triggers; the waiting queue
//    alone is 0 whenever capacity suffices).
//
// KEDA's semantics (kedacore/keda pkg/scaling/executor/scale_scaledobjects.go; keda-docs
// concepts/scaling-deployments.md "Activating and Scaling thresholds"): the service is active iff a
// basis value is strictly greater than activationThreshold (the rate basis: the forecast rate; the
// queue basis: waiting or running, as any active trigger activates the ScaledObject). Active, or
// minReplicaCount >= 1 (KEDA then ignores activation) -> desired = the replicas above, at least 1,
// clamped to [max(minReplicaCount, 1), maxReplicaCount] (the HPA KEDA creates has minReplicas
// max(minReplicaCount, 1), maxReplicas maxReplicaCount). Inactive with minReplicaCount 0 -> 0.
//
// Deterministic: the answer depends only on the observations and `now`; the caller supplies the
// clock. Threads: every member is safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "replica_autoscaling/predictive.h"
#include "readers/kube_api/scaler_observation.h"

namespace gpufleet::live {

/// A trigger's settings, from KEDA trigger metadata (the external scaler's ScaledObjectRef
/// scalerMetadata, or the metrics-api URL's query). The keys (docs/live.md) are in the comments.
struct ScalerTrigger {
  std::string service;  ///< "namespace/name": `service` ("name" or "namespace/name"), else the ScaledObject's
  /// targetRequestRatePerReplica: requests/s one replica serves within its SLO (> 0): the rate basis.
  std::optional<double> target_request_rate_per_replica;
  /// targetRequestsWaitingPerReplica / targetRequestsRunningPerReplica (> 0): the queue basis, or its
  /// floor under the rate basis.
  std::optional<double> target_requests_waiting_per_replica;
  std::optional<double> target_requests_running_per_replica;
  double activation_threshold = 0;  ///< activationThreshold (KEDA's default 0), in the basis value's unit
  double headroom = 1.0;            ///< headroom (> 0): multiplier on the forecast rate
  double lead_time_s = 0;           ///< leadTimeSeconds (>= 0): node provisioning + replica cold start
  int32_t min_replicas = 0;         ///< minReplicaCount, as in the ScaledObject (KEDA's default 0)
  int32_t max_replicas = 100;       ///< maxReplicaCount, as in the ScaledObject (KEDA's default 100)
};

/// Reads a trigger from metadata. Keys not listed above are ignored (KEDA passes the whole trigger
/// metadata, scalerAddress and TLS keys included). `default_service` ("namespace/name") is used when
/// `service` is absent; `default_namespace` completes a `service` without a namespace. Throws
/// std::invalid_argument with a one-line reason naming the key: a value that is not a finite number
/// (or a whole number for the replica counts), out of range, an invalid service key, min above max,
/// or no target at all.
ScalerTrigger parse_scaler_trigger(const std::map<std::string, std::string>& metadata,
                                   std::string_view default_service, std::string_view default_namespace);

/// "namespace/name" when both are Kubernetes names (DNS-1123 label for the namespace, subdomain for
/// the name: lowercase alphanumerics, '-' and, in the name, '.'; at most 63 / 253 bytes); else "".
std::string service_key(std::string_view namespace_name, std::string_view name);

/// Which basis decided.
enum class ScalingBasis { kRequestRate, kQueueDepth };
const char* basis_name(ScalingBasis basis);  ///< "request_rate" / "queue_depth"

/// The answer and the inputs it used.
struct Recommendation {
  std::string service;
  ScalingBasis basis = ScalingBasis::kRequestRate;
  bool active = false;             ///< a basis value > activationThreshold
  int32_t desired_replicas = 0;    ///< what the Deployment should run
  /// The basis value compared with activationThreshold: the forecast rate (requests/s) for the rate
  /// basis, else the larger of waiting and running.
  double value = 0;
  std::optional<double> forecast_rate_rps;  ///< F(now + leadTimeSeconds) (rate basis)
  std::optional<int32_t> rate_replicas;     ///< replicas_for_rate(forecast) before the floor and clamp
  std::optional<int32_t> queue_replicas;    ///< the queue term before the clamp
  // The last observation.
  double observed_at_s = 0;
  double request_rate_rps = 0;
  double num_requests_waiting = 0;
  double num_requests_running = 0;
  std::optional<int32_t> current_replicas;
  double age_s = 0;            ///< now - observed_at_s (0 if negative)
  bool stale = false;          ///< age_s > InferenceScalerOptions::max_observation_age_s
  size_t observations = 0;     ///< observations received for the service
};

struct InferenceScalerOptions {
  replica_autoscaling::ForecastOptions forecast;  ///< the forecaster's settings (replica_autoscaling/predictive.h)
  /// Oldest last observation still answered, seconds; older is `stale` (the servers answer an error,
  /// so KEDA's `fallback` applies). Default: Prometheus's staleness look-back (--query.lookback-delta,
  /// 5 minutes, prometheus/prometheus cmd/prometheus/main.go).
  double max_observation_age_s = 300;
  /// Most services kept (each holds at most about a week and a day of 5-minute buckets).
  size_t max_services = 10'000;
};

/// Why `r` (recommend()'s answer for trigger.service) cannot be served, one line; "" when it can.
/// No observation: "no observations of <service> (POST /v1/services/<service>/observations)"; stale:
/// "the last observation of <service> is <age> s old (more than <max> s)". The servers answer
/// these as an error (gRPC NOT_FOUND / UNAVAILABLE, HTTP 404 / 503), so KEDA's fallback applies.
std::string unavailable_reason(const ScalerTrigger& trigger, const std::optional<Recommendation>& r,
                               const InferenceScalerOptions& options);

class InferenceScaler {
 public:
  explicit InferenceScaler(InferenceScalerOptions options = {});

  /// Records observations of `service` ("namespace/name", as service_key builds it), all or none.
  /// Throws std::invalid_argument (one line) on an invalid service key, time going backwards (within
  /// the batch or before the service's last observation), or a new service beyond max_services.
  /// Returns the service's observations received so far, this batch included.
  size_t observe(const std::string& service, const std::vector<io::ScalerObservation>& batch);

  /// The recommendation at `now` (seconds, the observations' clock) under `trigger`, for
  /// trigger.service; nullopt when the service has no observation.
  std::optional<Recommendation> recommend(const ScalerTrigger& trigger, double now_s) const;

  const InferenceScalerOptions& options() const { return options_; }

  /// The services with observations, in key order.
  std::vector<std::string> services() const;

 private:
  struct ServiceState {
    explicit ServiceState(const replica_autoscaling::ForecastOptions& o) : forecaster(o) {}
    replica_autoscaling::RateForecaster forecaster;
    io::ScalerObservation last;
    size_t observations = 0;
  };

  InferenceScalerOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, ServiceState, std::less<>> services_;
};

}  // namespace gpufleet::live
