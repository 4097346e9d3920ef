// Status: what a plugin or an extension point reports, as kube-scheduler's framework Status
// (kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/framework/interface.go: Code, Status with
// reasons and the plugin that failed), and FilterCode, the compact form a Filter plugin returns.
//
// Filter runs once per node per cycle, so a Filter plugin returns a FilterCode (a pointer to one of
// its own FilterReasons, kube's reason and code) instead of a Status; FilterCode::status() gives the
// Status kube would report. Which plugin rejected each node is recorded by the framework
// (NodeToStatus, node_to_status.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::sched {

/// kube's status codes (framework.Code), in kube's order.
enum class Code : uint8_t {
  kSuccess = 0,  ///< the plugin ran and the pod may go on (also the meaning of a default Status)
  kError,        ///< an internal error or bad input: the cycle stops, preemption does not run
  /// The pod does not fit; PostFilter plugins (preemption) may make room.
  kUnschedulable,
  /// The pod does not fit and PostFilter plugins cannot change that (e.g. a node selector mismatch).
  kUnschedulableAndUnresolvable,
  kWait,  ///< Permit: the pod stays reserved until every waiting plugin allows it (or rejects it)
  /// PreFilter: the plugin's Filter has nothing to check this cycle; PreScore: its Score is not run;
  /// Bind: the plugin leaves the binding to the next Bind plugin.
  kSkip,
};

/// "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait" or "Skip" (kube's
/// Code.String()).
std::string_view code_name(Code code);

/// A code with its reasons (user-facing strings, kube's) and the plugin that set it. Small and
/// copyable; the default Status is Success.
class Status {
 public:
  Status() = default;
  explicit Status(Code code, std::vector<std::string> reasons = {}) : code_(code), reasons_(std::move(reasons)) {}
  Status(Code code, std::string reason) : code_(code), reasons_{std::move(reason)} {}

  Code code() const { return code_; }
  bool is_success() const { return code_ == Code::kSuccess; }
  bool is_skip() const { return code_ == Code::kSkip; }
  bool is_wait() const { return code_ == Code::kWait; }
  /// Unschedulable or UnschedulableAndUnresolvable (kube IsRejected).
  bool is_rejected() const { return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  /// The reasons joined by ", " (kube Status.Message); "" without reasons.
  std::string message() const;
  /// The plugin that returned this status ("" when the framework set it).
  const std::string& plugin() const { return plugin_; }
  /// Sets plugin() (kube WithPlugin); returns *this.
  Status& with_plugin(std::string_view plugin) {
    plugin_ = std::string(plugin);
    return *this;
  }
  bool operator==(const Status&) const = default;

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::string plugin_;
};

/// One reason a Filter plugin rejects a node for, declared by the plugin itself (kube: the Status a
/// Filter returns, e.g. framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod) in
/// pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go). A plugin lists its reasons in a
/// static constexpr array, returns them from FilterPlugin::filter_reasons() and names each with a
/// FilterCode constant. Nothing in the framework lists the plugins' reasons.
struct FilterReason {
  /// kube's user-facing words, e.g. "Insufficient nvidia.com/gpu". When the plugin spells the reason
  /// per node (per_node), the generic form, e.g. "node(s) had untolerated taint(s)".
  std::string_view reason;
  /// kube's code: Unschedulable when evicting pods may make the node fit (preemption considers the
  /// node), else UnschedulableAndUnresolvable.
  bool resolvable = false;
  /// The plugin words this reason per node (FilterPlugin::node_reasons), e.g. naming the node's
  /// first untolerated taint as kube does; FitError counts nodes by those words.
  bool per_node = false;
};

/// What a Filter plugin returns for one node: kFits, or one of the reasons the plugin registered
/// (FilterPlugin::filter_reasons), by identity. As small as a pointer; compares equal only to the
/// same reason of the same array. A profile numbers its filters' reasons in one byte per node
/// (FilterReasonTable in node_to_status.h).
class FilterCode {
 public:
  /// No rejection: the node passes this filter.
  static const FilterCode kFits;
  constexpr FilterCode() = default;
  /// A rejection for `reason`, an element of the plugin's filter_reasons() (which outlives the code;
  /// in-tree plugins keep theirs in a static constexpr array).
  constexpr explicit FilterCode(const FilterReason& reason) : reason_(&reason) {}

  bool rejected() const { return reason_ != nullptr; }
  /// The reason's generic words ("" for kFits).
  std::string_view reason() const { return reason_ ? reason_->reason : std::string_view(); }
  /// Whether preemption may resolve the rejection (false for kFits).
  bool resolvable() const { return reason_ != nullptr && reason_->resolvable; }
  /// kSuccess for kFits, else kUnschedulable or kUnschedulableAndUnresolvable.
  Code code() const;
  /// kube's Status for this result: Success, or code() with reason() as its reason.
  Status status() const;
  /// The registered reason, nullptr for kFits.
  const FilterReason* get() const { return reason_; }
  constexpr bool operator==(const FilterCode&) const = default;

 private:
  const FilterReason* reason_ = nullptr;
};
inline constexpr FilterCode FilterCode::kFits{};

}  // namespace gpufleet::sched
