// The self-contained HTML report of `gpufleet simulate --report` and `gpufleet compare --report`:
// one page, nothing loaded from the network (Chart.js is embedded at build time, see
// report/html_page.h; the data is embedded as JSON in <script type="application/json" id="report-data">).
//
// Charts over simulated time (hours), one line per configuration (per configuration and pool for the
// nodes): billed nodes per pool; GPUs allocated and billed; pending pods (the most in each minute,
// sim::TimeseriesRow::pending_pods_peak, so its top is SimResult::pending_peak_pods); cost rate in USD per hour
// (billed nodes plus unused reservations). A series of more than kMaxReportPoints rows is thinned to
// every k-th row (k = ceil(rows / kMaxReportPoints)), deterministically. Below the charts, the
// comparison table (static HTML, readable without JavaScript); for runs with a provisioning report
// (Karpenter NodePools or a fault schedule) and pending pods, the table "Pending units and
// reasons" (id pending-pods): the units pending at the horizon and at the peak with their reasons.
//
// The page sets document.body.dataset.rendered = "ok" once every chart is drawn; script errors go to
// the visible <pre id="errors"> and set it to "error".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/sim_output.h"

namespace gpufleet::io {

/// Points per series at most in the report.
inline constexpr size_t kMaxReportPoints = 2000;

/// The page for one or more runs on the same workload (`workload` describes it; escaped). Same input,
/// same bytes.
std::string sim_report_html(const std::string& workload, const std::vector<CompareEntry>& entries);

}  // namespace gpufleet::io
