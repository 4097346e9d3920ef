// ResourceQuota admission: the kube-apiserver ResourceQuota admission plugin, for pods. No I/O.
//
// Sources: kubernetes/kubernetes plugin/pkg/admission/resourcequota/controller.go (CheckRequest,
// prettyPrint), pkg/quota/v1/evaluator/core/pods.go (PodUsageFunc, podComputeUsageHelper,
// Constraints, podMatchesScopeFunc, MatchingResources), apiserver pkg/quota/v1/generic (Matches),
// apimachinery resource.Quantity String() (CanonicalizeBytes).
//
// Semantics, as upstream:
//  - A quota applies to a pod when it lives in the pod's namespace, tracks at least one pod resource,
//    and every scope (spec.scopes, each as Exists, and spec.scopeSelector) matches the pod.
//  - First pass over the applicable quotas, in order: if a quota tracks cpu, memory, requests.cpu,
//    requests.memory, limits.cpu or limits.memory, the pod must request it ("failed quota: <name>:
//    must specify ..."). Second pass, in order: the pod's usage masked to the quota's hard resources
//    is added to the quota's used; if any resource would exceed its hard limit the pod is rejected
//    with `exceeded quota: <name>, requested: <r>=<q>,..., used: <r>=<q>,..., limited: <r>=<q>,...`
//    listing every exceeded resource of that quota, sorted by name (Go sort.Strings = byte order).
//    Only the first failing quota is reported (CheckRequest returns on it). All quotas must admit;
//    a rejection charges nothing (all-or-nothing).
//  - Pod usage: pods = 1 and count/pods = 1; cpu and requests.cpu = the cpu request; memory and
//    requests.memory = the memory request; requests.<extended> = the extended request.
//  - Quantities print in Kubernetes canonical form: decimal SI for cpu and counts ("500m", "2",
//    "4k"), binary SI for memory ("16Gi", "1536Mi"), "0" for zero.
//
// Where gpufleet's model forces a decision (documented divergences):
//  - Order of quotas: upstream takes the namespace's quotas from an informer index (a Go map: no
//    defined order), so which quota is reported when several fail is unspecified. We use the order
//    the quotas were given in (the input/document order), which makes rejections deterministic.
//  - Limits: a Pod carries only requests, so limits are taken equal to requests: limits.cpu,
//    limits.memory and limits.nvidia.com/gpu are charged the request. (Upstream charges
//    limits.nvidia.com/gpu nothing: extended resources are only quota'ed as requests.<name>, and the
//    API documents limits.<extended> quota items as not allowed. We count it like the request, since
//    extended resources cannot be overcommitted and a limit always equals the request.)
//  - GPUs: requests.nvidia.com/gpu counts devices: num_gpu for a whole-GPU pod, and 1 for a pod with a
//    fractional share (num_gpu = 1, gpu_milli < 1000), as the device plugin advertises one device
//    (or one time-sliced replica) to it. CPU-only pods count 0.
//  - "Must specify": Pod has no per-container data, so a cpu request of 0 is read as "no cpu request"
//    (and no cpu limit), likewise memory; the message is the pod-level `must specify requests.cpu,
//    requests.memory` (resources sorted, comma-joined: the pre-1.20 wording; current upstream also
//    appends ` for: <containers>` per resource, which we cannot know).
//  - Scopes: Terminating never matches and NotTerminating always does (the model has no
//    activeDeadlineSeconds); BestEffort is qos == kBE; PriorityClass uses priority_class_name (the
//    YAML reader already fills in the globalDefault class, as the Priority admission plugin does);
//    CrossNamespacePodAffinity looks at the namespaces of the pod (anti-)affinity terms
//    (namespaceSelector is not modelled).
//  - Namespace: a pod with an empty namespace_name (openb trace) is in "default", as kube defaults it.
//  - Memory is tracked in bytes and printed in binary SI ("1000000Ki", "16Gi", "100000000"), so a
//    limit written with decimal suffixes ("1G") prints as "1000000000" where kube would print "1G".
//  - Hard entries the model cannot charge (ephemeral-storage, hugepages-*, services, ...) are
//    ignored and listed as untracked in usage(). Terminal pods are not modelled: release() them.
//
// Two types, both domain data: ResourceQuotaSpec is a quota as the Kubernetes reader builds it
// (readers/k8s/k8s_yaml.h; known spec.hard entries as integers in gpufleet's units), ResourceQuota is
// spec.hard as Kubernetes writes it (name -> quantity text), what admission works on. from_spec()
// converts the first into the second. Admission never depends on a reader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/pod.h"
#include "model/quantity.h"
#include "model/scheduling_constraints.h"

namespace gpufleet::admit {

/// A v1 ResourceQuota as the Kubernetes reader builds it (readers/k8s/k8s_yaml.h): spec.hard, each known
/// limit optional (absent = not limited), in gpufleet's units: cpu in milli-cores, memory in bytes,
/// the rest whole counts. Every other spec.hard entry is kept raw in `other` (the reader has checked
/// that it is a quantity).
struct ResourceQuotaSpec {
  std::string namespace_name;                    ///< "default" when absent
  std::string name;
  std::optional<int64_t> requests_gpu;           ///< requests.nvidia.com/gpu, devices
  std::optional<int64_t> limits_gpu;             ///< limits.nvidia.com/gpu, devices
  std::optional<int64_t> requests_cpu_milli;     ///< requests.cpu
  std::optional<int64_t> requests_memory_bytes;  ///< requests.memory
  std::optional<int64_t> limits_cpu_milli;       ///< limits.cpu
  std::optional<int64_t> limits_memory_bytes;    ///< limits.memory
  std::optional<int64_t> cpu_milli;              ///< cpu (same meaning as requests.cpu)
  std::optional<int64_t> memory_bytes;           ///< memory (same meaning as requests.memory)
  std::optional<int64_t> pods;                   ///< pods, a count
  std::map<std::string, std::string> other;      ///< any other spec.hard entry, raw quantity text
  std::vector<std::string> scopes;               ///< spec.scopes
  std::vector<SelectorRequirement> scope_selector;  ///< spec.scopeSelector.matchExpressions (key = scopeName)
};

/// A v1 ResourceQuota: its namespace, name, spec.hard and scopes.
struct ResourceQuota {
  std::string namespace_name = "default";
  std::string name;
  std::map<std::string, std::string> hard;  ///< e.g. {"requests.nvidia.com/gpu", "4"}, {"requests.memory", "64Gi"}
  std::vector<std::string> scopes;          ///< spec.scopes (BestEffort, NotBestEffort, PriorityClass, ...)
  std::vector<SelectorRequirement> scope_selector;  ///< spec.scopeSelector.matchExpressions (key = scopeName)
};

/// A ResourceQuotaSpec in admission terms: cpu and memory limits in canonical quantity text
/// (format_quantity: 16000 milli-cores -> "16", 68719476736 bytes -> "64Gi"), counts as integers
/// ("4"), `other` entries copied verbatim.
ResourceQuota from_spec(const ResourceQuotaSpec& spec);
std::vector<ResourceQuota> from_specs(const std::vector<ResourceQuotaSpec>& specs);

/// One line per quota rule in `quotas` that gpufleet applies differently from Kubernetes (the list
/// above), for the CLI to print: today a limits.nvidia.com/gpu entry, which Kubernetes charges
/// nothing (only requests.<extended> quota items count) and gpufleet charges the GPU request.
std::vector<std::string> quota_differences(const std::vector<ResourceQuota>& quotas);

/// Whether admission charges a spec.hard entry from the Pod model alone, i.e. without
/// ExtendedRequests: pods, count/pods, cpu, memory, requests.cpu/memory, limits.cpu/memory,
/// requests/limits.nvidia.com/gpu, requests.nvidia.com/gpu.shared and requests.nvidia.com/mig-<profile>.
/// Any other entry (e.g. a typo such as requests.cpuu, services, requests.example.com/fpga) never
/// limits a pod of `gpufleet place`.
bool charged_from_pod(std::string_view resource);

/// Extended resources a pod requests beyond the Pod model (io::K8sPodExtras::extended), e.g.
/// {"example.com/fpga", 1}; charged to requests.<name> quota entries. The device-plugin requests the
/// Pod model carries (Pod::shared_replicas as nvidia.com/gpu.shared, Pod::mig_requests as
/// nvidia.com/mig-<profile>) are charged from the pod itself; this map counts for them only when the
/// pod has none.
using ExtendedRequests = std::map<std::string, int64_t>;

struct AdmitResult {
  bool admitted = true;
  std::string quota;    ///< the quota that rejected the pod; empty when admitted
  std::string reason;   ///< upstream error text: "exceeded quota: ..." or "failed quota: ..."; empty when admitted
  std::string message;  ///< as the API server returns it: `pods "<name>" is forbidden: <reason>`
  explicit operator bool() const { return admitted; }
};

/// One tracked resource of one quota.
struct QuotaResourceUsage {
  std::string resource;  ///< e.g. "requests.nvidia.com/gpu"
  QuantityUnit unit = QuantityUnit::kMilli;
  int64_t used = 0;      ///< in `unit`
  int64_t hard = 0;      ///< in `unit`
  std::string used_text() const { return format_quantity(used, unit); }
  std::string hard_text() const { return format_quantity(hard, unit); }
};

/// status.used vs spec.hard of one quota.
struct QuotaUsage {
  std::string name;
  std::vector<QuotaResourceUsage> resources;  ///< sorted by resource name
  std::vector<std::string> untracked;         ///< hard entries the model cannot charge, sorted
};

/// Per-namespace quota accounting. admit() decides and charges; release() un-charges.
class QuotaTracker {
 public:
  /// Throws std::invalid_argument for a hard value that is not a non-negative quantity, or two
  /// quotas with the same name in one namespace.
  explicit QuotaTracker(std::vector<ResourceQuota> quotas);
  explicit QuotaTracker(const std::vector<ResourceQuotaSpec>& specs);

  /// Checks every applicable quota of the pod's namespace (see the file comment); when all admit,
  /// charges them. A namespace without quotas always admits. Throws std::invalid_argument when the
  /// pod (namespace/name) is still charged from an earlier admit() (release() it first).
  AdmitResult admit(const Pod& pod, const ExtendedRequests& extended = {});

  /// Charges a pod that already exists (e.g. one already running on a node) without checking
  /// anything: the quota controller's status.used counts every existing pod, even above spec.hard
  /// (a quota created or lowered after the pods). Throws std::invalid_argument like admit().
  void charge_existing(const Pod& pod, const ExtendedRequests& extended = {});

  /// Un-charges what admit() charged the pod (preempted, completed or deleted), found by
  /// namespace/name. Returns false, and changes nothing, when the pod is not charged (never admitted,
  /// already released, or admitted where no quota applied).
  bool release(const Pod& pod);

  /// The quotas of a namespace, in the given order (empty if it has none).
  std::vector<QuotaUsage> usage(std::string_view namespace_name) const;

  bool has_quota(std::string_view namespace_name) const;

 private:
  struct Tracked {
    std::string resource;
    QuantityUnit unit;
    int64_t hard;
    int64_t used;
  };
  struct Entry {
    ResourceQuota spec;
    std::vector<Tracked> tracked;  ///< sorted by resource
    std::vector<std::string> untracked;
  };
  /// What one admitted pod charged: (quota index in its namespace, tracked index, amount).
  struct Charge {
    size_t quota;
    size_t tracked;
    int64_t amount;
  };

  AdmitResult check_and_charge(const Pod& pod, const ExtendedRequests& extended, bool enforce);

  std::map<std::string, std::vector<Entry>, std::less<>> by_namespace_;
  std::map<std::pair<std::string, std::string>, std::vector<Charge>> charged_;  ///< (namespace, pod name) of pods that were charged something
};

}  // namespace gpufleet::admit
