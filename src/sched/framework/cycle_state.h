// CycleState: what plugins share during one pod's scheduling cycle (kube-scheduler
// staging/src/k8s.io/kube-scheduler/framework/cycle_state.go). A plugin writes its data under its
// Name in PreFilter or PreScore and reads it back in Filter or Score; the framework also records
// which plugins asked to be skipped (a Skip status from PreFilter or PreScore).
//
// Keys and skipped names are string_views that must outlive the CycleState: plugins use their Name
// constant (static storage), as kube does. Not thread-safe; one CycleState per cycle.
//
// Reads are type-checked, as kube's plugins check theirs (getPreFilterState in
// pkg/scheduler/framework/plugins/noderesources/fit.go: "error reading %q from cycleState", and the
// type assertion's "convert to ... error"): read_as<T> of data written as another type throws
// CycleStateError instead of casting.
#pragma once

#include <memory>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace gpufleet::sched {

/// A plugin's per-cycle data. clone() copies it for a cycle forked from this one (preemption's dry
/// run in kube; a waiting pod keeps its cycle's data here).
class StateData {
 public:
  virtual ~StateData() = default;
  virtual std::unique_ptr<StateData> clone() const = 0;
};

/// Reading a CycleState key as a type other than the data's (a plugin bug, e.g. two plugins using
/// one key). what(): `reading "<key>" from cycleState: the data is a <type>, not a <type>`.
class CycleStateError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(CycleState&&) = default;
  CycleState& operator=(CycleState&&) = default;
  /// Deep copy (every StateData cloned), kube CycleState.Clone.
  CycleState clone() const;

  /// Stores `data` under `key`, replacing what was there.
  void write(std::string_view key, std::unique_ptr<StateData> data);
  /// The data under `key`, or nullptr.
  StateData* read(std::string_view key) const;
  /// The data under `key` as T, the type it was written as (exactly; kube's type assertion), or
  /// nullptr when nothing is under `key` (e.g. PreFilter did not run). Throws CycleStateError when
  /// the data is of another type.
  template <class T>
  T* read_as(std::string_view key) const {
    static_assert(std::is_base_of_v<StateData, T>, "CycleState holds StateData");
    StateData* data = read(key);
    if (data == nullptr) return nullptr;
    if (typeid(*data) != typeid(T)) wrong_type(key, typeid(*data), typeid(T));
    return static_cast<T*>(data);
  }

  /// Plugins whose PreFilter returned Skip: their Filter and PreFilterExtensions are not run.
  void skip_filter(std::string_view plugin) { skip_filter_.push_back(plugin); }
  bool filter_skipped(std::string_view plugin) const;
  /// Plugins whose PreScore returned Skip: their Score is not run.
  void skip_score(std::string_view plugin) { skip_score_.push_back(plugin); }
  bool score_skipped(std::string_view plugin) const;

  /// Empties the state, keeping its storage (the Scheduler reuses one per cycle).
  void clear();

 private:
  [[noreturn]] static void wrong_type(std::string_view key, const std::type_info& stored, const std::type_info& wanted);
  std::vector<std::pair<std::string_view, std::unique_ptr<StateData>>> data_;
  std::vector<std::string_view> skip_filter_;
  std::vector<std::string_view> skip_score_;
};

}  // namespace gpufleet::sched
