#include "inputs/sim/workload.h"

#include <utility>
#include <variant>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "inputs/sim/sim_options.h"
#include "model/node_pool.h"
#include "model/resources.h"

namespace gpufleet::sim {

Pod pod_request(const WorkloadSpec& spec) {
  Pod pod;
  pod.namespace_name = spec.namespace_name;
  pod.cpu_milli = spec.cpu_milli;
  pod.memory_bytes = spec.memory_bytes;
  pod.num_gpu = spec.num_gpu;
  pod.gpu_milli = spec.gpu_milli;
  pod.gpu_spec = spec.gpu_spec;
  pod.mig_requests = spec.mig_requests;
  pod.resource_claims = spec.resource_claims;
  pod.gpu_memory_share = spec.gpu_memory_share;
  pod.priority = spec.priority;
  return pod;
}

std::string claim_name_suffix(uint64_t counter) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  constexpr uint64_t kBase = sizeof(kAlphabet) - 1;
  std::string out(5, kAlphabet[0]);
  for (size_t i = out.size(); i-- > 0; counter /= kBase) out[i] = kAlphabet[counter % kBase];
  return out;
}

Pod make_pod(const WorkloadSpec& spec, int32_t index, const std::string& claim_suffix) {
  Pod pod = pod_request(spec);
  pod.name = fmt::format("{}-{}", spec.name, index);
  if (!claim_suffix.empty())
    for (PodResourceClaim& pc : pod.resource_claims)
      if (!pc.resource_claim_template_name.empty()) pc.generated_claim_name = dra_generated_claim_name(pod.name, pc.name, claim_suffix);
  pod.constraints.node_selector = spec.node_selector;
  pod.constraints.tolerations = spec.tolerations;
  NodeSelectorTerm term;
  if (!spec.pools.empty()) term.match_expressions.push_back({kPoolLabel, "In", spec.pools});
  if (spec.capacity == CapacityPreference::kOnDemand)
    term.match_expressions.push_back({kCapacityTypeLabel, "NotIn", {"spot"}});
  else if (spec.capacity == CapacityPreference::kSpot)
    term.match_expressions.push_back({kCapacityTypeLabel, "In", {"spot"}});
  if (!term.match_expressions.empty()) pod.constraints.required_node_affinity.push_back(std::move(term));
  return pod;
}

int32_t disruptions_allowed(const DisruptionBudget& budget, int32_t expected_pods, int32_t healthy_pods) {
  return pdb_status_of_counts(budget.min_available, budget.max_unavailable, expected_pods, healthy_pods).disruptions_allowed;
}

void validate_spec(const WorkloadSpec& s) {
  auto bad = [&](const std::string& what) { throw std::invalid_argument(fmt::format("{} {}: {}", s.kind == WorkloadKind::kJob ? "job" : "service", s.name, what)); };
  if (s.name.empty()) throw std::invalid_argument("workload item without a name");
  if (s.pods < 1) bad(fmt::format("pods {} is below 1", s.pods));
  if (s.cpu_milli < 0 || s.memory_bytes < 0) bad("negative CPU or memory request");
  if (s.num_gpu < 0 || s.num_gpu > kMaxGpusPerPod) bad(fmt::format("GPUs per pod {} outside [0, {}]", s.num_gpu, kMaxGpusPerPod));
  if (s.num_gpu == 0 && s.gpu_milli != 0) bad("gpu_milli without GPUs");
  if (s.num_gpu > 0 && (s.gpu_milli < 1 || s.gpu_milli > kGpuMilliPerGpu)) bad(fmt::format("gpu_milli {} outside [1, 1000]", s.gpu_milli));
  if (s.num_gpu > 1 && s.gpu_milli != kGpuMilliPerGpu) bad("a fraction of a GPU needs exactly one GPU");
  if (!s.mig_requests.empty() && s.num_gpu != 0) bad("MIG devices together with GPUs (nvidia.com/gpu)");
  if (s.mig_requests.size() > 1) bad(fmt::format("{} MIG profiles: a pod asks for devices of one profile", s.mig_requests.size()));
  for (const MigRequest& r : s.mig_requests) {
    if (!catalog_has_mig_profile(r.profile)) bad(fmt::format("unknown MIG profile '{}': no GPU model in the catalog has it", r.profile));
    if (r.count < 1 || r.count > kMaxMigDevicesPerPod)
      bad(fmt::format("MIG profile {} count {} outside [1, {}]", r.profile, r.count, kMaxMigDevicesPerPod));
  }
  if (!std::isfinite(s.arrival_s) || s.arrival_s < 0) bad(fmt::format("arrival {} s is negative", s.arrival_s));
  if (s.kind == WorkloadKind::kJob && (!std::isfinite(s.duration_s) || s.duration_s <= 0))
    bad(fmt::format("duration {} s is not positive", s.duration_s));
  if (!std::isfinite(s.checkpoint_interval_s) || s.checkpoint_interval_s < 0)
    bad(fmt::format("checkpoint interval {} s is negative", s.checkpoint_interval_s));
  if (!std::isfinite(s.checkpoint_cost_s) || s.checkpoint_cost_s < 0)
    bad(fmt::format("checkpoint cost {} s is negative", s.checkpoint_cost_s));
  if (const auto& b = s.disruption_budget) {
    if (b->min_available.has_value() == b->max_unavailable.has_value())
      bad("a disruption budget needs exactly one of minAvailable and maxUnavailable");
    const IntOrPercent v = b->min_available ? *b->min_available : *b->max_unavailable;
    if (v.value < 0 || (v.percent && v.value > 100)) bad(fmt::format("disruption budget value {}{} is out of range", v.value, v.percent ? "%" : ""));
  }
}

void validate_inference_service(const InferenceServiceSpec& spec, const std::vector<WorkloadSpec>& items) {
  auto fail = [&](const std::string& what) { fail_inference_service(spec, what); };
  auto check_item = [&](const std::string& name, const char* role) {
    bool found = false;
    for (const WorkloadSpec& item : items)
      if (item.name == name) {
        if (item.kind != WorkloadKind::kService) fail(fmt::format("{}'{}' is a job, not a service", role, name));
        if (item.num_gpu == 0 && item.mig_requests.empty()) fail(fmt::format("{}'{}': its replicas request no GPU", role, name));
        found = true;
      }
    if (!found) fail(fmt::format("{}no service '{}' in the workload", role, name));
  };
  if (!spec.disaggregation) check_item(spec.service, "");
  std::vector<const replica_autoscaling::ReplicaAutoscalerSpec*> autoscalers = {&spec.autoscaler};
  if (const std::optional<DisaggregationSpec>& d = spec.disaggregation) {
    if (!spec.autoscaler.empty()) fail("a disaggregated service's autoscalers are its roles'");
    for (const DisaggregatedRoleSpec* r : {&d->prefill, &d->decode}) {
      check_item(r->item, r == &d->prefill ? "prefill role: " : "decode role: ");
      if (r->tensor_parallel_size < 1) fail("a role's tensor_parallel_size must be >= 1");
      if (r->min_replicas < 0 || r->min_replicas > r->max_replicas)
        fail(fmt::format("role '{}': replica bounds [{}, {}] are not 0 <= min <= max", r->item, r->min_replicas, r->max_replicas));
      autoscalers.push_back(&r->autoscaler);
    }
    if (d->max_local_prefill_tokens < 0) fail("max_local_prefill_tokens must be >= 0");
    try {
      inference::kv_transfer_seconds(0, 1, d->prefill.tensor_parallel_size, d->decode.tensor_parallel_size, d->link);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
  if (std::holds_alternative<std::monostate>(spec.traffic)) fail("no traffic (a trace or a generator)");
  if (!(spec.scrape_interval_s >= kMinIntervalSeconds)) fail(fmt::format("scrape interval {:g} s is below the shortest interval of {:g} s", spec.scrape_interval_s, kMinIntervalSeconds));
  const inference::EngineArgs& e = spec.engine;
  if (e.model.empty()) fail("no model");
  if (e.tensor_parallel_size < 1) fail("tensor_parallel_size must be >= 1");
  if (!(e.gpu_memory_utilization > 0 && e.gpu_memory_utilization <= 1)) fail("gpu_memory_utilization must be in (0, 1]");
  if (e.max_num_seqs < 1) fail("max_num_seqs must be >= 1");
  if (e.max_num_batched_tokens < 0) fail("max_num_batched_tokens must be >= 0");
  if (e.max_model_len < 0) fail("max_model_len must be >= 0");
  if (e.block_size < 1) fail("block_size must be >= 1");
  const inference::ColdStartSpec& c = spec.cold_start;
  if (c.image_pull_s < 0 || c.engine_start_s < 0 || c.snapshot_restore_s < 0) fail("cold-start times must be >= 0");
  if (!(c.weight_load_bandwidth_gb_s > 0) || !(c.cached_weight_load_bandwidth_gb_s > 0))
    fail("weight load bandwidths must be > 0");
  if (spec.router.request_timeout_s < 0) fail("request timeout must be >= 0");
  if (spec.router.max_outstanding_per_replica < 0) fail("maxOutstandingPerReplica must be >= 0");
  if ((spec.slo.ttft_p99_s && !(*spec.slo.ttft_p99_s > 0)) || (spec.slo.tpot_p99_s && !(*spec.slo.tpot_p99_s > 0)))
    fail("SLO limits must be > 0");
  for (const replica_autoscaling::ReplicaAutoscalerSpec* spec_of : autoscalers)
    if (const std::unique_ptr<replica_autoscaling::ReplicaAutoscaler> autoscaler = make_replica_autoscaler(*spec_of)) {
      const std::vector<std::string>& exported = exported_serving_metrics();
      for (const std::string& m : autoscaler->metrics()) {
        bool ok = false;
        for (const std::string& x : exported) ok = ok || x == m;
        if (!ok)
          fail(fmt::format("the autoscaler reads metric '{}', which no simulated component exports (exported: {})", m,
                           fmt::join(exported, ", ")));
      }
    }
}

std::pair<int32_t, int32_t> resolve_fenceposts(const RollingUpdateStrategy& strategy, int32_t replicas) {
  const auto scaled = [&](IntOrPercent v, bool round_up) {
    if (!v.percent) return v.value;
    const int64_t x = static_cast<int64_t>(v.value) * replicas;
    return static_cast<int32_t>(round_up ? (x + 99) / 100 : x / 100);
  };
  const int32_t surge = scaled(strategy.max_surge, true);
  int32_t unavailable = scaled(strategy.max_unavailable, false);
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return {surge, unavailable};
}

void validate_rollouts_and_autoscalers(const Workload& w) {
  const auto service = [&](const std::string& name) -> const WorkloadSpec* {
    for (const WorkloadSpec& s : w.items)
      if (s.name == name && s.kind == WorkloadKind::kService) return &s;
    return nullptr;
  };
  for (const WorkloadSpec& s : w.items) {
    if (s.kind != WorkloadKind::kService) continue;
    for (const IntOrPercent& v : {s.rolling_update.max_surge, s.rolling_update.max_unavailable})
      if (v.value < 0 || (v.percent && v.value > 100))
        throw std::invalid_argument(fmt::format("service {}: rolling update value {}{} is out of range", s.name, v.value, v.percent ? "%" : ""));
    if (s.rolling_update.max_surge.value == 0 && s.rolling_update.max_unavailable.value == 0)
      throw std::invalid_argument(fmt::format("service {}: maxSurge and maxUnavailable cannot both be 0", s.name));
    if (!std::isfinite(s.min_ready_s) || s.min_ready_s < 0)
      throw std::invalid_argument(fmt::format("service {}: minReadySeconds {} is negative", s.name, s.min_ready_s));
  }
  for (const RolloutSpec& r : w.rollouts) {
    if (service(r.service) == nullptr) throw std::invalid_argument(fmt::format("rollout of '{}': not a service of the workload", r.service));
    if (!std::isfinite(r.at_s) || r.at_s < 0 || r.at_s > w.horizon_s)
      throw std::invalid_argument(fmt::format("rollout of '{}' at {} s: outside [0, {}]", r.service, r.at_s, w.horizon_s));
  }
  for (size_t i = 0; i < w.external_metrics.size(); ++i) {
    const ExternalMetricSeries& m = w.external_metrics[i];
    if (m.points.empty()) throw std::invalid_argument(fmt::format("external metric '{}' has no points", m.name));
    for (size_t k = 0; k < m.points.size(); ++k) {
      if (!std::isfinite(m.points[k].first) || !std::isfinite(m.points[k].second))
        throw std::invalid_argument(fmt::format("external metric '{}': point {} is not finite", m.name, k));
      if (k > 0 && m.points[k].first < m.points[k - 1].first)
        throw std::invalid_argument(fmt::format("external metric '{}': points out of time order", m.name));
    }
    for (size_t j = 0; j < i; ++j)
      if (w.external_metrics[j].name == m.name) throw std::invalid_argument(fmt::format("external metric '{}' is given twice", m.name));
  }
  for (size_t i = 0; i < w.service_autoscalers.size(); ++i) {
    const ServiceAutoscalerSpec& a = w.service_autoscalers[i];
    if (service(a.service) == nullptr) throw std::invalid_argument(fmt::format("autoscaler of '{}': not a service of the workload", a.service));
    for (const InferenceServiceSpec& inf : w.inference)
      if (inf.service == a.service)
        throw std::invalid_argument(fmt::format("service {}: an inference service's autoscaler goes in its inference block", a.service));
    for (size_t j = 0; j < i; ++j)
      if (w.service_autoscalers[j].service == a.service) throw std::invalid_argument(fmt::format("service {}: two autoscalers", a.service));
    if (a.autoscaler.hpa)
      for (const replica_autoscaling::MetricSpec& m : a.autoscaler.hpa->metrics)
        if (m.type != replica_autoscaling::MetricSourceType::kExternal && m.type != replica_autoscaling::MetricSourceType::kObject)
          throw std::invalid_argument(fmt::format("service {}: HPA metric '{}' is of type {}: a service without inference exports no "
                                                  "per-pod metrics (use External or Object)",
                                                  a.service, m.name, replica_autoscaling::metric_source_type_name(m.type)));
    const auto autoscaler = replica_autoscaling::make_replica_autoscaler(a.autoscaler);
    if (!autoscaler) throw std::invalid_argument(fmt::format("service {}: an empty autoscaler", a.service));
    for (const std::string& name : autoscaler->metrics()) {
      bool ok = false;
      for (const ExternalMetricSeries& m : w.external_metrics) ok = ok || m.name == name;
      if (!ok) throw std::invalid_argument(fmt::format("service {}: the autoscaler reads metric '{}', which is not an external metric of the workload", a.service, name));
    }
  }
}

}  // namespace gpufleet::sim
