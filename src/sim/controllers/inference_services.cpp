#include "sim/controllers/inference_services.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "inference/cold_start.h"
#include "inference/deployment.h"
#include "inference/disaggregated_deployment.h"
#include "inference/engine_args.h"
#include "inference/kv_cache.h"
#include "inference/replica_engine.h"
#include "inference/request_sources.h"
#include "inference/step_time.h"
#include "model/gpu_catalog.h"
#include "sim/rules/cost.h"
#include "sim/engine/units.h"

namespace gpufleet::sim {

namespace {

constexpr double kSecondsPerHour = 3600;

// Sorts samples ascending: the order std::sort gives (equal values are indistinguishable but for
// -0 and +0, which this puts first), in linear time (LSD radix sort on the floats' bits, 3 passes
// of 11 bits): the latency samples of a long run are millions. NaN is not expected.
void sort_samples(std::vector<float>& v) {
  if (v.size() < 1024) {
    std::sort(v.begin(), v.end());
    return;
  }
  // Order-preserving map of a float's bits to an unsigned key: negatives flipped, positives' sign set.
  std::vector<uint32_t> keys(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &v[i], sizeof u);
    keys[i] = (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
  }
  const size_t n = v.size();
  std::vector<float>().swap(v);  // the keys hold the samples meanwhile: two buffers at a time, not three
  std::vector<uint32_t> tmp(n);
  constexpr int kBits = 11;
  constexpr uint32_t kBuckets = 1u << kBits;
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; shift < 32; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (uint32_t k : keys) ++count[(k >> shift) & (kBuckets - 1)];
    if (count[(keys[0] >> shift) & (kBuckets - 1)] == keys.size()) continue;  // one bucket: already in order
    size_t sum = 0;
    for (size_t& c : count) sum += std::exchange(c, sum);
    for (uint32_t k : keys) tmp[count[(k >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(tmp);
  }
  v.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = keys[i];
    const uint32_t u = (k & 0x80000000u) != 0 ? (k & 0x7fffffffu) : ~k;
    std::memcpy(&v[i], &u, sizeof u);
  }
}

// Nearest-rank percentile (the ceil(q x n)-th smallest) of sorted samples.
double nearest_rank(const std::vector<float>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary summarize(std::vector<float>& samples) {
  LatencySummary s;
  s.samples = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  sort_samples(samples);
  double sum = 0;
  for (float v : samples) sum += v;
  s.mean_s = sum / static_cast<double>(samples.size());
  s.p50_s = nearest_rank(samples, 0.50);
  s.p90_s = nearest_rank(samples, 0.90);
  s.p99_s = nearest_rank(samples, 0.99);
  s.max_s = samples.back();
  return s;
}

// What a replica runs with on the nodes of one pool.
struct PoolHardware {
  bool usable = false;
  std::string error;                                  // why the engine cannot start there
  std::unique_ptr<inference::StepTimeModel> step_time;
  inference::EngineLimits limits;
  int32_t time_slice_replicas = 1;
  double kv_bytes_per_token = 0;                      // per GPU (KvCacheBudget::kv_bytes_per_token)
};

// `engine`: the service's engine arguments with the replica's tensor parallel size.
PoolHardware hardware_for(const inference::ServingCatalog& catalog, const InferenceServiceSpec& spec,
                          const inference::EngineArgs& engine, const WorkloadSpec& item, const NodePool& pool) {
  PoolHardware out;
  const GpuModelInfo* gpu = find_gpu_model(pool.gpu_model);
  if (gpu == nullptr) {
    out.error = fmt::format("pool '{}' has GPU model '{}', which the GPU catalog does not know", pool.name, pool.gpu_model);
    return out;
  }
  inference::ReplicaHardware hw;
  hw.gpu = gpu->name;
  hw.memory_mib = gpu->memory_mib;
  if (item.mig_requests.empty() && pool.mig_devices) {
    out.error = fmt::format("pool '{}' has MIG-partitioned GPUs and the replicas request whole GPUs", pool.name);
    return out;
  }
  if (!item.mig_requests.empty() && !pool.mig_devices) {
    out.error = fmt::format("pool '{}' has no MIG devices", pool.name);
    return out;
  }
  if (!item.mig_requests.empty()) {
    const MigProfile* profile = gpu->find_mig_profile(item.mig_requests.front().profile);
    if (profile == nullptr) {
      out.error = fmt::format("pool '{}' ({}) has no MIG profile {}", pool.name, gpu->name, item.mig_requests.front().profile);
      return out;
    }
    hw.compute_fraction = static_cast<double>(profile->compute_slices) / kMigComputeSlices;
    hw.bandwidth_fraction = static_cast<double>(profile->memory_slices) / kMigMemorySlices;
    hw.memory_mib = gpu->memory_mib * profile->memory_slices / kMigMemorySlices;
  } else if (pool.time_slicing_replicas && !pool.mig_devices) {
    hw.time_slice_replicas = *pool.time_slicing_replicas;
    out.time_slice_replicas = hw.time_slice_replicas;
  }
  inference::KvCacheBudget budget;
  try {
    budget = inference::kv_cache_budget(catalog, engine, hw);
  } catch (const std::invalid_argument& e) {
    out.error = e.what();
    return out;
  }
  if (!budget.error.empty()) {
    out.error = fmt::format("on pool '{}': {}", pool.name, budget.error);
    return out;
  }
  const inference::LlmModel& model = *catalog.find_model(spec.engine.model);
  inference::EngineLimits& l = out.limits;
  l.max_num_seqs = spec.engine.max_num_seqs;
  l.max_num_batched_tokens = spec.engine.max_num_batched_tokens > 0
                                 ? spec.engine.max_num_batched_tokens
                                 : inference::default_max_num_batched_tokens(hw.gpu, hw.memory_mib);
  l.max_model_len = spec.engine.max_model_len > 0 ? spec.engine.max_model_len : model.max_context_tokens;
  l.block_size = spec.engine.block_size;
  l.num_blocks = budget.num_blocks;
  l.enable_prefix_caching = spec.engine.enable_prefix_caching;
  out.kv_bytes_per_token = budget.kv_bytes_per_token;
  out.step_time = spec.step_profile.empty() ? inference::make_roofline_step_time(catalog, engine, hw)
                                            : inference::make_profile_step_time(spec.step_profile);
  out.usable = true;
  return out;
}

uint64_t node_key(NodeId n, uint32_t incarnation) { return (static_cast<uint64_t>(n) << 32) | incarnation; }

}  // namespace

struct InferenceServices::Replica {
  uint32_t service = 0;
  uint32_t pool = 0;              // index into the service's pools (0 for an aggregated service)
  uint32_t unit = 0;
  uint32_t pod = 0;
  NodeId node = sched::kNoNode;   // kNoNode: not bound
  double bound_s = 0;
  uint32_t generation = 0;        // bumped at every bind and unbind: stale ready events are ignored
  int32_t deployment_replica = -1;  // serving as this replica id of its pool's Deployment
  int32_t cold_start = -1;        // index into the service's cold-start log
  double busy_at_scrape_s = 0;
  double gpus_held = 0;
  double cost_usd_per_hour = 0;
};

// The replicas of one workload item: an aggregated service's, or a disaggregated service's prefill
// (pools[0]) or decode (pools[1]) role, each with its own autoscaler and scrapes.
struct InferenceServices::Pool {
  std::string name;                    // the workload item's name (Units::scale)
  uint32_t item = 0;
  std::vector<PoolHardware> hardware;  // by node pool index
  std::unique_ptr<replica_autoscaling::ReplicaAutoscaler> autoscaler;
  int32_t min_replicas = 0, max_replicas = std::numeric_limits<int32_t>::max();
  replica_autoscaling::MetricSnapshot snapshot;
  int64_t arrivals_since_scrape = 0;
  double last_scrape_s = 0;
  std::vector<uint32_t> bound;         // replica indices bound now
  double gpu_seconds = 0;
  int32_t max_ready = 0;
  int64_t cold_starts = 0;
};

struct InferenceServices::Service {
  const InferenceServiceSpec* spec = nullptr;
  std::string name;
  std::vector<Pool> pools;             // one, or prefill and decode
  std::unique_ptr<inference::RequestSource> source;
  std::optional<inference::Request> next;
  std::unique_ptr<inference::Deployment> deployment;               // aggregated
  std::unique_ptr<inference::DisaggregatedDeployment> disaggregated;  // or disaggregated
  InferenceServiceResult result;
  std::vector<float> ttft, tpot, e2e;
  int64_t met_slo = 0;
  int64_t overdue = 0;   // unfinished at the horizon, already past the TTFT limit
  // Per sample interval: counts and the TTFTs of requests whose first token came in it.
  std::vector<InferenceSample> rows;
  std::vector<std::vector<float>> row_ttft;
  std::vector<float> cold_start_s;

  static inference::DisaggregatedDeployment::Role role(uint32_t pool) {
    return pool == 0 ? inference::DisaggregatedDeployment::Role::kPrefill : inference::DisaggregatedDeployment::Role::kDecode;
  }
  /// The Deployment that pool `k`'s replicas serve in (gauges).
  const inference::Deployment& deployment_of(uint32_t k) const { return deployment ? *deployment : disaggregated->pool(role(k)); }
  int32_t ready_replicas() const {
    return deployment ? deployment->ready_replicas() : disaggregated->pool(role(0)).ready_replicas() + disaggregated->pool(role(1)).ready_replicas();
  }
};

InferenceServices::InferenceServices(const Workload& workload, const ClusterConfig& cluster,
                                     const inference::ServingCatalog& catalog, uint64_t seed, double sample_interval_s,
                                     const SimulationModules& m)
    : workload_(workload),
      cluster_(cluster),
      catalog_(catalog),
      sample_interval_s_(sample_interval_s),
      loop_(m.events),
      units_(m.units),
      fleet_(m.fleet),
      billing_(m.billing) {
  service_of_item_.assign(workload.items.size(), -1);
  pool_of_item_.assign(workload.items.size(), 0);
  const size_t rows = std::max<size_t>(1, static_cast<size_t>(std::ceil(workload.horizon_s / sample_interval_s)));
  for (size_t i = 0; i < workload.inference.size(); ++i) {
    const InferenceServiceSpec& spec = workload.inference[i];
    validate_inference_service(spec, workload.items);
    auto fail = [&](const std::string& what) { fail_inference_service(spec, what); };
    if (catalog.find_model(spec.engine.model) == nullptr) {
      std::vector<std::string> known;
      for (const inference::LlmModel& m : catalog.models) known.push_back(m.name);
      fail(fmt::format("unknown model '{}' (the serving catalog has: {})", spec.engine.model, fmt::join(known, ", ")));
    }
    auto s = std::make_unique<Service>();
    s->spec = &spec;
    s->name = spec.service;
    const std::optional<DisaggregationSpec>& disagg = spec.disaggregation;
    // The pools: (item name, tensor parallel size, autoscaler, role) each.
    struct PoolSpec {
      std::string item;
      int32_t tp;
      const replica_autoscaling::ReplicaAutoscalerSpec* autoscaler;
      const DisaggregatedRoleSpec* role;
    };
    std::vector<PoolSpec> pool_specs;
    if (disagg) {
      pool_specs.push_back({disagg->prefill.item, disagg->prefill.tensor_parallel_size, &disagg->prefill.autoscaler, &disagg->prefill});
      pool_specs.push_back({disagg->decode.item, disagg->decode.tensor_parallel_size, &disagg->decode.autoscaler, &disagg->decode});
    } else {
      pool_specs.push_back({spec.service, spec.engine.tensor_parallel_size, &spec.autoscaler, nullptr});
    }
    for (uint32_t k = 0; k < pool_specs.size(); ++k) {
      const PoolSpec& ps = pool_specs[k];
      const std::string prefix = ps.role == nullptr ? "" : fmt::format("role {}: ", ps.item);
      Pool pl;
      pl.name = ps.item;
      for (uint32_t it = 0; it < workload.items.size(); ++it)
        if (workload.items[it].name == ps.item) pl.item = it;
      if (service_of_item_[pl.item] >= 0) fail(prefix + "a second inference entry for the same service");
      service_of_item_[pl.item] = static_cast<int32_t>(i);
      pool_of_item_[pl.item] = k;
      const WorkloadSpec& item = workload.items[pl.item];
      if (item.num_gpu > 0 && ps.tp != item.num_gpu)
        fail(fmt::format("{}tensor_parallel_size {} but each replica pod requests {} GPU(s); they must be equal", prefix, ps.tp,
                         item.num_gpu));
      inference::EngineArgs engine = spec.engine;
      engine.tensor_parallel_size = ps.tp;
      std::string errors;
      bool any = false;
      for (const SimPool& sp : cluster.pools) {
        const bool allowed = item.pools.empty() || std::find(item.pools.begin(), item.pools.end(), sp.pool.name) != item.pools.end();
        if (allowed && !sp.pool.gpu_model.empty()) {
          pl.hardware.push_back(hardware_for(catalog, spec, engine, item, sp.pool));
          any = any || pl.hardware.back().usable;
          if (!pl.hardware.back().usable) errors += (errors.empty() ? "" : "; ") + pl.hardware.back().error;
        } else {
          pl.hardware.emplace_back();
          pl.hardware.back().error = "not a pool this service may use";
        }
      }
      if (!any) fail(prefix + (errors.empty() ? "no GPU pool it may use" : "no pool it may use can run it: " + errors));
      pl.autoscaler = make_replica_autoscaler(*ps.autoscaler);
      if (ps.role != nullptr) {
        pl.min_replicas = ps.role->min_replicas;
        pl.max_replicas = ps.role->max_replicas;
      }
      s->pools.push_back(std::move(pl));
      pool_refs_.push_back({static_cast<uint32_t>(i), k});
    }
    s->source = inference::make_request_source(spec.traffic, seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)));
    Service* sp = s.get();
    auto on_outcome = [this, sp](const inference::RequestOutcome& o) {
      InferenceServiceResult& r = sp->result;
      r.preemptions += o.preemptions;
      auto row_of = [&](double t) {
        const double k = std::ceil(t / sample_interval_s_) - 1;
        return static_cast<size_t>(std::clamp(k, 0.0, static_cast<double>(sp->rows.size() - 1)));
      };
      if (ended_) {  // still in flight at the horizon; past its TTFT limit it counts as a miss
        ++r.unfinished;
        const std::optional<double>& limit = sp->spec->slo.ttft_p99_s;
        const double waited = (o.first_token_s >= 0 ? o.first_token_s : o.finish_s) - o.arrival_s;
        if (limit && waited > *limit) ++sp->overdue;
        return;
      }
      switch (o.status) {
        case inference::RequestStatus::kFinished: {
          ++r.finished;
          r.prompt_tokens += o.prompt_tokens;
          r.output_tokens += o.output_tokens;
          const double ttft = o.ttft_s(), tpot = o.tpot_s();
          sp->ttft.push_back(static_cast<float>(ttft));
          sp->tpot.push_back(static_cast<float>(tpot));
          sp->e2e.push_back(static_cast<float>(o.e2e_s()));
          const ServingSlo& slo = sp->spec->slo;
          if ((!slo.ttft_p99_s || ttft <= *slo.ttft_p99_s) && (!slo.tpot_p99_s || tpot <= *slo.tpot_p99_s)) ++sp->met_slo;
          ++sp->rows[row_of(o.finish_s)].finished;
          sp->row_ttft[row_of(o.first_token_s)].push_back(static_cast<float>(ttft));
          break;
        }
        case inference::RequestStatus::kTimedOut:
          ++r.timed_out;
          ++sp->rows[row_of(o.finish_s)].timed_out;
          break;
        case inference::RequestStatus::kDropped:
          ++r.dropped;
          ++sp->rows[row_of(o.finish_s)].timed_out;
          break;
      }
    };
    if (disagg) {
      inference::DisaggregationConfig config;
      config.link = disagg->link;
      config.prefill_tensor_parallel_size = disagg->prefill.tensor_parallel_size;
      config.decode_tensor_parallel_size = disagg->decode.tensor_parallel_size;
      for (const PoolHardware& hw : s->pools[1].hardware)
        if (hw.usable) config.decode_kv_bytes_per_token_per_gpu = hw.kv_bytes_per_token;  // the model's and TP's, not the GPU's
      config.max_local_prefill_tokens = disagg->max_local_prefill_tokens;
      config.first_token = disagg->first_token;
      inference::DisaggregatedDeployment::Observer observer;
      observer.on_outcome = std::move(on_outcome);
      try {
        s->disaggregated = std::make_unique<inference::DisaggregatedDeployment>(config, spec.router, std::move(observer));
      } catch (const std::invalid_argument& e) {
        fail(e.what());
      }
    } else {
      inference::Deployment::Observer observer;
      observer.on_outcome = std::move(on_outcome);
      s->deployment = std::make_unique<inference::Deployment>(spec.router, std::move(observer));
    }
    s->rows.resize(rows);
    s->row_ttft.resize(rows);
    for (size_t k = 0; k < rows; ++k) s->rows[k].time_s = std::min(workload.horizon_s, (k + 1) * sample_interval_s);
    InferenceServiceResult& r = s->result;
    r.service = spec.service;
    r.model = catalog.find_model(spec.engine.model)->name;
    r.traffic = spec.traffic_description;
    r.autoscaler = spec.autoscaler_description;
    r.slo_ttft_p99_s = spec.slo.ttft_p99_s;
    r.slo_tpot_p99_s = spec.slo.tpot_p99_s;
    r.notes = spec.notes;
    if (disagg) {
      DisaggregationResult d;
      d.link = fmt::format("{} {:g} GB/s per {}, {:g} ms", disagg->link.name, disagg->link.gb_s, disagg->link.per_gpu ? "GPU" : "replica pair",
                           disagg->link.latency_s * 1000);
      d.first_token_from = disagg->first_token == inference::FirstTokenFrom::kPrefill ? "prefill" : "decode";
      d.max_local_prefill_tokens = disagg->max_local_prefill_tokens;
      for (auto [role, out] : {std::pair{&disagg->prefill, &d.prefill}, std::pair{&disagg->decode, &d.decode}}) {
        out->item = role->item;
        out->autoscaler = role->autoscaler_description;
        out->tensor_parallel_size = role->tensor_parallel_size;
      }
      r.autoscaler = fmt::format("prefill: {}; decode: {}", d.prefill.autoscaler.empty() ? "none" : d.prefill.autoscaler,
                                 d.decode.autoscaler.empty() ? "none" : d.decode.autoscaler);
      r.disaggregation = std::move(d);
    }
    services_.push_back(std::move(s));
  }
  request_ = loop_.register_event("request", [this](const Event& e) { on_request(e.subject, e.time_s); },
                                 {}, /*traced=*/false);
  ready_ = loop_.register_event(
      "replica-ready", [this](const Event& e) { on_ready(e.subject, e.generation, e.time_s); },
      [this](uint32_t r) { return units_.unit_name(replicas_[r].unit); });
  scrape_ = loop_.register_event("scrape", [this](const Event& e) { on_scrape(e.subject, e.time_s); }, {}, false);
  autoscale_ = loop_.register_event("replica-autoscale", [this](const Event& e) { on_autoscale(e.subject, e.time_s); },
                                   {}, false);
  sample_ = loop_.register_event("serving-sample", [this](const Event& e) { on_sample(e.time_s); }, {}, false);
  end_ = loop_.register_event("serving-end", [this](const Event& e) { on_end(e.time_s); }, {}, false);
  units_.add_replica_listener(*this);
  for (const auto& s : services_)
    for (const Pool& pl : s->pools) units_.gate_readiness(pl.item);  // ready when the engine serves (on_ready)
  loop_.add_clock_observer([this](double t) { on_clock(t); });
}

InferenceServices::~InferenceServices() = default;

void InferenceServices::start() {
  const double h = loop_.horizon_s();
  for (uint32_t i = 0; i < services_.size(); ++i) {
    Service& s = *services_[i];
    s.next = s.source->next();
    if (s.next && s.next->arrival_s <= h) loop_.schedule(std::max(0.0, s.next->arrival_s), request_, i);
  }
  for (uint32_t j = 0; j < pool_refs_.size(); ++j) {
    const Pool& pl = services_[pool_refs_[j].first]->pools[pool_refs_[j].second];
    loop_.schedule(0, scrape_, j);
    if (pl.autoscaler && pl.autoscaler->first_evaluation_s() <= h)
      loop_.schedule(std::max(0.0, pl.autoscaler->first_evaluation_s()), autoscale_, j);
  }
  if (!services_.empty()) {
    if (sample_interval_s_ < h) loop_.schedule(sample_interval_s_, sample_);
    loop_.schedule(h, end_);
  }
}

void InferenceServices::on_clock(double t) {
  if (ended_) return;
  for (auto& s : services_) {
    if (s->deployment) s->deployment->advance_to(t);
    else s->disaggregated->advance_to(t);
  }
}

void InferenceServices::on_request(uint32_t i, double t) {
  Service& s = *services_[i];
  if (ended_ || !s.next) return;
  const inference::Request request = std::move(*s.next);
  ++s.result.requests;
  for (Pool& pl : s.pools) ++pl.arrivals_since_scrape;
  const double k = std::ceil(t / sample_interval_s_) - 1;
  ++s.rows[static_cast<size_t>(std::clamp(k, 0.0, static_cast<double>(s.rows.size() - 1)))].arrivals;
  if (s.deployment) s.deployment->submit(request, t);
  else s.disaggregated->submit(request, t);
  s.next = s.source->next();
  if (s.next) {
    if (s.next->arrival_s < t)
      throw std::invalid_argument(fmt::format("inference service '{}': request {} arrives at {} s, before the previous one ({} s)",
                                              s.name, s.next->id, s.next->arrival_s, t));
    if (s.next->arrival_s <= loop_.horizon_s()) loop_.schedule(s.next->arrival_s, request_, i);
  }
}

void InferenceServices::on_replica_bound(uint32_t item, uint32_t unit, uint32_t pod, NodeId n, double t) {
  if (ended_ || service_of_item_[item] < 0) return;
  const uint32_t si = static_cast<uint32_t>(service_of_item_[item]);
  Service& s = *services_[si];
  const uint32_t k = pool_of_item_[item];
  Pool& pl = s.pools[k];
  auto [it, fresh] = replica_of_unit_.try_emplace(unit, static_cast<uint32_t>(replicas_.size()));
  if (fresh) replicas_.push_back(Replica{.service = si, .pool = k, .unit = unit, .pod = pod});
  const uint32_t ri = it->second;
  Replica& r = replicas_[ri];
  r.node = n;
  r.bound_s = t;
  ++r.generation;
  r.deployment_replica = -1;
  pl.bound.push_back(ri);
  const size_t p = fleet_.pool_of(n);
  const NodePool& pool = cluster_.pools[p].pool;
  const Pod& request = units_.pod(pod);
  r.gpus_held = pod_gpus_held(pool, request);
  r.cost_usd_per_hour = billing_.price_usd_per_hour(n) * pod_price_share(pool, price_split(pool), request);

  ColdStart log;
  log.replica = units_.unit_name(unit);
  log.node = fleet_.name(n);
  // A pod moved by scale-down or consolidation is a new pod, created when it is bound.
  const Units::Unit& u = units_.unit(unit);
  log.created_s = u.state == UnitState::kRunning ? t : u.pending_since_s;
  log.bound_s = t;
  const PoolHardware& hw = pl.hardware[p];
  if (hw.usable) {
    const inference::LlmModel& model = *catalog_.find_model(s.spec->engine.model);
    const uint64_t key = node_key(n, fleet_.incarnation(n));
    double pull_s = s.spec->cold_start.image_pull_s;
    if (auto img = image_ready_s_.find(key); img != image_ready_s_.end()) pull_s = std::max(0.0, img->second - t);
    else image_ready_s_[key] = t + pull_s;
    inference::ColdStartParts parts = inference::cold_start_parts(
        s.spec->cold_start, inference::weight_bytes(model, s.spec->engine.dtype), /*image_on_node=*/true);
    parts.image_pull_s = pull_s;
    log.image_pull_s = parts.image_pull_s;
    log.weight_load_s = parts.weight_load_s;
    log.engine_start_s = parts.engine_start_s;
    loop_.schedule(t + parts.total_s(), ready_, ri, r.generation);
  } else {
    // The engine cannot start there (as a pod in CrashLoopBackOff): bound, never ready.
    if (s.result.replicas_not_started++ == 0)
      s.result.notes.push_back(fmt::format("replica {} on node {} cannot start: {}", log.replica, log.node, hw.error));
  }
  r.cold_start = static_cast<int32_t>(s.result.cold_start_log.size());
  s.result.cold_start_log.push_back(std::move(log));
}

void InferenceServices::on_replica_unbound(uint32_t item, uint32_t unit, uint32_t /*pod*/, double t) {
  if (ended_ || service_of_item_[item] < 0) return;
  Replica& r = replicas_[replica_of_unit_.at(unit)];
  Service& s = *services_[r.service];
  Pool& pl = s.pools[r.pool];
  if (r.deployment_replica >= 0) {  // the pod is deleted: SIGTERM, vLLM's --shutdown-timeout
    if (s.deployment) s.deployment->drain_replica(r.deployment_replica, t, s.spec->engine.shutdown_timeout_s);
    else s.disaggregated->drain_replica(Service::role(r.pool), r.deployment_replica, t, s.spec->engine.shutdown_timeout_s);
  }
  pl.gpu_seconds += r.gpus_held * (t - r.bound_s);
  pl.bound.erase(std::find(pl.bound.begin(), pl.bound.end(), replica_of_unit_.at(unit)));
  r.node = sched::kNoNode;
  r.deployment_replica = -1;
  ++r.generation;
}

void InferenceServices::on_ready(uint32_t ri, uint32_t generation, double t) {
  Replica& r = replicas_[ri];
  if (ended_ || r.generation != generation || r.node == sched::kNoNode) return;
  Service& s = *services_[r.service];
  Pool& pl = s.pools[r.pool];
  const size_t p = fleet_.pool_of(r.node);
  const PoolHardware& hw = pl.hardware[p];
  int32_t group = -1;
  if (hw.time_slice_replicas > 1) {
    // The GPU the pod's replica got: the replicas on one GPU share its steps.
    int32_t gpu = 0;
    const std::string& pod_name = units_.pod(r.pod).name;
    for (const gpufleet::BoundPod& b : fleet_.state().pods_on(r.node))
      if (b.pod.name == pod_name && !b.gpus.empty()) gpu = b.gpus.front();
    const uint64_t key = (node_key(r.node, fleet_.incarnation(r.node)) << 8) ^ static_cast<uint64_t>(gpu);
    group = share_groups_.try_emplace(key, static_cast<int32_t>(share_groups_.size())).first->second;
  }
  r.deployment_replica = s.deployment ? s.deployment->add_replica(t, *hw.step_time, hw.limits, group, catalog_.latency.time_slice_switch_fraction)
                                      : s.disaggregated->add_replica(Service::role(r.pool), t, *hw.step_time, hw.limits, group,
                                                                     catalog_.latency.time_slice_switch_fraction);
  r.busy_at_scrape_s = 0;
  ColdStart& log = s.result.cold_start_log[static_cast<size_t>(r.cold_start)];
  log.ready_s = t;
  ++s.result.cold_starts;
  ++pl.cold_starts;
  s.cold_start_s.push_back(static_cast<float>(t - log.created_s));
  s.result.max_ready_replicas = std::max(s.result.max_ready_replicas, s.ready_replicas());
  pl.max_ready = std::max(pl.max_ready, s.deployment_of(r.pool).ready_replicas());
  units_.mark_ready(r.unit, t);
}

void InferenceServices::on_scrape(uint32_t j, double t) {
  Service& s = *services_[pool_refs_[j].first];
  if (ended_) return;
  Pool& pl = s.pools[pool_refs_[j].second];
  const inference::Deployment& deployment = s.deployment_of(pool_refs_[j].second);
  replica_autoscaling::MetricSnapshot m;
  auto add = [&](const char* name, double value) {
    replica_autoscaling::MetricSample& x = m[name];
    x.sum += value;
    ++x.pods;
  };
  const double interval = t - pl.last_scrape_s;
  std::map<int32_t, inference::Deployment::ReplicaGauge> gauges;
  for (const inference::Deployment::ReplicaGauge& g : deployment.replica_gauges(t)) gauges[g.replica] = g;
  for (uint32_t ri : pl.bound) {
    Replica& r = replicas_[ri];
    auto g = gauges.find(r.deployment_replica);
    if (r.deployment_replica < 0 || g == gauges.end()) {
      add(kMetricGpuUtil, 0);  // starting: DCGM reads an idle GPU; vLLM's /metrics is not up yet
      continue;
    }
    add(kMetricRequestsWaiting, g->second.waiting);
    add(kMetricRequestsRunning, g->second.running);
    add(kMetricKvCacheUsage, g->second.kv_cache_usage);
    const double busy = g->second.busy_s - r.busy_at_scrape_s;
    r.busy_at_scrape_s = g->second.busy_s;
    add(kMetricGpuUtil, interval > 0 ? std::min(100.0, 100.0 * busy / interval) : 0.0);
  }
  add(kMetricRouterWaiting, static_cast<double>(deployment.router_queue_length()));
  add(kMetricRequestRate, interval > 0 ? static_cast<double>(pl.arrivals_since_scrape) / interval : 0.0);
  pl.arrivals_since_scrape = 0;
  pl.last_scrape_s = t;
  pl.snapshot = std::move(m);
  loop_.schedule(t + s.spec->scrape_interval_s, scrape_, j);
}

void InferenceServices::on_autoscale(uint32_t j, double t) {
  Service& s = *services_[pool_refs_[j].first];
  if (ended_) return;
  Pool& pl = s.pools[pool_refs_[j].second];
  const int32_t current = units_.replicas(pl.name);
  const int32_t wanted = pl.autoscaler->evaluate(
      t, replica_autoscaling::ScaleStatus{current, units_.live_replicas(pl.item), s.deployment_of(pool_refs_[j].second).ready_replicas()},
      pl.snapshot);
  const int32_t desired = std::clamp(wanted, std::max(0, pl.min_replicas), pl.max_replicas);
  if (desired != current) units_.scale(pl.name, desired, t);
  const double next = pl.autoscaler->next_evaluation_s(t);
  if (next > t && next <= loop_.horizon_s()) loop_.schedule(next, autoscale_, j);
}

void InferenceServices::record_sample(Service& s, double t) {
  const double k = std::ceil(t / sample_interval_s_) - 1;
  InferenceSample& row = s.rows[static_cast<size_t>(std::clamp(k, 0.0, static_cast<double>(s.rows.size() - 1)))];
  row.time_s = t;
  row.desired_replicas = 0;
  row.ready_replicas = 0;
  row.starting_replicas = 0;
  row.router_waiting = row.engine_waiting = row.engine_running = 0;
  row.kv_cache_usage = 0;
  double cost = 0;
  for (uint32_t pk = 0; pk < s.pools.size(); ++pk) {
    const Pool& pl = s.pools[pk];
    const inference::Deployment& d = s.deployment_of(pk);
    const int32_t desired = units_.replicas(pl.name), ready = d.ready_replicas();
    row.desired_replicas += desired;
    row.ready_replicas += ready;
    row.starting_replicas += static_cast<int32_t>(pl.bound.size()) - ready;
    row.router_waiting += d.router_queue_length();
    row.engine_waiting += d.num_requests_waiting();
    row.engine_running += d.num_requests_running();
    row.kv_cache_usage += d.kv_cache_usage_mean() * ready;
    for (uint32_t ri : pl.bound) cost += replicas_[ri].cost_usd_per_hour;
    if (s.disaggregated) {
      (pk == 0 ? row.prefill_desired_replicas : row.decode_desired_replicas) = desired;
      (pk == 0 ? row.prefill_ready_replicas : row.decode_ready_replicas) = ready;
    }
  }
  // The mean over the ready replicas of all pools (one pool: its own mean).
  if (s.pools.size() == 1) row.kv_cache_usage = s.deployment_of(0).kv_cache_usage_mean();
  else row.kv_cache_usage = row.ready_replicas > 0 ? row.kv_cache_usage / row.ready_replicas : 0;
  row.cost_usd_per_hour = cost;
}

void InferenceServices::on_sample(double t) {
  if (ended_) return;
  for (auto& s : services_) record_sample(*s, t);
  if (t + sample_interval_s_ < loop_.horizon_s()) loop_.schedule(t + sample_interval_s_, sample_);
}

void InferenceServices::on_end(double t) {
  if (ended_) return;
  for (auto& s : services_) {
    record_sample(*s, t);
    for (Pool& pl : s->pools)
      for (uint32_t ri : pl.bound) pl.gpu_seconds += replicas_[ri].gpus_held * (t - replicas_[ri].bound_s);
  }
  ended_ = true;  // what finishes now is in flight at the horizon: unfinished
  for (auto& s : services_) {
    if (s->deployment) s->deployment->finish(t);
    else s->disaggregated->finish(t);
  }
}

void InferenceServices::report(SimResult& result) const {
  for (const auto& sp : services_) {
    Service& s = *sp;  // the samples are sorted in place once, at the end
    InferenceServiceResult r = s.result;
    r.ttft = summarize(s.ttft);
    r.tpot = summarize(s.tpot);
    r.e2e = summarize(s.e2e);
    r.cold_start = summarize(s.cold_start_s);
    const int64_t ended = r.finished + r.timed_out + r.dropped + s.overdue;
    r.slo_attainment = ended > 0 ? static_cast<double>(s.met_slo) / static_cast<double>(ended) : 1.0;
    int64_t unschedulable = 0;
    std::string reason;
    for (uint32_t pk = 0; pk < s.pools.size(); ++pk) {
      const Pool& pl = s.pools[pk];
      double cost = 0;
      for (uint32_t u : units_.units_of(pl.item)) {
        const Units::Unit& unit = units_.unit(u);
        for (uint32_t p = unit.first_pod; p < unit.first_pod + unit.pod_count; ++p) cost += billing_.pod_charged_usd(p);
        if (unit.state == UnitState::kFailed && unschedulable++ == 0) reason = units_.failure_reason(u);
      }
      r.cost_usd += cost;
      r.gpu_hours += pl.gpu_seconds / kSecondsPerHour;
      if (r.disaggregation) {
        DisaggregatedRoleResult& role = pk == 0 ? r.disaggregation->prefill : r.disaggregation->decode;
        role.max_ready_replicas = pl.max_ready;
        role.cold_starts = pl.cold_starts;
        role.gpu_hours = pl.gpu_seconds / kSecondsPerHour;
        role.cost_usd = cost;
      }
    }
    if (s.disaggregated) {
      DisaggregationResult& d = *r.disaggregation;
      d.remote_prefills = s.disaggregated->remote_prefills();
      d.local_prefills = s.disaggregated->local_prefills();
      d.kv_transfers = s.disaggregated->transfers();
      d.kv_bytes_transferred = s.disaggregated->kv_bytes_transferred();
      d.kv_transfer_mean_s = d.kv_transfers > 0 ? s.disaggregated->transfer_seconds() / static_cast<double>(d.kv_transfers) : 0;
    }
    if (unschedulable > 0)
      r.notes.push_back(fmt::format("{} replica pod(s) can never be scheduled: {}", unschedulable, reason));
    const int64_t tokens = r.prompt_tokens + r.output_tokens;
    r.usd_per_million_tokens = tokens > 0 ? r.cost_usd / static_cast<double>(tokens) * 1e6 : 0;
    r.usd_per_million_output_tokens = r.output_tokens > 0 ? r.cost_usd / static_cast<double>(r.output_tokens) * 1e6 : 0;
    r.timeseries = s.rows;
    for (size_t k = 0; k < r.timeseries.size(); ++k)
      if (!s.row_ttft[k].empty()) {
        std::vector<float>& v = s.row_ttft[k];
        sort_samples(v);
        r.timeseries[k].ttft_p99_s = nearest_rank(v, 0.99);
      }
    result.inference.push_back(std::move(r));
  }
}

}  // namespace gpufleet::sim
