#include "pack/pack_experiment.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "bound/allocation_bound.h"
#include "bound/work_conserving_bound.h"
#include "model/cluster_state.h"
#include "sched/gpu/fragmentation.h"
#include "sched/policy_registry.h"
#include "sched/scheduler.h"
#include "util/parallel.h"

namespace gpufleet::pack {

std::vector<Pod> build_tuned_workload(const std::vector<Pod>& pods, int64_t cluster_gpu_milli, double tune,
                                      GoRand& rng) {
  rng.int_();  // the simulator's debug-log argument draw
  std::vector<Pod> sorted = pods;
  std::sort(sorted.begin(), sorted.end(), [](const Pod& a, const Pod& b) { return a.name < b.name; });
  std::vector<Pod> list = sorted;
  rng.shuffle(static_cast<int64_t>(list.size()), [&list](int64_t i, int64_t j) {
    std::swap(list[static_cast<size_t>(i)], list[static_cast<size_t>(j)]);
  });
  int64_t total = 0;
  for (const Pod& p : list) total += p.gpu_request_milli();
  const double target = tune * static_cast<double>(cluster_gpu_milli);
  // Without a GPU pod no draw can ever reach the target (the simulator would loop forever): no tuning.
  const bool any_gpu_pod = std::any_of(sorted.begin(), sorted.end(), [](const Pod& p) { return p.gpu_milli > 0; });
  if (static_cast<double>(total) < target && any_gpu_pod) {
    // tuneUpPods: the stop test uses the per-GPU milli of the draw.
    for (int64_t i = 0;; ++i) {
      const Pod& drawn = sorted[static_cast<size_t>(rng.intn(static_cast<int64_t>(sorted.size())))];
      if (static_cast<double>(total + drawn.gpu_milli) > target) break;
      Pod clone = drawn;
      clone.name = drawn.name + "-tuned-" + std::to_string(i);
      total += clone.gpu_request_milli();
      list.push_back(std::move(clone));
    }
  } else {
    while (static_cast<double>(total) > target && !list.empty()) {
      const auto idx = static_cast<size_t>(rng.intn(static_cast<int64_t>(list.size())));
      total -= list[idx].gpu_request_milli();
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(idx));
    }
  }
  return list;
}

std::vector<uint32_t> draw_node_ranks(const std::vector<Node>& nodes, GoRand& rng) {
  std::vector<uint32_t> by_name(nodes.size());
  std::iota(by_name.begin(), by_name.end(), 0u);
  std::sort(by_name.begin(), by_name.end(), [&nodes](uint32_t a, uint32_t b) { return nodes[a].name < nodes[b].name; });
  const std::vector<int> perm = rng.perm(static_cast<int>(nodes.size()));
  std::vector<uint32_t> rank(nodes.size());
  for (size_t i = 0; i < by_name.size(); ++i) rank[by_name[i]] = static_cast<uint32_t>(perm[i]);
  return rank;
}

namespace {

// The bound of bucket X must cover every event averaged into it, so it is the bound of the longest
// such prefix (the bound only grows with the prefix): 1 + the index of the last event with arrive == x,
// or of the bucket next to it when the allocation came from the +-1 fallback. 0 for an empty bucket.
std::vector<size_t> bucket_prefix_ends(const std::vector<int32_t>& arrive, const std::vector<double>& allocation_pct) {
  std::vector<size_t> last_event_end(kCurveBuckets + 2, 0);  // 1 + index of the last event with arrive == x
  for (size_t i = 0; i < arrive.size(); ++i)
    if (arrive[i] >= 0 && arrive[i] < kCurveBuckets + 2) last_event_end[static_cast<size_t>(arrive[i])] = i + 1;
  std::vector<size_t> ends(kCurveBuckets, 0);
  for (size_t x = 0; x < static_cast<size_t>(kCurveBuckets); ++x) {
    if (std::isnan(allocation_pct[x])) continue;
    size_t end = last_event_end[x];
    if (end == 0) end = std::max({last_event_end[x > 0 ? x - 1 : 0], last_event_end[x + 1]});  // the +-1 fallback
    ends[x] = end;
  }
  return ends;
}

// A bound in gpu_milli as a percent of capacity, rounded up to 0.01 so the rounded allocation can
// never exceed it.
double bound_percent(double milli, double capacity) {
  return std::min(100.0, std::ceil(10000.0 * milli / capacity - 1e-6) / 100.0);
}

std::vector<double> bound_curve(const std::vector<Node>& nodes, const std::vector<Pod>& workload,
                                const std::vector<size_t>& ends, const std::vector<double>& allocation_pct,
                                double capacity) {
  std::vector<size_t> prefix_ends;
  std::vector<size_t> buckets;
  for (size_t x = 0; x < static_cast<size_t>(kCurveBuckets); ++x) {
    if (std::isnan(allocation_pct[x])) continue;
    prefix_ends.push_back(ends[x]);
    buckets.push_back(x);
  }
  // Ends are non-decreasing in x, which lets the LP warm-start from one bucket to the next.
  const std::vector<double> milli = bound::allocation_bound_curve(nodes, workload, prefix_ends);
  std::vector<double> out(kCurveBuckets, std::nan(""));
  for (size_t k = 0; k < buckets.size(); ++k) out[buckets[k]] = bound_percent(milli[k], capacity);
  return out;
}

// Arrived percent per event, as step 5 rounds it: every pod counts, placed or not.
std::vector<int32_t> arrived_percent(const std::vector<Pod>& workload, double gpus) {
  std::vector<int32_t> arrive(workload.size());
  int64_t arrived = 0;
  for (size_t i = 0; i < workload.size(); ++i) {
    arrived += workload[i].gpu_request_milli();
    // Same arithmetic as the artifact's analysis.py: milli / GPUs / 10 is a percent.
    arrive[i] = static_cast<int32_t>(round_half_even(static_cast<double>(arrived) / gpus / 10.0, 0));
  }
  return arrive;
}

PackBounds bounds_of(const std::vector<Node>& nodes, const std::vector<Pod>& workload, const std::vector<int32_t>& arrive,
                     const ClusterState& state) {
  // Which buckets hold events depends on the arrivals only, not on what was placed.
  const std::vector<double> present = bucket_by_percent(arrive, std::vector<double>(arrive.size(), 0.0));
  const auto capacity = static_cast<double>(state.gpu_capacity_milli());
  const std::vector<size_t> ends = bucket_prefix_ends(arrive, present);
  PackBounds out;
  out.bound_pct = bound_curve(nodes, workload, ends, present, capacity);
  // A work-conserving run is also a placement, so bound_pct caps it too (it is the lower one where
  // pods pinned to a model, which the work-conserving LP treats as optional, are many).
  if (!std::isnan(present[100]))
    out.work_conserving_bound_pct_at_100 = std::min(
        out.bound_pct[100],
        bound_percent(bound::work_conserving_bound_milli(state.gpu_count(), workload, ends[100]), capacity));
  return out;
}

}  // namespace

PackBounds pack_bounds(const std::vector<Node>& nodes, const std::vector<Pod>& pods, int64_t seed, double tune) {
  if (nodes.empty()) throw std::invalid_argument("pack: the cluster has no nodes");
  if (!(tune > 0)) throw std::invalid_argument("pack: tune must be positive");
  const ClusterState state(nodes);
  if (state.gpu_capacity_milli() == 0) throw std::invalid_argument("pack: the cluster has no GPUs");
  GoRand rng(seed);
  const std::vector<Pod> workload = build_tuned_workload(pods, state.gpu_capacity_milli(), tune, rng);
  return bounds_of(nodes, workload, arrived_percent(workload, static_cast<double>(state.gpu_count())), state);
}

PackRun run_pack(const std::vector<Node>& nodes, const std::vector<Pod>& pods, const std::string& policy_name,
                 int64_t seed, double tune, bool with_bound) {
  if (nodes.empty()) throw std::invalid_argument("pack: the cluster has no nodes");
  if (!(tune > 0)) throw std::invalid_argument("pack: tune must be positive");
  const auto start = std::chrono::steady_clock::now();

  ClusterState state(nodes);
  if (state.gpu_capacity_milli() == 0) throw std::invalid_argument("pack: the cluster has no GPUs");
  auto frag = std::make_shared<const sched::FragmentationMeasure>(sched::typical_pod_mix(pods), state.gpu_models());
  sched::PolicyContext context{frag, state.gpu_models(), &state};
  sched::Profile policy = sched::make_policy(policy_name, context);

  GoRand rng(seed);
  const std::vector<Pod> workload = build_tuned_workload(pods, state.gpu_capacity_milli(), tune, rng);
  sched::Scheduler scheduler(std::move(policy), draw_node_ranks(nodes, rng));
  scheduler.set_node_to_status(false);  // a failed pod only counts

  std::vector<double> node_frag(nodes.size());
  double frag_total = 0.0;
  for (NodeId n = 0; n < nodes.size(); ++n) frag_total += node_frag[n] = frag->node_frag_milli(state, n);

  const auto capacity = static_cast<double>(state.gpu_capacity_milli());
  const auto gpus = static_cast<double>(state.gpu_count());
  const std::vector<int32_t> arrive = arrived_percent(workload, gpus);
  std::vector<double> alloc(workload.size()), ratio(workload.size()), amount(workload.size());
  int64_t failed = 0;
  for (size_t i = 0; i < workload.size(); ++i) {
    const Pod& pod = workload[i];
    const sched::ScheduleResult result = scheduler.schedule_one(pod, state, rng);
    if (result.scheduled()) {
      const double f = frag->node_frag_milli(state, result.node);
      frag_total += f - node_frag[result.node];
      node_frag[result.node] = f;
    } else {
      ++failed;
    }
    const double idle = capacity - static_cast<double>(state.gpu_used_milli());
    alloc[i] = round_half_even(static_cast<double>(state.gpu_used_milli()) / gpus / 10.0, 2);
    ratio[i] = idle > 0 ? 100.0 * frag_total / idle : 0.0;
    amount[i] = 100.0 * frag_total / capacity;
  }

  PackRun run;
  run.policy = policy_name;
  run.seed = seed;
  run.tune = tune;
  run.allocation_pct = bucket_by_percent(arrive, alloc);
  for (double& v : run.allocation_pct) v = round_half_even(v, 2);
  run.frag_pct = bucket_by_percent(arrive, ratio);
  run.frag_gpu_pct = bucket_by_percent(arrive, amount);
  for (double& v : run.frag_gpu_pct) v = round_half_even(v, 2);
  if (with_bound) {
    PackBounds bounds = bounds_of(nodes, workload, arrive, ClusterState(nodes));
    run.bound_pct = std::move(bounds.bound_pct);
    run.work_conserving_bound_pct_at_100 = bounds.work_conserving_bound_pct_at_100;
  }
  const double at100 = run.allocation_pct[100];
  run.unallocated_gpus_at_100 = std::isnan(at100) ? std::nan("") : (100.0 - at100) / 100.0 * (capacity / 1000.0);
  run.pods = static_cast<int64_t>(workload.size());
  run.failed_pods = failed;
  run.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

size_t pack_grid_tasks(size_t policies, size_t seeds, bool with_bound) {
  return policies * seeds + (with_bound ? seeds : 0);
}

std::vector<PackRun> run_pack_grid(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                   const std::vector<std::string>& policies, const std::vector<int64_t>& seeds,
                                   double tune, bool with_bound, int threads, Progress* progress) {
  // Tasks: the seeds' bounds first (when asked for), then policy x seed. The bounds depend on the
  // seed only, so each is computed once and shared by that seed's runs.
  struct Task {
    std::string policy;  // empty: the bounds of seeds[seed_index]
    size_t seed_index;
  };
  std::vector<Task> tasks;
  tasks.reserve(pack_grid_tasks(policies.size(), seeds.size(), with_bound));
  if (with_bound)
    for (size_t s = 0; s < seeds.size(); ++s) tasks.push_back({"", s});
  for (const auto& p : policies)
    for (size_t s = 0; s < seeds.size(); ++s) tasks.push_back({p, s});
  std::vector<PackBounds> bounds(seeds.size());
  std::vector<PackRun> results(tasks.size());
  parallel_for(tasks.size(), threads, [&](size_t i) {
    struct AdvanceOnExit {
      Progress* progress;
      ~AdvanceOnExit() {
        if (progress) progress->advance();
      }
    } advance{progress};
    const Task& t = tasks[i];
    if (t.policy.empty()) bounds[t.seed_index] = pack_bounds(nodes, pods, seeds[t.seed_index], tune);
    else results[i] = run_pack(nodes, pods, t.policy, seeds[t.seed_index], tune, false);
  });
  std::vector<PackRun> runs;
  runs.reserve(policies.size() * seeds.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].policy.empty()) continue;
    PackRun& run = runs.emplace_back(std::move(results[i]));
    if (with_bound) {
      run.bound_pct = bounds[tasks[i].seed_index].bound_pct;
      run.work_conserving_bound_pct_at_100 = bounds[tasks[i].seed_index].work_conserving_bound_pct_at_100;
    }
  }
  return runs;
}

}  // namespace gpufleet::pack
