// A KEDA ScaledObject (keda.sh/v1alpha1) with Prometheus triggers: KEDA's own 0 <-> 1 (activation)
// decisions at each pollingInterval, and the HorizontalPodAutoscaler it creates for 1 <-> N at the
// HPA controller's sync period.
//
// Upstream: kedacore/keda pkg/scaling/executor/scale_scaledobjects.go (RequestScale,
// scaleToZeroOrIdle, scaleFromZeroOrIdle, getIdleOrMinimumReplicaCount), apis/keda/v1alpha1
// (GetHPAMinReplicas / GetHPAMaxReplicas), pkg/scalers/prometheus_scaler.go (activation: value >
// activationThreshold; ignoreNullValues), and keda-docs content/docs/2.x/reference/
// scaledobject-spec.md, concepts/scaling-deployments.md ("Activating and Scaling thresholds"),
// scalers/prometheus.md for the defaults.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replica_autoscaling/hpa.h"
#include "replica_autoscaling/replica_autoscaler.h"

namespace gpufleet::replica_autoscaling {

/// How the trigger's Prometheus query aggregates the metric over the service's pods. The simulator
/// represents a query by the metric it reads and this aggregation: kSum = sum(metric), the sample's
/// sum; kAverage = avg(metric), sum / pods (0 when no pod reported).
enum class QueryAggregation { kSum, kAverage };

/// triggers[].metricType: AverageValue (default: the HPA target is threshold per pod) or Value (the
/// HPA target is the threshold for the whole metric). Utilization is for cpu/memory triggers only.
enum class KedaMetricType { kAverageValue, kValue };

/// A `prometheus` trigger.
struct PrometheusTrigger {
  std::string name;                 ///< triggers[].name (optional)
  std::string server_address;       ///< metadata.serverAddress (kept, not used)
  std::string query;                ///< metadata.query, as written
  std::string metric;               ///< the metric the query reads, e.g. "vllm:num_requests_waiting"
  QueryAggregation aggregation = QueryAggregation::kSum;
  double threshold = 0;             ///< metadata.threshold, > 0
  double activation_threshold = 0;  ///< metadata.activationThreshold (default 0)
  KedaMetricType metric_type = KedaMetricType::kAverageValue;
  /// metadata.ignoreNullValues (default true): an empty result is 0; false makes it a scaler error.
  bool ignore_null_values = true;
};

/// ScaledObjectSpec (the fields that shape decisions) plus the object's name.
struct ScaledObjectSpec {
  std::string name;
  std::string namespace_name = "default";
  std::string scale_target_kind = "Deployment";
  std::string scale_target_name;
  int32_t polling_interval_s = 30;        ///< pollingInterval
  int32_t cooldown_period_s = 300;        ///< cooldownPeriod: only for the step to 0 (or idle)
  int32_t initial_cooldown_period_s = 0;  ///< initialCooldownPeriod, from the object's creation (t = 0)
  int32_t min_replica_count = 0;          ///< minReplicaCount
  int32_t max_replica_count = 100;        ///< maxReplicaCount
  std::optional<int32_t> idle_replica_count;  ///< idleReplicaCount (only 0 works; < minReplicaCount)
  std::string hpa_name;                   ///< advanced.horizontalPodAutoscalerConfig.name; "" = keda-hpa-<name>
  std::optional<HpaBehavior> hpa_behavior;  ///< advanced.horizontalPodAutoscalerConfig.behavior
  std::vector<PrometheusTrigger> triggers;
};

/// The value a trigger reads from a snapshot: the aggregation of the sample of trigger.metric;
/// nullopt when the metric has no sample (an empty query result).
std::optional<double> trigger_value(const PrometheusTrigger& trigger, const MetricSnapshot& metrics);

/// The prometheus scaler's activation: value > activation_threshold (strictly). An empty result is
/// 0 with ignore_null_values (so inactive unless the threshold is negative).
bool trigger_active(const PrometheusTrigger& trigger, std::optional<double> value);

/// The name of the External metric the KEDA HPA reads for trigger i: "s<i>-prometheus" (KEDA's
/// GenerateMetricNameWithIndex(triggerIndex, "prometheus") in pkg/scalers/prometheus_scaler.go
/// GetMetricSpecForScaling; releases before 2.10 named it "prometheus-<metricName>").
std::string keda_external_metric_name(size_t trigger_index);

/// The HorizontalPodAutoscaler KEDA creates: name keda-hpa-<so> unless set; minReplicas =
/// minReplicaCount when > 0, else 1; maxReplicas = maxReplicaCount; one External metric per trigger
/// (keda_external_metric_name) with target AverageValue or Value = threshold; behavior copied
/// (nullopt = none, the HPA's legacy normalization).
HpaSpec keda_hpa_spec(const ScaledObjectSpec& so);

/// A ScaledObject and its HPA as one autoscaler. Evaluation times: KEDA polls at 0, pollingInterval,
/// 2 x pollingInterval, ...; the HPA syncs on its own grid (HpaControllerOptions). At a poll (RequestScale):
///  - any trigger active: current 0 (or below min with idleReplicaCount) -> minReplicaCount or 1,
///    lastActiveTime = t; otherwise lastActiveTime = t;
///  - none active: current above idleReplicaCount, or current > 0 with minReplicaCount 0 -> idle (or
///    min) count once lastActiveTime + cooldownPeriod < t (no lastActiveTime: once creation +
///    initialCooldownPeriod < t); current < minReplicaCount (no idle) -> minReplicaCount.
/// A poll that changes the count decides that evaluation; otherwise an HPA sync at the same time runs
/// the HPA on the triggers' values (the HPA does nothing while the target is at 0).
class KedaAutoscaler : public ReplicaAutoscaler {
 public:
  /// Throws std::invalid_argument on no triggers, a threshold <= 0, polling interval <= 0, or
  /// maxReplicaCount below minReplicaCount.
  explicit KedaAutoscaler(ScaledObjectSpec spec, HpaControllerOptions hpa_options = {});

  std::vector<std::string> metrics() const override;
  double first_evaluation_s() const override;
  double next_evaluation_s(double t) const override;
  using ReplicaAutoscaler::evaluate;
  int32_t evaluate(double t, const ScaleStatus& scale, const MetricSnapshot& metrics) override;

  const ScaledObjectSpec& spec() const { return spec_; }
  const HpaAutoscaler& hpa() const { return *hpa_; }
  /// status.lastActiveTime; nullopt until a trigger was active.
  std::optional<double> last_active_s() const { return last_active_s_; }
  /// Whether any trigger was active at the last poll.
  bool active() const { return active_; }

 private:
  bool is_poll(double t) const;
  bool is_sync(double t) const;
  std::optional<int32_t> poll(double t, int32_t current, const MetricSnapshot& metrics);

  ScaledObjectSpec spec_;
  HpaControllerOptions hpa_options_;
  std::unique_ptr<HpaAutoscaler> hpa_;
  std::optional<double> last_active_s_;
  bool active_ = false;
};

}  // namespace gpufleet::replica_autoscaling
