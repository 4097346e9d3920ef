// ServiceAutoscalers: the replica autoscalers of services without inference
// (Workload::service_autoscalers), reading the workload's external metrics.
//
// Each autoscaler (an HPA or a KEDA ScaledObject, replica_autoscaling/) evaluates on its own grid
// (first_evaluation_s, next_evaluation_s; event "service-autoscale", not traced) and reads, for each
// metric it names, the external metric's value at that time (ExternalMetricSeries: the last point at
// or before t; no sample before the first point) as the whole metric (MetricSample{value, 1}). It
// reads the Deployment's scale as the HPA reads it (replica_autoscaling::ScaleStatus): spec.replicas
// = the wanted count (Units::replicas), status.replicas = the replicas that exist, surge pods of a
// rollout included (Units::live_replicas), ready = those ready (Units::ready_replicas). What it returns becomes
// the wanted count (Units::scale).
//
// Outputs: SimResult::service_scaling, each evaluation with what it read and set.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "replica_autoscaling/replica_autoscaler.h"
#include "sim/controllers/controller.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

/// The value of `series` at t: its last point at or before t; nullopt before its first point.
std::optional<double> external_metric_at(const ExternalMetricSeries& series, double t);

class ServiceAutoscalers final : public Controller {
 public:
  /// Builds each autoscaler. The workload must have passed validate_rollouts_and_autoscalers (the
  /// simulation checks it once, before its controllers).
  ServiceAutoscalers(const Workload& workload, const SimulationModules& modules);
  ~ServiceAutoscalers() override;
  void start() override;
  void report(SimResult& result) const override;

 private:
  struct Scaler {
    const ServiceAutoscalerSpec* spec = nullptr;
    uint32_t item = 0;
    std::unique_ptr<replica_autoscaling::ReplicaAutoscaler> autoscaler;
    ServiceScalingResult result;
  };
  void evaluate(uint32_t s, double t);

  const Workload& workload_;
  SimulationModules m_;
  EventKind kind_ = 0;
  std::vector<Scaler> scalers_;
};

}  // namespace gpufleet::sim
