// Compares `gpufleet pack` runs with the FGD artifact's reference curves (inputs/pack/reference_run.h):
// per policy, the mean over the seeds both have of allocation % at 100% arrived, and the largest
// absolute difference of the seed-mean curves over arrived 0..130%.
#pragma once

#include <string>
#include <vector>

#include "pack/pack_experiment.h"
#include "inputs/pack/reference_run.h"

namespace gpufleet::pack {

struct ReferenceComparison {
  std::string policy;
  int seeds = 0;                 ///< seeds present in both
  double ours_at_100 = 0;        ///< mean allocation % at 100% arrived, gpufleet
  double reference_at_100 = 0;   ///< same, reference
  double max_abs_diff = 0;       ///< max over buckets of |mean ours - mean reference|, percentage points
  int max_diff_at = 0;           ///< the arrived percent where it occurs
};

/// One entry per policy of `runs` that the reference has for `workload` and `tune` (seeds matched).
std::vector<ReferenceComparison> compare_with_reference(const std::vector<PackRun>& runs,
                                                        const std::vector<ReferenceRun>& reference,
                                                        const std::string& workload, double tune);

}  // namespace gpufleet::pack
