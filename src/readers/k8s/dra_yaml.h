// Reader of the Dynamic Resource Allocation objects (API group resource.k8s.io): ResourceSlice,
// DeviceClass, ResourceClaim and ResourceClaimTemplate, in apiVersion resource.k8s.io/v1 (GA in
// Kubernetes 1.34) and the beta spellings v1beta2 (same shape as v1) and v1beta1 (a request's
// deviceClassName, selectors, allocationMode and count directly on the request instead of under
// `exactly`; a device's attributes, capacity and consumesCounters under `basic`). Field names and
// shapes: kubernetes/kubernetes staging/src/k8s.io/api/resource/{v1,v1beta2,v1beta1}/types.go. The
// Kubernetes reader's kind dispatch (readers/k8s/k8s_yaml.cpp) calls it; Pods' spec.resourceClaims are
// read there with read_pod_resource_claims.
//
// CEL selectors (DeviceClass spec.selectors, requests' selectors) are compiled when read
// (readers/k8s/dra_cel.h, the CEL layer src/cel): an expression gpufleet cannot evaluate fails at its
// field naming the construct and its column in the expression, exit status 2.
//
// Refused (InputError, exit 2): unknown keys; a request with adminAccess: true (an admin-access device
// is shared with the claims that hold it, DRAAdminAccess; gpufleet does not model it); per-device
// node selection (perDeviceNodeSelection); a request with neither `exactly` nor `firstAvailable` or
// both; more than 128 devices in a slice, 32 requests in a claim, 8 subrequests, count outside
// 1..32 (the API server's limits, types.go); a malformed capacity requestPolicy (request_policy in
// dra_yaml.cpp: the API server's validation), or one on a device without allowMultipleAllocations.
// Consumable capacity (KEP-5075: allowMultipleAllocations, requestPolicy, capacity.requests, a
// result's shareID and consumedCapacity) is read into the model; the allocator uses it only with the
// DRAConsumableCapacity gate (DraCatalog::consumable_capacity; dra_feature_warnings otherwise).
// Device taints and tolerations (KEP-5055): a device's `taints` (effect None, NoSchedule or
// NoExecute; PreferNoSchedule refused, as the API server does; at most 16), a request's and
// subrequest's `tolerations` (core/v1 toleration rules, at most 16), and DeviceTaintRule objects
// (resource.k8s.io/v1beta2 and v1alpha3: deviceSelector driver/pool/device and a taint; v1alpha3's
// deviceClassName and selectors are warned about and ignored).
// Read and not modelled (one warning per kind of field): DeviceClass and claim `config` (opaque
// driver parameters), bindingConditions, consumesCounters
// of a device with allowMultipleAllocations (each allocation made while placing takes them), DeviceClass
// extendedResourceName.
// Limits: docs/input-limits.md ("Dynamic Resource Allocation").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/dra.h"
#include "readers/k8s/k8s_objects.h"

namespace gpufleet::io {

namespace detail {
class Field;
}

/// A device's consumesCounters entry as read (read_dra_object collects them; check_counter_references
/// checks them once every slice is read: a pool's counter sets may sit in another of its slices).
struct DraCounterReference {
  size_t slice = 0;         ///< index in DraCatalog::slices
  std::string device;
  std::string counter_set;
  std::string where;        ///< "file:line:column: field 'path'" of the entry's counterSet
  std::vector<std::pair<std::string, std::string>> counters;  ///< (counter name, where its entry is)
};

/// The references to a counter set, or to a counter of a set, that no slice of the device's pool at
/// the pool's newest generation defines: one warning line each, "<where>: counter set 'gpu-0' is
/// defined in no ResourceSlice of pool <driver>/<pool> ..." (or "counter 'memory' is not in counter
/// set ..."). A warning, not an error: the API server validates each slice alone and accepts it
/// (kubernetes pkg/apis/resource/validation/validation.go validateDeviceCounterConsumption checks the
/// names' syntax only). gpufleet's allocator never allocates such a device (sched/plugins/
/// dra_allocator.h). References from slices of an older generation are ignored, as their devices are.
std::vector<std::string> check_counter_references(const DraCatalog& catalog, const std::vector<DraCounterReference>& references);

/// Whether `kind` is one of the DRA kinds this reader reads (the four above and DeviceTaintRule).
bool is_dra_kind(const std::string& kind);

/// Reads one DRA object of `kind` into `catalog`. `warn(what, at, consequence)` is called for each
/// field read but not modelled. Throws InputError at the offending field (see above), also for a
/// second object of the same name (namespace/name for claims and templates).
/// `references` (may be nullptr) receives the slice's consumesCounters entries (DraCounterReference).
void read_dra_object(const detail::Field& object, const std::string& kind, DraCatalog& catalog,
                     const std::function<void(const std::string&, const detail::Field&, const std::string&)>& warn,
                     std::vector<DraCounterReference>* references = nullptr);

/// Reads a Pod's spec.resourceClaims: each {name, resourceClaimName | resourceClaimTemplateName}.
/// Throws InputError for a missing or repeated name, or not exactly one of the two references.
/// `references` (may be nullptr) receives where each names its object, for check_dra_claim_references;
/// `pod_namespace` is the pod's namespace, where kube looks the objects up.
std::vector<PodResourceClaim> read_pod_resource_claims(const detail::Field& list, const std::string& pod_namespace = "default",
                                                       std::vector<DraClaimReference>* references = nullptr);

/// With the DRAConsumableCapacity gate off (catalog.consumable_capacity false, kube's alpha default),
/// one warning line per kind of consumable-capacity field the catalog holds, naming how many and the
/// first: devices with allowMultipleAllocations (allocated whole, to one claim at a time) and
/// requests with capacity.requests (ignored), as an API server with the gate off drops the fields
/// (kubernetes pkg/registry/resource/*/strategy.go dropDisabledFields). None with the gate on.
std::vector<std::string> dra_feature_warnings(const DraCatalog& catalog);

/// Checks, once every input is read, that each ResourceClaim and ResourceClaimTemplate a pod names
/// is in `catalog` (namespace/name); throws InputError at the first reference that is not, at its
/// resourceClaimName / resourceClaimTemplateName: "ResourceClaimTemplate 'ns/name' is not among the
/// inputs ...". Kube accepts such a pod and leaves it pending (kubernetes pkg/scheduler/framework/
/// plugins/dynamicresources/dynamicresources.go foreachPodResourceClaim: the lister's NotFound, or no
/// generated claim while pkg/controller/resourceclaim/controller.go cannot find the template); for a
/// set of input files the missing object is a typo or a file left out, so `place` and `simulate`
/// refuse it (docs/dra.md, "Claims that name no object"). The live paths (serve) read the API
/// server's objects and do not call this: there the pod stays pending with kube's message.
void check_dra_claim_references(const DraCatalog& catalog, const std::vector<DraClaimReference>& references);

}  // namespace gpufleet::io
