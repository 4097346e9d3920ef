#include "sched/gang_placement.h"
#include "sched/topology_domains.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "model/pod_group.h"
#include "model/scheduling_constraints.h"
#include "sched/fit_error.h"
#include "sched/plugins/coscheduling.h"

namespace gpufleet::sched {
namespace {

// A confinement: the pods get node selector label=value (level >= 0); level -1: none.
struct Confine {
  int32_t level = -1;
  std::string label;
  std::string value;
};

// Sort key, largest first: GPUs, MIG devices, CPU, memory (sched/gang_placement.h step 1).
auto size_key(const Pod& p) {
  int64_t mig = 0;
  for (const MigRequest& m : p.mig_requests) mig += m.count;
  return std::make_tuple(p.gpu_request_milli() + int64_t{p.shared_replicas} * kGpuMilliPerGpu, mig, p.cpu_milli, p.memory_bytes);
}

// `pod` with the required node-affinity requirement metadata.name NotIn `names` ANDed into each term.
Pod excluding(const Pod& pod, const std::vector<std::string>& names) {
  if (names.empty()) return pod;
  Pod out = pod;
  SelectorRequirement r{"metadata.name", "NotIn", names};
  auto& terms = out.constraints.required_node_affinity;
  if (terms.empty()) terms.emplace_back();
  for (NodeSelectorTerm& t : terms) t.match_fields.push_back(r);
  return out;
}

std::string why_unplaced(const Pod& pod, const ScheduleResult& r, const ClusterState& state) {
  const std::string message = r.node_to_status.empty() ? r.status.message()
                                                       : fit_error_message(rejection_histogram(r.node_to_status, pod, state), state.node_count());
  return fmt::format("pod {}: {}", pod_key(pod), message);
}

// The depth-first search of step 3 on `state` (every change inside a fork the caller discards).
class Search {
 public:
  Search(Scheduler& scheduler, ClusterState& state, GoRand& rng, const std::vector<Pod>& pods, const std::vector<size_t>& order,
         int32_t need, int64_t max_cycles)
      : scheduler_(scheduler), state_(state), rng_(rng), pods_(pods), order_(order), need_(need), max_cycles_(max_cycles),
        nodes_(pods.size(), kNoNode), devices_(pods.size()) {}

  bool run() { return dfs(0, 0, static_cast<int32_t>(pods_.size()) - need_); }
  const std::vector<NodeId>& nodes() const { return nodes_; }
  const std::vector<DeviceAssignment>& devices() const { return devices_; }
  const std::string& first_failure() const { return first_failure_; }

 private:
  bool dfs(size_t k, int32_t placed, int32_t skips_left) {
    if (k == order_.size()) return placed >= need_;
    const size_t i = order_[k];
    std::vector<std::string> tried;
    std::set<NodeId> seen;
    while (cycles_ < max_cycles_) {
      const Pod pod = excluding(pods_[i], tried);
      ++cycles_;
      const ScheduleResult r = scheduler_.decide(pod, state_, rng_);
      if (!r.scheduled()) {
        if (tried.empty() && first_failure_.empty()) first_failure_ = why_unplaced(pods_[i], r, state_);
        break;
      }
      if (!seen.insert(r.node).second) break;  // the profile cannot exclude nodes (no NodeAffinity)
      ClusterState::Fork fork = state_.fork();
      Scheduler::assume(pods_[i], state_, r);
      nodes_[i] = r.node;
      devices_[i] = r.devices();
      if (dfs(k + 1, placed + 1, skips_left)) {
        fork.commit();
        return true;
      }
      fork.discard();
      nodes_[i] = kNoNode;
      devices_[i] = {};
      tried.push_back(state_.node(r.node).name);
    }
    if (skips_left > 0 && dfs(k + 1, placed, skips_left - 1)) return true;
    return false;
  }

  Scheduler& scheduler_;
  ClusterState& state_;
  GoRand& rng_;
  const std::vector<Pod>& pods_;
  const std::vector<size_t>& order_;
  int32_t need_;
  int64_t max_cycles_;
  int64_t cycles_ = 0;
  std::vector<NodeId> nodes_;
  std::vector<DeviceAssignment> devices_;
  std::string first_failure_;
};

std::vector<Pod> confined(const std::vector<Pod>& pods, const Confine& c) {
  std::vector<Pod> out = pods;
  if (c.level < 0) return out;
  for (Pod& p : out) {
    auto& sel = p.constraints.node_selector;
    const auto it = std::find_if(sel.begin(), sel.end(), [&](const auto& kv) { return kv.first == c.label; });
    if (it != sel.end()) it->second = c.value;  // a conflicting selector of the pod's own is replaced
    else sel.emplace_back(c.label, c.value);
  }
  return out;
}

Coscheduling& coscheduling_of(Scheduler& scheduler) {
  for (const auto& p : scheduler.profile().permits)
    if (p->name() == Coscheduling::kName)
      if (auto* c = dynamic_cast<Coscheduling*>(p.get())) return *c;
  throw std::invalid_argument("place_gang: the scheduler's profile has no Coscheduling Permit plugin");
}

}  // namespace

void confine_to_one_clique(GangRequest& request, std::string why) {
  std::vector<std::string>& labels = request.levels.labels;
  const bool had_level = request.topology.mode != GangTopology::Mode::kNone;
  const std::string own = had_level ? labels.at(static_cast<size_t>(request.topology.level)) : std::string();
  auto clique = std::find(labels.begin(), labels.end(), kGpuCliqueLabel);
  if (clique == labels.end()) {
    const bool host_last = !labels.empty() && labels.back() == kHostnameLabel;
    clique = labels.insert(host_last ? labels.end() - 1 : labels.end(), std::string(kGpuCliqueLabel));
  }
  const auto clique_level = static_cast<int32_t>(clique - labels.begin());
  if (had_level) request.topology.level = static_cast<int32_t>(std::find(labels.begin(), labels.end(), own) - labels.begin());
  if (request.topology.mode == GangTopology::Mode::kRequired && request.topology.level >= clique_level) return;
  request.topology = {GangTopology::Mode::kRequired, clique_level};
  request.topology_reason = std::move(why);
}

std::vector<std::string> gang_compute_domains(const GangRequest& request, const DraCatalog* catalog) {
  std::vector<std::string> out;
  if (catalog == nullptr || catalog->compute_domains.empty()) return out;
  for (const Pod& p : request.pods)
    for (std::string& key : compute_domains_of(p, catalog->compute_domains)) out.push_back(std::move(key));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int32_t> topology_spans(const ClusterState& state, const TopologyLevels& levels, const std::vector<NodeId>& nodes) {
  std::vector<int32_t> out;
  for (const std::string& label : levels.labels) {
    std::set<std::string_view> values;
    for (const NodeId n : nodes) {
      if (n == kNoNode || !state.has_node(n)) continue;
      if (const std::string_view v = domain_of(state, n, label); !v.empty()) values.insert(v);
    }
    out.push_back(static_cast<int32_t>(values.size()));
  }
  return out;
}

GangPlacement place_gang(Scheduler& scheduler, ClusterState& state, GoRand& rng, const GangRequest& request, const GangOptions& options) {
  const auto size = static_cast<int32_t>(request.pods.size());
  if (request.min_member < 0 || request.min_member > size)
    throw std::invalid_argument(fmt::format("place_gang {}: min_member {} outside [0, {}]", request.name, request.min_member, size));
  if (request.topology.mode != GangTopology::Mode::kNone &&
      (request.topology.level < 0 || request.topology.level >= static_cast<int32_t>(request.levels.labels.size())))
    throw std::invalid_argument(fmt::format("place_gang {}: topology level {} outside the {} levels", request.name, request.topology.level,
                                            request.levels.labels.size()));
  if (request.name.empty()) throw std::invalid_argument("place_gang: the gang needs a name");
  Coscheduling& coscheduling = coscheduling_of(scheduler);
  if (scheduler.waiting_pod_count() != 0) throw std::logic_error("place_gang: pods are already waiting at Permit");
  const int32_t need = request.min_member == 0 ? size : request.min_member;

  // Members carry the group label (the group's name) and one namespace.
  std::vector<Pod> pods = request.pods;
  for (Pod& p : pods) {
    auto& labels = p.labels;
    const auto it = std::find_if(labels.begin(), labels.end(), [](const auto& kv) { return kv.first == kPodGroupLabel; });
    if (it == labels.end()) labels.emplace_back(kPodGroupLabel, request.name);
    else if (it->second != request.name)
      throw std::invalid_argument(fmt::format("place_gang {}: pod {} belongs to pod group {}", request.name, p.name, it->second));
    if (p.namespace_name != pods.front().namespace_name)
      throw std::invalid_argument(fmt::format("place_gang {}: pods in namespaces {} and {}", request.name, pods.front().namespace_name, p.namespace_name));
  }

  std::vector<size_t> order(pods.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size_key(pods[a]) > size_key(pods[b]); });

  // Step 2: the confinements to try, in order. A domain with fewer free GPUs than the `need` smallest
  // pods ask for cannot hold the gang and is not searched (rank_domains leaves it out); the
  // unconstrained placement is always searched, for its pods' FitError.
  std::vector<int64_t> gpu_asks;
  for (const Pod& p : pods) gpu_asks.push_back(std::get<0>(size_key(p)));
  std::sort(gpu_asks.begin(), gpu_asks.end());
  const int64_t min_gpu_milli = std::accumulate(gpu_asks.begin(), gpu_asks.begin() + need, int64_t{0});
  std::vector<std::vector<Confine>> tiers;  // a tier: the domains of one level (or the free placement)
  auto tier_of = [&](int32_t level) {
    std::vector<Confine> tier;
    const std::string& label = request.levels.labels[static_cast<size_t>(level)];
    for (DomainCapacity& d : rank_domains(state, label, min_gpu_milli)) tier.push_back({level, label, std::move(d.value)});
    return tier;
  };
  switch (request.topology.mode) {
    case GangTopology::Mode::kNone: tiers.push_back({Confine{}}); break;
    case GangTopology::Mode::kRequired: tiers.push_back(tier_of(request.topology.level)); break;
    case GangTopology::Mode::kPreferred:
      for (int32_t l = request.topology.level; l >= 0; --l) tiers.push_back(tier_of(l));
      tiers.push_back({Confine{}});
      break;
  }

  GangPlacement out;
  out.nodes.assign(pods.size(), kNoNode);
  out.devices.assign(pods.size(), {});
  const int64_t max_cycles = size + std::max<int64_t>(0, options.max_backtrack_steps);
  std::optional<Confine> chosen;
  std::vector<Pod> chosen_pods;
  std::string first_failure;  // of the first domain searched (required) or of the last tier (otherwise)
  for (const auto& tier : tiers) {
    std::string tier_failure;
    for (const Confine& c : tier) {
      std::vector<Pod> cp = confined(pods, c);
      ClusterState::Fork fork = state.fork();
      Search search(scheduler, state, rng, cp, order, need, max_cycles);
      const bool found = search.run();
      fork.discard();
      if (tier_failure.empty()) tier_failure = search.first_failure();
      if (!found) continue;
      out.nodes = search.nodes();
      out.devices = search.devices();
      chosen = c;
      chosen_pods = std::move(cp);
      break;
    }
    if (chosen) break;
    if (request.topology.mode != GangTopology::Mode::kRequired || first_failure.empty()) first_failure = tier_failure;
  }
  if (!chosen) {
    out.nodes.assign(pods.size(), kNoNode);
    out.spans = topology_spans(state, request.levels, out.nodes);
    if (request.topology.mode == GangTopology::Mode::kRequired) {
      const std::string& label = request.levels.labels[static_cast<size_t>(request.topology.level)];
      out.reason = fmt::format("no domain of {} can hold {} pods{}: none of its {} domains fits them{}", label, need,
                               request.topology_reason.empty() ? "" : " (" + request.topology_reason + ")",
                               rank_domains(state, label, 0).size(),
                               first_failure.empty() ? "" : "; first failure: " + first_failure);
    } else {
      out.reason = first_failure.empty() ? fmt::format("gang {}: no placement of {} pods found", request.name, need) : first_failure;
    }
    return out;
  }
  if (chosen->level >= 0) {
    out.domain = chosen->value;
    out.domain_level = chosen->level;
  }

  if (options.commit) {
    // Step 4: the pods' scheduling cycles, each nominated to the node the search found; Coscheduling
    // holds them at Permit until `need` are reserved, then all bind.
    PodGroup group;
    group.namespace_name = pods.front().namespace_name.empty() ? "default" : pods.front().namespace_name;
    group.name = request.name;
    group.min_member = need;
    coscheduling.set_pod_group(group, size);
    ClusterState::Fork fork = state.fork();
    std::vector<NodeId> nodes(pods.size(), kNoNode);
    std::vector<DeviceAssignment> devices(pods.size());
    std::string failure;
    for (const size_t i : order) {
      if (out.nodes[i] == kNoNode) continue;
      const ScheduleResult r = scheduler.schedule_one(chosen_pods[i], state, rng, out.nodes[i]);
      if (!r.scheduled()) {
        failure = why_unplaced(chosen_pods[i], r, state);
        break;
      }
      nodes[i] = r.node;
      devices[i] = r.devices();
    }
    if (failure.empty() && scheduler.waiting_pod_count() != 0) failure = fmt::format("gang {}: members still waiting at Permit", request.name);
    if (!failure.empty()) {
      for (size_t i = 0; i < pods.size(); ++i) scheduler.reject_waiting_pod(state, pod_key(chosen_pods[i]), "gang " + request.name + " not placed");
    }
    for (const PermitOutcome& o : scheduler.take_permit_outcomes())
      if (!o.status.is_success() && failure.empty()) failure = fmt::format("pod {}: {}", pod_key(o.pod), o.status.message());
    if (!failure.empty()) {
      fork.discard();
      out.nodes.assign(pods.size(), kNoNode);
      out.devices.assign(pods.size(), {});
      out.domain.clear();
      out.domain_level = -1;
      out.spans = topology_spans(state, request.levels, out.nodes);
      out.reason = failure;
      return out;
    }
    fork.commit();
    out.nodes = std::move(nodes);
    out.devices = std::move(devices);
  }
  out.placed = true;
  out.spans = topology_spans(state, request.levels, out.nodes);
  return out;
}

}  // namespace gpufleet::sched
