#include "sim/engine/event_queue.h"

namespace gpufleet::sim {

uint64_t EventQueue::push(double time_s, EventKind kind, uint32_t subject, uint32_t generation) {
  const uint64_t seq = next_sequence_++;
  heap_.push(Event{time_s, seq, kind, subject, generation});
  return seq;
}

Event EventQueue::pop() {
  Event e = heap_.top();
  heap_.pop();
  return e;
}

}  // namespace gpufleet::sim
