#include "sim/engine/event_loop.h"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {

EventKind EventLoop::register_event(std::string name, Handler handler, SubjectName subject_name, bool traced) {
  if (name.empty()) throw std::invalid_argument("event kind name is empty");
  for (const Kind& k : kinds_)
    if (k.name == name) throw std::invalid_argument(fmt::format("event kind '{}' is already registered", name));
  if (kinds_.size() > std::numeric_limits<EventKind>::max())
    throw std::invalid_argument(fmt::format("too many event kinds (registering '{}')", name));
  kinds_.push_back(Kind{std::move(name), std::move(handler), std::move(subject_name), traced});
  return static_cast<EventKind>(kinds_.size() - 1);
}

void EventLoop::schedule(double time_s, EventKind kind, uint32_t subject, uint32_t generation) {
  if (kind >= kinds_.size()) throw std::invalid_argument(fmt::format("event kind {} is not registered", kind));
  if (!(time_s >= now_s_))
    throw std::invalid_argument(fmt::format("event '{}' scheduled at {} s, before the clock ({} s)", kinds_[kind].name, time_s, now_s_));
  queue_.push(time_s, kind, subject, generation);
}

void EventLoop::advance_to(double t) {
  for (const auto& observer : observers_) observer(t);
  now_s_ = t;
  if (progress_ && horizon_s_ > 0) {
    while (next_progress_ <= 1.0 && t >= next_progress_ * horizon_s_) {
      progress_(next_progress_);
      next_progress_ += 0.01;
    }
  }
}

void EventLoop::run() {
  while (!queue_.empty() && queue_.top().time_s <= horizon_s_) {
    const Event e = queue_.pop();
    advance_to(e.time_s);
    const Kind& kind = kinds_[e.kind];
    if (trace_ && kind.traced) trace_->push_back({e.time_s, kind.name, kind.subject_name ? kind.subject_name(e.subject) : std::string()});
    kind.handler(e);
    ++events_run_;
  }
  // What is left lies beyond the horizon and never runs: give back the storage (a large run's
  // arrivals, all scheduled at the start, once filled it) before the results are built.
  queue_.clear();
  advance_to(horizon_s_);
}

}  // namespace gpufleet::sim
