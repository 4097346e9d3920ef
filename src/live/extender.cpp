#include "live/extender.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>
#include <unordered_set>

#include <fmt/format.h>

#include "live/request_stats.h"
#include "util/go_rand.h"
#include "sched/fit_error.h"
#include "sched/framework/filter_cycle.h"
#include "sched/framework/status.h"
#include "sched/scheduler.h"

namespace gpufleet::live {
namespace {

constexpr int64_t kMaxExtenderPriority = 10;  // k8s.io/kube-scheduler/extender/v1 MaxExtenderPriority

std::string key_of(const Pod& pod) { return sched::pod_key(pod); }

// A generator seeded with `seed`: a copy of one seeded before on this thread (seeding Go's generator
// costs more than copying its state, and every decision starts from a fresh one).
GoRand seeded_rng(uint64_t seed) {
  thread_local std::optional<std::pair<uint64_t, GoRand>> seeded;
  if (!seeded || seeded->first != seed) seeded.emplace(seed, GoRand(static_cast<int64_t>(seed)));
  return seeded->second;
}

// While alive, the snapshot's copy of `pod` (when bound) is off its node: a request's pod is
// decided as unbound. Holds snapshot.decide_mutex.
class Decision {
 public:
  Decision(const Snapshot& snapshot, const Pod& pod)
      : lock_(snapshot.decide_mutex), snapshot_(snapshot), state_(*snapshot.cluster.state), fork_(state_.fork()) {
    const auto it = snapshot.pod_by_key.find(key_of(pod));
    if (it == snapshot.pod_by_key.end()) return;
    const Pod& known = snapshot.inputs.input.pods[it->second];
    if (known.node_name.empty()) return;
    const auto node = snapshot.cluster.node_by_name.find(known.node_name);
    if (node == snapshot.cluster.node_by_name.end()) return;
    for (const BoundPod& b : state_.pods_on(node->second))
      if (b.pod.name == known.name && b.pod.namespace_name == known.namespace_name) {
        state_.release(node->second, b.pod);
        break;
      }
  }
  ~Decision() { fork_.discard(); }
  ClusterState& state() { return state_; }
  // Scheduler::observe for the pod being scored, once per pod and snapshot: `place` tells the Score
  // plugins of each pod when it schedules it, and the pods bound before were told of at set-up.
  void observe(const Pod& pod) {
    if (snapshot_.observed.insert(observed_id(pod)).second) snapshot_.cluster.scheduler->observe(pod, state_);
  }
  sched::Scheduler& scheduler() { return *snapshot_.cluster.scheduler; }
  GoRand& rng() { return rng_; }
  std::optional<NodeId> node(const std::string& name) const {
    const auto it = snapshot_.cluster.node_by_name.find(name);
    if (it == snapshot_.cluster.node_by_name.end()) return std::nullopt;
    return it->second;
  }
  // Each name's node (nullopt: not in the cache), in `ids`, and the known ones in `known`.
  void nodes(const std::vector<std::string>& names, std::vector<std::optional<NodeId>>& ids, std::vector<NodeId>& known) const {
    ids.reserve(names.size());
    known.reserve(names.size());
    for (const std::string& name : names) {
      ids.push_back(node(name));
      if (ids.back()) known.push_back(*ids.back());
    }
  }

 private:
  std::lock_guard<std::mutex> lock_;
  const Snapshot& snapshot_;
  ClusterState& state_;
  ClusterState::Fork fork_;
  GoRand rng_{seeded_rng(snapshot_.seed)};
};

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

FilterAnswer extender_filter(const Snapshot& snapshot, const Pod& pod, const std::vector<std::string>& node_names) {
  FilterAnswer answer;
  if (!pod.resource_claims.empty()) {  // Dynamic Resource Allocation: kube-scheduler's DynamicResources decides
    answer.passed = node_names;
    answer.note = "pod has spec.resourceClaims: left to kube-scheduler's DynamicResources plugin, every node passed";
    extender_dra_pods_passed().add(DraPassCounts::Verb::kFilter);
    return answer;
  }
  Decision d(snapshot, pod);
  sched::Scheduler& scheduler = d.scheduler();
  // The sent nodes the cache knows: the only ones Filter runs on.
  std::vector<std::optional<NodeId>> sent;
  std::vector<NodeId> candidates;
  d.nodes(node_names, sent, candidates);
  sched::NodeEvaluation evaluation;
  const sched::ScheduleResult result = scheduler.evaluate(pod, d.state(), d.rng(), evaluation, /*rank=*/false, &candidates);
  if (evaluation.node_to_status.empty()) {  // a PreFilter error or rejection before any node was looked at
    if (result.status.code() == sched::Code::kError) {
      answer.error = result.status.message();
      return answer;
    }
    const std::string why = !result.status.message().empty() ? result.status.message()
                            : snapshot.inputs.input.nodes.empty() ? "gpufleet's cache has no nodes yet (not listed, no snapshot)"
                                                                  : "rejected by a PreFilter plugin";
    for (const std::string& name : node_names) answer.failed_unresolvable.emplace(name, why);
    return answer;
  }
  for (size_t i = 0; i < node_names.size(); ++i) {
    const std::string& name = node_names[i];
    const std::optional<NodeId> n = sent[i];
    if (!n) {
      answer.failed_unresolvable.emplace(name, "node(s) not in gpufleet's cache");
      continue;
    }
    // The plugin that rejected the node words it, and its status decides where it goes (kube's
    // extender: FailedNodes for Unschedulable, FailedAndUnresolvableNodes otherwise).
    const sched::Rejection rejection = evaluation.node_to_status.at(*n);
    if (!rejection.rejected()) {
      answer.passed.push_back(name);
      continue;
    }
    std::string reason = join(rejection.node_reasons(pod, d.state(), *n));
    (rejection.resolvable() ? answer.failed : answer.failed_unresolvable).emplace(name, std::move(reason));
  }
  return answer;
}

std::vector<HostScore> extender_prioritize(const Snapshot& snapshot, const Pod& pod, const std::vector<std::string>& node_names) {
  std::vector<HostScore> scores;
  scores.reserve(node_names.size());
  if (!pod.resource_claims.empty()) {  // Dynamic Resource Allocation: kube-scheduler ranks, gpufleet stays neutral
    for (const std::string& name : node_names) scores.push_back({name, 0});
    extender_dra_pods_passed().add(DraPassCounts::Verb::kPrioritize);
    return scores;
  }
  Decision d(snapshot, pod);
  sched::Scheduler& scheduler = d.scheduler();
  d.observe(pod);
  // The sent nodes the cache knows: the only ones Filter and Score run on (Score normalized over the
  // feasible ones among them, as kube-scheduler normalizes over the nodes it scores).
  std::vector<std::optional<NodeId>> ids;
  std::vector<NodeId> candidates;
  d.nodes(node_names, ids, candidates);
  sched::NodeEvaluation evaluation;
  scheduler.evaluate(pod, d.state(), d.rng(), evaluation, /*rank=*/true, &candidates);
  // The sent nodes in the policy's order.
  std::unordered_map<NodeId, size_t> sent;  // NodeId -> index in node_names (its first)
  sent.reserve(candidates.size());
  for (size_t i = 0; i < node_names.size(); ++i)
    if (ids[i]) sent.emplace(*ids[i], i);
  std::vector<size_t> order;
  order.reserve(evaluation.ranked.size());
  for (NodeId n : evaluation.ranked) order.push_back(sent.at(n));
  std::vector<int64_t> value(node_names.size(), 0);
  const size_t count = order.size();
  for (size_t k = 0; k < count; ++k)
    value[order[k]] = k == 0 ? kMaxExtenderPriority
                             : static_cast<int64_t>((kMaxExtenderPriority - 1) * (count - 1 - k) / (count - 1));
  for (size_t i = 0; i < node_names.size(); ++i) scores.push_back({node_names[i], value[i]});
  return scores;
}

std::map<std::string, NodeVictims> extender_preempt(const Snapshot& snapshot, const Pod& pod,
                                                    const std::map<std::string, NodeVictims>& candidates) {
  if (!pod.resource_claims.empty()) {  // Dynamic Resource Allocation: kube-scheduler's victims stand
    extender_dra_pods_passed().add(DraPassCounts::Verb::kPreempt);
    return candidates;
  }
  std::map<std::string, NodeVictims> accepted;
  Decision d(snapshot, pod);
  ClusterState& state = d.state();
  const sched::Profile& profile = d.scheduler().profile();
  for (const auto& [node_name, victims] : candidates) {
    const std::optional<NodeId> n = d.node(node_name);
    if (!n) continue;
    // The victims as bound on the node.
    std::vector<BoundPod> bound;
    bool known = true;
    for (const std::string& uid : victims.pod_uids) {
      const auto it = snapshot.pod_by_uid.find(uid);
      if (it == snapshot.pod_by_uid.end()) {
        known = false;
        break;
      }
      const Pod& victim = snapshot.inputs.input.pods[it->second];
      const auto on = std::find_if(state.pods_on(*n).begin(), state.pods_on(*n).end(), [&](const BoundPod& b) {
        return b.pod.name == victim.name && b.pod.namespace_name == victim.namespace_name;
      });
      if (on == state.pods_on(*n).end()) {
        known = false;
        break;
      }
      bound.push_back(*on);
    }
    if (!known) continue;
    ClusterState::Fork fork = state.fork();
    for (const BoundPod& b : bound) state.release(*n, b.pod);
    const auto fits = [&] { return !sched::FilterCycle(profile.filters, pod, state).run(state, *n).rejected(); };
    if (!fits()) {
      fork.discard();
      continue;
    }
    // Reprieve: give back the highest-priority victims first while the pod still fits.
    std::vector<size_t> order(bound.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bound[a].pod.priority > bound[b].pod.priority; });
    std::vector<bool> kept_victim(bound.size(), true);
    for (size_t i : order) {
      ClusterState::Fork trial = state.fork();
      state.rebind(*n, bound[i]);
      if (fits()) {
        trial.commit();
        kept_victim[i] = false;
      } else {
        trial.discard();
      }
    }
    fork.discard();
    NodeVictims out;
    out.num_pdb_violations = victims.num_pdb_violations;
    for (size_t i = 0; i < bound.size(); ++i)
      if (kept_victim[i]) out.pod_uids.push_back(victims.pod_uids[i]);
    accepted.emplace(node_name, std::move(out));
  }
  return accepted;
}

DeviceChoice choose_devices(const Snapshot& snapshot, const Pod& pod, const std::string& node) {
  DeviceChoice choice;
  Decision d(snapshot, pod);
  const std::optional<NodeId> n = d.node(node);
  if (!n) {
    choice.error = fmt::format("node {} is not in gpufleet's cache", node);
    return choice;
  }
  if (!pod.resource_claims.empty()) {  // Dynamic Resource Allocation: kube-scheduler allocated the claims
    extender_dra_pods_passed().add(DraPassCounts::Verb::kBind);
    choice.devices = DeviceAssignment{};
    return choice;
  }
  sched::Scheduler& scheduler = d.scheduler();
  d.observe(pod);
  const sched::ScheduleResult result = scheduler.decide(pod, d.state(), d.rng(), *n);
  if (result.node != *n) {
    const sched::Rejection rejection = sched::FilterCycle(scheduler.profile().filters, pod, d.state()).run(d.state(), *n);
    choice.error = fmt::format("pod {} does not fit node {}: {}", key_of(pod), node, join(rejection.node_reasons(pod, d.state(), *n)));
    return choice;
  }
  choice.devices = result.devices();
  return choice;
}

}  // namespace gpufleet::live
