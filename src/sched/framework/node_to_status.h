// Which plugin rejected each node and why: kube-scheduler's NodeToStatus (pkg/scheduler/framework/
// types.go: NodeToStatus, Diagnosis), which the FitError message (sched/fit_error.h), PostFilter
// (preemption) and the extender's FailedNodes / FailedAndUnresolvableNodes read.
//
// kube keeps a *Status per node. Filters run once per node per cycle here, so a node's entry is one
// byte: the number of (filter, reason) in its profile's FilterReasonTable, which numbers the reasons
// the profile's Filter plugins registered (FilterPlugin::filter_reasons), filter by filter, when the
// profile is built; 0 is "not rejected". A Rejection is an entry read back: the plugin and its code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/framework/interface.h"
#include "sched/framework/status.h"

namespace gpufleet::sched {

/// One node's Filter outcome with the plugin that decided it (kube: the node's Status and its
/// Plugin()). Default: not rejected. `plugin` is valid while the profile's plugins are (a
/// NodeToStatus keeps them alive).
struct Rejection {
  const FilterPlugin* plugin = nullptr;  ///< the first filter that rejected the node; nullptr: none
  FilterCode code;                       ///< one of plugin's reasons; kFits when not rejected

  bool rejected() const { return plugin != nullptr; }
  /// The rejecting plugin's name, "" when not rejected.
  std::string_view plugin_name() const { return plugin ? plugin->name() : std::string_view(); }
  /// Whether preemption may resolve it (kube: Unschedulable); false when not rejected.
  bool resolvable() const { return code.resolvable(); }
  /// kube's Status of the node: Success, or Unschedulable / UnschedulableAndUnresolvable with the
  /// reason's generic words and plugin_name().
  Status status() const;
  /// kube's words for node n (FilterPlugin::node_reasons); empty when not rejected.
  std::vector<std::string> node_reasons(const Pod& pod, const ClusterState& state, NodeId n) const;
};

/// A profile's filter reasons, numbered 1..size(): the reasons of its first filter in their order,
/// then the second filter's, and so on. Built from the profile's filters (build_profile checks it,
/// the Scheduler builds its own); keeps the plugins alive.
class FilterReasonTable {
 public:
  /// Numbers fit in a byte; 0 means "not rejected".
  static constexpr size_t kMaxReasons = 255;
  /// Throws std::invalid_argument when the filters register more than kMaxReasons reasons in all, or
  /// a reason without words.
  explicit FilterReasonTable(std::span<const std::shared_ptr<const FilterPlugin>> filters);

  /// The number of reasons registered.
  size_t size() const { return entries_.size(); }
  /// The number of `code` returned by the profile's filter `filter` (index in its filters); 0 for
  /// kFits. Throws std::logic_error when the plugin returned a code it did not register.
  uint8_t number(size_t filter, FilterCode code) const {
    if (!code.rejected()) return 0;
    const Filter& f = filters_[filter];
    const FilterReason* r = code.get();
    if (std::less<const FilterReason*>{}(r, f.first) || !std::less<const FilterReason*>{}(r, f.first + f.count))
      unregistered(filter, code);
    return static_cast<uint8_t>(f.base + static_cast<size_t>(r - f.first) + 1);
  }
  /// The plugin and code numbered `number`; not rejected for 0. Throws std::out_of_range above size().
  Rejection rejection(uint8_t number) const;

 private:
  struct Filter {
    std::shared_ptr<const FilterPlugin> plugin;
    const FilterReason* first = nullptr;  // its filter_reasons()
    size_t count = 0;
    size_t base = 0;  // numbers base + 1 .. base + count
  };
  [[noreturn]] void unregistered(size_t filter, FilterCode code) const;
  std::vector<Filter> filters_;
  std::vector<Rejection> entries_;  // number - 1 -> rejection
};

/// kube NodeToStatus: per node (index = NodeId) the number of its rejection in a FilterReasonTable.
/// Empty when no Filter ran for every node (a cycle that chose a node, or ended before Filter).
class NodeToStatus {
 public:
  NodeToStatus() = default;
  /// `numbers`: one per node, each 0 or at most table->size(). Throws std::invalid_argument otherwise.
  NodeToStatus(std::shared_ptr<const FilterReasonTable> table, std::vector<uint8_t> numbers);

  bool empty() const { return numbers_.empty(); }
  /// One entry per node slot.
  size_t size() const { return numbers_.size(); }
  /// Node n's rejection (not rejected: it passed every filter, or an empty slot).
  Rejection at(NodeId n) const { return table_->rejection(numbers_.at(n)); }
  /// Node n's number in table().
  uint8_t number(NodeId n) const { return numbers_.at(n); }
  const FilterReasonTable& table() const { return *table_; }
  /// Nodes per number (index 0, not rejected, counts nothing); table().size() + 1 entries, none
  /// when empty().
  std::vector<int32_t> counts() const;
  /// The number of nodes rejected with `code` (by whichever filter returned it).
  int32_t count(FilterCode code) const;
  /// The same size, and each node rejected by a plugin of the same name with the same code, or by
  /// none (the tables may differ: two Schedulers of one profile).
  bool operator==(const NodeToStatus& other) const;

 private:
  std::shared_ptr<const FilterReasonTable> table_;
  std::vector<uint8_t> numbers_;
};

}  // namespace gpufleet::sched
