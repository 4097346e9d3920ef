#include "pack/reference_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace gpufleet::pack {

std::vector<ReferenceComparison> compare_with_reference(const std::vector<PackRun>& runs,
                                                        const std::vector<ReferenceRun>& reference,
                                                        const std::string& workload, double tune) {
  std::vector<ReferenceComparison> out;
  std::vector<std::string> policies;
  for (const auto& r : runs)
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) policies.push_back(r.policy);
  for (const auto& policy : policies) {
    std::map<int64_t, const PackRun*> ours;
    for (const auto& r : runs)
      if (r.policy == policy) ours[r.seed] = &r;
    std::map<int64_t, const ReferenceRun*> theirs;
    for (const auto& r : reference)
      if (r.policy == policy && r.workload == workload && std::abs(r.tune - tune) < 1e-9 && ours.count(r.seed)) theirs[r.seed] = &r;
    if (theirs.empty()) continue;
    ReferenceComparison c;
    c.policy = policy;
    c.seeds = static_cast<int>(theirs.size());
    const size_t buckets = std::min(theirs.begin()->second->curve.size(), ours.begin()->second->allocation_pct.size());
    for (size_t x = 0; x < buckets; ++x) {
      double so = 0, st = 0;
      int n = 0;
      for (const auto& [seed, ref] : theirs) {
        const double a = ours[seed]->allocation_pct[x], b = ref->curve[x];
        if (std::isnan(a) || std::isnan(b)) continue;
        so += a;
        st += b;
        ++n;
      }
      if (n == 0) continue;
      const double diff = std::abs(so / n - st / n);
      if (x == 100) {
        c.ours_at_100 = so / n;
        c.reference_at_100 = st / n;
      }
      if (diff > c.max_abs_diff) {
        c.max_abs_diff = diff;
        c.max_diff_at = static_cast<int>(x);
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace gpufleet::pack
