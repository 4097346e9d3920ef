#include "sched/framework/node_to_status.h"

#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sched {

Status Rejection::status() const {
  Status s = code.status();
  if (rejected()) s.with_plugin(plugin->name());
  return s;
}

std::vector<std::string> Rejection::node_reasons(const Pod& pod, const ClusterState& state, NodeId n) const {
  if (!rejected()) return {};
  return plugin->node_reasons(code, pod, state, n);
}

FilterReasonTable::FilterReasonTable(std::span<const std::shared_ptr<const FilterPlugin>> filters) {
  filters_.reserve(filters.size());
  for (const auto& f : filters) {
    const std::span<const FilterReason> reasons = f->filter_reasons();
    if (entries_.size() + reasons.size() > kMaxReasons)
      throw std::invalid_argument(fmt::format("filter plugin {}: the profile's filters register more than {} reasons", f->name(), kMaxReasons));
    filters_.push_back(Filter{f, reasons.data(), reasons.size(), entries_.size()});
    for (const FilterReason& r : reasons) {
      if (r.reason.empty()) throw std::invalid_argument(fmt::format("filter plugin {} registers a reason without words", f->name()));
      entries_.push_back(Rejection{f.get(), FilterCode(r)});
    }
  }
}

Rejection FilterReasonTable::rejection(uint8_t number) const {
  if (number == 0) return {};
  if (number > entries_.size()) throw std::out_of_range(fmt::format("filter reason number {} of {}", number, entries_.size()));
  return entries_[number - 1];
}

void FilterReasonTable::unregistered(size_t filter, FilterCode code) const {
  throw std::logic_error(fmt::format("filter plugin {} returned a reason it did not register: \"{}\"", filters_[filter].plugin->name(),
                                     code.reason()));
}

NodeToStatus::NodeToStatus(std::shared_ptr<const FilterReasonTable> table, std::vector<uint8_t> numbers)
    : table_(std::move(table)), numbers_(std::move(numbers)) {
  if (!table_) throw std::invalid_argument("NodeToStatus without a FilterReasonTable");
  for (const uint8_t number : numbers_)
    if (number > table_->size()) throw std::invalid_argument(fmt::format("filter reason number {} of {}", number, table_->size()));
}

std::vector<int32_t> NodeToStatus::counts() const {
  if (empty()) return {};
  // Four tallies over interleaved nodes, summed at the end: runs of one number (most nodes rejected
  // for the same reason) would otherwise wait on the same counter at every step.
  const size_t width = table_->size() + 1;
  std::vector<int32_t> tally(4 * width, 0);
  const size_t n = numbers_.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (size_t k = 0; k < 4; ++k) ++tally[k * width + numbers_[i + k]];
  for (; i < n; ++i) ++tally[numbers_[i]];
  std::vector<int32_t> out(width, 0);
  for (size_t k = 0; k < 4; ++k)
    for (size_t number = 1; number < width; ++number) out[number] += tally[k * width + number];
  return out;
}

int32_t NodeToStatus::count(FilterCode code) const {
  if (empty() || !code.rejected()) return 0;
  const std::vector<int32_t> all = counts();
  int32_t out = 0;
  for (size_t number = 1; number < all.size(); ++number)
    if (table_->rejection(static_cast<uint8_t>(number)).code == code) out += all[number];
  return out;
}

bool NodeToStatus::operator==(const NodeToStatus& other) const {
  if (size() != other.size()) return false;
  for (NodeId n = 0; n < size(); ++n) {
    const Rejection a = at(n), b = other.at(n);
    if (a.code != b.code || a.plugin_name() != b.plugin_name()) return false;
  }
  return true;
}

}  // namespace gpufleet::sched
