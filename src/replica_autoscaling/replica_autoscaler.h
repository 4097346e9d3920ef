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

class ReplicaAutoscaler {
 public:
  virtual ~ReplicaAutoscaler() = default;
  /// The metric names it reads; the simulator refuses a configuration naming one no component exports.
  virtual std::vector<std::string> metrics() const = 0;
  /// The first evaluation time (seconds from 0) and the next one after an evaluation at t.
  virtual double first_evaluation_s() const = 0;
  virtual double next_evaluation_s(double t) const = 0;
  /// One evaluation at t: `current` replicas of the Deployment (spec.replicas), `ready` of them
  /// serving; returns the desired replica count (the caller scales to it; equal = no change).
  virtual int32_t evaluate(double t, int32_t current, int32_t ready, const MetricSnapshot& metrics) = 0;
};

}  // namespace gpufleet::replica_autoscaling
