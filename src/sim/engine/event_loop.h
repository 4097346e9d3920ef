// The simulator's clock and dispatch. Event types are open: a module or controller registers a kind
// (a name, the handler that runs each event of it, how the trace names its subject) and schedules
// events of that kind; the loop knows no kind by itself. Events run in (time, insertion sequence)
// order (sim/engine/event_queue.h), so same inputs and seed give the same run, bit for bit.
//
// Before each event the clock observers see its time (they integrate the state up to it, e.g. the
// time series); after the last event at or before the horizon they see the horizon itself.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/event_queue.h"
#include "sim/results/trace.h"

namespace gpufleet::sim {

class EventLoop {
 public:
  using Handler = std::function<void(const Event&)>;
  /// The trace's name for an event's subject (Event::subject).
  using SubjectName = std::function<std::string(uint32_t subject)>;

  /// Events later than horizon_s (seconds from 0) never run.
  explicit EventLoop(double horizon_s) : horizon_s_(horizon_s) {}
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  /// Registers an event type: `name` (non-empty, unique; the trace shows it), the handler that runs
  /// each event of it, the trace's name for its subject (none: ""), and whether the trace records
  /// its events (false for bookkeeping such as retries). Throws std::invalid_argument for an empty or
  /// taken name or beyond 65,536 kinds.
  EventKind register_event(std::string name, Handler handler, SubjectName subject_name = {}, bool traced = true);
  /// The name a kind was registered with.
  std::string_view name(EventKind kind) const { return kinds_.at(kind).name; }

  /// Schedules an event of a registered kind at time_s, which must not be before now_s(); events at
  /// the same time run in the order they were scheduled. Throws std::invalid_argument otherwise.
  void schedule(double time_s, EventKind kind, uint32_t subject = 0, uint32_t generation = 0);

  /// Adds an observer of the clock (see the top of this file); observers run in the order added.
  void add_clock_observer(std::function<void(double time_s)> observer) { observers_.push_back(std::move(observer)); }
  /// Records every traced event into *trace (nullptr: no trace, the default).
  void set_trace(std::vector<TraceEntry>* trace) { trace_ = trace; }
  /// Called with the simulated fraction done (0..1) about every 1% as the clock moves; may be empty.
  void set_progress(std::function<void(double)> progress) { progress_ = std::move(progress); }

  /// Runs the events in order until none is left at or before the horizon, then drops the rest
  /// (they never run) and advances the clock to the horizon.
  void run();

  double now_s() const { return now_s_; }
  double horizon_s() const { return horizon_s_; }
  /// Events run so far (every kind, traced or not): the run's work, which the work budget bounds
  /// (inputs/sim/work_estimate.h).
  uint64_t events_run() const { return events_run_; }

 private:
  struct Kind {
    std::string name;
    Handler handler;
    SubjectName subject_name;
    bool traced = true;
  };
  void advance_to(double t);

  double horizon_s_;
  double now_s_ = 0;
  double next_progress_ = 0.01;
  uint64_t events_run_ = 0;
  EventQueue queue_;
  std::deque<Kind> kinds_;  // a deque: a handler may register kinds while it runs
  std::vector<std::function<void(double)>> observers_;
  std::vector<TraceEntry>* trace_ = nullptr;
  std::function<void(double)> progress_;
};

}  // namespace gpufleet::sim
