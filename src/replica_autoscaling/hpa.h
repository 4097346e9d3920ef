// The HorizontalPodAutoscaler (`autoscaling/v2`) as the kube-controller-manager runs it: the spec
// with its API defaults, the replica calculation per metric, stabilization windows and scaling
// policies. Pure decisions on MetricSamples; the simulator and the live server do the I/O.
//
// Upstream: kubernetes/kubernetes pkg/apis/autoscaling/v2/defaults.go (API defaults),
// pkg/controller/podautoscaler/horizontal.go (reconcileAutoscaler, computeReplicasForMetrics,
// normalizeDesiredReplicas[WithBehaviors], stabilizeRecommendation[WithBehaviors],
// convertDesiredReplicasWithBehaviorRate, calculateScaleUpLimitWithScalingRules,
// calculateScaleDownLimitWithBehaviors, storeScaleEvent) and replica_calculator.go
// (calcPlainMetricReplicas, getUsageRatioReplicaCount, GetExternalPerPodMetricReplicas).
// Each function below names the upstream function it follows. docs/serving-autoscaling.md has the
// longer reasoning and the upstream rules this model leaves out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replica_autoscaling/replica_autoscaler.h"

namespace gpufleet::replica_autoscaling {

// ---------------------------------------------------------------------------------------------
// Spec (autoscaling/v2 HorizontalPodAutoscalerSpec)

/// MetricSpec.type. ContainerResource is read like Resource (the sample is the container's).
enum class MetricSourceType { kResource, kContainerResource, kPods, kObject, kExternal };
/// MetricTarget.type: Utilization (percent of the pods' request, Resource metrics only),
/// AverageValue (per pod), Value (the whole metric).
enum class MetricTargetType { kUtilization, kAverageValue, kValue };

const char* metric_source_type_name(MetricSourceType t);  ///< "Resource", "Pods", ...
const char* metric_target_type_name(MetricTargetType t);  ///< "Utilization", "AverageValue", "Value"

/// One entry of spec.metrics, reduced to what a MetricSample carries: the metric's name (resource
/// name for Resource, metric.name otherwise; the name the snapshot is keyed by), the target type and
/// the target (averageUtilization in percent, averageValue, or value). Selectors and describedObject
/// are not modelled: the sample is already the service's.
struct MetricSpec {
  MetricSourceType type = MetricSourceType::kResource;
  std::string name;
  MetricTargetType target_type = MetricTargetType::kUtilization;
  double target = 0;  ///< > 0
};

/// HPAScalingPolicy.type.
enum class ScalingPolicyType { kPods, kPercent };
/// HPAScalingPolicy: at most `value` pods (or percent of the replicas at the period's start) added
/// or removed within any `period_seconds` (1..1800).
struct ScalingPolicy {
  ScalingPolicyType type = ScalingPolicyType::kPods;
  int32_t value = 0;
  int32_t period_seconds = 0;
};
/// HPAScalingRules.selectPolicy: Max (the policy allowing the largest change; default), Min, Disabled.
enum class SelectPolicy { kMax, kMin, kDisabled };

/// HPAScalingRules. Unset fields (nullopt) take the direction's defaults (defaults.go); a set
/// `policies` replaces the default list as a whole (copyHPAScalingRules).
struct ScalingRules {
  std::optional<int32_t> stabilization_window_seconds;  ///< 0..3600
  std::optional<SelectPolicy> select_policy;
  std::optional<std::vector<ScalingPolicy>> policies;
  /// behavior.scaleUp/scaleDown.tolerance (KEP-4951, alpha in 1.33 behind HPAConfigurableTolerance);
  /// unset = the controller's --horizontal-pod-autoscaler-tolerance.
  std::optional<double> tolerance;
};

/// HorizontalPodAutoscalerBehavior. An HPA without `behavior` (nullopt in HpaSpec) runs the legacy
/// normalization (normalizeDesiredReplicas), not these rules with defaults.
struct HpaBehavior {
  std::optional<ScalingRules> scale_up;
  std::optional<ScalingRules> scale_down;
};

/// HorizontalPodAutoscalerSpec plus the object's name.
struct HpaSpec {
  std::string name;
  std::string namespace_name = "default";
  std::string scale_target_kind = "Deployment";
  std::string scale_target_name;
  std::optional<int32_t> min_replicas;  ///< default 1 (0 needs the HPAScaleToZero feature gate)
  int32_t max_replicas = 0;             ///< required, >= min_replicas
  std::vector<MetricSpec> metrics;      ///< empty = Resource cpu, Utilization 80
  std::optional<HpaBehavior> behavior;
};

/// defaults.go SetDefaults_HorizontalPodAutoscaler: minReplicas 1; no metrics = cpu averageUtilization
/// 80 (autoscaling.DefaultCPUUtilization); when behavior is set, each direction's unset fields:
/// scaleUp {stabilizationWindowSeconds 0, selectPolicy Max, policies [Pods 4 / 15 s, Percent 100 /
/// 15 s]}, scaleDown {selectPolicy Max, policies [Percent 100 / 15 s]}, its window left unset (the
/// controller fills it from --horizontal-pod-autoscaler-downscale-stabilization).
HpaSpec with_api_defaults(HpaSpec spec);

/// The kube-controller-manager flags the HPA controller reads.
struct HpaControllerOptions {
  double sync_period_s = 15;                 ///< --horizontal-pod-autoscaler-sync-period
  double tolerance = 0.1;                    ///< --horizontal-pod-autoscaler-tolerance
  double downscale_stabilization_s = 300;    ///< --horizontal-pod-autoscaler-downscale-stabilization
  double first_sync_s = 0;                   ///< when the controller first reconciles the HPA (its creation)
  /// true: a per-pod External/Object metric within tolerance keeps status.replicas, as the
  /// controller did before kubernetes/kubernetes pull request 141134 (per_pod_total_replicas);
  /// false (default): spec.replicas.
  bool keep_status_within_tolerance = false;
};

// ---------------------------------------------------------------------------------------------
// The arithmetic, as small functions (each follows the named upstream function).

/// The band within which a usage ratio causes no scaling: [1 - scale_down, 1 + scale_up]
/// (replica_calculator.go Tolerances.isWithin; one flag value both ways before KEP-4951).
struct Tolerances {
  double scale_down = 0.1;
  double scale_up = 0.1;
  bool within(double usage_ratio) const { return (1.0 - scale_down) <= usage_ratio && usage_ratio <= (1.0 + scale_up); }
};

/// The core rule, ceil(pods x usage_ratio) (replica_calculator.go; the doc's
/// desired = ceil(current x currentMetricValue / desiredMetricValue)).
int32_t ceil_replicas(double usage_ratio, int32_t pods);

/// calcPlainMetricReplicas for a per-pod metric (Pods AverageValue, Resource Utilization or
/// AverageValue): `reporting_pods` pods reported `sum` together (usage per pod = sum / reporting_pods,
/// ratio = usage / target_per_pod); `missing_pods` ready pods reported nothing. Without missing pods:
/// `current` within tolerance, else ceil(ratio x reporting_pods). With missing pods: they count as
/// using exactly the target on a scale-down (ratio < 1) and 0 on a scale-up; the ratio is
/// recomputed over all pods; no change when it is within tolerance or flips direction, or when the
/// new count would move against the ratio. nullopt when no pod reported ("did not receive metrics").
std::optional<int32_t> plain_metric_replicas(int32_t current, double sum, int32_t reporting_pods,
                                             int32_t missing_pods, double target_per_pod, const Tolerances& tol);

/// getUsageRatioReplicaCount (Object and External metrics with a Value target, ratio = value / target):
/// with current > 0, `current` when within tolerance, else ceil(ratio x ready_pods); with current 0,
/// ceil(ratio).
int32_t usage_ratio_replicas(int32_t current, double usage_ratio, int32_t ready_pods, const Tolerances& tol);

/// GetExternalPerPodMetricReplicas / GetObjectPerPodMetricReplicas (AverageValue target on an
/// External or Object metric): ratio = total / (target x status_replicas); within tolerance the
/// count stays `spec_replicas` (or `status_replicas` with keep_status_within_tolerance, the
/// controller before kubernetes/kubernetes pull request 141134: during a rollout with surge it wrote
/// the surge pods into spec.replicas and drifted up), else ceil(total / target_per_pod).
int32_t per_pod_total_replicas(int32_t spec_replicas, int32_t status_replicas, double total, double target_per_pod,
                               const Tolerances& tol, bool keep_status_within_tolerance = false);

/// computeReplicasForMetric for one MetricSpec on its sample, on the target's `scale`: Resource,
/// Pods and Value targets start from spec.replicas, the per-pod External/Object targets divide by
/// status.replicas (per_pod_total_replicas). Pods not ready are Pending to the HPA (ignored: not
/// counted, not missing); ready pods beyond sample.pods are missing. nullopt = an invalid metric
/// (no sample, no pod reported, target <= 0, or Utilization on a non-Resource metric).
std::optional<int32_t> metric_replicas(const MetricSpec& m, const std::optional<MetricSample>& sample,
                                       const ScaleStatus& scale, const Tolerances& tol,
                                       bool keep_status_within_tolerance = false);

/// A recommendation the controller keeps (horizontal.go timestampedRecommendation).
struct TimedRecommendation {
  int32_t replicas = 0;
  double t = 0;
};
/// A scale change the controller made (timestampedScaleEvent): replica_change is the number of pods
/// added (scale-up list) or removed (scale-down list), always positive.
struct ScaleEvent {
  int32_t replica_change = 0;
  double t = 0;
};

/// getReplicasChangePerPeriod: the sum of replica_change over events strictly after now - period_s.
int32_t replicas_changed_in_period(const std::vector<ScaleEvent>& events, double period_s, double now);

/// calculateScaleUpLimitWithScalingRules: per policy, period start = current - added + removed
/// within its period; Pods -> start + value, Percent -> ceil(start x (1 + value/100)); the largest
/// (select Max) or smallest (Min) of these; `current` when Disabled. `rules` must have select_policy
/// and policies set (with_api_defaults).
int32_t scale_up_limit(int32_t current, const std::vector<ScaleEvent>& up, const std::vector<ScaleEvent>& down,
                       const ScalingRules& rules, double now);
/// calculateScaleDownLimitWithBehaviors: per policy, period start as above; Pods -> start - value,
/// Percent -> trunc(start x (1 - value/100)); the smallest (Max: the largest change) or largest (Min)
/// of these; `current` when Disabled.
int32_t scale_down_limit(int32_t current, const std::vector<ScaleEvent>& up, const std::vector<ScaleEvent>& down,
                         const ScalingRules& rules, double now);

/// stabilizeRecommendationWithBehaviors: up = min of `desired` and the recommendations strictly
/// after now - up_window_s, down = max of `desired` and those strictly after now - down_window_s;
/// the result is `current` brought into [up, down] (the scale-up window can only hold replicas down,
/// the scale-down window only hold them up). Records `desired` in `history` (reusing an entry older
/// than both windows).
int32_t stabilize_with_behaviors(std::vector<TimedRecommendation>& history, double now, int32_t current,
                                 int32_t desired, double up_window_s, double down_window_s);

/// stabilizeRecommendation (no behavior): the max of `desired` and the recommendations not before
/// now - window_s; records `desired` (reusing an entry older than the window).
int32_t stabilize_legacy(std::vector<TimedRecommendation>& history, double now, int32_t desired, double window_s);

/// calculateScaleUpLimit (no behavior): max(2 x current, 4).
int32_t legacy_scale_up_limit(int32_t current);

// ---------------------------------------------------------------------------------------------

/// One HPA object as the controller reconciles it every sync period.
///
/// evaluate(t, scale, metrics) is reconcileAutoscaler, with current = scale.spec_replicas: records `current` as the first
/// recommendation; current == 0 with minReplicas > 0 -> 0 (scaling disabled); current > max -> max;
/// current < min -> min; else the max over metrics (all invalid -> current; some invalid and the max
/// below current -> current, no scale-down on partial data), normalized with behavior (stabilization,
/// then rate policies, then [min, max]) or, without behavior, with the legacy rules. It assumes the
/// caller applies the returned count before the next call (the scale events are recorded from it).
class HpaAutoscaler : public ReplicaAutoscaler {
 public:
  /// `spec` gets with_api_defaults(); a scaleDown window left unset takes options.downscale_stabilization_s.
  /// Throws std::invalid_argument when max_replicas < max(min_replicas, 1) or a target is not positive.
  explicit HpaAutoscaler(HpaSpec spec, HpaControllerOptions options = {});

  std::vector<std::string> metrics() const override;
  double first_evaluation_s() const override { return options_.first_sync_s; }
  double next_evaluation_s(double t) const override;
  using ReplicaAutoscaler::evaluate;
  int32_t evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) override;

  const HpaSpec& spec() const { return spec_; }
  int32_t min_replicas() const { return *spec_.min_replicas; }
  /// The metric-based recommendation of the last evaluation (before stabilization and limits); nullopt
  /// when the last evaluation computed none (disabled, out of bounds, all metrics invalid).
  std::optional<int32_t> last_recommendation() const { return last_recommendation_; }

 private:
  int32_t normalize_with_behaviors(double t, int32_t current, int32_t desired);
  int32_t normalize_legacy(double t, int32_t current, int32_t desired);

  HpaSpec spec_;
  HpaControllerOptions options_;
  Tolerances up_down_tol_;
  std::vector<TimedRecommendation> recommendations_;
  bool recorded_initial_ = false;
  std::vector<ScaleEvent> scale_up_events_;
  std::vector<ScaleEvent> scale_down_events_;
  std::optional<int32_t> last_recommendation_;
};

/// The next time after `t` on the grid first + k x period (k >= 0 integer): the evaluation grid of a
/// periodic controller. A `t` within 1e-6 s of a grid point counts as that point.
double next_on_grid(double t, double first, double period);

}  // namespace gpufleet::replica_autoscaling
