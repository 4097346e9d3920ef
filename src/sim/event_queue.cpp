#include "sim/event_queue.h"

namespace gpufleet::sim {

std::string_view event_type_name(EventType type) {
  switch (type) {
    case EventType::kArrival: return "arrival";
    case EventType::kCompletion: return "completion";
    case EventType::kNodeReady: return "node-ready";
    case EventType::kSpotNotice: return "spot-notice";
    case EventType::kSpotReclaim: return "spot-reclaim";
    case EventType::kAutoscalerTick: return "autoscaler-tick";
    case EventType::kRetry: return "retry";
    case EventType::kConsolidationTick: return "consolidation-tick";
  }
  return "unknown";
}

uint64_t EventQueue::push(double time_s, EventType type, uint32_t subject, uint32_t generation) {
  const uint64_t seq = next_sequence_++;
  heap_.push(Event{time_s, seq, type, subject, generation});
  return seq;
}

Event EventQueue::pop() {
  Event e = heap_.top();
  heap_.pop();
  return e;
}

}  // namespace gpufleet::sim
