// The simulator's event queue: events ordered by (time_s, sequence). The sequence number is the
// order of insertion, so events at the same time run in the order they were scheduled: the run is
// a pure function of its input and seed (no ordering by address or hash). What an event means is
// up to its kind, which the event loop (sim/engine/event_loop.h) maps to a name and a handler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace gpufleet::sim {

/// An event type: the index EventLoop::register_event returned for it.
using EventKind = uint16_t;

struct Event {
  double time_s = 0;       ///< simulated seconds from the start
  uint64_t sequence = 0;   ///< insertion order (assigned by EventQueue::push)
  EventKind kind = 0;
  uint32_t subject = 0;    ///< per kind: what it is about (a unit, a node, ...)
  uint32_t generation = 0; ///< per kind: the run or node incarnation it belongs to (older ones are stale)
};

class EventQueue {
 public:
  /// Schedules an event; returns its sequence number.
  uint64_t push(double time_s, EventKind kind, uint32_t subject = 0, uint32_t generation = 0);
  bool empty() const { return heap_.empty() && next_ == run_.size(); }
  size_t size() const { return heap_.size() + (run_.size() - next_); }
  /// The earliest event (smallest time, then smallest sequence). Undefined when empty.
  const Event& top() const { return run_first() ? run_[next_] : heap_.top(); }
  /// Removes and returns the earliest event. Undefined when empty.
  Event pop();
  /// Drops every event and gives back their storage; sequence numbers go on from where they were.
  void clear() {
    heap_ = {};
    run_ = {};
    next_ = 0;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_s != b.time_s ? a.time_s > b.time_s : a.sequence > b.sequence;
    }
  };
  // Whether the run's first event comes before the heap's (the run is not empty).
  bool run_first() const { return next_ < run_.size() && (heap_.empty() || Later{}(heap_.top(), run_[next_])); }
  // Two stores, one order: events pushed in time order (no earlier than the last one of the run, as
  // the arrivals of a large workload, all scheduled at the start) are appended to a sorted run, read
  // from its front; the others go to a binary heap, which stays small. pop() takes the earlier of the
  // two fronts by (time, sequence), so the order is the one a single heap gives.
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::vector<Event> run_;
  size_t next_ = 0;  // the run's front
  uint64_t next_sequence_ = 0;
};

}  // namespace gpufleet::sim
