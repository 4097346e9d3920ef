// A replica autoscaler as data, and the one function that builds it: what the readers produce from
// an HPA, a KEDA ScaledObject or a predictive block (readers/serving/), and what the simulator and the
// live server build a fresh autoscaler from for each run. No I/O.
#pragma once

#include <memory>
#include <optional>

#include "replica_autoscaling/hpa.h"
#include "replica_autoscaling/keda.h"
#include "replica_autoscaling/predictive.h"
#include "replica_autoscaling/replica_autoscaler.h"

namespace gpufleet::replica_autoscaling {

/// A service's replica autoscaler as data: a Kubernetes object (an HPA or a KEDA ScaledObject, at
/// most one), a predictive scaler, or both (the predictive scaler with the Kubernetes one as its
/// reactive floor). None of them: the replica count stays as set.
struct ReplicaAutoscalerSpec {
  std::optional<HpaSpec> hpa;
  std::optional<ScaledObjectSpec> keda;
  std::optional<PredictiveSpec> predictive;
  /// The kube-controller-manager's HPA flags, for the HPA and for the one a ScaledObject makes.
  HpaControllerOptions hpa_controller;

  bool empty() const { return !hpa && !keda && !predictive; }
};

/// The autoscaler `spec` describes, built afresh (each run has its own state); nullptr when it is
/// empty. Throws std::invalid_argument as the autoscalers' constructors do for invalid specs.
std::unique_ptr<ReplicaAutoscaler> make_replica_autoscaler(const ReplicaAutoscalerSpec& spec);

}  // namespace gpufleet::replica_autoscaling
