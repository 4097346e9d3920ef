// A prefill pool, a decode pool and the KV transfers between them (disaggregated_deployment.h).
//
// The prefill pool depends on nothing else, so advance_to(t) runs it to t first; its finished
// prefills become transfers, kept in a queue by landing time (then start order), and each one that
// lands by t is submitted to the decode pool at its landing time, the decode pool advancing from
// landing to landing. A transfer's landing time is after the prefill step that started it, which
// is after the decode pool's last time, so the decode pool's time never goes back.
#include "inference/disaggregated_deployment.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace gpufleet::inference {

void check_kv_transfer_gbps(double gbps) {
  if (!(gbps >= 0.001 && gbps <= 1e6)) throw std::invalid_argument(fmt::format("{} is outside [0.001, 1000000] Gb/s", gbps));
}

void check_kv_transfer_latency_ms(double latency_ms) {
  if (!(latency_ms >= 0 && latency_ms <= 1e6)) throw std::invalid_argument(fmt::format("{} is outside [0, 1000000] ms", latency_ms));
}

KvTransferLink kv_transfer_link(std::string_view name) {
  if (name == "nvlink") return {"nvlink", 450, true, 0.0001};
  if (name == "rdma") return {"rdma", 50, true, 0.001};
  if (name == "tcp") return {"tcp", 3, false, 0.005};
  throw std::invalid_argument(fmt::format("kv_transfer_link: unknown link '{}' (nvlink, rdma, tcp)", name));
}

double kv_transfer_seconds(int64_t tokens, double decode_kv_bytes_per_token_per_gpu, int32_t prefill_tp, int32_t decode_tp,
                           const KvTransferLink& link) {
  if (tokens < 0) throw std::invalid_argument(fmt::format("kv transfer: tokens {} must be >= 0", tokens));
  if (prefill_tp < 1 || decode_tp < 1)
    throw std::invalid_argument(fmt::format("kv transfer: tensor_parallel_size {} / {} must be >= 1", prefill_tp, decode_tp));
  if (!(decode_kv_bytes_per_token_per_gpu >= 0) || !std::isfinite(decode_kv_bytes_per_token_per_gpu))
    throw std::invalid_argument(fmt::format("kv transfer: KV bytes per token {} must be >= 0", decode_kv_bytes_per_token_per_gpu));
  if (!(link.gb_s > 0) || !std::isfinite(link.gb_s))
    throw std::invalid_argument(fmt::format("kv transfer: link {} bandwidth {} GB/s must be positive", link.name, link.gb_s));
  if (!(link.latency_s >= 0) || !std::isfinite(link.latency_s))
    throw std::invalid_argument(fmt::format("kv transfer: link {} latency {} s must be >= 0", link.name, link.latency_s));
  const double bytes = static_cast<double>(tokens) * decode_kv_bytes_per_token_per_gpu * decode_tp;
  const int32_t links = link.per_gpu ? std::min(prefill_tp, decode_tp) : 1;
  return bytes / (link.gb_s * 1e9 * links) + link.latency_s;
}

struct DisaggregatedDeployment::Impl {
  struct Transfer {
    double lands_s;
    uint64_t order;
    Request request;  // as the decode pool gets it
  };
  struct Later {
    bool operator()(const Transfer& a, const Transfer& b) const {
      return a.lands_s != b.lands_s ? a.lands_s > b.lands_s : a.order > b.order;
    }
  };

  DisaggregationConfig config;
  Observer observer;
  std::unordered_map<uint64_t, Request> remote;   // caller id -> the request as submitted, while in prefill or transfer
  std::unordered_map<uint64_t, int32_t> prefill_preemptions;  // caller id -> preemptions on the prefill side
  std::priority_queue<Transfer, std::vector<Transfer>, Later> transfers;
  uint64_t transfer_order = 0;
  int64_t n_remote = 0, n_local = 0, n_transfers = 0;
  double bytes = 0, transfer_s = 0;
  std::unique_ptr<Deployment> prefill, decode;

  Impl(const DisaggregationConfig& c, Observer o) : config(c), observer(std::move(o)) {}

  void report(const RequestOutcome& o) {
    if (observer.on_outcome) observer.on_outcome(o);
  }

  /// A prefill finished (or failed) on the prefill pool.
  void on_prefill_outcome(const RequestOutcome& o) {
    auto it = remote.find(o.id);
    if (it == remote.end()) return;  // not expected: every prefill request is in `remote`
    Request req = std::move(it->second);
    remote.erase(it);
    if (o.status != RequestStatus::kFinished || req.output_tokens == 1) {
      RequestOutcome out = o;
      out.output_tokens = req.output_tokens;
      report(out);
      return;
    }
    const double dt = kv_transfer_seconds(req.prompt_tokens, config.decode_kv_bytes_per_token_per_gpu, config.prefill_tensor_parallel_size,
                                          config.decode_tensor_parallel_size, config.link);
    ++n_transfers;
    bytes += static_cast<double>(req.prompt_tokens) * config.decode_kv_bytes_per_token_per_gpu * config.decode_tensor_parallel_size;
    transfer_s += dt;
    // The prefill replica's engine times: the client's front end is the decode replica's, whose
    // outcome adds its delay once (StepTimeModel::frontend).
    if (config.first_token == FirstTokenFrom::kPrefill) {
      req.kv_transferred_tokens = req.prompt_tokens;
      req.remote_first_token_s = o.first_token_s - o.first_token_frontend_s;
    } else {
      req.kv_transferred_tokens = req.prompt_tokens - 1;
    }
    if (o.preemptions > 0) prefill_preemptions[req.id] = o.preemptions;
    transfers.push({o.finish_s - o.frontend_s + dt, transfer_order++, std::move(req)});
  }

  void on_decode_outcome(const RequestOutcome& o) {
    RequestOutcome out = o;
    if (auto it = prefill_preemptions.find(o.id); it != prefill_preemptions.end()) {
      out.preemptions += it->second;
      prefill_preemptions.erase(it);
    }
    report(out);
  }

  /// Hands every transfer landing at or before t to the decode pool, then runs it to t.
  void land(double t) {
    while (!transfers.empty() && transfers.top().lands_s <= t) {
      Transfer x = transfers.top();
      transfers.pop();
      decode->advance_to(x.lands_s);
      decode->submit(x.request, x.lands_s);
    }
    decode->advance_to(t);
  }

  void advance_to(double t) {
    prefill->advance_to(t);
    land(t);
  }
};

DisaggregatedDeployment::DisaggregatedDeployment(const DisaggregationConfig& config, RouterConfig router, Observer observer)
    : impl_(std::make_unique<Impl>(config, std::move(observer))) {
  kv_transfer_seconds(0, config.decode_kv_bytes_per_token_per_gpu, config.prefill_tensor_parallel_size, config.decode_tensor_parallel_size,
                      config.link);
  if (!(config.decode_kv_bytes_per_token_per_gpu > 0))
    throw std::invalid_argument(fmt::format("disaggregation: decode KV bytes per token {} must be positive", config.decode_kv_bytes_per_token_per_gpu));
  if (config.max_local_prefill_tokens < 0)
    throw std::invalid_argument(fmt::format("disaggregation: max_local_prefill_tokens {} must be >= 0", config.max_local_prefill_tokens));
  Impl& m = *impl_;
  Deployment::Observer po, dobs;
  po.on_outcome = [&m](const RequestOutcome& o) { m.on_prefill_outcome(o); };
  if (m.observer.on_prefill_step) po.on_step = m.observer.on_prefill_step;
  dobs.on_outcome = [&m](const RequestOutcome& o) { m.on_decode_outcome(o); };
  if (m.observer.on_decode_step) dobs.on_step = m.observer.on_decode_step;
  m.prefill = std::make_unique<Deployment>(router, std::move(po));
  m.decode = std::make_unique<Deployment>(router, std::move(dobs));
}

DisaggregatedDeployment::~DisaggregatedDeployment() = default;

int32_t DisaggregatedDeployment::add_prefill_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits) {
  impl_->advance_to(t);
  return impl_->prefill->add_replica(t, step_time, limits);
}

int32_t DisaggregatedDeployment::add_decode_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits) {
  impl_->advance_to(t);
  return impl_->decode->add_replica(t, step_time, limits);
}

int32_t DisaggregatedDeployment::add_replica(Role role, double t, const StepTimeModel& step_time, const EngineLimits& limits,
                                             int32_t gpu_share_group, double time_slice_switch_fraction) {
  impl_->advance_to(t);
  Deployment& d = role == Role::kPrefill ? *impl_->prefill : *impl_->decode;
  return d.add_replica(t, step_time, limits, gpu_share_group, time_slice_switch_fraction);
}

void DisaggregatedDeployment::drain_replica(Role role, int32_t replica, double t, double timeout_s) {
  impl_->advance_to(t);
  (role == Role::kPrefill ? *impl_->prefill : *impl_->decode).drain_replica(replica, t, timeout_s);
}

const Deployment& DisaggregatedDeployment::pool(Role role) const { return role == Role::kPrefill ? *impl_->prefill : *impl_->decode; }

void DisaggregatedDeployment::submit(const Request& request, double t) {
  Impl& m = *impl_;
  m.advance_to(t);
  if (request.prompt_tokens <= m.config.max_local_prefill_tokens) {
    ++m.n_local;
    m.decode->submit(request, t);
    return;
  }
  ++m.n_remote;
  m.remote[request.id] = request;
  Request p = request;
  p.output_tokens = 1;  // the llm-d sidecar's prefill request: max_tokens 1
  m.prefill->submit(p, t);
}

void DisaggregatedDeployment::advance_to(double t) { impl_->advance_to(t); }

void DisaggregatedDeployment::start_due_steps() {
  impl_->prefill->start_due_steps();
  impl_->decode->start_due_steps();
}

double DisaggregatedDeployment::next_event_s() const {
  const Impl& m = *impl_;
  double next = std::min(m.prefill->next_event_s(), m.decode->next_event_s());
  if (!m.transfers.empty()) next = std::min(next, m.transfers.top().lands_s);
  return next;
}

void DisaggregatedDeployment::finish(double t) {
  Impl& m = *impl_;
  m.prefill->finish(t);  // prefills in flight end as timed out (on_prefill_outcome reports them)
  m.land(t);
  m.decode->finish(t);
  while (!m.transfers.empty()) {  // still on the wire at t
    const Request& q = m.transfers.top().request;
    RequestOutcome o;
    o.id = q.id;
    o.status = RequestStatus::kTimedOut;
    o.arrival_s = q.arrival_s;
    o.first_token_s = q.remote_first_token_s;
    o.finish_s = t;
    o.prompt_tokens = q.prompt_tokens;
    o.output_tokens = q.output_tokens;
    o.generated_tokens = q.remote_first_token_s >= 0 ? 1 : 0;
    if (auto it = m.prefill_preemptions.find(q.id); it != m.prefill_preemptions.end()) {
      o.preemptions = it->second;
      m.prefill_preemptions.erase(it);
    }
    m.transfers.pop();
    m.report(o);
  }
}

int64_t DisaggregatedDeployment::remote_prefills() const { return impl_->n_remote; }
int64_t DisaggregatedDeployment::local_prefills() const { return impl_->n_local; }
int64_t DisaggregatedDeployment::transfers() const { return impl_->n_transfers; }
double DisaggregatedDeployment::kv_bytes_transferred() const { return impl_->bytes; }
double DisaggregatedDeployment::transfer_seconds() const { return impl_->transfer_s; }
double DisaggregatedDeployment::prefill_busy_seconds(double t) const { return impl_->prefill->busy_seconds(t); }
double DisaggregatedDeployment::decode_busy_seconds(double t) const { return impl_->decode->busy_seconds(t); }

}  // namespace gpufleet::inference
