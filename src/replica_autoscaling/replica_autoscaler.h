// The one interface every replica autoscaler (HPA, KEDA ScaledObject, predictive) offers to the
// simulator's controller and to the live server: at each of its evaluation times it reads the
// metrics it names, as Prometheus last scraped them, and returns the replica count it wants.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpufleet::replica_autoscaling {

/// One metric of one service, as the autoscaler reads it: the sum over the pods that reported it
/// and how many did (an AverageValue target divides; a Value target uses the sum). nullopt in a
/// MetricSnapshot = no sample (stale or never scraped).
struct MetricSample {
  double sum = 0;
  int32_t pods = 0;
};

/// Latest samples by metric name (e.g. "vllm:num_requests_waiting", "DCGM_FI_DEV_GPU_UTIL").
using MetricSnapshot = std::map<std::string, MetricSample, std::less<>>;

/// The target's scale subresource (autoscaling/v1 Scale) as the autoscaler reads it at an
/// evaluation. The two counts differ during a Deployment's rolling update: status counts the surge
/// pods (the old and the new ReplicaSet's), spec does not.
struct ScaleStatus {
  int32_t spec_replicas = 0;    ///< scale.spec.replicas: the count last set (the wanted replicas)
  int32_t status_replicas = 0;  ///< scale.status.replicas: the target's pods that exist now
  int32_t ready = 0;            ///< of those, pods Running and Ready (serving)
};

class ReplicaAutoscaler {
 public:
  virtual ~ReplicaAutoscaler() = default;
  /// The metric names it reads; the simulator refuses a configuration naming one no component exports.
  virtual std::vector<std::string> metrics() const = 0;
  /// The first evaluation time (seconds from 0) and the next one after an evaluation at t.
  virtual double first_evaluation_s() const = 0;
  virtual double next_evaluation_s(double t) const = 0;
  /// One evaluation at t on the target's `scale`; returns the desired replica count (the caller sets
  /// spec.replicas to it; equal to scale.spec_replicas = no change).
  virtual int32_t evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) = 0;
  /// The same with no rollout in progress: `current` replicas wanted and existing, `ready` serving.
  int32_t evaluate(double t, int32_t current, int32_t ready, const MetricSnapshot& metrics) {
    return evaluate(t, ScaleStatus{current, current, ready}, metrics);
  }
};

}  // namespace gpufleet::replica_autoscaling
