// The self-contained HTML report of `gpufleet pack --report`: one page, no network access. Data is
// embedded as JSON in a <script type="application/json" id="report-data"> block; charts are drawn by
// Chart.js, which is embedded in the binary at build time (cmake/ChartJs.cmake, Debian libjs-chart.js)
// and inlined into the page. The summary table is static HTML, readable without JavaScript.
//
// The page sets document.body.dataset.rendered = "ok" once all charts are drawn; any script error is
// written into the visible <pre id="errors"> (and sets data-rendered="error").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/pack_output.h"
#include "pack/pack_experiment.h"

namespace gpufleet::io {

/// The report page. `subtitle` (cluster, trace files, tune, seeds; may hold newlines) and policy names
/// are escaped, so any text is safe. Same input, same bytes.
///  (a) GPU allocation % against arrived workload % 0..130: per policy the mean over its seeds, plus the
///      mean upper bound over all runs (dashed) when any run has bound_pct; and the same for 80..130%;
///  (b) fragmentation ratio (frag_pct) per policy, mean over seeds;
///  (c) the summary table of io::summarize.
std::string pack_report_html(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs,
                             const std::string& subtitle);

}  // namespace gpufleet::io
