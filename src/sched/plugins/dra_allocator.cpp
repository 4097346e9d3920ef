// Upstream: kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
// incubating/allocator_incubating.go (Allocate, validateDeviceRequest, allocateOne, isSelectable,
// selectorsMatch, allocateDevice, matchAttributeConstraint) and pools_incubating.go (GatherPools).
// Written from their documented behaviour; see dra_allocator.h.
#include "sched/plugins/dra_allocator.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "sched/plugins/node_affinity.h"
#include "sched/plugins/taint_toleration.h"

namespace gpufleet::sched {
namespace {

struct Pool {
  std::string driver, name;
  bool incomplete = false, invalid = false;
  std::vector<const ResourceSlice*> slices;  // of the highest generation
  // counter set -> counter -> milli-units left after the devices in use
  std::map<std::string, std::map<std::string, int64_t>> available;
};

struct Candidate {
  const ResourceSlice* slice;
  const DraDevice* device;
  std::string id;
  size_t pool;
};

struct RequestData {
  const DraExactRequest* request = nullptr;
  std::string base, sub;  // the request's name and, for a subrequest, its own
  std::string full_name;  // base or base/sub
  const DeviceClass* device_class = nullptr;
  int64_t num_devices = 0;
  std::vector<size_t> all;         // All mode: the candidates
  std::vector<int8_t> selectable;  // per candidate: -1 unknown, 0, 1
};

struct RequestSlot {
  std::vector<RequestData> alternatives;  // 1 for `exactly`, else the subrequests
  bool first_available = false;
  size_t chosen = 0;
};

// One device taken for a claim: the request's name, the candidate and, for a shared allocation
// (consumable capacity), what it consumes.
struct Taken {
  std::string request;
  size_t candidate = 0;
  bool shared = false;
  std::map<std::string, int64_t> consumed_milli;
};

struct ConstraintState {
  const DraConstraint* constraint;
  const DraAttribute* value = nullptr;
  int32_t count = 0;
  bool applies(const RequestData& rd) const {
    const auto& names = constraint->requests;
    if (names.empty()) return true;
    return std::find(names.begin(), names.end(), rd.base) != names.end() ||
           (!rd.sub.empty() && std::find(names.begin(), names.end(), rd.full_name) != names.end());
  }
};

// A capacity's value in milli-units; one too large for int64 milli-units (above ~9.2e15) counts as
// unlimited (the reader checked every amount a request or policy names fits).
int64_t milli_or_max(const Quantity& q) {
  try {
    return q.milli();
  } catch (const std::invalid_argument&) {
    return INT64_MAX;
  }
}

bool same_value(const DraAttribute& a, const DraAttribute& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case DraAttribute::Kind::kInt: return a.int_value == b.int_value;
    case DraAttribute::Kind::kBool: return a.bool_value == b.bool_value;
    default: return a.string_value == b.string_value;
  }
}

class Search {
 public:
  Search(const DraCatalog& catalog, const ClusterState& state, const Node& node, std::span<const DraClaimToAllocate> claims,
         int64_t* count)
      : catalog_(catalog), state_(state), node_(node), claims_(claims), count_(count) {}

  DraAllocateResult run() {
    gather_pools();
    slots_.resize(claims_.size());
    constraints_.resize(claims_.size());
    results_.resize(claims_.size());
    for (size_t c = 0; c < claims_.size(); ++c) {
      const DraClaimSpec& spec = *claims_[c].spec;
      for (const DraDeviceRequest& r : spec.requests) {
        RequestSlot slot;
        if (r.exactly) {
          slot.alternatives.push_back(make_request(c, *r.exactly, r.name, ""));
        } else {
          slot.first_available = true;
          for (const DraExactRequest& sub : r.first_available) slot.alternatives.push_back(make_request(c, sub, r.name, sub.name));
        }
        if (!error_.empty()) return {std::nullopt, error_};
        slots_[c].push_back(std::move(slot));
      }
      for (const DraConstraint& k : spec.constraints) constraints_[c].push_back(ConstraintState{&k});
    }
    const bool done = allocate_one(0, 0, 0, 0, false);
    if (!error_.empty()) return {std::nullopt, error_};
    if (!done) {
      for (const Pool& p : pools_)
        if (p.invalid) return {std::nullopt, "invalid resource pools were encountered"};
      return {};
    }
    std::vector<DraAllocation> out(claims_.size());
    for (size_t c = 0; c < claims_.size(); ++c) {
      const ResourceSlice* local = nullptr;
      const ResourceSlice* selected = nullptr;
      for (const Taken& t : results_[c]) {
        const Candidate& k = candidates_[t.candidate];
        DraDeviceResult r{t.request, k.slice->driver, k.slice->pool, k.device->name};
        if (t.shared) {
          r.share_id = dra_share_id(claims_[c].key, out[c].devices.size());
          r.consumed_capacity_milli = t.consumed_milli;
        }
        out[c].devices.push_back(std::move(r));
        if (!k.slice->node_name.empty()) local = k.slice;
        else if (!k.slice->node_selector.empty() && selected == nullptr) selected = k.slice;
      }
      if (local != nullptr) {
        NodeSelectorTerm t;
        t.match_fields.push_back({"metadata.name", "In", {node_.name}});
        out[c].node_selector.push_back(std::move(t));
      } else if (selected != nullptr) {
        out[c].node_selector = selected->node_selector;
      }
    }
    return {std::move(out), {}};
  }

 private:
  void gather_pools() {
    // (driver, pool) -> slices of the highest generation, in input order.
    std::map<std::pair<std::string, std::string>, std::vector<const ResourceSlice*>> by_pool;
    for (const ResourceSlice& s : catalog_.slices) {
      auto& list = by_pool[{s.driver, s.pool}];
      if (!list.empty() && s.generation < list.front()->generation) continue;
      if (!list.empty() && s.generation > list.front()->generation) list.clear();
      list.push_back(&s);
    }
    for (auto& [key, slices] : by_pool) {
      bool reaches = false;
      for (const ResourceSlice* s : slices) reaches |= slice_reaches(*s);
      if (!reaches) continue;
      Pool p;
      p.driver = key.first;
      p.name = key.second;
      p.slices = slices;
      p.incomplete = static_cast<int64_t>(slices.size()) != slices.front()->resource_slice_count;
      std::set<std::string> names;
      for (const ResourceSlice* s : slices) {
        for (const DraDevice& d : s->devices) p.invalid |= !names.insert(d.name).second;
        for (const DraCounterSet& cs : s->shared_counters)
          for (const auto& [counter, q] : cs.counters) p.available[cs.name][counter] = q.milli();
      }
      // Counters the devices in use consume.
      for (const ResourceSlice* s : slices)
        for (const DraDevice& d : s->devices) {
          if (d.consumes_counters.empty()) continue;
          const std::string id = dra_device_id(s->driver, s->pool, d.name);
          if (state_.dra_device_holder(id) == nullptr && state_.dra_consumed_capacity(id) == nullptr) continue;  // shares: once
          for (const DraCounterConsumption& cc : d.consumes_counters)
            for (const auto& [counter, q] : cc.counters) p.available[cc.counter_set][counter] -= q.milli();
        }
      const size_t index = pools_.size();
      pools_.push_back(std::move(p));
      for (const ResourceSlice* s : slices) {
        if (!slice_reaches(*s)) continue;
        for (const DraDevice& d : s->devices) {
          std::string id = dra_device_id(s->driver, s->pool, d.name);
          const std::map<std::string, int64_t>* consumed = state_.dra_consumed_capacity(id);
          // Shares keep a device off other allocations unless it allows multiple allocations and
          // the gate is on (then they only use up its capacity).
          const bool shareable = shareable_device(d);
          in_use_.push_back(state_.dra_device_holder(id) != nullptr || (consumed != nullptr && !shareable) ? 1 : 0);
          // Its taints, the driver's and the DeviceTaintRules' (usually none).
          taints_.push_back(d.taints.empty() && catalog_.taint_rules.empty() ? std::vector<Taint>{} : dra_device_taints(catalog_, *s, d));
          consumed_.push_back(consumed != nullptr && shareable ? *consumed : std::map<std::string, int64_t>{});
          candidates_.push_back({s, &d, std::move(id), index});
        }
      }
    }
  }

  bool slice_reaches(const ResourceSlice& s) const {
    if (!s.node_name.empty()) return s.node_name == node_.name;
    if (s.all_nodes) return true;
    if (!s.node_selector.empty()) return node_selector_terms_match(s.node_selector, node_);
    return false;
  }

  RequestData make_request(size_t c, const DraExactRequest& r, const std::string& base, const std::string& sub) {
    RequestData rd;
    rd.request = &r;
    rd.base = base;
    rd.sub = sub;
    rd.full_name = sub.empty() ? base : base + "/" + sub;
    rd.selectable.assign(candidates_.size(), -1);
    auto it = catalog_.classes.find(r.device_class_name);
    if (it == catalog_.classes.end()) {
      error_ = fmt::format("claim {}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                           claims_[c].key, rd.full_name, r.device_class_name, r.device_class_name);
      return rd;
    }
    rd.device_class = &it->second;
    if (r.allocation_mode == DraAllocationMode::kExactCount) {
      rd.num_devices = r.count;
      return rd;
    }
    for (const Pool& p : pools_) {
      if (p.incomplete || p.invalid) {
        error_ = fmt::format("claim {}, request {}: asks for all devices, but resource pool {}/{} is currently {}", claims_[c].key,
                             rd.full_name, p.driver, p.name, p.incomplete ? "being updated" : "invalid");
        return rd;
      }
    }
    for (size_t k = 0; k < candidates_.size() && error_.empty(); ++k)
      if (is_selectable(c, rd, k)) rd.all.push_back(k);
    rd.num_devices = static_cast<int64_t>(rd.all.size());
    return rd;
  }

  bool selectors_match(size_t c, const std::vector<DeviceSelector>& selectors, const DraDeviceView& view, const DeviceClass* cls) {
    for (size_t i = 0; i < selectors.size(); ++i) {
      const std::string where = cls != nullptr ? fmt::format("class {}", cls->name) : fmt::format("claim {}", claims_[c].key);
      if (!selectors[i].matcher) {
        error_ = fmt::format("{}: selector #{}: CEL expression not compiled", where, i);
        return false;
      }
      const DeviceMatcher::Result r = selectors[i].matcher->matches(view);
      if (!r.error.empty()) {
        error_ = fmt::format("{}: selector #{}: CEL runtime error: {}", where, i, r.error);
        return false;
      }
      if (!r.matches) return false;
    }
    return true;
  }

  bool is_selectable(size_t c, RequestData& rd, size_t k) {
    int8_t& memo = rd.selectable[k];
    if (memo >= 0) return memo != 0;
    const Candidate& cand = candidates_[k];
    const DraDeviceView view{&cand.slice->driver, cand.device, shareable_device(*cand.device)};
    bool ok = selectors_match(c, rd.device_class->selectors, view, rd.device_class);
    if (ok && error_.empty()) ok = selectors_match(c, rd.request->selectors, view, nullptr);
    if (!error_.empty()) return false;
    memo = ok ? 1 : 0;
    return ok;
  }

  // Whether a device is allocated as consumable capacity (KEP-5075): it allows multiple
  // allocations and the DRAConsumableCapacity gate is on.
  bool shareable_device(const DraDevice& d) const { return catalog_.consumable_capacity && d.allow_multiple_allocations; }

  // The device's capacity entry a request's capacity name refers to (upstream resolveCapacityName):
  // the same name, else the other spelling when the domain is the driver's ("memory" and
  // "<driver>/memory" are one capacity). nullptr when the device has none.
  static const std::pair<const std::string, Quantity>* capacity_entry(const Candidate& k, const std::string& name) {
    const auto& capacity = k.device->capacity;
    if (auto it = capacity.find(name); it != capacity.end()) return &*it;
    const std::string& driver = k.slice->driver;
    const size_t slash = name.find('/');
    const std::string other = slash == std::string::npos ? driver + "/" + name
                              : name.compare(0, slash, driver) == 0 ? name.substr(slash + 1) : std::string();
    if (other.empty()) return nullptr;
    if (auto it = capacity.find(other); it != capacity.end()) return &*it;
    return nullptr;
  }

  // Consumable capacity (KEP-5075, gate on; upstream CmpRequestOverCapacity): every capacity the
  // request names must exist on the device. An ordinary device must have at least the requested
  // amount of each (a filter, as a CEL compareTo would be). A shareable device: each of its
  // capacities consumes what dra_consumed_capacity_milli says (the request, rounded by the policy,
  // or the default, or all of it) and what its allocations then consume together must stay within
  // it; `consumed` receives what this allocation consumes.
  bool capacity_fits(const RequestData& rd, size_t k, std::map<std::string, int64_t>& consumed) const {
    const Candidate& cand = candidates_[k];
    std::map<std::string, int64_t> requested;  // device capacity name -> amount
    for (const auto& [name, milli] : rd.request->capacity_requests_milli) {
      const auto* entry = capacity_entry(cand, name);
      if (entry == nullptr) return false;
      requested[entry->first] = milli;
    }
    if (!shareable_device(*cand.device)) {
      for (const auto& [name, milli] : requested)
        if (milli_or_max(cand.device->capacity.at(name)) < milli) return false;
      return true;
    }
    for (const auto& [name, q] : cand.device->capacity) {
      const int64_t total = milli_or_max(q);
      auto r = requested.find(name);
      auto p = cand.device->request_policies.find(name);
      const std::optional<int64_t> take = dra_consumed_capacity_milli(r == requested.end() ? std::nullopt : std::optional<int64_t>(r->second),
                                                                      total, p == cand.device->request_policies.end() ? nullptr : &p->second);
      if (!take) return false;
      auto used = consumed_[k].find(name);
      const int64_t before = used == consumed_[k].end() ? 0 : used->second;
      if (*take > total - before) return false;
      consumed[name] = *take;
    }
    return true;
  }

  bool counters_fit(const Candidate& k) const {
    const Pool& p = pools_[k.pool];
    for (const DraCounterConsumption& cc : k.device->consumes_counters) {
      auto set = p.available.find(cc.counter_set);
      if (set == p.available.end()) return false;
      for (const auto& [counter, q] : cc.counters) {
        auto it = set->second.find(counter);
        if (it == set->second.end() || it->second < q.milli()) return false;
      }
    }
    return true;
  }

  void consume(const Candidate& k, int sign) {
    Pool& p = pools_[k.pool];
    for (const DraCounterConsumption& cc : k.device->consumes_counters)
      for (const auto& [counter, q] : cc.counters) p.available[cc.counter_set][counter] -= sign * q.milli();
  }

  // Device taints (KEP-5055; upstream allocateDevice, allTaintsTolerated): a NoSchedule or NoExecute
  // taint the request does not tolerate keeps the device from it; None and unknown effects do not.
  // The node rule (find_untolerated_taint) is the same rule.
  bool tolerated(const RequestData& rd, size_t k) const {
    return taints_[k].empty() || find_untolerated_taint(taints_[k], rd.request->tolerations) == nullptr;
  }

  // allocateDevice: whether candidate k can be taken for the request; takes it when it can.
  bool take(size_t c, const RequestData& rd, size_t k, bool must) {
    const Candidate& cand = candidates_[k];
    if (in_use_[k] != 0) return false;
    if (!tolerated(rd, k)) return false;
    if (!cand.device->consumes_counters.empty() && !counters_fit(cand)) return false;
    std::map<std::string, int64_t> consumed;
    if (catalog_.consumable_capacity && !capacity_fits(rd, k, consumed)) return false;
    std::vector<ConstraintState>& cs = constraints_[c];
    for (size_t i = 0; i < cs.size(); ++i) {
      ConstraintState& s = cs[i];
      if (!s.applies(rd)) continue;
      const DraAttribute* a = dra_lookup_attribute(*cand.device, cand.slice->driver, s.constraint->match_attribute);
      const bool ok = a != nullptr && (s.count == 0 || same_value(*a, *s.value));
      if (!ok) {
        for (size_t j = 0; j < i; ++j)
          if (cs[j].applies(rd) && --cs[j].count == 0) cs[j].value = nullptr;
        if (must)
          error_ = fmt::format("claim {}, request {}: cannot add device {} because a claim constraint would not be satisfied",
                               claims_[c].key, rd.full_name, cand.id);
        return false;
      }
      if (s.count++ == 0) s.value = a;
    }
    const bool shared = shareable_device(*cand.device);
    if (shared) {
      for (const auto& [name, milli] : consumed) consumed_[k][name] += milli;
    } else {
      in_use_[k] = 1;
    }
    if (!cand.device->consumes_counters.empty()) consume(cand, +1);
    results_[c].push_back(Taken{rd.full_name, k, shared, shared ? std::move(consumed) : std::map<std::string, int64_t>{}});
    return true;
  }

  void untake(size_t c, const RequestData& rd, size_t k) {
    const Candidate& cand = candidates_[k];
    for (ConstraintState& s : constraints_[c])
      if (s.applies(rd) && --s.count == 0) s.value = nullptr;
    const Taken& t = results_[c].back();
    if (t.shared) {
      for (const auto& [name, milli] : t.consumed_milli) consumed_[k][name] -= milli;
    } else {
      in_use_[k] = 0;
    }
    if (!cand.device->consumes_counters.empty()) consume(cand, -1);
    results_[c].pop_back();
  }

  bool allocate_one(size_t c, size_t r, size_t alt, int64_t d, bool in_sub) {
    if (count_ != nullptr) ++*count_;
    if (++steps_ > kDraAllocateMaxSteps) {  // kube's filterTimeout, as a deterministic bound
      if (error_.empty()) error_ = "timed out trying to allocate devices";
      return false;
    }
    if (c >= claims_.size()) return true;
    if (r >= slots_[c].size()) return allocate_one(c + 1, 0, 0, 0, false);
    RequestSlot& slot = slots_[c][r];
    if (!in_sub && slot.first_available) {
      for (size_t a = 0; a < slot.alternatives.size(); ++a) {
        if (allocate_one(c, r, a, 0, true)) {
          slot.chosen = a;
          return true;
        }
        if (!error_.empty()) return false;
      }
      return false;
    }
    RequestData& rd = slot.alternatives[alt];
    const bool all = rd.request->allocation_mode == DraAllocationMode::kAll;
    if (all && rd.all.empty()) return false;
    if (d >= rd.num_devices) return allocate_one(c, r + 1, 0, 0, false);
    if (static_cast<int64_t>(results_[c].size()) + rd.num_devices - d > static_cast<int64_t>(kDraAllocationResultsMaxSize)) return false;
    if (all) {
      const size_t k = rd.all[static_cast<size_t>(d)];
      if (!take(c, rd, k, true)) return false;
      if (allocate_one(c, r, alt, d + 1, in_sub)) return true;
      untake(c, rd, k);
      return false;
    }
    if (d == 0) {  // fewer selectable free devices than the request's count: no search can succeed
      int64_t free = 0;
      for (size_t k = 0; k < candidates_.size() && free < rd.num_devices; ++k) {
        const Pool& p = pools_[candidates_[k].pool];
        if (p.incomplete || p.invalid || in_use_[k] != 0 || !tolerated(rd, k)) continue;
        if (is_selectable(c, rd, k)) free += shareable_device(*candidates_[k].device) ? rd.num_devices : 1;  // may serve each
        if (!error_.empty()) return false;
      }
      if (free < rd.num_devices) return false;
    }
    // The devices of one request form a set: the d-th device comes after the (d-1)-th in candidate
    // order, so each set is tried once (upstream tries every ordering; the first solution is the same).
    // A shareable device may serve the request again (a multiset), so the search starts at it.
    size_t first = 0;
    if (d > 0) {
      const size_t last = results_[c].back().candidate;
      first = shareable_device(*candidates_[last].device) ? last : last + 1;
    }
    for (size_t k = first; k < candidates_.size(); ++k) {
      const Pool& p = pools_[candidates_[k].pool];
      if (p.incomplete || p.invalid || in_use_[k] != 0) continue;
      if (!is_selectable(c, rd, k)) {
        if (!error_.empty()) return false;
        continue;
      }
      if (!take(c, rd, k, false)) continue;
      if (allocate_one(c, r, alt, d + 1, in_sub)) return true;
      untake(c, rd, k);
      if (!error_.empty()) return false;
    }
    return false;
  }

  const DraCatalog& catalog_;
  const ClusterState& state_;
  const Node& node_;
  std::span<const DraClaimToAllocate> claims_;
  int64_t* count_;
  std::vector<Pool> pools_;
  std::vector<Candidate> candidates_;
  std::vector<uint8_t> in_use_;
  std::vector<std::vector<Taint>> taints_;  // per candidate: dra_device_taints
  std::vector<std::vector<RequestSlot>> slots_;
  std::vector<std::vector<ConstraintState>> constraints_;
  std::vector<std::vector<Taken>> results_;
  std::vector<std::map<std::string, int64_t>> consumed_;  // per candidate: what its shared allocations consume
  std::string error_;
  int64_t steps_ = 0;
};

}  // namespace

DraAllocateResult dra_allocate(const DraCatalog& catalog, const ClusterState& state, const Node& node,
                               std::span<const DraClaimToAllocate> claims, int64_t* allocation_count) {
  return Search(catalog, state, node, claims, allocation_count).run();
}

std::optional<DraTaintedAllocation> dra_untolerated_allocated_taint(const DraCatalog& catalog, const DraClaimSpec& spec,
                                                                    const DraAllocation& allocation) {
  for (const DraDeviceResult& r : allocation.devices) {
    const auto [slice, device] = dra_find_device(catalog, r.driver, r.pool, r.device);
    if (device == nullptr) continue;
    const std::vector<Taint> taints = dra_device_taints(catalog, *slice, *device);
    if (taints.empty()) continue;
    // The request's tolerations: "req" names an `exactly` request, "req/sub" a firstAvailable entry.
    const size_t slash = r.request.find('/');
    const std::string base = r.request.substr(0, slash);
    const std::vector<Toleration>* tolerations = nullptr;
    for (const DraDeviceRequest& req : spec.requests) {
      if (req.name != base) continue;
      if (slash == std::string::npos && req.exactly) tolerations = &req.exactly->tolerations;
      for (const DraExactRequest& sub : req.first_available)
        if (slash != std::string::npos && sub.name == r.request.substr(slash + 1)) tolerations = &sub.tolerations;
    }
    static const std::vector<Toleration> kNone;
    if (!r.tolerations.empty()) tolerations = &r.tolerations;  // as the allocation recorded them
    if (const Taint* t = find_untolerated_taint(taints, tolerations != nullptr ? *tolerations : kNone))
      return DraTaintedAllocation{dra_device_id(r.driver, r.pool, r.device), *t};
  }
  return std::nullopt;
}

bool dra_allocation_reaches(const DraAllocation& allocation, const Node& node) {
  return allocation.node_selector.empty() || node_selector_terms_match(allocation.node_selector, node);
}

}  // namespace gpufleet::sched
