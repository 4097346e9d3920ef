#include "plan/mig_pools.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/mig.h"

namespace gpufleet::plan {

namespace {

constexpr double kSecondsPerHour = 3600;

}  // namespace

std::map<std::string, int> mig_layout_for_demand(const GpuModelInfo& model, const std::map<std::string, double>& device_hours) {
  std::vector<std::pair<const MigProfile*, double>> wanted;  // name order (the map's)
  for (const auto& [name, hours] : device_hours)
    if (hours > 0)
      if (const MigProfile* p = model.find_mig_profile(name)) wanted.emplace_back(p, hours);
  std::map<std::string, int> best;
  if (wanted.empty()) return best;
  // Lexicographic key: (profiles left out, -the demand served in GPU-hours (device-hours x compute
  // slices / 7), GPU-hours needed, -compute slices); the enumeration tries larger counts first, so on
  // equal keys the larger counts in name order win.
  std::tuple<int, double, double, int> best_key{std::numeric_limits<int>::max(), 0, 0, 0};
  std::vector<int> counts(wanted.size(), 0);
  auto leaf = [&] {
    int missing = 0, slices = 0, instances = 0;
    double need = 0, served = 0;
    std::map<std::string, int> layout;
    for (size_t k = 0; k < wanted.size(); ++k) {
      if (counts[k] == 0) {
        ++missing;
        continue;
      }
      layout[wanted[k].first->name] = counts[k];
      slices += counts[k] * wanted[k].first->compute_slices;
      instances += counts[k];
      need = std::max(need, wanted[k].second / counts[k]);
      served += wanted[k].second * wanted[k].first->compute_slices / kMigComputeSlices;
    }
    if (instances == 0) return;
    const std::tuple<int, double, double, int> key{missing, -served, need, -slices};
    if (key < best_key && layout_for_counts(model, layout)) {
      best_key = key;
      best = std::move(layout);
    }
  };
  auto walk = [&](auto&& self, size_t k, int slices, int instances) -> void {
    if (k == wanted.size()) {
      leaf();
      return;
    }
    const MigProfile& p = *wanted[k].first;
    for (int n = std::max(1, p.max_count); n >= 0; --n) {
      if (slices + n * p.compute_slices > kMigComputeSlices || instances + n > kMigMaxInstances) continue;
      counts[k] = n;
      self(self, k + 1, slices + n * p.compute_slices, instances + n);
    }
    counts[k] = 0;
  };
  walk(walk, 0, 0, 0);
  return best;
}

namespace {

// The seconds an item's pods run within the horizon, counted as the demand curve counts them
// (plan/demand.h: a job from arrival for its duration, a service to the horizon, a ScaledJob's template
// not at all).
double run_seconds(const sim::WorkloadSpec& s, double horizon) {
  if (s.kind == sim::WorkloadKind::kJob && s.on_demand) return 0;
  const double a = std::max(0.0, s.arrival_s);
  const double b = std::min(horizon, s.kind == sim::WorkloadKind::kJob ? s.arrival_s + s.duration_s : horizon);
  return b > a ? b - a : 0;
}

// The most MIG nodes of `o` with `layout` the items' peak needs (devices of each profile, CPU, memory),
// x 1.5 + 2.
int32_t mig_nodes_for(const std::vector<const sim::WorkloadSpec*>& items, double horizon, const CostBoundOption& o,
                      const std::map<std::string, int>& layout) {
  // (time, change) per quantity: one per profile, then CPU and memory.
  std::map<std::string, std::vector<std::pair<double, double>>> events;
  for (const sim::WorkloadSpec* s : items) {
    const double run = run_seconds(*s, horizon);
    if (run <= 0) continue;
    const double a = std::max(0.0, s->arrival_s);
    auto add = [&](const std::string& what, double amount) {
      events[what].emplace_back(a, amount);
      events[what].emplace_back(a + run, -amount);
    };
    for (const MigRequest& r : s->mig_requests) add("mig " + r.profile, static_cast<double>(s->pods) * r.count);
    add("cpu", static_cast<double>(s->pods) * static_cast<double>(s->cpu_milli));
    add("memory", static_cast<double>(s->pods) * static_cast<double>(s->memory_bytes));
  }
  double nodes = 0;
  for (auto& [what, ev] : events) {
    std::sort(ev.begin(), ev.end());  // at equal times the ends (negative) first: half-open runs
    double level = 0, top = 0;
    for (const auto& [t, change] : ev) {
      level += change;
      top = std::max(top, level);
    }
    double per_node = 0;
    if (what == "cpu") per_node = static_cast<double>(o.cpu_milli);
    else if (what == "memory") per_node = static_cast<double>(o.memory_bytes);
    else if (const auto it = layout.find(what.substr(4)); it != layout.end()) per_node = static_cast<double>(it->second) * o.gpus;
    if (per_node > 0) nodes = std::max(nodes, top / per_node);
  }
  return static_cast<int32_t>(std::ceil(nodes * 1.5)) + 2;
}

// The whole MIG nodes of `o` with `layout` the items need (devices of each profile, CPU, memory) at
// the median of the horizon (time-weighted, nearest rank as demand_quantile): the smallest count n
// such that the items need at most n nodes during at least half of the horizon.
int32_t mig_median_nodes(const std::vector<const sim::WorkloadSpec*>& items, double horizon, const CostBoundOption& o,
                         const std::map<std::string, int>& layout) {
  std::vector<double> times = {0, horizon};
  for (const sim::WorkloadSpec* s : items) {
    const double run = run_seconds(*s, horizon);
    if (run <= 0) continue;
    times.push_back(std::max(0.0, s->arrival_s));
    times.push_back(std::max(0.0, s->arrival_s) + run);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<std::pair<int32_t, double>> need;  // (nodes, seconds)
  double total = 0;
  for (size_t k = 0; k + 1 < times.size(); ++k) {
    const double t = times[k], len = times[k + 1] - times[k];
    if (len <= 0 || t >= horizon) continue;
    std::map<std::string, double> devices;
    double cpu = 0, mem = 0;
    for (const sim::WorkloadSpec* s : items) {
      const double a = std::max(0.0, s->arrival_s);
      if (!(t >= a && t < a + run_seconds(*s, horizon))) continue;
      for (const MigRequest& r : s->mig_requests) devices[r.profile] += static_cast<double>(s->pods) * r.count;
      cpu += static_cast<double>(s->pods) * static_cast<double>(s->cpu_milli);
      mem += static_cast<double>(s->pods) * static_cast<double>(s->memory_bytes);
    }
    double nodes = std::max(cpu / static_cast<double>(o.cpu_milli), mem / static_cast<double>(o.memory_bytes));
    for (const auto& [profile, n] : devices)
      if (const auto it = layout.find(profile); it != layout.end()) nodes = std::max(nodes, n / (static_cast<double>(it->second) * o.gpus));
    need.emplace_back(static_cast<int32_t>(std::ceil(nodes - 1e-9)), len);
    total += len;
  }
  std::sort(need.begin(), need.end());
  double covered = 0;
  for (const auto& [n, len] : need) {
    covered += len;
    if (covered >= 0.5 * total - 1e-12 * total) return n;
  }
  return 0;
}

}  // namespace

std::vector<PoolChoice> mig_pool_choices(const sim::Workload& workload, const std::vector<CostBoundOption>& options,
                                         std::vector<int32_t>* median_nodes) {
  if (median_nodes != nullptr) median_nodes->clear();
  std::vector<const sim::WorkloadSpec*> left;
  for (const sim::WorkloadSpec& s : workload.items)
    if (!s.mig_requests.empty() && run_seconds(s, workload.horizon_s) > 0) left.push_back(&s);
  std::vector<PoolChoice> out;
  std::set<std::string> types;
  while (!left.empty()) {
    // Per option (one per instance type, not yet chosen): the MIG items it holds and its layout for them.
    const CostBoundOption* best = nullptr;
    std::vector<const sim::WorkloadSpec*> best_items;
    std::map<std::string, int> best_layout;
    double best_usd = std::numeric_limits<double>::infinity();
    std::set<std::string> seen;
    for (const CostBoundOption& o : options) {
      if (o.gpus == 0 || types.count(o.instance_type) > 0 || !seen.insert(o.instance_type).second) continue;
      const GpuModelInfo* model = find_gpu_model(o.gpu_model);
      if (model == nullptr || !model->mig_capable) continue;
      std::vector<const sim::WorkloadSpec*> held;
      std::map<std::string, double> device_hours;
      for (const sim::WorkloadSpec* s : left) {
        if (!option_holds(*s, o)) continue;
        held.push_back(s);
        for (const MigRequest& r : s->mig_requests)
          device_hours[r.profile] += static_cast<double>(s->pods) * r.count * run_seconds(*s, workload.horizon_s) / kSecondsPerHour;
      }
      if (held.empty()) continue;
      std::map<std::string, int> layout = mig_layout_for_demand(*model, device_hours);
      if (layout.empty()) continue;
      // The items whose profile the layout left out are not held by this pool.
      std::erase_if(held, [&](const sim::WorkloadSpec* s) {
        return std::any_of(s->mig_requests.begin(), s->mig_requests.end(),
                           [&](const MigRequest& r) { return layout.count(r.profile) == 0; });
      });
      if (held.empty()) continue;
      double gpu_hours = 0;
      for (const auto& [profile, count] : layout) gpu_hours = std::max(gpu_hours, device_hours[profile] / count);
      const double usd = o.on_demand_usd_per_hour / o.gpus * gpu_hours;
      // More items held first (all of them when one type can), then the cheaper.
      if (best == nullptr || held.size() > best_items.size() || (held.size() == best_items.size() && usd < best_usd)) {
        best = &o;
        best_items = std::move(held);
        best_layout = std::move(layout);
        best_usd = usd;
      }
    }
    if (best == nullptr || best_items.empty()) break;  // the rest fit no option: they fail in every plan
    types.insert(best->instance_type);
    PoolChoice choice{*best, 0, false, mig_nodes_for(best_items, workload.horizon_s, *best, best_layout), {}};
    if (median_nodes != nullptr) median_nodes->push_back(mig_median_nodes(best_items, workload.horizon_s, *best, best_layout));
    choice.mig_devices = std::move(best_layout);
    out.push_back(std::move(choice));
    std::erase_if(left, [&](const sim::WorkloadSpec* s) { return std::find(best_items.begin(), best_items.end(), s) != best_items.end(); });
  }
  return out;
}

}  // namespace gpufleet::plan
