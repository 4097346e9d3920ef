// A reference curve of the FGD artifact's cached results (hkust-adsl/kubernetes-scheduler-simulator,
// experiments/analysis/expected_results/analysis_allo_discrete.csv): the GPU allocation rate of one
// (workload, policy, tune, seed) run over the arrived workload, as pack/reference_check.h compares
// it with gpufleet's runs. Plain data; readers/traces/fgd_reference.h reads it from the CSV.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpufleet::pack {

/// One reference curve.
struct ReferenceRun {
  std::string workload;  ///< trace name, e.g. "openb_pod_list_default"
  std::string policy;    ///< gpufleet policy name: random, dotprod, clustering, packing, bestfit, fgd
  double tune = 0;       ///< the artifact's tune factor (workload inflation), e.g. 1.3
  int64_t seed = 0;
  std::vector<double> curve;  ///< 131 values: allocation % at 0..130% of the workload arrived; NaN where the cell is empty
};

}  // namespace gpufleet::pack
