// Dynamic Resource Allocation (DRA, API group resource.k8s.io, v1 since Kubernetes 1.34): the objects
// drivers and users write, as plain data. No I/O, no CEL: selectors carry their expression text and,
// once a reader compiled them, a DeviceMatcher that evaluates them (the CEL layer implements it).
//
// Upstream types: kubernetes/kubernetes staging/src/k8s.io/api/resource/v1/types.go (ResourceSlice,
// Device, CounterSet, DeviceClass, ResourceClaim, ResourceClaimTemplate, AllocationResult) and
// staging/src/k8s.io/api/core/v1/types.go (PodResourceClaim). Field names below are the API's.
// Limits that the API server validates (types.go constants) are repeated where gpufleet checks them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/compute_domain.h"
#include "model/node.h"
#include "model/quantity.h"
#include "model/scheduling_constraints.h"

namespace gpufleet {

/// resource/v1 ResourceSliceMaxDevices: at most 128 devices per ResourceSlice.
inline constexpr size_t kDraMaxDevicesPerSlice = 128;
/// resource/v1 AllocationResultsMaxSize: at most 32 devices in one claim's allocation.
inline constexpr size_t kDraAllocationResultsMaxSize = 32;
/// resource/v1 ResourceClaimReservedForMaxSize: at most 256 consumers (pods) of one claim.
inline constexpr size_t kDraReservedForMaxSize = 256;
/// resource/v1 DeviceRequestsMaxSize: at most 32 requests (and 8 firstAvailable subrequests) per claim.
inline constexpr size_t kDraMaxRequests = 32;
inline constexpr size_t kDraMaxSubRequests = 8;

/// A device attribute value (resource/v1 DeviceAttribute): exactly one of int, bool, string, version
/// (a semantic version 2.0.0 string, e.g. "12.4.0").
struct DraAttribute {
  enum class Kind : uint8_t { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string string_value;  ///< kString and kVersion
  bool operator==(const DraAttribute&) const = default;
};

/// counters a device consumes from one CounterSet of its pool (resource/v1 DeviceCounterConsumption).
struct DraCounterConsumption {
  std::string counter_set;                   ///< a CounterSet name of the pool's sharedCounters
  std::map<std::string, Quantity> counters;  ///< counter name -> amount consumed
};

/// How requests consume one capacity of a device that allows multiple allocations (resource/v1
/// CapacityRequestPolicy, KEP-5075 consumable capacity). At most one of valid_values and valid_range
/// (has_range). Amounts in milli-units of the capacity (bytes x 1000 for memory), as the reader
/// checked them against the API server's validation (default within the range or among the values,
/// values ascending, at most 10). Rounding: dra_consumed_capacity_milli.
struct DraCapacityRequestPolicy {
  std::optional<int64_t> default_milli;    ///< consumed by a request that does not name the capacity
  std::vector<int64_t> valid_values_milli;  ///< ascending; empty = none
  bool has_range = false;
  int64_t range_min_milli = 0;
  std::optional<int64_t> range_max_milli;
  std::optional<int64_t> range_step_milli;  ///< > 0
};

/// One device of a ResourceSlice (resource/v1 Device). Attribute and capacity names are qualified
/// names: "domain/id" or a bare "id", which means "<driver>/id" (upstream's lookupAttribute).
struct DraDevice {
  std::string name;  ///< unique in its pool (a DNS label)
  std::map<std::string, DraAttribute> attributes;
  std::map<std::string, Quantity> capacity;  ///< capacity[name].value
  /// Partitionable devices (KEP-4815, e.g. MIG instances of one GPU): what allocating this device takes
  /// from the pool's shared counters. Empty for an ordinary device.
  std::vector<DraCounterConsumption> consumes_counters;
  /// allowMultipleAllocations (KEP-5075): with the DRAConsumableCapacity gate on
  /// (DraCatalog::consumable_capacity) the device may be allocated to several requests and claims
  /// while the capacity they consume sums to at most its capacity; off, it is allocated whole.
  bool allow_multiple_allocations = false;
  /// capacity[name].requestPolicy, for the capacities that have one (only on such devices).
  std::map<std::string, DraCapacityRequestPolicy> request_policies{};
  /// taints (resource/v1 DeviceTaint, KEP-5055 device taints and tolerations): key, value, effect
  /// None, NoSchedule or NoExecute (node taints' type; PreferNoSchedule is refused when read). A
  /// NoSchedule or NoExecute taint keeps the device from every request that does not tolerate it
  /// (sched/plugins/dra_allocator.h); None is informational. At most kDraMaxDeviceTaints.
  std::vector<Taint> taints{};
};

/// resource/v1 DeviceTaintsMaxLength and DeviceTolerationsMaxLength: at most 16 taints per device and
/// 16 tolerations per request.
inline constexpr size_t kDraMaxDeviceTaints = 16;
inline constexpr size_t kDraMaxTolerations = 16;

/// A named set of counters of a pool (resource/v1 CounterSet), e.g. one physical GPU's memory slices.
struct DraCounterSet {
  std::string name;
  std::map<std::string, Quantity> counters;
};

/// A ResourceSlice (resource/v1 ResourceSliceSpec): devices of one driver's pool reachable from one
/// node (node_name), from nodes matching a selector (node_selector, terms ORed), or from every node
/// (all_nodes). Exactly one of the three is set (a slice with only shared_counters may have none).
struct ResourceSlice {
  std::string name;       ///< metadata.name
  std::string driver;     ///< e.g. "gpu.nvidia.com"
  std::string pool;       ///< pool.name
  int64_t generation = 0; ///< pool.generation: only the slices of a pool's highest generation count
  int64_t resource_slice_count = 1;  ///< pool.resourceSliceCount: slices the pool has in all
  std::string node_name;
  std::vector<NodeSelectorTerm> node_selector;
  bool all_nodes = false;
  std::vector<DraDevice> devices;
  std::vector<DraCounterSet> shared_counters;
  /// `simulate`'s per-node copy of a pools file's slice: the pool name as the pools file wrote it
  /// (`pool` is then "<written>-<node>"); empty for a slice read as it is. A DeviceTaintRule's pool
  /// matches either name.
  std::string written_pool{};
};

/// A DeviceTaintRule (resource.k8s.io/v1alpha3 and v1beta2, cluster-scoped; KEP-5055): adds `taint` to
/// every device its selector matches, "as if the taint was specified directly in the ResourceSlice by
/// the DRA driver" (kubernetes staging/src/k8s.io/api/resource/v1beta2/types.go DeviceTaintRule).
/// All set criteria must match (driver = slice.spec.driver, pool = slice.spec.pool.name or, for
/// `simulate`'s per-node copies, the pool as the pools file wrote it; device = the device's name); an empty selector matches every device; no selector (has_selector false)
/// matches none.
struct DraDeviceTaintRule {
  std::string name;
  bool has_selector = false;
  std::optional<std::string> driver, pool, device;
  Taint taint;
  bool matches(const ResourceSlice& slice, const DraDevice& d) const;
};

/// A device's view for selector evaluation: the slice's driver and the device.
struct DraDeviceView {
  const std::string* driver = nullptr;
  const DraDevice* device = nullptr;
  /// CEL's device.allowMultipleAllocations: the device's field with the DRAConsumableCapacity gate on,
  /// false with it off (the API server drops the field then).
  bool allow_multiple_allocations = false;
};

/// Evaluates one compiled selector against a device (the CEL layer's implementation; tests use their
/// own). Returns true/false, or an error message: a CEL runtime error (e.g. "no such key: ...") in
/// cel-go's wording, which aborts the allocation as upstream does.
class DeviceMatcher {
 public:
  virtual ~DeviceMatcher() = default;
  struct Result {
    bool matches = false;
    std::string error;  ///< non-empty: a runtime error
  };
  virtual Result matches(const DraDeviceView& device) const = 0;
};

/// One selector (resource/v1 DeviceSelector with a CEL expression), e.g.
/// `device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"`.
struct DeviceSelector {
  std::string expression;
  /// Set by the reader that compiled `expression`; nullptr = not compiled (the allocator then refuses
  /// the request with an error, never a silent false).
  std::shared_ptr<const DeviceMatcher> matcher;
};

/// A DeviceClass (resource/v1 DeviceClassSpec): selectors every request for the class must satisfy
/// too. `config` is read and ignored (the reader warns: opaque driver parameters).
struct DeviceClass {
  std::string name;
  std::vector<DeviceSelector> selectors;
};

/// resource/v1 DeviceAllocationMode: ExactCount (the default, `count` devices, default 1) or All (every
/// matching device reachable from the node, at least one).
enum class DraAllocationMode : uint8_t { kExactCount, kAll };

/// resource/v1 ExactDeviceRequest, and DeviceSubRequest (a firstAvailable entry, named).
struct DraExactRequest {
  std::string name;  ///< the subrequest's name; empty for an `exactly` request (the request's name)
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  DraAllocationMode allocation_mode = DraAllocationMode::kExactCount;
  int64_t count = 1;
  /// tolerations (resource/v1 DeviceToleration, KEP-5055): which device taints the request tolerates,
  /// matched as a pod's tolerations match node taints (key, operator Equal/Exists, value, effect;
  /// sched/plugins/taint_toleration.h tolerates_taint). tolerationSeconds bounds how long a NoExecute
  /// taint is tolerated on an allocated device. At most kDraMaxTolerations.
  std::vector<Toleration> tolerations{};
  /// capacity.requests (KEP-5075): capacity name (as written, qualified or bare) -> amount, milli-units.
  /// Used only with DraCatalog::consumable_capacity.
  std::map<std::string, int64_t> capacity_requests_milli{};
};

/// One request of a claim (resource/v1 DeviceRequest): `exactly` or `firstAvailable` (tried in order,
/// the first that can be allocated wins; KEP-4816 prioritized list).
struct DraDeviceRequest {
  std::string name;
  std::optional<DraExactRequest> exactly;
  std::vector<DraExactRequest> first_available;
};

/// resource/v1 DeviceConstraint with matchAttribute: every device allocated for `requests` (all of
/// the claim's when empty; "req/sub" names one subrequest) has the same value of the attribute.
struct DraConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;  ///< fully qualified, e.g. "resource.kubernetes.io/pcieRoot"
};

/// resource/v1 DeviceClaim (spec.devices).
struct DraClaimSpec {
  std::vector<DraDeviceRequest> requests;
  std::vector<DraConstraint> constraints;
};

/// One allocated device (resource/v1 DeviceRequestAllocationResult).
struct DraDeviceResult {
  std::string request;  ///< the request's name, "req/sub" for a firstAvailable subrequest
  std::string driver;
  std::string pool;
  std::string device;
  /// Set for an allocation of a device that allows multiple allocations (resource/v1 shareID and
  /// consumedCapacity, KEP-5075): a UUID unique among the device's allocations, and the capacity
  /// (name as the device publishes it -> milli-units) the allocation consumes. Empty otherwise.
  std::string share_id{};
  std::map<std::string, int64_t> consumed_capacity_milli{};
  /// The request's tolerations as the allocation recorded them (resource/v1
  /// DeviceRequestAllocationResult.tolerations, KEP-5055; kube-scheduler copies them since Kubernetes
  /// 1.35). Empty: the claim's request's tolerations count.
  std::vector<Toleration> tolerations{};
  bool shared() const { return !share_id.empty(); }
  bool operator==(const DraDeviceResult&) const = default;
};

/// A claim's allocation (resource/v1 AllocationResult): its devices and where they are reachable.
/// node_selector empty = every node (upstream leaves AllocationResult.NodeSelector nil for devices of
/// allNodes slices); a node-local allocation has one term matching metadata.name.
struct DraAllocation {
  std::vector<DraDeviceResult> devices;
  std::vector<NodeSelectorTerm> node_selector;
  /// Same devices (node selectors are derived from them).
  bool operator==(const DraAllocation& o) const { return devices == o.devices; }
};

/// A ResourceClaim (resource/v1): spec and, when already allocated, status.allocation and the pods it
/// is reserved for (status.reservedFor, "namespace/name").
struct ResourceClaim {
  std::string namespace_name;
  std::string name;
  DraClaimSpec spec;
  std::optional<DraAllocation> allocation;
  std::vector<std::string> reserved_for;
};

/// A ResourceClaimTemplate (resource/v1): the claim every pod naming it gets of its own.
struct ResourceClaimTemplate {
  std::string namespace_name;
  std::string name;
  DraClaimSpec spec;
};

/// core/v1 PodResourceClaim (pod.spec.resourceClaims[]): exactly one of the two names.
struct PodResourceClaim {
  std::string name;
  std::string resource_claim_name;
  std::string resource_claim_template_name;
  /// A template claim's ResourceClaim as the resourceclaim controller created it
  /// (pod.status.resourceClaimStatuses[].resourceClaimName, dra_generated_claim_name); empty = the
  /// name "<pod>-<name>" without the generated suffix (`gpufleet place`).
  std::string generated_claim_name;
  bool operator==(const PodResourceClaim&) const = default;
};

/// The name the resourceclaim controller gives the claim of pod claim `claim_name` of pod `pod_name`
/// (kubernetes pkg/controller/resourceclaim/controller.go handleClaim): generateName
/// "<pod>-<claim>-", both parts shortened in proportion when "<pod>-<claim>" is longer than 57
/// characters, then the 5 characters the API server appends, here `suffix` (the caller's
/// deterministic choice).
std::string dra_generated_claim_name(const std::string& pod_name, const std::string& claim_name, const std::string& suffix);

/// A claim as a pod holds it once allocated: the claim's key and its allocation. The key of a named
/// claim is "namespace/name"; a template's claim is the pod's own, "namespace/<pod>-<podClaimName>"
/// (the name the resourceclaim controller generates, minus its random suffix).
struct DraClaimAllocation {
  std::string claim;
  DraAllocation allocation;
  bool operator==(const DraClaimAllocation&) const = default;
};

/// Everything DRA the cluster holds: slices, classes, claims and templates, as read.
struct DraCatalog {
  std::vector<ResourceSlice> slices;
  std::map<std::string, DeviceClass> classes;             ///< by name
  std::map<std::string, ResourceClaim> claims;            ///< by "namespace/name"
  std::map<std::string, ResourceClaimTemplate> templates; ///< by "namespace/name"
  /// NVIDIA's ComputeDomains (model/compute_domain.h), in input order; their channel templates are
  /// in `templates` (the reader adds the controller's when the input does not hold it).
  std::vector<ComputeDomain> compute_domains;
  /// DeviceTaintRules by name (cluster-scoped), in name order; dra_device_taints applies them.
  std::map<std::string, DraDeviceTaintRule> taint_rules;
  /// The DRAConsumableCapacity feature gate (KEP-5075, alpha in Kubernetes 1.34, off by default):
  /// `--feature-gates DRAConsumableCapacity=true` of place and simulate. Off, allowMultipleAllocations
  /// and capacity requests are ignored (as an API server with the gate off drops them).
  bool consumable_capacity = false;
  bool empty() const {
    return slices.empty() && classes.empty() && claims.empty() && templates.empty() && compute_domains.empty() && taint_rules.empty();
  }
};

/// What one request consumes of one capacity of a device that allows multiple allocations
/// (kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/
/// consumable_capacity.go calculateConsumedCapacity and violatesPolicy): `requested_milli` absent ->
/// the policy's default, else the whole `capacity_milli`; present without a policy -> as requested;
/// with a validRange -> min when below it, else rounded up to min + n x step; with validValues -> the
/// smallest value >= the request. nullopt when the result breaks the policy (above the range's max,
/// above every valid value): the device cannot be allocated for the request.
std::optional<int64_t> dra_consumed_capacity_milli(std::optional<int64_t> requested_milli, int64_t capacity_milli,
                                                   const DraCapacityRequestPolicy* policy);

/// A deterministic stand-in for the shareID the allocator draws (upstream GenerateShareID: a random
/// UUID): a version-4-shaped UUID from a hash of `claim_key` and the result's index in the claim.
std::string dra_share_id(const std::string& claim_key, size_t result_index);

/// The taints of device `d` of `slice`: its own (as the driver published them), then those of the
/// catalog's DeviceTaintRules that match it, in rule-name order. Taints are cumulative: a key may
/// appear with several effects, and each applies (KEP-5055).
std::vector<Taint> dra_device_taints(const DraCatalog& catalog, const ResourceSlice& slice, const DraDevice& d);

/// The device driver/pool/device of the newest generation of its pool in `catalog`, with its slice;
/// {nullptr, nullptr} when no slice publishes it.
std::pair<const ResourceSlice*, const DraDevice*> dra_find_device(const DraCatalog& catalog, const std::string& driver,
                                                                  const std::string& pool, const std::string& device);

/// "driver/pool/device", upstream's DeviceID.String().
std::string dra_device_id(const std::string& driver, const std::string& pool, const std::string& device);

/// The key of the claim that pod claim `pc` of pod namespace/pod names (see DraClaimAllocation);
/// "namespace/<generated_claim_name>" when that is set.
std::string dra_claim_key(const std::string& pod_namespace, const std::string& pod_name, const PodResourceClaim& pc);

/// The attribute `qualified_name` of a device of `driver`: the fully qualified entry, else, when the
/// domain is the driver's name, the bare id (upstream structured/allocator.go lookupAttribute).
const DraAttribute* dra_lookup_attribute(const DraDevice& device, const std::string& driver, const std::string& qualified_name);

}  // namespace gpufleet
