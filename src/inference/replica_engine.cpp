// A replica's steps in time (replica_engine.h): the Scheduler plans, the step-time model times, the
// Scheduler applies the step's results at its end; this file keeps the clock, the busy time and the
// observer's reports.
#include "inference/replica_engine.h"

#include <algorithm>
#include <cmath>
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
  int32_t step_in_flight = 0;     // running + waiting when the step in progress was planned (the front end's load)

  Impl(int32_t id, const StepTimeModel& st, const EngineLimits& l, Observer o, const EngineOptions& options)
      : replica_id(id),
        step_time(&st),
        limits(l),
        observer(std::move(o)),
        kv(l.block_size, l.num_blocks, l.enable_prefix_caching),
        scheduler(l, kv, options.decode_fast_path) {}

  void report(RequestOutcome o) {
    if (!observer.on_outcome) return;
    o.replica = replica_id;
    observer.on_outcome(o);
  }

  /// A request that finished in the step just ended: the front end's delay added to what the client
  /// sees (step_time.h frontend_seconds, with the step's requests in flight).
  void report_finished(RequestOutcome o) {
    if (o.status == RequestStatus::kFinished) {
      const double d = step_time->frontend_seconds(step_in_flight);
      if (d > 0) {
        o.frontend_s = d;
        o.first_token_s += d;
        o.finish_s += d;
      }
    }
    report(o);
  }

  /// The step starting at t: the scheduler's plan, timed.
  void begin_step(double t) {
    const StepPlan& p = scheduler.schedule();
    if (p.empty()) return;
    plan = &p;
    active = true;
    step_start = t;
    step_end = t + checked(step_time->step_seconds(p.batch));
    step_in_flight = p.num_running + p.num_waiting;
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
    for (const RequestOutcome& o : scheduler.update_from_output(*plan, t)) report_finished(o);
    if (observer.on_step) observer.on_step(record);
    ready_s = t;
  }

  void run_until(double t) {
    for (;;) {
      if (!active) {
        if (!scheduler.has_work() || !(ready_s < t)) break;
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
  m.scheduler.add_request(request);
  if (was_idle) m.ready_s = t;
}

void ReplicaEngine::run_until(double t) { impl_->run_until(t); }

void ReplicaEngine::start_due_step() {
  Impl& m = *impl_;
  if (!m.active && m.scheduler.has_work()) m.begin_step(m.ready_s);
}

double ReplicaEngine::next_step_end_s() const { return impl_->active ? impl_->step_end : kInf; }
double ReplicaEngine::next_wake_s() const {
  const Impl& m = *impl_;
  return m.active ? m.step_end : m.scheduler.has_work() ? m.ready_s : kInf;
}

bool ReplicaEngine::abort(uint64_t request_id, RequestStatus status, double t) {
  Impl& m = *impl_;
  m.run_until(t);
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
  return m.scheduler.evict_all();
}

int32_t ReplicaEngine::num_requests_running() const { return impl_->scheduler.num_running(); }
int32_t ReplicaEngine::num_requests_waiting() const { return impl_->scheduler.num_waiting(); }
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
