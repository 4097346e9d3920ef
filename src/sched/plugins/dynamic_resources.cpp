// Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go
// (PreFilter, validateDeviceClass, Filter, statusUnschedulable). See dynamic_resources.h.
#include "sched/plugins/dynamic_resources.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpufleet::sched {
namespace {

struct DraCycleData final : StateData {
  DraPodClaims claims;
  std::unique_ptr<StateData> clone() const override { return std::make_unique<DraCycleData>(*this); }
};

Status unresolvable(std::string reason) { return Status(Code::kUnschedulableAndUnresolvable, std::move(reason)); }

// validateDeviceClass over a claim's requests and subrequests.
Status check_classes(const DraCatalog& catalog, const DraClaimSpec& spec) {
  auto check = [&](const DraExactRequest& r, const std::string& name) -> Status {
    if (catalog.classes.count(r.device_class_name) == 0)
      return unresolvable(fmt::format("request {}: device class {} does not exist", name, r.device_class_name));
    return {};
  };
  for (const DraDeviceRequest& r : spec.requests) {
    if (r.exactly) {
      if (Status s = check(*r.exactly, r.name); !s.is_success()) return s;
    } else {
      for (const DraExactRequest& sub : r.first_available)
        if (Status s = check(sub, r.name + "/" + sub.name); !s.is_success()) return s;
    }
  }
  return {};
}

}  // namespace

DraPodClaims dra_resolve_pod_claims(const Pod& pod, const ClusterState& state) {
  DraPodClaims out;
  static const DraCatalog kEmpty;
  const DraCatalog& catalog = state.dra_catalog() != nullptr ? *state.dra_catalog() : kEmpty;
  const std::string pod_key = pod.namespace_name + "/" + pod.name;
  for (const PodResourceClaim& pc : pod.resource_claims) {
    const std::string key = dra_claim_key(pod.namespace_name, pod.name, pc);
    const DraClaimSpec* spec = nullptr;
    if (!pc.resource_claim_name.empty()) {
      auto it = catalog.claims.find(key);
      if (it == catalog.claims.end()) {
        out.status = unresolvable(fmt::format("resourceclaim.resource.k8s.io \"{}\" not found", pc.resource_claim_name));
        return out;
      }
      spec = &it->second.spec;
      const auto& reserved = it->second.reserved_for;
      if (it->second.allocation && reserved.size() >= kDraReservedForMaxSize &&
          std::find(reserved.begin(), reserved.end(), pod_key) == reserved.end()) {
        out.status = unresolvable("resourceclaim in use");
        return out;
      }
    } else {
      auto it = catalog.templates.find(pod.namespace_name + "/" + pc.resource_claim_template_name);
      if (it == catalog.templates.end()) {
        out.status = unresolvable(fmt::format("resourceclaimtemplate.resource.k8s.io \"{}\" not found", pc.resource_claim_template_name));
        return out;
      }
      spec = &it->second.spec;
    }
    if (const ClusterState::DraClaimState* held = state.dra_claim(key)) {
      if (const auto tainted = dra_untolerated_allocated_taint(catalog, *spec, held->allocation)) {  // KEP-5055
        out.status = unresolvable(fmt::format("resourceclaim {}: allocated device {} has untolerated taint {{{}: {}}}", key,
                                              tainted->device_id, tainted->taint.key, tainted->taint.value));
        return out;
      }
      out.claims.emplace_back(key, &held->allocation);
      continue;
    }
    if (Status s = check_classes(catalog, *spec); !s.is_success()) {
      out.status = std::move(s);
      return out;
    }
    out.claims.emplace_back(key, nullptr);
    out.to_allocate.push_back({key, spec});
  }
  return out;
}

Status DynamicResources::pre_filter(const Pod& pod, const ClusterState& state, CycleState& cycle) const {
  if (pod.resource_claims.empty()) return Status(Code::kSkip);
  auto data = std::make_unique<DraCycleData>();
  data->claims = dra_resolve_pod_claims(pod, state);
  if (!data->claims.status.is_success()) return data->claims.status;
  cycle.write(kName, std::move(data));
  return {};
}

namespace {

// Filter on resolved claims: kFits with the new allocations in *out, or a rejection.
FilterCode filter_claims(const DraPodClaims& claims, const ClusterState& state, NodeId n, std::vector<DraAllocation>* out,
                         std::string* error) {
  const Node& node = state.node(n);
  for (const auto& [key, allocation] : claims.claims)
    if (allocation != nullptr && !dra_allocation_reaches(*allocation, node)) return DynamicResources::kNotAvailable;
  if (claims.to_allocate.empty()) return FilterCode::kFits;
  static const DraCatalog kEmpty;
  DraAllocateResult r = dra_allocate(state.dra_catalog() != nullptr ? *state.dra_catalog() : kEmpty, state, node, claims.to_allocate);
  if (!r.error.empty()) {
    if (error != nullptr) *error = r.error;
    return DynamicResources::kAllocationError;
  }
  if (!r.allocations) return DynamicResources::kCannotAllocate;
  if (out != nullptr) *out = std::move(*r.allocations);
  return FilterCode::kFits;
}

}  // namespace

FilterCode DynamicResources::filter(const Pod& pod, const ClusterState& state, NodeId n, const CycleState& cycle) const {
  if (pod.resource_claims.empty()) return FilterCode::kFits;
  if (const DraCycleData* data = cycle.read_as<DraCycleData>(kName)) return filter_claims(data->claims, state, n, nullptr, nullptr);
  const DraPodClaims claims = dra_resolve_pod_claims(pod, state);
  if (!claims.status.is_success()) return kCannotAllocate;
  return filter_claims(claims, state, n, nullptr, nullptr);
}

std::vector<std::string> DynamicResources::node_reasons(FilterCode code, const Pod& pod, const ClusterState& state, NodeId n) const {
  if (code != kAllocationError) return FilterPlugin::node_reasons(code, pod, state, n);
  const DraPodClaims claims = dra_resolve_pod_claims(pod, state);
  std::string error;
  filter_claims(claims, state, n, nullptr, &error);
  return {error.empty() ? std::string(kReasons[2].reason) : error};
}

Status DynamicResources::post_filter(const Pod& pod, ClusterState& state, const NodeToStatus& statuses, CycleState&, Handle&,
                                     PostFilterResult&) const {
  if (pod.resource_claims.empty() || state.dra_catalog() == nullptr) return Status(Code::kUnschedulable);
  const DraPodClaims claims = dra_resolve_pod_claims(pod, state);
  const std::string pod_key = pod.namespace_name + "/" + pod.name;
  for (const auto& [key, allocation] : claims.claims) {
    if (allocation == nullptr) continue;
    // Unavailable: its allocation does not reach a node that this plugin rejected as "not available".
    bool unavailable = false;
    for (NodeId n = 0; n < statuses.size() && !unavailable; ++n) {
      const Rejection r = statuses.at(n);
      unavailable = r.plugin == this && r.code == kNotAvailable && state.has_node(n) && !dra_allocation_reaches(*allocation, state.node(n));
    }
    if (!unavailable) continue;
    const ClusterState::DraClaimState* held = state.dra_claim(key);
    if (held == nullptr || held->pods > 0) continue;
    const auto claim = state.dra_catalog()->claims.find(key);
    if (claim != state.dra_catalog()->claims.end() &&
        std::any_of(claim->second.reserved_for.begin(), claim->second.reserved_for.end(),
                    [&](const std::string& consumer) { return consumer != pod_key; }))
      continue;
    state.deallocate_dra_claim(key);
    return Status(Code::kUnschedulable, std::string(kDeallocated));
  }
  return Status(Code::kUnschedulable, std::string(kStillNotSchedulable));
}

std::optional<std::vector<DraClaimAllocation>> dra_assign_claims(const Pod& pod, const ClusterState& state, NodeId n) {
  std::vector<DraClaimAllocation> out;
  if (pod.resource_claims.empty()) return out;
  const DraPodClaims claims = dra_resolve_pod_claims(pod, state);
  if (!claims.status.is_success()) return std::nullopt;
  std::vector<DraAllocation> fresh;
  if (filter_claims(claims, state, n, &fresh, nullptr).rejected()) return std::nullopt;
  size_t next = 0;
  for (const auto& [key, allocation] : claims.claims)
    out.push_back({key, allocation != nullptr ? *allocation : std::move(fresh[next++])});
  return out;
}

}  // namespace gpufleet::sched
