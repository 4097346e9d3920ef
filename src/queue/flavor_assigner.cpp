#include "queue/flavor_assigner.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpufleet::queue {

std::string quantity_text(const std::string& resource, ResourceAmount amount) {
  int64_t scale = amount_unit_scale(resource);
  if (scale == 1 || amount % scale == 0) return std::to_string(amount / scale);
  return std::to_string(amount) + "m";
}

Assignment assign_flavors(const QuotaTree& tree, int cq_node, const ClusterQueue& spec, const std::vector<ResourceFlavor>& flavors,
                          const Workload& workload, const std::vector<int32_t>& counts,
                          const std::function<std::string(int fr)>& holders, const std::vector<FlavorCap>& caps) {
  const auto cap_of = [&](const std::string& flavor) -> const FlavorCap* {
    for (const FlavorCap& c : caps)
      if (c.flavor == flavor) return &c;
    return nullptr;
  };
  const auto supports_tas = [&](const std::string& flavor) {
    for (const ResourceFlavor& f : flavors)
      if (f.name == flavor) return !f.topology_name.empty();
    return false;
  };
  Assignment out;
  std::map<int, ResourceAmount> total;  // fr -> amount of earlier pod sets
  for (size_t p = 0; p < workload.pod_sets.size(); ++p) {
    const PodSet& ps = workload.pod_sets[p];
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.count = counts[p];
    auto requests = pod_resource_requests(ps.pod_template);
    for (auto& [res, a] : requests) a *= counts[p];
    std::vector<std::string> reasons;
    Mode ps_mode = Mode::kFit;
    std::set<std::string> done;
    for (const auto& [res, amount] : requests) {
      if (done.count(res)) continue;
      const ResourceGroup* group = nullptr;
      for (const ResourceGroup& g : spec.resource_groups)
        if (std::find(g.covered_resources.begin(), g.covered_resources.end(), res) != g.covered_resources.end())
          group = &g;
      if (!group) {
        reasons.push_back("resource " + res + " unavailable in ClusterQueue");
        ps_mode = Mode::kNoFit;
        done.insert(res);
        continue;
      }
      // Resources of this group the pod set asks for.
      std::vector<std::pair<std::string, ResourceAmount>> asked;
      for (const auto& [r2, a2] : requests)
        if (std::find(group->covered_resources.begin(), group->covered_resources.end(), r2) !=
            group->covered_resources.end()) {
          asked.emplace_back(r2, a2);
          done.insert(r2);
        }
      Mode best = Mode::kNoFit;
      const FlavorQuotas* best_flavor = nullptr;
      std::vector<std::string> flavor_reasons;
      for (const FlavorQuotas& f : group->flavors) {
        if (ps.topology.mode != TopologyRequest::Mode::kNone && !supports_tas(f.name)) {
          flavor_reasons.push_back("flavor " + f.name + " does not support TopologyAwareScheduling");
          continue;
        }
        const FlavorCap* cap = cap_of(f.name);
        if (cap && cap->max == Mode::kNoFit) {
          flavor_reasons.push_back("flavor " + f.name + " cannot place the pods: " + cap->reason);
          continue;
        }
        Mode fm = Mode::kFit;
        for (const auto& [r2, a2] : asked) {
          int fr = tree.flavor_resource(f.name, r2);
          ResourceAmount need = a2 + (total.count(fr) ? total.at(fr) : 0);
          ResourceAmount used = tree.usage(cq_node, fr), nominal = tree.nominal(cq_node, fr);
          ResourceAmount avail = tree.available(cq_node, fr);
          Mode m;
          if (!workload.preemptible) {
            if (used + need <= nominal && need <= avail) {
              m = Mode::kFit;
            } else if (need <= nominal) {
              m = Mode::kPreempt;
              flavor_reasons.push_back("insufficient unused nominal quota for " + r2 + " in flavor " + f.name + ", " +
                                       quantity_text(r2, used + need - nominal) +
                                       " more needed (a non-preemptible workload does not borrow)" + holders(fr));
            } else {
              m = Mode::kNoFit;
              flavor_reasons.push_back("insufficient quota for " + r2 + " in flavor " + f.name +
                                       ", request > nominal quota for a non-preemptible workload (" +
                                       quantity_text(r2, need) + " > " + quantity_text(r2, nominal) + ")");
            }
          } else if (need <= avail) {
            m = used + need <= nominal ? Mode::kFit : Mode::kBorrow;
          } else if (need <= tree.potential_available(cq_node, fr)) {
            m = Mode::kPreempt;
            flavor_reasons.push_back("insufficient unused quota for " + r2 + " in flavor " + f.name + ", " +
                                     quantity_text(r2, need - avail) + " more needed" + holders(fr));
          } else {
            m = Mode::kNoFit;
            flavor_reasons.push_back("insufficient quota for " + r2 + " in flavor " + f.name +
                                     ", request > maximum capacity (" + quantity_text(r2, need) + " > " +
                                     quantity_text(r2, tree.potential_available(cq_node, fr)) + ")");
          }
          fm = std::min(fm, m);
        }
        if (cap && cap->max < fm) {
          fm = cap->max;
          flavor_reasons.push_back("flavor " + f.name + " cannot place the pods: " + cap->reason);
        }
        if (fm > best) {
          best = fm;
          best_flavor = &f;
        }
        if (fm == Mode::kFit) break;
        if (fm == Mode::kBorrow && !spec.flavor_fungibility.when_can_borrow_try_next) break;
        if (fm == Mode::kPreempt && !spec.flavor_fungibility.when_can_preempt_try_next) break;
      }
      if (best_flavor) {
        for (const auto& [r2, a2] : asked) {
          int fr = tree.flavor_resource(best_flavor->name, r2);
          total[fr] += a2;
          psa.flavors.emplace_back(r2, best_flavor->name);
          psa.usage.emplace_back(r2, a2);
        }
      }
      if (best < Mode::kBorrow)
        for (std::string& s : flavor_reasons) reasons.push_back(std::move(s));
      ps_mode = std::min(ps_mode, best);
    }
    std::sort(psa.flavors.begin(), psa.flavors.end());
    std::sort(psa.usage.begin(), psa.usage.end());
    if (!reasons.empty() && ps_mode < Mode::kBorrow) {
      if (!out.message.empty()) out.message += "; ";
      out.message += "couldn't assign flavors to pod set " + ps.name + ": ";
      for (size_t i = 0; i < reasons.size(); ++i) out.message += (i ? ", " : "") + reasons[i];
    }
    out.mode = std::min(out.mode, ps_mode);
    out.pod_sets.push_back(std::move(psa));
  }
  for (const auto& [fr, a] : total) {
    out.usage.emplace_back(fr, a);
    if (tree.usage(cq_node, fr) + a > tree.nominal(cq_node, fr)) out.borrowing = true;
  }
  if (out.mode == Mode::kFit && out.borrowing) out.mode = Mode::kBorrow;
  return out;
}

}  // namespace gpufleet::queue
