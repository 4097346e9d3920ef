// CycleState: what plugins share during one pod's scheduling cycle (kube-scheduler
// staging/src/k8s.io/kube-scheduler/framework/cycle_state.go). A plugin writes its data under its
// Name in PreFilter or PreScore and reads it back in Filter or Score; the framework also records
// which plugins asked to be skipped (a Skip status from PreFilter or PreScore).
//
// Keys and skipped names are string_views that must outlive the CycleState: plugins use their Name
// constant (static storage), as kube does. Not thread-safe; one CycleState per cycle.
#pragma once

#include <memory>
#include <string_view>
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
  /// read() downcast to T (the writer's type); nullptr when absent.
  template <class T>
  T* read_as(std::string_view key) const {
    return static_cast<T*>(read(key));
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
  std::vector<std::pair<std::string_view, std::unique_ptr<StateData>>> data_;
  std::vector<std::string_view> skip_filter_;
  std::vector<std::string_view> skip_score_;
};

}  // namespace gpufleet::sched
