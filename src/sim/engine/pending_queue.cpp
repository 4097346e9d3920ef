#include "sim/engine/pending_queue.h"

#include <algorithm>
#include <utility>

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
  provisioning_reasons_.erase(unit.unit);
  scheduling_reasons_.erase(unit.unit);
}

void PendingQueue::set_provisioning_reason(uint32_t unit, std::string reason) {
  if (reason.empty()) provisioning_reasons_.erase(unit);
  else provisioning_reasons_[unit] = std::move(reason);
}

void PendingQueue::set_scheduling_reason(uint32_t unit, std::string reason) { scheduling_reasons_[unit] = std::move(reason); }

std::string PendingQueue::reason(uint32_t unit) const {
  if (auto it = provisioning_reasons_.find(unit); it != provisioning_reasons_.end()) return it->second;
  if (auto it = scheduling_reasons_.find(unit); it != scheduling_reasons_.end()) return it->second;
  return {};
}

void PendingQueue::request_retry(double t) {
  if (retry_queued_) return;
  retry_queued_ = true;
  loop_.schedule(t, retry_kind_);
}

void PendingQueue::retry(double t) {
  retry_queued_ = false;
  std::vector<uint8_t> failed_shape(shape_limit_, 0);
  std::vector<std::string> failed_reason(shape_limit_);  // the scheduler's message for the shape that failed
  std::vector<std::pair<uint32_t, uint32_t>> order;  // (unit, shape): starting units changes the queue
  order.reserve(queue_.size());
  for (const PendingUnit& p : queue_) order.emplace_back(p.unit, p.shape);
  for (const auto& [unit, shape] : order) {
    if (failed_shape[shape]) {
      // Not tried: a unit of the same shape did not fit, so it waits for the same reason.
      if (!failed_reason[shape].empty()) scheduling_reasons_[unit] = failed_reason[shape];
      continue;
    }
    if (starter_->try_start(unit, t)) continue;
    failed_shape[shape] = 1;
    if (auto it = scheduling_reasons_.find(unit); it != scheduling_reasons_.end()) failed_reason[shape] = it->second;
  }
}

}  // namespace gpufleet::sim
