#include "replica_autoscaling/autoscaler_spec.h"

#include <utility>

namespace gpufleet::replica_autoscaling {

std::unique_ptr<ReplicaAutoscaler> make_replica_autoscaler(const ReplicaAutoscalerSpec& spec) {
  std::unique_ptr<ReplicaAutoscaler> reactive;
  if (spec.hpa) reactive = std::make_unique<HpaAutoscaler>(*spec.hpa, spec.hpa_controller);
  else if (spec.keda) reactive = std::make_unique<KedaAutoscaler>(*spec.keda, spec.hpa_controller);
  if (spec.predictive) return std::make_unique<PredictiveAutoscaler>(*spec.predictive, std::move(reactive));
  return reactive;
}

}  // namespace gpufleet::replica_autoscaling
