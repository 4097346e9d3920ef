#include "sched/framework/cycle_state.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include <cxxabi.h>

#include <fmt/format.h>

namespace gpufleet::sched {

CycleState CycleState::clone() const {
  CycleState out;
  out.data_.reserve(data_.size());
  for (const auto& [key, data] : data_) out.data_.emplace_back(key, data ? data->clone() : nullptr);
  out.skip_filter_ = skip_filter_;
  out.skip_score_ = skip_score_;
  return out;
}

void CycleState::write(std::string_view key, std::unique_ptr<StateData> data) {
  for (auto& [k, d] : data_)
    if (k == key) {
      d = std::move(data);
      return;
    }
  data_.emplace_back(key, std::move(data));
}

StateData* CycleState::read(std::string_view key) const {
  for (const auto& [k, d] : data_)
    if (k == key) return d.get();
  return nullptr;
}

namespace {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

}  // namespace

void CycleState::wrong_type(std::string_view key, const std::type_info& stored, const std::type_info& wanted) {
  throw CycleStateError(fmt::format("reading \"{}\" from cycleState: the data is a {}, not a {}", key, type_name(stored), type_name(wanted)));
}

bool CycleState::filter_skipped(std::string_view plugin) const {
  return std::find(skip_filter_.begin(), skip_filter_.end(), plugin) != skip_filter_.end();
}

bool CycleState::score_skipped(std::string_view plugin) const {
  return std::find(skip_score_.begin(), skip_score_.end(), plugin) != skip_score_.end();
}

void CycleState::clear() {
  data_.clear();
  skip_filter_.clear();
  skip_score_.clear();
}

}  // namespace gpufleet::sched
