// Status: what a plugin or an extension point reports, as kube-scheduler's framework Status
// (kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/framework/interface.go: Code, Status with
// reasons and the plugin that failed), and FilterCode, the compact form a Filter plugin returns.
//
// Filter runs once per node per cycle, so a Filter plugin returns a FilterCode (one byte) instead of
// a Status; filter_status() turns it into the Status kube would report: kFits is Success, a code
// preemption can resolve (filter_code_resolvable) is Unschedulable, any other is
// UnschedulableAndUnresolvable, with filter_reason() as the reason.
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

/// What a Filter plugin returns for one node: kFits or the rejecting reason. The reasons are
/// kube-scheduler's user-facing strings (filter_reason).
enum class FilterCode : uint8_t {
  kFits = 0,
  kInsufficientCpu,     ///< "Insufficient cpu"
  kInsufficientMemory,  ///< "Insufficient memory"
  kTooManyPods,         ///< "Too many pods"
  kInsufficientGpu,     ///< "Insufficient nvidia.com/gpu" (count, or no GPU with the fraction free)
  kGpuModelMismatch,    ///< "node(s) didn't match pod's GPU model constraint"
  /// "node(s) had untolerated taint(s)" (TaintToleration). kube names the first untolerated taint of
  /// each node, "node(s) had untolerated taint {key: value}"; a code aggregates nodes whose taints
  /// may differ, so its reason is generic (untolerated_taint_reason() in taint_toleration.h formats
  /// kube's per-node string).
  kUntoleratedTaint,
  kNodeAffinityMismatch,  ///< "node(s) didn't match Pod's node affinity/selector" (NodeAffinity)
  /// "Insufficient nvidia.com/mig-<profile>" (GpuShareFit): too few free MIG devices of a profile the
  /// pod requests. kube names the resource; a code aggregates nodes, so fit_error.h's node_reasons
  /// spells the profiles each node lacks.
  kInsufficientMig,
  kInsufficientGpuShared,  ///< "Insufficient nvidia.com/gpu.shared" (GpuShareFit): too few free renamed replicas
  /// GpuShareFit: more than one time-slicing or MPS replica on a node whose device plugin sets
  /// failRequestsGreaterThanOne. kube binds such a pod and the kubelet then fails it with
  /// UnexpectedAdmissionError; gpufleet refuses the node instead (see gpu_share_fit.h).
  kSharedRequestAboveOne,
  /// "node(s) didn't match pod anti-affinity rules" (InterPodAffinity: a pod matching one of the
  /// incoming pod's required anti-affinity terms runs in the node's topology domain)
  kAntiAffinityRulesNotMatch,
  /// "node(s) didn't satisfy existing pods anti-affinity rules" (InterPodAffinity: the incoming pod
  /// matches a required anti-affinity term of a pod running in the node's topology domain)
  kExistingAntiAffinityRulesNotMatch,
  /// "node(s) didn't match pod affinity rules" (InterPodAffinity: no pod matching the incoming pod's
  /// required affinity terms runs in the node's topology domains, or the node lacks a topology label)
  kAffinityRulesNotMatch,
  /// "node(s) were unschedulable" (NodeUnschedulable: spec.unschedulable and the pod does not tolerate
  /// node.kubernetes.io/unschedulable:NoSchedule)
  kNodeUnschedulable,
  /// "cannot align pod" (NodeResourceTopologyMatch): under the Topology Manager policy
  /// single-numa-node no NUMA node has the pod's whole GPUs free. Upstream says "cannot align
  /// container" on a node with scope container; a code aggregates nodes, so fit_error.h's node_reasons
  /// spells each node's scope.
  kCannotAlign,
  kCount
};
inline constexpr size_t kFilterCodeCount = static_cast<size_t>(FilterCode::kCount);

/// The kube-scheduler style reason for a code, e.g. "Insufficient nvidia.com/gpu" ("fits" for kFits).
std::string_view filter_reason(FilterCode code);

/// Whether evicting pods may resolve a filter failure (kube: status Unschedulable rather than
/// UnschedulableAndUnresolvable). True for kInsufficientCpu, kInsufficientMemory, kTooManyPods,
/// kInsufficientGpu, kInsufficientMig, kInsufficientGpuShared (NodeResourcesFit and GpuShareFit: the
/// resources free with the pods), both anti-affinity codes (InterPodAffinity returns Unschedulable)
/// and kCannotAlign (NodeResourceTopologyMatch returns Unschedulable). False for kGpuModelMismatch, kUntoleratedTaint (TaintToleration),
/// kNodeAffinityMismatch (NodeAffinity), kNodeUnschedulable, kAffinityRulesNotMatch and
/// kSharedRequestAboveOne, all UnschedulableAndUnresolvable in kube, and for kFits (no failure).
bool filter_code_resolvable(FilterCode code);

/// The Status kube reports for a Filter result: Success for kFits, else Unschedulable or
/// UnschedulableAndUnresolvable (filter_code_resolvable) with filter_reason(code) as its reason.
Status filter_status(FilterCode code);

}  // namespace gpufleet::sched
