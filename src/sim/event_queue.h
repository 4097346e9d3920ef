// The simulator's event queue: events ordered by (time_s, sequence). The sequence number is the
// order of insertion, so events at the same time run in the order they were scheduled: the run is
// a pure function of its input and seed (no ordering by address or hash).
#pragma once

#include <cstdint>
#include <queue>
#include <string_view>
#include <vector>

namespace gpufleet::sim {

/// What happens. `subject` and `generation` of an Event are interpreted per type.
enum class EventType : uint8_t {
  kArrival,         ///< subject: unit (a job, or one service replica) submitted
  kCompletion,      ///< subject: unit; generation: the run it belongs to (older runs are stale)
  kNodeReady,       ///< subject: node; generation: node incarnation
  kSpotNotice,      ///< subject: node; generation: node incarnation (interruption warning)
  kSpotReclaim,     ///< subject: node; generation: node incarnation (the node is taken away)
  kAutoscalerTick,  ///< the autoscaler's scan loop (scale up, then scale down)
  kRetry,           ///< try the pending pods again (capacity changed)
  kConsolidationTick,  ///< Karpenter-style consolidation loop (ConsolidationSettings)
};

/// "arrival", "completion", "node-ready", "spot-notice", "spot-reclaim", "autoscaler-tick", "retry",
/// "consolidation-tick".
std::string_view event_type_name(EventType type);

struct Event {
  double time_s = 0;       ///< simulated seconds from the start
  uint64_t sequence = 0;   ///< insertion order (assigned by EventQueue::push)
  EventType type = EventType::kArrival;
  uint32_t subject = 0;
  uint32_t generation = 0;
};

class EventQueue {
 public:
  /// Schedules an event; returns its sequence number.
  uint64_t push(double time_s, EventType type, uint32_t subject = 0, uint32_t generation = 0);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The earliest event (smallest time, then smallest sequence). Undefined when empty.
  const Event& top() const { return heap_.top(); }
  /// Removes and returns the earliest event. Undefined when empty.
  Event pop();

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_s != b.time_s ? a.time_s > b.time_s : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace gpufleet::sim
