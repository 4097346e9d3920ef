#include "sim/engine/event_queue.h"

namespace gpufleet::sim {

uint64_t EventQueue::push(double time_s, EventKind kind, uint32_t subject, uint32_t generation) {
  const uint64_t seq = next_sequence_++;
  const Event e{time_s, seq, kind, subject, generation};
  if (next_ == run_.size()) {  // the run is used up: start a new one
    run_.clear();
    next_ = 0;
  }
  if (run_.empty() || time_s >= run_.back().time_s) run_.push_back(e);  // a later sequence: still sorted
  else heap_.push(e);
  return seq;
}

Event EventQueue::pop() {
  if (run_first()) return run_[next_++];
  Event e = heap_.top();
  heap_.pop();
  return e;
}

}  // namespace gpufleet::sim
