// A replica's steps in time (replica_engine.h): the Scheduler plans, the step-time model times, the
// Scheduler applies the step's results at its end; this file keeps the clock, the busy time and the
// observer's reports.
#include "inference/replica_engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>
#include <utility>

#include "inference/kv_cache_manager.h"
#include "inference/scheduler.h"

namespace gpufleet::inference {

const char* request_status_name(RequestStatus s) {
  switch (s) {
    case RequestStatus::kFinished: return "finished";
    case RequestStatus::kTimedOut: return "timed_out";
    case RequestStatus::kDropped: return "dropped";
  }
  return "unknown";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A step time, which must be positive and finite (else time would stand still).
double checked(double step_s) {
  if (!(step_s > 0) || !std::isfinite(step_s)) throw std::logic_error("StepTimeModel::step_seconds returned a non-positive or infinite time");
  return step_s;
}

}  // namespace

struct ReplicaEngine::Impl {
  // The clock first: run_until reads it for every replica at every event (one cache line).
  bool active = false;            // a step is in progress: `plan`, the scheduler's, in flight
  const StepPlan* plan = nullptr;
  double step_start = 0, step_end = 0;
  double ready_s = 0;             // when idle with work: when the next step may start
  double now = 0;
  double busy_done = 0;

  int32_t replica_id;
  const StepTimeModel* step_time;
  EngineLimits limits;
  Observer observer;
  KvCacheManager kv;
  Scheduler scheduler;
  StepRecord record;
  // The front end (replica_engine.h "Front end"): one FIFO server.
  FrontendCosts frontend;
  bool frontend_queued = false;
  double frontend_free_s = 0;     // when the server has done the work queued so far
  /// Requests in the server's arrival work, in order: when each reaches the engine (non-decreasing).
  std::deque<std::pair<double, Request>> entering;

  Impl(int32_t id, const StepTimeModel& st, const EngineLimits& l, Observer o, const EngineOptions& options)
      : replica_id(id),
        step_time(&st),
        limits(l),
        observer(std::move(o)),
        kv(l.block_size, l.num_blocks, l.enable_prefix_caching),
        scheduler(l, kv, options.decode_fast_path),
        frontend(st.frontend()),
        frontend_queued(frontend.queued()) {}

  /// `o` reported with this engine's id; `delay` the front end's for the last token of a finished
  /// request (0 otherwise), also the first token's when a prefill replica made it (Scheduler:
  /// first_token_frontend_s -1).
  void report(RequestOutcome o, double delay = 0) {
    if (!observer.on_outcome) return;
    o.replica = replica_id;
    if (o.first_token_frontend_s < 0) {
      o.first_token_frontend_s = delay;
      o.first_token_s += delay;
    }
    observer.on_outcome(o);
  }

  /// A request's arrival work on the front end from t: it reaches the engine when that is done.
  /// When that is before the step in progress ends and none is ahead of it, it joins the scheduler's
  /// waiting queue at once (the next step takes it either way; no event of its own).
  void enter(const Request& request, double t) {
    const double service = frontend.request_s + (request.chat ? frontend.chat_request_s : 0);
    frontend_free_s = std::max(frontend_free_s, t) + service;
    if (active && entering.empty() && frontend_free_s <= step_end) {
      scheduler.add_request(request);
      return;
    }
    entering.emplace_back(frontend_free_s, request);
  }

  /// Requests whose arrival work is done by t join the scheduler's waiting queue.
  void admit(double t) {
    while (!entering.empty() && entering.front().first <= t) {
      scheduler.add_request(entering.front().second);
      entering.pop_front();
    }
  }

  /// When the next step may start with the requests at hand (idle, not started); +infinity if none.
  double due_s() const {
    if (scheduler.has_work()) return ready_s;
    if (!entering.empty()) return std::max(ready_s, entering.front().first);
    return kInf;
  }

  /// The step starting at t: the scheduler's plan, timed.
  void begin_step(double t) {
    const StepPlan& p = scheduler.schedule();
    if (p.empty()) return;
    plan = &p;
    active = true;
    step_start = t;
    step_end = t + checked(step_time->step_seconds(p.batch));
    if (!observer.on_step) return;  // the record is the observer's only
    record.start_s = t;
    record.end_s = step_end;
    record.batch = p.batch;
    record.num_running = p.num_running;
    record.num_waiting = p.num_waiting;
    record.blocks_used = p.blocks_used;
    record.preempted = static_cast<int32_t>(p.preempted.size());
  }

  /// The step in progress ends: its results applied, its finished requests and itself reported.
  void end_step() {
    const double t = step_end;
    active = false;
    busy_done += step_end - step_start;
    // The step's outputs: the server's work for them queues behind what it has (FIFO), then the
    // latency; the client sees the step's tokens at `seen`.
    double seen = t;
    if (frontend_queued && frontend.output_token_s > 0) {
      frontend_free_s = std::max(frontend_free_s, t) + frontend.output_token_s * std::max(0, plan->batch.num_seqs);
      seen = frontend_free_s;
    }
    seen += frontend.latency_s;
    const double delay = seen - t;
    for (RequestOutcome o : scheduler.update_from_output(*plan, t, seen)) {
      if (delay > 0) {
        o.frontend_s = delay;
        o.finish_s = seen;
      }
      report(o, delay);
    }
    if (observer.on_step) observer.on_step(record);
    ready_s = t;
  }

  void run_until(double t) {
    for (;;) {
      if (!active) {
        const double due = entering.empty() ? (scheduler.has_work() ? ready_s : kInf) : due_s();
        if (!(due < t)) break;
        if (!entering.empty()) {
          ready_s = due;
          admit(due);
        }
        begin_step(ready_s);
        if (!active) break;
      }
      if (step_end <= t) {
        end_step();
        continue;
      }
      break;
    }
    if (t > now) now = t;
  }
};

ReplicaEngine::ReplicaEngine(int32_t replica_id, const StepTimeModel& step_time, const EngineLimits& limits, Observer observer,
                             EngineOptions options)
    : replica_id_(replica_id) {
  if (limits.max_num_seqs <= 0 || limits.max_num_batched_tokens <= 0 || limits.max_model_len <= 0 || limits.block_size <= 0 ||
      limits.num_blocks <= 0) {
    throw std::invalid_argument("engine limits (max_num_seqs, max_num_batched_tokens, max_model_len, block_size, num_blocks) must be positive");
  }
  impl_ = std::make_unique<Impl>(replica_id, step_time, limits, std::move(observer), options);
}

ReplicaEngine::~ReplicaEngine() = default;
ReplicaEngine::ReplicaEngine(ReplicaEngine&&) noexcept = default;
ReplicaEngine& ReplicaEngine::operator=(ReplicaEngine&&) noexcept = default;

void ReplicaEngine::add_request(const Request& request, double t) {
  Impl& m = *impl_;
  m.run_until(t);
  const bool was_idle = !m.active && !m.scheduler.has_work();
  // Refused at once: longer than max_model_len, or more KV than the whole cache (it could never run).
  const int64_t total = static_cast<int64_t>(request.prompt_tokens) + request.output_tokens;
  const int64_t kv_tokens = total - 1;  // the last output token is never fed back
  if (total > m.limits.max_model_len || m.kv.blocks_for(kv_tokens) > m.limits.num_blocks) {
    RequestOutcome o;
    o.id = request.id;
    o.status = RequestStatus::kDropped;
    o.arrival_s = request.arrival_s;
    o.finish_s = t;
    o.prompt_tokens = request.prompt_tokens;
    o.output_tokens = request.output_tokens;
    m.report(o);
    return;
  }
  if (m.frontend_queued) {
    m.enter(request, t);
    return;
  }
  m.scheduler.add_request(request);
  if (was_idle) m.ready_s = t;
}

void ReplicaEngine::run_until(double t) { impl_->run_until(t); }

void ReplicaEngine::start_due_step() {
  Impl& m = *impl_;
  if (m.active) return;
  if (m.entering.empty()) {
    if (m.scheduler.has_work()) m.begin_step(m.ready_s);
    return;
  }
  const double due = m.due_s();
  if (!(due <= m.now)) return;  // the first request still in the front end reaches the engine later
  m.ready_s = due;
  m.admit(due);
  m.begin_step(due);
}

double ReplicaEngine::next_step_end_s() const { return impl_->active ? impl_->step_end : kInf; }
double ReplicaEngine::next_wake_s() const {
  const Impl& m = *impl_;
  return m.active ? m.step_end : m.due_s();
}

bool ReplicaEngine::abort(uint64_t request_id, RequestStatus status, double t) {
  Impl& m = *impl_;
  m.run_until(t);
  for (auto it = m.entering.begin(); it != m.entering.end(); ++it) {
    if (it->second.id != request_id) continue;
    RequestOutcome o;  // still in the front end: it never reached the engine (its work stays done)
    o.id = request_id;
    o.status = status;
    o.arrival_s = it->second.arrival_s;
    o.finish_s = t;
    o.prompt_tokens = it->second.prompt_tokens;
    o.output_tokens = it->second.output_tokens;
    m.entering.erase(it);
    m.report(o);
    return true;
  }
  std::optional<RequestOutcome> o = m.scheduler.finish_request(request_id, status, t);
  if (!o) return false;
  m.report(*o);
  return true;
}

std::vector<Request> ReplicaEngine::evict_all(double t) {
  Impl& m = *impl_;
  m.run_until(t);
  if (m.active) {  // the step in progress is abandoned
    m.busy_done += std::max(0.0, std::min(t, m.step_end) - m.step_start);
    m.active = false;
    m.record.preempted = 0;
  }
  std::vector<Request> out = m.scheduler.evict_all();
  for (auto& [at, request] : m.entering) out.push_back(std::move(request));  // arrived after those in the engine
  m.entering.clear();
  return out;
}

int32_t ReplicaEngine::num_requests_running() const { return impl_->scheduler.num_running(); }
int32_t ReplicaEngine::num_requests_waiting() const {
  return impl_->scheduler.num_waiting() + static_cast<int32_t>(impl_->entering.size());
}
double ReplicaEngine::kv_cache_usage() const { return impl_->kv.usage(); }
int32_t ReplicaEngine::outstanding() const { return num_requests_running() + num_requests_waiting(); }
double ReplicaEngine::busy_seconds(double t) const {
  const Impl& m = *impl_;
  double b = m.busy_done;
  if (m.active && t > m.step_start) b += std::min(t, m.step_end) - m.step_start;
  return b;
}
int64_t ReplicaEngine::prefix_cache_queries() const { return impl_->kv.prefix_cache_queries(); }
int64_t ReplicaEngine::prefix_cache_hits() const { return impl_->kv.prefix_cache_hits(); }

}  // namespace gpufleet::inference
