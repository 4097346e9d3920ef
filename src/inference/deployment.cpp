// Router, flow control, timeouts and replicas that come and go (deployment.h).
//
// Requests are numbered in submission order (their sequence number is the id the engines see;
// the caller's id is restored on every outcome). A table indexed by sequence number says where each
// unfinished request is (the router queue or a replica); since the timeout runs from arrival and
// arrivals come in order, the oldest unfinished request is the next to time out.
//
// Time: advance_to(t) runs the replicas independently up to the next event that needs the router
// (a timeout, t), except while requests wait at the router or replicas share a GPU: then it goes
// from step end to step end, so that a replica that frees room takes the router's head at that
// instant and the replicas of a share group see one another's load.
// Each replica's next wake time and load are kept in arrays (refresh after every engine call that
// changes them), so an event runs only the replicas with something due and the router reads loads
// without visiting the engines.
#include "inference/deployment.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace gpufleet::inference {

const char* routing_policy_name(RoutingPolicy p) {
  switch (p) {
    case RoutingPolicy::kLeastOutstanding: return "least-outstanding";
    case RoutingPolicy::kRoundRobin: return "round-robin";
    case RoutingPolicy::kPrefixAffinity: return "prefix-affinity";
    case RoutingPolicy::kEndpointPicker: return "endpoint-picker";
  }
  return "unknown";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int32_t kAtRouter = -1;
constexpr int32_t kDone = -2;

struct Entry {
  uint64_t id;        // the caller's id
  double arrival_s;
  int32_t where;      // replica id, kAtRouter or kDone
};

}  // namespace

namespace {

/// A time-sliced replica's step: the inner step time x (1 + switch fraction) x the replicas of its
/// group with work (`busy`, counted when the step starts), when more than one has work.
class SharedStepTime final : public StepTimeModel {
 public:
  SharedStepTime(const StepTimeModel& inner, std::function<int32_t()> busy, double switch_fraction)
      : inner_(&inner), busy_(std::move(busy)), switch_fraction_(switch_fraction) {}
  double step_seconds(const StepBatch& batch) const override {
    const double base = inner_->step_seconds(batch);
    const int32_t n = busy_();
    return n > 1 ? base * (1 + switch_fraction_) * n : base;
  }

 private:
  const StepTimeModel* inner_;
  std::function<int32_t()> busy_;
  double switch_fraction_;
};

}  // namespace

struct Deployment::Impl {
  struct Replica {
    std::unique_ptr<SharedStepTime> shared;
    std::unique_ptr<ReplicaEngine> engine;
    EngineLimits limits;
    int32_t group = -1;
    bool ready = false;
  };
  // A replica that left the router but finishes its requests (drain_replica), until its deadline.
  struct Draining {
    int32_t replica;
    double deadline_s;
  };

  RouterConfig router;
  Observer observer;
  std::vector<Replica> replicas;          // by id
  // By replica id, refreshed after every call that changes the engine (refresh): its next_wake_s
  // (advance_to runs only the replicas with something due) and its outstanding (the router's load).
  std::vector<double> wake_s;
  std::vector<int32_t> load;
  std::vector<int32_t> ready_ids;         // ascending
  std::vector<Draining> draining;         // in order of drain_replica
  std::deque<Request> queue;              // held at the router, ids = sequence numbers
  std::deque<Entry> table;                // by sequence number - table_base
  uint64_t table_base = 0;
  double now = 0;
  double retired_busy_s = 0;
  int32_t shared_groups = 0;              // replicas in a share group (fine stepping while > 0)
  int32_t rr_next = 0;
  // Prefix affinity: prefix hash -> replicas that served a request with it.
  std::unordered_map<uint32_t, std::vector<int32_t>> served;
  std::unique_ptr<EndpointPicker> epp;  // kEndpointPicker

  Impl(RouterConfig r, Observer o) : router(r), observer(std::move(o)) {
    if (router.policy == RoutingPolicy::kEndpointPicker) {
      epp = std::make_unique<EndpointPicker>(
          router.endpoint_picker ? *router.endpoint_picker : resolve_endpoint_picker(default_endpoint_picker_config()),
          router.endpoint_picker_seed);
    }
  }

  /// What the endpoint picker scrapes from the ready replicas (with room, when `with_room`).
  std::vector<EndpointMetrics> epp_metrics(bool with_room) const {
    std::vector<EndpointMetrics> m;
    for (int32_t r : ready_ids) {
      const Replica& x = replicas[static_cast<size_t>(r)];
      if (with_room && !has_room(r)) continue;
      m.push_back({r, x.engine->num_requests_waiting(), x.engine->kv_cache_usage(), x.limits.block_size, x.limits.num_blocks});
    }
    return m;
  }

  void refresh(int32_t r) {
    const ReplicaEngine& e = *replicas[static_cast<size_t>(r)].engine;
    wake_s[static_cast<size_t>(r)] = e.next_wake_s();
    load[static_cast<size_t>(r)] = e.outstanding();
  }

  /// Runs the replica to t if anything is due by then.
  void run_replica(int32_t r, double t) {
    if (wake_s[static_cast<size_t>(r)] > t) return;
    replicas[static_cast<size_t>(r)].engine->run_until(t);
    refresh(r);
  }

  Entry& entry(uint64_t seq) { return table[static_cast<size_t>(seq - table_base)]; }

  void on_engine_outcome(const RequestOutcome& o) {
    Entry& e = entry(o.id);
    e.where = kDone;
    if (observer.on_outcome) {
      RequestOutcome out = o;
      out.id = e.id;
      observer.on_outcome(out);
    }
  }

  int32_t group_busy(int32_t group) const {
    int32_t n = 0;
    for (int32_t r : ready_ids) {
      const Replica& x = replicas[static_cast<size_t>(r)];
      if (x.group == group && x.engine->outstanding() > 0) ++n;
    }
    for (const Draining& d : draining) {
      const Replica& x = replicas[static_cast<size_t>(d.replica)];
      if (x.group == group && x.engine->outstanding() > 0) ++n;
    }
    return n;
  }

  /// The replica's engine goes away at t: its unfinished requests go back to the router's front, in
  /// arrival order, and start over elsewhere.
  void retire(int32_t replica, double t) {
    Replica& x = replicas[static_cast<size_t>(replica)];
    std::vector<Request> back = x.engine->evict_all(t);
    retired_busy_s += x.engine->busy_seconds(t);
    if (x.group >= 0) --shared_groups;
    for (auto it = back.rbegin(); it != back.rend(); ++it) {
      entry(it->id).where = kAtRouter;
      queue.push_front(std::move(*it));
    }
    x.engine.reset();
    x.shared.reset();
    wake_s[static_cast<size_t>(replica)] = kInf;
    load[static_cast<size_t>(replica)] = 0;
  }

  /// Retires the draining replicas that are empty or past their deadline at `now`.
  void end_drains() {
    for (size_t i = 0; i < draining.size();) {
      const Draining d = draining[i];
      if (replicas[static_cast<size_t>(d.replica)].engine->outstanding() == 0 || now >= d.deadline_s) {
        retire(d.replica, now);
        draining.erase(draining.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  bool has_room(int32_t r) const {
    return router.max_outstanding_per_replica <= 0 || load[static_cast<size_t>(r)] < router.max_outstanding_per_replica;
  }

  int32_t least_outstanding(const std::vector<int32_t>& ids) const {
    int32_t best = -1, best_load = std::numeric_limits<int32_t>::max();
    for (int32_t r : ids) {
      if (!has_room(r)) continue;
      const int32_t l = load[static_cast<size_t>(r)];
      if (l < best_load) best = r, best_load = l;
    }
    return best;
  }

  /// The replica for `req` under the policy among ready replicas with room; -1 if none.
  int32_t pick(const Request& req) {
    if (ready_ids.empty()) return -1;
    switch (router.policy) {
      case RoutingPolicy::kLeastOutstanding: return least_outstanding(ready_ids);
      case RoutingPolicy::kRoundRobin: {
        const size_t start = static_cast<size_t>(std::lower_bound(ready_ids.begin(), ready_ids.end(), rr_next) - ready_ids.begin());
        for (size_t k = 0; k < ready_ids.size(); ++k) {
          const int32_t r = ready_ids[(start + k) % ready_ids.size()];
          if (has_room(r)) {
            rr_next = r + 1;
            return r;
          }
        }
        return -1;
      }
      case RoutingPolicy::kPrefixAffinity: {
        int32_t lo = std::numeric_limits<int32_t>::max(), hi = -1;
        for (int32_t r : ready_ids) {
          if (!has_room(r)) continue;
          lo = std::min(lo, load[static_cast<size_t>(r)]);
          hi = std::max(hi, load[static_cast<size_t>(r)]);
        }
        if (hi < 0) return -1;
        if (hi - lo > router.prefix_affinity_balance_abs && hi > router.prefix_affinity_balance_rel * lo) {
          return least_outstanding(ready_ids);
        }
        // The replicas that served the longest chain of this request's leading prefix hashes.
        std::vector<int32_t> match;
        size_t matched = 0;
        for (size_t i = 0; i < req.prefix_hashes.size(); ++i) {
          auto it = served.find(req.prefix_hashes[i]);
          if (it == served.end()) break;
          std::vector<int32_t> next;
          for (int32_t r : it->second) {
            if (!replicas[static_cast<size_t>(r)].ready) continue;
            if (i == 0 || std::find(match.begin(), match.end(), r) != match.end()) next.push_back(r);
          }
          if (next.empty()) break;
          match.swap(next);
          matched = i + 1;
        }
        if (static_cast<double>(matched) <= router.prefix_affinity_min_match * static_cast<double>(req.prefix_hashes.size())) {
          return least_outstanding(ready_ids);
        }
        std::sort(match.begin(), match.end());
        const int32_t r = least_outstanding(match);
        return r >= 0 ? r : least_outstanding(ready_ids);
      }
      case RoutingPolicy::kEndpointPicker: {
        const std::vector<EndpointMetrics> m = epp_metrics(true);
        return m.empty() ? -1 : epp->pick(req, m);
      }
    }
    return -1;
  }

  void send(Request req, int32_t r) {
    entry(req.id).where = r;
    if (router.policy == RoutingPolicy::kPrefixAffinity) {
      for (uint32_t h : req.prefix_hashes) {
        std::vector<int32_t>& v = served[h];
        if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
      }
    }
    replicas[static_cast<size_t>(r)].engine->add_request(req, now);
    refresh(r);
  }

  void dispatch() {
    while (!queue.empty()) {
      const int32_t r = pick(queue.front());
      if (r < 0) return;
      Request req = std::move(queue.front());
      queue.pop_front();
      send(std::move(req), r);
    }
  }

  void pop_done() {
    while (!table.empty() && table.front().where == kDone) {
      table.pop_front();
      ++table_base;
    }
  }

  /// Ends the request with sequence number `seq` (unfinished) as `status` at t, wherever it is.
  void end_request(uint64_t seq, RequestStatus status, double t) {
    Entry& e = entry(seq);
    if (e.where >= 0) {
      const int32_t r = e.where;
      replicas[static_cast<size_t>(r)].engine->abort(seq, status, t);  // reports through on_engine_outcome
      refresh(r);
      return;
    }
    auto it = std::find_if(queue.begin(), queue.end(), [seq](const Request& q) { return q.id == seq; });
    RequestOutcome o;
    o.id = e.id;
    o.status = status;
    o.arrival_s = e.arrival_s;
    o.finish_s = t;
    if (it != queue.end()) {
      o.prompt_tokens = it->prompt_tokens;
      o.output_tokens = it->output_tokens;
      queue.erase(it);
    }
    e.where = kDone;
    if (observer.on_outcome) observer.on_outcome(o);
  }

  void expire(double t) {
    if (router.request_timeout_s <= 0) return;
    for (;;) {
      pop_done();
      if (table.empty() || table.front().arrival_s + router.request_timeout_s > t) return;
      end_request(table_base, RequestStatus::kTimedOut, table.front().arrival_s + router.request_timeout_s);
    }
  }

  /// The end of the replica's step in progress, starting the step due now if it is idle with work.
  double started_step_end(int32_t replica) {
    ReplicaEngine& e = *replicas[static_cast<size_t>(replica)].engine;
    e.start_due_step();
    refresh(replica);
    return e.next_step_end_s();
  }

  /// The oldest unfinished request's timeout, +infinity when none (or no timeout).
  double next_timeout_s() const {
    if (router.request_timeout_s <= 0) return kInf;
    for (const Entry& e : table)
      if (e.where != kDone) return e.arrival_s + router.request_timeout_s;
    return kInf;
  }

  void advance_to(double t) {
    // Steps due to start now stay unscheduled until time moves on, so that every request submitted
    // at this instant joins them (and a share group counts every replica with work).
    if (t <= now) return;
    for (;;) {
      double next = t;
      if (router.request_timeout_s > 0) {
        pop_done();
        if (!table.empty()) next = std::min(next, table.front().arrival_s + router.request_timeout_s);
      }
      if (!queue.empty() || shared_groups > 0) {
        for (int32_t r : ready_ids) next = std::min(next, started_step_end(r));
      }
      for (const Draining& d : draining) {  // a drained replica leaves when empty: step by step
        next = std::min(next, std::min(d.deadline_s, started_step_end(d.replica)));
      }
      if (next < now) next = now;
      for (int32_t r : ready_ids) run_replica(r, next);
      for (const Draining& d : draining) run_replica(d.replica, next);
      now = next;
      expire(next);
      end_drains();
      dispatch();
      if (next >= t) return;
    }
  }
};

Deployment::Deployment(RouterConfig router, Observer observer) : impl_(std::make_unique<Impl>(router, std::move(observer))) {}
Deployment::~Deployment() = default;

int32_t Deployment::add_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits, int32_t gpu_share_group,
                                double time_slice_switch_fraction) {
  Impl& d = *impl_;
  d.advance_to(t);
  const int32_t id = static_cast<int32_t>(d.replicas.size());
  Impl::Replica x;
  x.group = gpu_share_group;
  x.limits = limits;
  const StepTimeModel* st = &step_time;
  if (gpu_share_group >= 0) {
    x.shared = std::make_unique<SharedStepTime>(
        step_time, [&d, gpu_share_group] { return d.group_busy(gpu_share_group); }, time_slice_switch_fraction);
    st = x.shared.get();
    ++d.shared_groups;
  }
  ReplicaEngine::Observer eo;
  eo.on_outcome = [&d](const RequestOutcome& o) { d.on_engine_outcome(o); };
  if (d.observer.on_step) eo.on_step = [&d, id](const StepRecord& s) { d.observer.on_step(id, s); };
  x.engine = std::make_unique<ReplicaEngine>(id, *st, limits, std::move(eo));
  x.engine->run_until(t);
  x.ready = true;
  d.replicas.push_back(std::move(x));
  d.wake_s.push_back(kInf);
  d.load.push_back(0);
  d.refresh(id);
  d.ready_ids.push_back(id);
  d.dispatch();
  return id;
}

void Deployment::remove_replica(int32_t replica, double t) {
  Impl& d = *impl_;
  if (replica < 0 || replica >= static_cast<int32_t>(d.replicas.size()) || !d.replicas[static_cast<size_t>(replica)].ready) {
    throw std::invalid_argument("remove_replica: no ready replica " + std::to_string(replica));
  }
  d.advance_to(t);
  d.replicas[static_cast<size_t>(replica)].ready = false;
  d.ready_ids.erase(std::find(d.ready_ids.begin(), d.ready_ids.end(), replica));
  d.retire(replica, t);
  d.dispatch();
}

void Deployment::drain_replica(int32_t replica, double t, double timeout_s) {
  Impl& d = *impl_;
  if (timeout_s <= 0) {
    remove_replica(replica, t);
    return;
  }
  if (replica < 0 || replica >= static_cast<int32_t>(d.replicas.size()) || !d.replicas[static_cast<size_t>(replica)].ready) {
    throw std::invalid_argument("drain_replica: no ready replica " + std::to_string(replica));
  }
  d.advance_to(t);
  d.replicas[static_cast<size_t>(replica)].ready = false;
  d.ready_ids.erase(std::find(d.ready_ids.begin(), d.ready_ids.end(), replica));
  d.draining.push_back({replica, t + timeout_s});
  d.end_drains();  // an idle replica leaves at once
  d.dispatch();
}

void Deployment::submit(const Request& request, double t) {
  Impl& d = *impl_;
  d.advance_to(t);
  const uint64_t seq = d.table_base + d.table.size();
  d.table.push_back({request.id, request.arrival_s, kAtRouter});
  Request req = request;
  req.id = seq;
  d.queue.push_back(std::move(req));
  if (d.epp && !d.epp->admit(d.router.objective_priority, d.epp_metrics(false))) d.end_request(seq, RequestStatus::kDropped, t);
  d.dispatch();
  d.pop_done();
}

void Deployment::advance_to(double t) { impl_->advance_to(t); }

void Deployment::start_due_steps() {
  Impl& d = *impl_;
  for (int32_t r : d.ready_ids) {
    d.replicas[static_cast<size_t>(r)].engine->start_due_step();
    d.refresh(r);
  }
  for (const Impl::Draining& x : d.draining) {
    d.replicas[static_cast<size_t>(x.replica)].engine->start_due_step();
    d.refresh(x.replica);
  }
  d.pop_done();
}

double Deployment::next_event_s() const {
  const Impl& d = *impl_;
  // A replica's step in progress ends, or (idle) a request leaves its front end for the engine: a
  // wake-up after now (one at now would be a due step that could not start: none).
  auto engine_event = [&](int32_t r) {
    const ReplicaEngine& e = *d.replicas[static_cast<size_t>(r)].engine;
    const double end = e.next_step_end_s();
    if (end < kInf) return end;
    const double wake = e.next_wake_s();
    return wake > d.now ? wake : kInf;
  };
  double next = d.next_timeout_s();
  for (int32_t r : d.ready_ids) next = std::min(next, engine_event(r));
  for (const Impl::Draining& x : d.draining) next = std::min(next, std::min(x.deadline_s, engine_event(x.replica)));
  return next;
}

void Deployment::finish(double t) {
  Impl& d = *impl_;
  d.advance_to(t);
  for (uint64_t seq = d.table_base; seq < d.table_base + d.table.size(); ++seq) {
    if (d.entry(seq).where != kDone) d.end_request(seq, RequestStatus::kTimedOut, t);
  }
  d.pop_done();
}

int32_t Deployment::ready_replicas() const { return static_cast<int32_t>(impl_->ready_ids.size()); }
int64_t Deployment::router_queue_length() const { return static_cast<int64_t>(impl_->queue.size()); }
int64_t Deployment::num_requests_waiting() const {
  int64_t n = 0;
  for (int32_t r : impl_->ready_ids) n += impl_->replicas[static_cast<size_t>(r)].engine->num_requests_waiting();
  return n;
}
int64_t Deployment::num_requests_running() const {
  int64_t n = 0;
  for (int32_t r : impl_->ready_ids) n += impl_->replicas[static_cast<size_t>(r)].engine->num_requests_running();
  return n;
}
double Deployment::kv_cache_usage_mean() const {
  if (impl_->ready_ids.empty()) return 0;
  double s = 0;
  for (int32_t r : impl_->ready_ids) s += impl_->replicas[static_cast<size_t>(r)].engine->kv_cache_usage();
  return s / static_cast<double>(impl_->ready_ids.size());
}
double Deployment::busy_seconds(double t) const {
  double s = impl_->retired_busy_s;
  for (int32_t r : impl_->ready_ids) s += impl_->replicas[static_cast<size_t>(r)].engine->busy_seconds(t);
  for (const Impl::Draining& d : impl_->draining) s += impl_->replicas[static_cast<size_t>(d.replica)].engine->busy_seconds(t);
  return s;
}
std::vector<Deployment::ReplicaGauge> Deployment::replica_gauges(double t) const {
  std::vector<ReplicaGauge> out;
  for (int32_t r : impl_->ready_ids) {
    const ReplicaEngine& e = *impl_->replicas[static_cast<size_t>(r)].engine;
    out.push_back({r, e.num_requests_running(), e.num_requests_waiting(), e.kv_cache_usage(), e.busy_seconds(t)});
  }
  return out;
}

}  // namespace gpufleet::inference
