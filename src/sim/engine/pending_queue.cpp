#include "sim/engine/pending_queue.h"

#include <algorithm>

namespace gpufleet::sim {

PendingQueue::PendingQueue(EventLoop& loop) : loop_(loop) {
  retry_kind_ = loop_.register_event("retry", [this](const Event& e) { retry(e.time_s); }, {}, false);
}

void PendingQueue::add(const PendingUnit& unit, int32_t pods) {
  queue_.insert(unit);
  pods_ += pods;
  shape_limit_ = std::max(shape_limit_, unit.shape + 1);
}

void PendingQueue::remove(const PendingUnit& unit, int32_t pods) {
  queue_.erase(unit);
  pods_ -= pods;
}

void PendingQueue::request_retry(double t) {
  if (retry_queued_) return;
  retry_queued_ = true;
  loop_.schedule(t, retry_kind_);
}

void PendingQueue::retry(double t) {
  retry_queued_ = false;
  std::vector<uint8_t> failed_shape(shape_limit_, 0);
  std::vector<std::pair<uint32_t, uint32_t>> order;  // (unit, shape): starting units changes the queue
  order.reserve(queue_.size());
  for (const PendingUnit& p : queue_) order.emplace_back(p.unit, p.shape);
  for (const auto& [unit, shape] : order) {
    if (failed_shape[shape]) continue;
    if (!starter_->try_start(unit, t)) failed_shape[shape] = 1;
  }
}

}  // namespace gpufleet::sim
