#include "readers/sim/workload_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "readers/serving/inference_catalog.h"
#include "readers/serving/k8s_serving.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/serving/sim_inference.h"
#include "readers/formats/document_kinds.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "model/gpu_catalog.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::int_or_percent;
using detail::kSimApiVersion;
using detail::seconds;
using detail::Source;

constexpr const char* kKind = "Workload";
constexpr int64_t kMaxItemPods = sim::kMaxReplicasPerItem;  // pods of a job, replicas of a service
constexpr int64_t kInt32Max = 2147483647;

sim::FieldOrigin origin_of(const Field& f) {
  const auto [line, column] = f.position();
  return {f.source().file, line, column, f.path()};
}

double positive_seconds(const Field& f) {
  const double v = seconds(f);
  if (v <= 0) f.fail(fmt::format("{} must be positive", f.scalar()));
  return v;
}

enum class Item { kJob, kService, kTemplate, kScaledJobTemplate };

// mig: <profile> (one device per pod) or {<profile>: count} (nvidia.com/mig-<profile>: count).
std::vector<MigRequest> parse_mig(const Field& mig, int32_t num_gpu) {
  if (num_gpu > 0)
    mig.fail("mig and gpus cannot both be set: a pod asks for MIG devices (nvidia.com/mig-<profile>) or for GPUs "
             "(nvidia.com/gpu)");
  auto unknown = [](const std::string& profile) {
    return fmt::format("unknown MIG profile '{}': no GPU model in the catalog has it", profile);
  };
  std::vector<MigRequest> out;
  if (mig.is_scalar()) {
    const std::string profile = mig.required_str();
    if (!catalog_has_mig_profile(profile)) mig.fail(unknown(profile));
    out.push_back({profile, 1});
    return out;
  }
  if (!mig.is_map()) mig.fail(fmt::format("expected a MIG profile or a mapping of profile to count, got {}", mig.type()));
  mig.each_entry([&](const std::string& profile, const Field& count) {
    if (!catalog_has_mig_profile(profile)) mig.fail_key(profile, unknown(profile));
    out.push_back({profile, static_cast<int32_t>(count.integer(1, sim::kMaxMigDevicesPerPod))});
  });
  if (out.size() != 1)
    mig.fail(fmt::format("{} MIG profiles: a pod asks for devices of one profile (a container gets access to one "
                         "device type)",
                         out.size()));
  return out;
}

// resourceClaims: the pod's spec.resourceClaims (core/v1 PodResourceClaim), each a name and exactly one
// of resourceClaimTemplateName and resourceClaimName; the objects they name are in the pools file.
void parse_resource_claims(const Field& list, sim::WorkloadSpec& s) {
  if (!list.present()) return;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field c = list.at(i);
    c.require_map();
    c.only_keys({"name", "resourceClaimTemplateName", "resourceClaimName"});
    PodResourceClaim pc;
    pc.name = c["name"].required_str();
    pc.resource_claim_template_name = c["resourceClaimTemplateName"].str();
    pc.resource_claim_name = c["resourceClaimName"].str();
    if (pc.resource_claim_template_name.empty() == pc.resource_claim_name.empty())
      c.fail("set exactly one of resourceClaimTemplateName and resourceClaimName");
    for (const PodResourceClaim& other : s.resource_claims)
      if (other.name == pc.name) c["name"].fail(fmt::format("pod claim '{}' given twice", pc.name));
    s.resource_claims.push_back(std::move(pc));
  }
}

// Where item `f` (of namespace `ns`) names each claim or template, for check_dra_claim_references.
void collect_claim_references(const Field& f, const std::string& ns, std::vector<DraClaimReference>& out) {
  const Field list = f["resourceClaims"];
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field c = list.at(i);
    const bool claim = c["resourceClaimName"].present();
    const Field named = claim ? c["resourceClaimName"] : c["resourceClaimTemplateName"];
    const auto [line, column] = named.position();
    out.push_back({ns, claim ? named.str() : "", claim ? "" : named.str(), SourcePosition{named.source().file, line, column, named.path()}});
  }
}

// gpuMemory: memory-based GPU sharing (model/gpu_memory_share.h), the request HAMi's resources or KAI's
// annotations make: {scheduler: hami, gpus: N, memoryMib: M | memoryPercentage: P, coresPercentage: C}
// or {scheduler: kai, gpus: N, memoryMib: M | fraction: F}. Not with gpus, gpuMilli or mig.
void parse_gpu_memory(const Field& g, sim::WorkloadSpec& s) {
  if (!g.present()) return;
  g.require_map();
  const std::string scheduler = g["scheduler"].required_str();
  GpuMemoryShare share;
  if (scheduler == "hami") share.scheduler = GpuMemoryScheduler::kHami;
  else if (scheduler == "kai") share.scheduler = GpuMemoryScheduler::kKai;
  else g["scheduler"].fail(fmt::format("unknown scheduler '{}' (expected hami, kai)", scheduler));
  const bool hami = share.scheduler == GpuMemoryScheduler::kHami;
  if (hami) g.only_keys({"scheduler", "gpus", "memoryMib", "memoryPercentage", "coresPercentage"});
  else g.only_keys({"scheduler", "gpus", "memoryMib", "fraction"});
  if (s.num_gpu > 0 || !s.mig_requests.empty()) g.fail("gpuMemory asks for its own GPUs: not with gpus, gpuMilli or mig");
  if (const Field n = g["gpus"]; n.present()) share.cards = static_cast<int32_t>(n.integer(1, kMaxGpusPerPod));
  const Field mem = g["memoryMib"];
  if (mem.present()) share.memory_mib = mem.integer(1, int64_t{1} << 40);
  if (hami) {
    const Field pct = g["memoryPercentage"];
    if (pct.present()) {
      if (mem.present()) pct.fail("give memoryMib or memoryPercentage, not both");
      share.memory_percentage = static_cast<int32_t>(pct.integer(1, 100));
    }
    // HAMi's default: the whole memory (no gpumem, no percentage) means the card exclusively, gpucores 100.
    const Field cores = g["coresPercentage"];
    share.cores_percentage = cores.present() ? static_cast<int32_t>(cores.integer(0, 100)) : (!mem.present() && !pct.present() ? 100 : 0);
  } else {
    const Field fraction = g["fraction"];
    if (fraction.present() == mem.present()) g.fail("a KAI request needs exactly one of memoryMib and fraction");
    if (fraction.present()) {
      share.fraction = fraction.number();
      if (!(share.fraction > 0 && share.fraction < 1)) fraction.fail("fraction must be above 0 and below 1");
    }
  }
  s.gpu_memory_share = share;
}

// pools: [name, ...], each one of `pool_names` (or any name when that is [kAnyPoolName]).
std::vector<std::string> parse_pool_list(const Field& pools, const std::vector<std::string>& pool_names) {
  std::vector<std::string> out;
  for (size_t i = 0, n = pools.size(); i < n; ++i) {
    const Field p = pools.at(i);
    const std::string name = p.required_str();
    const bool any = pool_names.size() == 1 && pool_names.front() == kAnyPoolName;
    if (!any && std::find(pool_names.begin(), pool_names.end(), name) == pool_names.end()) {
      std::string known;
      for (const std::string& k : pool_names) known += known.empty() ? k : ", " + k;
      p.fail(fmt::format("unknown pool '{}' (pools: {})", name, known.empty() ? "none" : known));
    }
    out.push_back(name);
  }
  return out;
}

// The pods of a disaggregated service's role (inference.disaggregation.prefill / decode, parsed by
// parse_disaggregation): the service item's fields with the role's replicas, gpus, pools and
// nodeSelector.
sim::WorkloadSpec role_item(const sim::WorkloadSpec& service, const sim::DisaggregatedRoleSpec& role, const Field& r,
                            const std::vector<std::string>& pool_names) {
  sim::WorkloadSpec s = service;
  s.name = role.item;
  s.num_gpu = role.tensor_parallel_size;
  s.gpu_milli = kGpuMilliPerGpu;
  s.mig_requests.clear();
  s.pods = role.replicas;
  s.origin = origin_of(r["replicas"].present() ? r["replicas"] : r);
  if (const Field p = r["pools"]; p.present()) s.pools = parse_pool_list(p, pool_names);
  if (const Field ns = r["nodeSelector"]; ns.present()) {
    s.node_selector.clear();
    ns.each_entry([&](const std::string& k, const Field& v) { s.node_selector.emplace_back(k, v.str()); });
  }
  try {
    sim::validate_spec(s);
  } catch (const std::invalid_argument& e) {
    r.fail(e.what());
  }
  return s;
}

// The fields jobs, services and generator templates share.
void parse_common(const Field& f, sim::WorkloadSpec& s, const std::vector<std::string>& pool_names) {
  s.namespace_name = f["namespace"].str("default");
  if (s.namespace_name.empty()) f["namespace"].fail("must not be empty");
  const Field gpus = f["gpus"];
  s.num_gpu = static_cast<int32_t>(gpus.present() ? gpus.integer(0, kMaxGpusPerPod) : 0);
  const Field milli = f["gpuMilli"];
  if (milli.present()) {
    if (s.num_gpu == 0) milli.fail("gpuMilli needs gpus >= 1");
    s.gpu_milli = static_cast<int32_t>(milli.integer(1, kGpuMilliPerGpu));
    if (s.gpu_milli < kGpuMilliPerGpu && s.num_gpu != 1) milli.fail("a fraction of a GPU needs gpus: 1");
  } else {
    s.gpu_milli = s.num_gpu > 0 ? kGpuMilliPerGpu : 0;
  }
  if (const Field mig = f["mig"]; mig.present()) s.mig_requests = parse_mig(mig, s.num_gpu);
  if (const Field cpu = f["cpu"]; cpu.present()) {
    try {
      s.cpu_milli = cpu.quantity().milli();
    } catch (const std::invalid_argument& e) {
      cpu.fail(e.what());
    }
  }
  if (const Field mem = f["memory"]; mem.present()) s.memory_bytes = mem.quantity().value();
  if (const Field p = f["priority"]; p.present()) s.priority = static_cast<int32_t>(p.integer(-2147483648LL, 1000000000LL));
  if (const Field c = f["capacity"]; c.present()) {
    const std::string v = c.scalar();
    if (v == "on-demand") s.capacity = sim::CapacityPreference::kOnDemand;
    else if (v == "spot-ok") s.capacity = sim::CapacityPreference::kSpotOk;
    else if (v == "spot") s.capacity = sim::CapacityPreference::kSpot;
    else c.fail(fmt::format("unknown capacity preference '{}' (expected on-demand, spot-ok, spot)", v));
  }
  s.pools = parse_pool_list(f["pools"], pool_names);
  f["nodeSelector"].each_entry([&](const std::string& k, const Field& v) { s.node_selector.emplace_back(k, v.str()); });
  parse_resource_claims(f["resourceClaims"], s);
  parse_gpu_memory(f["gpuMemory"], s);
  const Field tolerations = f["tolerations"];
  for (size_t i = 0, n = tolerations.size(); i < n; ++i) {
    const Field t = tolerations.at(i);
    t.require_map();
    t.only_keys({"key", "operator", "value", "effect"});
    Toleration tol;
    tol.key = t["key"].str();
    tol.operator_ = t["operator"].str("Equal");
    if (tol.operator_ != "Equal" && tol.operator_ != "Exists")
      t["operator"].fail(fmt::format("unknown operator '{}' (expected Equal, Exists)", tol.operator_));
    tol.value = t["value"].str();
    tol.effect = t["effect"].str();
    if (!tol.effect.empty() && tol.effect != "NoSchedule" && tol.effect != "PreferNoSchedule" && tol.effect != "NoExecute")
      t["effect"].fail(fmt::format("unknown effect '{}' (expected NoSchedule, PreferNoSchedule, NoExecute)", tol.effect));
    s.tolerations.push_back(std::move(tol));
  }
}

// disruptionBudget: {minAvailable: N | "P%"} or {maxUnavailable: N | "P%"}, exactly one.
sim::DisruptionBudget parse_budget(const Field& b) {
  b.require_map();
  b.only_keys({"minAvailable", "maxUnavailable"});
  const Field min = b["minAvailable"], max = b["maxUnavailable"];
  if (min.present() && max.present()) max.fail("minAvailable and maxUnavailable cannot both be set");
  if (!min.present() && !max.present()) b.fail("one of minAvailable or maxUnavailable is required");
  sim::DisruptionBudget budget;
  // A count is bounded like an item's pods (at most 100000): a larger one cannot mean anything.
  if (min.present()) budget.min_available = int_or_percent(min, kMaxItemPods);
  if (max.present()) budget.max_unavailable = int_or_percent(max, kMaxItemPods);
  return budget;
}

sim::WorkloadSpec parse_item(const Field& f, Item kind, const std::vector<std::string>& pool_names) {
  f.require_map();
  static const std::initializer_list<const char*> job_keys = {
      "name", "namespace", "arrivalSeconds", "pods", "gpus", "gpuMilli", "mig", "cpu", "memory", "durationSeconds",
      "checkpointIntervalSeconds", "checkpointCostSeconds", "checkpointOnNotice", "priority", "capacity", "pools", "nodeSelector", "tolerations", "disruptionBudget", "doNotDisrupt",
      "queueName", "topology", "resourceClaims", "gpuMemory"};
  static const std::initializer_list<const char*> service_keys = {
      "name", "namespace", "startSeconds", "replicas", "gpus", "gpuMilli", "mig", "cpu", "memory", "priority",
      "capacity", "pools", "nodeSelector", "tolerations", "disruptionBudget", "doNotDisrupt", "inference",
      "minReadySeconds", "strategy", "autoscaler", "resourceClaims", "gpuMemory"};
  static const std::initializer_list<const char*> template_keys = {
      "weight", "namespace", "pods", "gpus", "gpuMilli", "mig", "cpu", "memory", "checkpointIntervalSeconds",
      "checkpointCostSeconds", "checkpointOnNotice", "priority", "capacity", "pools", "nodeSelector", "tolerations", "disruptionBudget", "doNotDisrupt", "queueName", "topology"};
  // A ScaledJob's jobTargetRef: a job without name, namespace (the ScaledJob's), arrival, queue or
  // checkpoints.
  static const std::initializer_list<const char*> scaled_job_keys = {
      "pods", "gpus", "gpuMilli", "mig", "cpu", "memory", "durationSeconds", "priority", "capacity", "pools", "nodeSelector",
      "tolerations", "disruptionBudget", "doNotDisrupt", "topology"};
  f.only_keys(kind == Item::kJob ? job_keys : kind == Item::kService ? service_keys : kind == Item::kTemplate ? template_keys : scaled_job_keys);
  sim::WorkloadSpec s;
  s.kind = kind == Item::kService ? sim::WorkloadKind::kService : sim::WorkloadKind::kJob;
  if (kind == Item::kJob || kind == Item::kService) s.name = f["name"].required_str();
  parse_common(f, s, pool_names);
  if (const Field b = f["disruptionBudget"]; b.present()) s.disruption_budget = parse_budget(b);
  s.do_not_disrupt = f["doNotDisrupt"].boolean(false);
  if (kind != Item::kService) {
    s.queue_name = f["queueName"].str();
    if (const Field t = f["topology"]; t.present()) {
      t.require_map();
      t.only_keys({"required", "preferred"});
      const Field required = t["required"], preferred = t["preferred"];
      if (required.present() == preferred.present()) t.fail("exactly one of required and preferred is needed");
      s.topology.mode = required.present() ? queue::TopologyRequest::Mode::kRequired : queue::TopologyRequest::Mode::kPreferred;
      s.topology.level = (required.present() ? required : preferred).required_str();
    }
  }
  const Field count = f[kind == Item::kService ? "replicas" : "pods"];
  s.origin = origin_of(count.present() ? count : f);
  if (kind == Item::kService) {
    s.pods = static_cast<int32_t>(f["replicas"].present() ? f["replicas"].integer(1, kMaxItemPods) : 1);
    if (const Field a = f["startSeconds"]; a.present()) s.arrival_s = seconds(a);
    if (const Field m = f["minReadySeconds"]; m.present()) s.min_ready_s = static_cast<double>(m.integer(0, kInt32Max));
    if (const Field st = f["strategy"]; st.present()) s.rolling_update = read_deployment_strategy(st, kMaxItemPods);
  } else {
    s.pods = static_cast<int32_t>(f["pods"].present() ? f["pods"].integer(1, kMaxItemPods) : 1);
    if (kind == Item::kJob || kind == Item::kScaledJobTemplate) {
      if (const Field a = f["arrivalSeconds"]; a.present()) s.arrival_s = seconds(a);
      s.duration_s = positive_seconds(f["durationSeconds"]);
    }
    if (const Field c = f["checkpointIntervalSeconds"]; c.present()) s.checkpoint_interval_s = seconds(c);
    if (const Field c = f["checkpointCostSeconds"]; c.present()) s.checkpoint_cost_s = seconds(c);
    s.checkpoint_on_notice = f["checkpointOnNotice"].boolean(false);
  }
  if (kind == Item::kScaledJobTemplate) {
    s.name = "template";
    s.on_demand = true;
  }
  if (kind == Item::kTemplate) {  // name and duration come from the generator; these only pass validate_spec
    s.name = "template";
    s.duration_s = 1;
  }
  try {
    sim::validate_spec(s);  // checked above with positions; a safety net
  } catch (const std::invalid_argument& e) {
    f.fail(e.what());
  }
  return s;
}

sim::GeneratorParams parse_generator(const Field& g, double horizon_s, const std::vector<std::string>& pool_names) {
  g.require_map();
  g.only_keys({"jobsPerHour", "diurnalAmplitude", "peakHour", "startSeconds", "endSeconds", "durationSeconds", "maxJobs",
               "namePrefix", "templates"});
  sim::GeneratorParams p;
  p.end_s = horizon_s;
  const Field rate = g["jobsPerHour"];
  p.jobs_per_hour = rate.number();
  if (p.jobs_per_hour <= 0) rate.fail(fmt::format("{} must be positive", rate.scalar()));
  if (const Field a = g["diurnalAmplitude"]; a.present()) {
    p.diurnal_amplitude = a.number();
    if (p.diurnal_amplitude < 0 || p.diurnal_amplitude > 1) a.fail(fmt::format("{} is outside [0, 1]", a.scalar()));
  }
  if (const Field h = g["peakHour"]; h.present()) {
    p.peak_hour = h.number();
    if (p.peak_hour < 0 || p.peak_hour >= 24) h.fail(fmt::format("{} is outside [0, 24)", h.scalar()));
  }
  if (const Field s = g["startSeconds"]; s.present()) p.start_s = seconds(s);
  if (const Field e = g["endSeconds"]; e.present()) p.end_s = seconds(e);
  if (p.end_s < p.start_s) g["endSeconds"].fail(fmt::format("end {} is before start {}", p.end_s, p.start_s));
  if (const double expected = p.jobs_per_hour * (p.end_s - p.start_s) / 3600; expected > kMaxGeneratedJobs)
    rate.fail(fmt::format("{} jobs per hour over {:g} h (startSeconds to endSeconds) is {:g} jobs, above the maximum of {:.0f}",
                          rate.scalar(), (p.end_s - p.start_s) / 3600, expected, kMaxGeneratedJobs));
  const Field d = g["durationSeconds"];
  d.require_map();
  d.only_keys({"min", "max", "paretoShape"});
  p.duration_min_s = positive_seconds(d["min"]);
  p.duration_max_s = positive_seconds(d["max"]);
  if (p.duration_max_s < p.duration_min_s) d["max"].fail(fmt::format("max {} is below min {}", p.duration_max_s, p.duration_min_s));
  if (const Field a = d["paretoShape"]; a.present()) {
    p.pareto_shape = a.number();
    if (p.pareto_shape <= 0) a.fail(fmt::format("{} must be positive", a.scalar()));
  }
  if (const Field m = g["maxJobs"]; m.present()) p.max_jobs = m.integer(0, 100'000'000);
  p.name_prefix = g["namePrefix"].str("gen");
  const Field templates = g["templates"];
  if (templates.size() == 0) templates.fail("at least one template is required");
  for (size_t i = 0, n = templates.size(); i < n; ++i) {
    const Field t = templates.at(i);
    sim::JobTemplate jt;
    jt.spec = parse_item(t, Item::kTemplate, pool_names);
    jt.spec.origin = origin_of(rate);  // every generated job: the generator's rate
    if (const Field w = t["weight"]; w.present()) {
      jt.weight = w.number();
      if (jt.weight <= 0) w.fail(fmt::format("{} must be positive", w.scalar()));
    }
    p.templates.push_back(std::move(jt));
  }
  return p;
}

// scaledJobs[i]: a KEDA ScaledJob (keda.sh/v1alpha1 spec fields) with one queue-length trigger.
// KEDA's fields that are not modelled are warned about, not refused.
sim::ScaledJobSpec parse_scaled_job(const Field& f, sim::WorkloadSpec& job, const std::vector<std::string>& pool_names,
                                    std::vector<std::string>& warnings) {
  f.require_map();
  static const std::set<std::string> known = {"name",           "namespace",       "pollingInterval",
                                              "maxReplicaCount", "minReplicaCount", "successfulJobsHistoryLimit",
                                              "failedJobsHistoryLimit", "scalingStrategy", "jobTargetRef", "trigger"};
  const auto not_modelled = [&](const Field& parent, const std::set<std::string>& keys) {
    parent.each_entry([&](const std::string& key, const Field& v) {
      if (keys.count(key) != 0) return;
      const auto [line, column] = v.position();
      warnings.push_back(fmt::format("{}:{}:{}: field '{}': not modelled, ignored", v.source().file, line, column, v.path()));
    });
  };
  not_modelled(f, known);
  sim::ScaledJobSpec sj;
  sj.name = f["name"].required_str();
  if (const Field p = f["pollingInterval"]; p.present()) sj.polling_interval_s = static_cast<double>(p.integer(1, 86400));
  sj.origin = origin_of(f["maxReplicaCount"].present() ? f["maxReplicaCount"] : f);
  if (const Field m = f["maxReplicaCount"]; m.present()) sj.max_replica_count = m.integer(0, kMaxItemPods);
  if (const Field m = f["minReplicaCount"]; m.present()) {
    sj.min_replica_count = m.integer(0, kMaxItemPods);
    if (sj.min_replica_count > sj.max_replica_count)
      m.fail(fmt::format("minReplicaCount {} is above maxReplicaCount {}", sj.min_replica_count, sj.max_replica_count));
  }
  if (const Field h = f["successfulJobsHistoryLimit"]; h.present()) sj.successful_jobs_history_limit = h.integer(0, 1000000000);
  if (const Field h = f["failedJobsHistoryLimit"]; h.present()) sj.failed_jobs_history_limit = h.integer(0, 1000000000);
  if (const Field st = f["scalingStrategy"]; st.present()) {
    st.require_map();
    not_modelled(st, {"strategy", "pendingPodConditions"});
    if (const Field name = st["strategy"]; name.present()) {
      const std::string v = name.scalar();
      const auto strategy = replica_autoscaling::parse_scaled_job_strategy(v);
      if (!strategy) name.fail(fmt::format("unknown strategy '{}' (expected default, accurate, eager; custom is not modelled)", v));
      sj.strategy = *strategy;
    }
    const Field conditions = st["pendingPodConditions"];
    for (size_t i = 0, n = conditions.size(); i < n; ++i) {
      const std::string c = conditions.at(i).required_str();
      if (c != "PodScheduled" && c != "Initialized" && c != "ContainersReady" && c != "Ready" && c != "PodReadyToStartContainers")
        conditions.at(i).fail(fmt::format("unknown pod condition '{}' (expected PodScheduled, Initialized, ContainersReady, Ready, "
                                          "PodReadyToStartContainers)", c));
      sj.pending_pod_conditions.push_back(c);
    }
  }
  const Field ref = f["jobTargetRef"];
  if (!ref.present()) f.fail("jobTargetRef (the job template) is required");
  job = parse_item(ref, Item::kScaledJobTemplate, pool_names);
  job.name = sj.name;
  job.namespace_name = f["namespace"].str("default");
  if (job.namespace_name.empty()) f["namespace"].fail("must not be empty");
  const Field trigger = f["trigger"];
  trigger.require_map();
  trigger.only_keys({"queueLength"});
  const Field q = trigger["queueLength"];
  q.require_map();
  q.only_keys({"targetValue", "arrivals", "arrivalsPerSecond"});
  if (const Field v = q["targetValue"]; v.present()) {
    sj.target_value = v.number();
    if (!(sj.target_value > 0) || !std::isfinite(sj.target_value)) v.fail(fmt::format("{} must be positive", v.scalar()));
  }
  const Field arrivals = q["arrivals"];
  for (size_t i = 0, n = arrivals.size(); i < n; ++i) {
    const Field a = arrivals.at(i);
    a.require_map();
    a.only_keys({"timeSeconds", "value"});
    sim::QueueArrival qa;
    qa.at_s = seconds(a["timeSeconds"]);
    if (!sj.arrivals.empty() && qa.at_s < sj.arrivals.back().at_s)
      a["timeSeconds"].fail(fmt::format("{} is before the previous point's {} (points in time order)", qa.at_s, sj.arrivals.back().at_s));
    const Field v = a["value"];
    qa.messages = v.number();
    if (!(qa.messages > 0) || !std::isfinite(qa.messages) || qa.messages > 1e9) v.fail(fmt::format("{} is outside (0, 1e9]", v.scalar()));
    sj.arrivals.push_back(qa);
  }
  if (const Field r = q["arrivalsPerSecond"]; r.present()) {
    sj.arrivals_per_second = r.number();
    if (!(sj.arrivals_per_second >= 0) || sj.arrivals_per_second > 1e6) r.fail(fmt::format("{} is outside [0, 1e6]", r.scalar()));
  }
  if (sj.arrivals.empty() && sj.arrivals_per_second == 0) q.fail("the queue gets no messages: give arrivals or arrivalsPerSecond");
  return sj;
}

// externalMetrics: the metrics a metrics adapter serves the HPA (external.metrics.k8s.io), each a
// step function of (timeSeconds, value) points in time order; names unique.
std::vector<sim::ExternalMetricSeries> parse_external_metrics(const Field& list) {
  std::vector<sim::ExternalMetricSeries> out;
  std::set<std::string> names;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field m = list.at(i);
    m.require_map();
    m.only_keys({"name", "points"});
    sim::ExternalMetricSeries series;
    series.name = m["name"].required_str();
    if (!names.insert(series.name).second) m["name"].fail(fmt::format("duplicate external metric name '{}'", series.name));
    const Field points = m["points"];
    if (points.size() == 0) points.fail("at least one point is required");
    for (size_t k = 0, np = points.size(); k < np; ++k) {
      const Field p = points.at(k);
      p.require_map();
      p.only_keys({"timeSeconds", "value"});
      const double t = seconds(p["timeSeconds"]);
      if (!series.points.empty() && t < series.points.back().first)
        p["timeSeconds"].fail(fmt::format("{} is before the previous point's {} (points in time order)", t, series.points.back().first));
      series.points.emplace_back(t, p["value"].number());
    }
    out.push_back(std::move(series));
  }
  return out;
}

// The rules of a service autoscaler (services[i].autoscaler): External or Object metrics named in
// externalMetrics, no predictive.
AutoscalerRules service_autoscaler_rules(const std::vector<sim::ExternalMetricSeries>& external) {
  AutoscalerRules r;
  for (const sim::ExternalMetricSeries& m : external) r.metrics.push_back(m.name);
  r.unknown_metric = "is not one of the workload's externalMetrics";
  r.metrics_label = "externalMetrics";
  r.predictive = false;
  r.predictive_refused = "predictive is for inference services: it forecasts their request rate, which a service without "
                         "inference does not have";
  r.external_or_object_only = true;
  return r;
}

// rollouts: [{service, atSeconds}]: a service item of the workload, a time within the horizon.
std::vector<sim::RolloutSpec> parse_rollouts(const Field& list, const sim::Workload& w) {
  std::vector<sim::RolloutSpec> out;
  if (list.size() == 0) return out;
  std::map<std::string, sim::WorkloadKind> kinds;
  for (const sim::WorkloadSpec& s : w.items) kinds.emplace(s.name, s.kind);
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field r = list.at(i);
    r.require_map();
    r.only_keys({"service", "atSeconds"});
    sim::RolloutSpec rollout;
    const Field service = r["service"];
    rollout.service = service.required_str();
    const auto it = kinds.find(rollout.service);
    if (it == kinds.end() || it->second != sim::WorkloadKind::kService) {
      std::string known;
      for (const sim::WorkloadSpec& s : w.items)
        if (s.kind == sim::WorkloadKind::kService) known += known.empty() ? s.name : ", " + s.name;
      service.fail(fmt::format("'{}' is {} (services: {})", rollout.service,
                               it == kinds.end() ? "not a service of the workload" : "a job, not a service", known.empty() ? "none" : known));
    }
    const Field at = r["atSeconds"];
    rollout.at_s = seconds(at);
    if (rollout.at_s > w.horizon_s) at.fail(fmt::format("{} is after the horizon ({} s)", at.scalar(), w.horizon_s));
    out.push_back(std::move(rollout));
  }
  return out;
}

// hpaController: the kube-controller-manager's HPA flags, for every HPA of the workload.
replica_autoscaling::HpaControllerOptions parse_hpa_controller(const Field& c) {
  c.require_map();
  c.only_keys({"syncPeriodSeconds", "tolerance", "downscaleStabilizationSeconds", "perPodWithinTolerance"});
  replica_autoscaling::HpaControllerOptions o;
  if (const Field f = c["syncPeriodSeconds"]; f.present()) {
    o.sync_period_s = seconds(f);
    if (o.sync_period_s < 1 || o.sync_period_s > 86400) f.fail(fmt::format("{} is outside [1, 86400]", f.scalar()));
  }
  if (const Field f = c["tolerance"]; f.present()) {
    o.tolerance = f.number();
    if (o.tolerance < 0) f.fail(fmt::format("{} is negative", f.scalar()));
  }
  if (const Field f = c["downscaleStabilizationSeconds"]; f.present()) {
    o.downscale_stabilization_s = seconds(f);
    if (o.downscale_stabilization_s > kMaxHorizonSeconds)
      f.fail(fmt::format("{} is above the maximum of {:.0f} s", f.scalar(), kMaxHorizonSeconds));
  }
  if (const Field f = c["perPodWithinTolerance"]; f.present()) {
    const std::string v = f.scalar();
    if (v != "specReplicas" && v != "statusReplicas") f.fail(fmt::format("'{}' is not specReplicas or statusReplicas", v));
    o.keep_status_within_tolerance = v == "statusReplicas";
  }
  return o;
}

// validate_rollouts_and_autoscalers, a safety net behind the checks above (each of its rules is
// checked there first, at its field): its error, should one get through, at the Workload document.
void check_rollouts_and_autoscalers(const Field& root, const sim::Workload& w) {
  try {
    sim::validate_rollouts_and_autoscalers(w);
  } catch (const std::invalid_argument& e) {
    root["kind"].fail(e.what());
  }
}

sim::TopologySettings parse_topology(const Field& t, std::vector<SourcePosition>& levels_at) {
  t.require_map();
  t.only_keys({"levels", "slowdown", "placement"});
  sim::TopologySettings out;
  const Field levels = t["levels"];
  if (levels.size() == 0) levels.fail("at least one level (a node label key) is required");
  for (size_t i = 0, n = levels.size(); i < n; ++i) {
    const std::string level = levels.at(i).required_str();
    const auto [line, column] = levels.at(i).position();
    levels_at.push_back(SourcePosition{levels.at(i).source().file, line, column, levels.at(i).path()});
    if (std::find(out.levels.begin(), out.levels.end(), level) != out.levels.end())
      levels.at(i).fail(fmt::format("level {} is listed twice", level));
    out.levels.push_back(level);
  }
  out.slowdown.assign(out.levels.size(), 0.0);
  t["slowdown"].each_entry([&](const std::string& k, const Field& v) {
    const auto it = std::find(out.levels.begin(), out.levels.end(), k);
    if (it == out.levels.end()) v.fail(fmt::format("{} is not one of the levels", k));
    const double x = v.number();
    if (!(x >= 0 && x <= 100)) v.fail(fmt::format("{} is outside [0, 100]", v.scalar()));
    out.slowdown[static_cast<size_t>(it - out.levels.begin())] = x;
  });
  if (const Field p = t["placement"]; p.present()) {
    const std::string mode = p.str();
    if (mode != "aware" && mode != "ignore") p.fail(fmt::format("'{}' is not aware or ignore", mode));
    out.aware = mode == "aware";
  }
  return out;
}

queue::KueueObjects parse_queues(const Field& q, const std::string& source_name) {
  q.require_map();
  q.only_keys({"objects", "admission"});
  const Field files = q["objects"];
  if (files.size() == 0) files.fail("at least one file of Kueue objects is required");
  const std::filesystem::path base = std::filesystem::path(source_name).parent_path();
  std::vector<std::string> paths;
  for (size_t i = 0, n = files.size(); i < n; ++i) {
    paths.push_back((base / files.at(i).required_str()).string());
    // A missing path, or a folder without YAML: at its entry.
    detail::read_referenced(files.at(i), [&] { (void)k8s_input_files({paths.back()}); });
  }
  // A bad object: at the entry that names its file (or the folder holding it), else at the list.
  K8sObjects objects = [&] {
    try {
      return read_k8s_inputs(paths);
    } catch (const InputError& e) {
      for (size_t i = 0; i < paths.size(); ++i) {
        const std::string& p = paths[i];
        if (e.file() == p || (e.file().size() > p.size() && e.file().compare(0, p.size(), p) == 0 &&
                              (p.back() == '/' || e.file()[p.size()] == '/')))
          detail::fail_referenced(files.at(i), e);
      }
      detail::fail_referenced(files, e);
    }
  }();
  if (objects.kueue.cluster_queues.empty()) files.fail("the files hold no ClusterQueue");
  // Only Kueue's objects belong here: jobs are the workload's own (jobs:, generate:).
  std::string other;
  const auto note = [&](size_t count, const char* what) {
    if (count > 0) other += fmt::format("{}{} {}", other.empty() ? "" : ", ", count, what);
  };
  note(objects.queued_workloads.size(), "queued job(s)");
  note(objects.pods.size(), "pod(s)");
  note(objects.nodes.size(), "node(s)");
  note(objects.pod_groups.size(), "PodGroup(s)");
  note(objects.quotas.size(), "ResourceQuota(s)");
  note(objects.pool_files.size(), "NodePoolSet file(s)");
  for (const auto& [kind, count] : objects.skipped_kinds) note(static_cast<size_t>(count), kind.c_str());
  if (!other.empty())
    files.fail(fmt::format("the files hold {}: only Kueue objects are read here (jobs go in jobs: or generate:)", other));
  if (const Field a = q["admission"]; a.present()) {
    const std::string mode = a.str();
    if (mode != "quota" && mode != "placement") a.fail(fmt::format("'{}' is not quota or placement", mode));
    objects.kueue.configuration.placement_aware = mode == "placement";
  }
  return std::move(objects.kueue);
}

// Each job's queueName must be a LocalQueue of its namespace, and its topology level one of the
// topology's levels.
void check_queue_references(const Field& root, const sim::Workload& w, const std::optional<sim::GeneratorParams>& generator) {
  const Field jobs = root["jobs"];
  auto check = [&](const sim::WorkloadSpec& s, const Field& f) {
    if (!s.queue_name.empty()) {
      if (!w.queues) f["queueName"].fail("queueName needs a queues: section with the Kueue objects");
      bool found = false;
      for (const queue::LocalQueue& lq : w.queues->local_queues) found |= lq.name == s.queue_name && lq.namespace_name == s.namespace_name;
      if (!found) f["queueName"].fail(fmt::format("LocalQueue {}/{} does not exist", s.namespace_name, s.queue_name));
    }
    if (s.topology.mode != queue::TopologyRequest::Mode::kNone &&
        std::find(w.topology.levels.begin(), w.topology.levels.end(), s.topology.level) == w.topology.levels.end())
      f["topology"].fail(fmt::format("topology level {} is not one of topology.levels", s.topology.level));
  };
  for (size_t i = 0, n = jobs.size(); i < n; ++i) check(w.items[i], jobs.at(i));
  if (generator)
    for (size_t i = 0; i < generator->templates.size(); ++i) check(generator->templates[i].spec, root["generate"]["templates"].at(i));
}

}  // namespace

SimWorkloadFile parse_sim_workload_text(std::string_view text, const std::string& source_name,
                                        const std::vector<std::string>& pool_names,
                                        const inference::ServingCatalog* catalog) {
  Source src;
  src.file = source_name;
  SimWorkloadFile out;
  bool found = false;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  // A file of other kinds only (a pool file, a fault schedule, Kubernetes objects) or an empty one is
  // said whole; a Workload document, or an unknown one of the simulator's group (a mistyped kind), is
  // checked field by field below.
  if (std::none_of(docs.begin(), docs.end(), [](const detail::YamlNode& d) {
        const detail::YamlNode* kind = d.find("kind");
        const detail::YamlNode* api = d.find("apiVersion");
        const std::string kind_text = kind != nullptr ? kind->scalar : std::string();
        return kind_text == kKind ||
               (api != nullptr && api->scalar == kSimApiVersion && !detail::is_gpufleet_kind(kind_text, api->scalar));
      }))
    detail::fail_without_kind(source_name, docs, kKind, kSimApiVersion);
  for (const detail::YamlNode& doc : docs) {
    if (doc.type == detail::YamlType::kNull) continue;
    const Field root(doc, "", src);
    root.require_map();
    const Field api = root["apiVersion"];
    if (api.str() != kSimApiVersion) api.fail(fmt::format("apiVersion '{}' is not supported (expected {})", api.str(), kSimApiVersion));
    const Field kind = root["kind"];
    if (kind.str() != kKind) kind.fail(fmt::format("kind '{}' is not supported (expected {})", kind.str(), kKind));
    if (found) kind.fail("a second Workload document (one per file)");
    found = true;
    root.only_keys({"apiVersion", "kind", "metadata", "horizonSeconds", "jobs", "services", "generate", "queues", "topology", "scaledJobs",
                    "rollouts", "externalMetrics", "hpaController"});
    const Field horizon = root["horizonSeconds"];
    out.workload.horizon_s = positive_seconds(horizon);
    out.workload.horizon_origin = origin_of(horizon);
    if (out.workload.horizon_s > kMaxHorizonSeconds)
      horizon.fail(fmt::format("{} is above the maximum of {:.0f} s (about 3 years)", horizon.scalar(), kMaxHorizonSeconds));
    std::set<std::string> names;
    auto add = [&](const Field& f, Item kind_of) {
      sim::WorkloadSpec s = parse_item(f, kind_of, pool_names);
      if (!names.insert(s.name).second) f["name"].fail(fmt::format("duplicate name '{}'", s.name));
      collect_claim_references(f, s.namespace_name, out.claim_references);
      out.workload.items.push_back(std::move(s));
    };
    const Field jobs = root["jobs"];
    for (size_t i = 0, n = jobs.size(); i < n; ++i) add(jobs.at(i), Item::kJob);
    out.workload.external_metrics = parse_external_metrics(root["externalMetrics"]);
    const AutoscalerRules service_rules = service_autoscaler_rules(out.workload.external_metrics);
    const std::string base = std::filesystem::path(source_name).parent_path().string();
    const Field services = root["services"];
    for (size_t i = 0, n = services.size(); i < n; ++i) {
      const Field item = services.at(i);
      add(item, Item::kService);
      if (const Field inf = item["inference"]; inf.present()) {
        item.fail_key("autoscaler", "a service with inference: has its autoscaler in the inference block (inference.autoscaler)");
        out.workload.inference.push_back(parse_inference_service(
            inf, item, out.workload.items.back(), base, out.workload.horizon_s, catalog != nullptr ? *catalog : builtin_serving_catalog()));
        if (const std::optional<sim::DisaggregationSpec>& d = out.workload.inference.back().disaggregation) {
          // The service's pods are its roles': one item each, in place of the service's.
          const sim::WorkloadSpec service = std::move(out.workload.items.back());
          out.workload.items.pop_back();
          const Field roles = inf["disaggregation"];
          for (const auto& [role, key] : {std::pair{&d->prefill, "prefill"}, std::pair{&d->decode, "decode"}}) {
            if (!names.insert(role->item).second) roles[key].fail(fmt::format("its pods' name '{}' is taken", role->item));
            out.workload.items.push_back(role_item(service, *role, roles[key], pool_names));
          }
        }
      } else if (const Field a = item["autoscaler"]; a.present()) {
        ParsedAutoscaler parsed = parse_autoscaler(a, base, service_rules);
        out.workload.service_autoscalers.push_back({out.workload.items.back().name, std::move(parsed.spec), std::move(parsed.description)});
      }
    }
    const Field scaled = root["scaledJobs"];
    for (size_t i = 0, n = scaled.size(); i < n; ++i) {
      sim::WorkloadSpec job;
      out.workload.scaled_jobs.push_back(parse_scaled_job(scaled.at(i), job, pool_names, out.warnings));
      if (!names.insert(job.name).second) scaled.at(i)["name"].fail(fmt::format("duplicate name '{}'", job.name));
      collect_claim_references(scaled.at(i)["jobTargetRef"], job.namespace_name, out.claim_references);
      out.workload.items.push_back(std::move(job));
    }
    if (const Field t = root["topology"]; t.present()) out.workload.topology = parse_topology(t, out.topology_levels_at);
    if (const Field q = root["queues"]; q.present()) out.workload.queues = parse_queues(q, source_name);
    if (const Field g = root["generate"]; g.present()) {
      out.generator = parse_generator(g, out.workload.horizon_s, pool_names);
      for (const std::string& n : names)
        if (n.rfind(out.generator->name_prefix + "-", 0) == 0)
          g["namePrefix"].fail(fmt::format("generated names '{}-NNNNNN' may clash with '{}'", out.generator->name_prefix, n));
    }
    check_queue_references(root, out.workload, out.generator);
    out.workload.rollouts = parse_rollouts(root["rollouts"], out.workload);
    if (const Field c = root["hpaController"]; c.present()) {
      const replica_autoscaling::HpaControllerOptions options = parse_hpa_controller(c);
      for (sim::InferenceServiceSpec& inf : out.workload.inference) {
        inf.autoscaler.hpa_controller = options;
        if (inf.disaggregation) inf.disaggregation->prefill.autoscaler.hpa_controller = inf.disaggregation->decode.autoscaler.hpa_controller = options;
      }
      for (sim::ServiceAutoscalerSpec& a : out.workload.service_autoscalers) a.autoscaler.hpa_controller = options;
    }
    check_rollouts_and_autoscalers(root, out.workload);
  }
  if (!found) detail::fail_without_kind(source_name, docs, kKind, kSimApiVersion);
  return out;
}

SimWorkloadFile read_sim_workload_file(const std::string& path, const std::vector<std::string>& pool_names,
                                       const inference::ServingCatalog* catalog) {
  return parse_sim_workload_text(read_yaml_file(path), path, pool_names, catalog);
}

}  // namespace gpufleet::io
