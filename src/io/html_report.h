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

#include "io/pack_output.h"
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

/// The series colours of the reports, in order (series i takes kReportPalette[i % size]): the
/// colour-blind-safe Okabe-Ito colours first (Okabe and Ito, "Color Universal Design", 2008), then
/// purple, olive, crimson and lime, so that the ten policies of `pack --policy all` get ten colours
/// that differ by a CIEDE2000 distance of at least 20 from each other (tests/html_report_test.cpp).
/// Bounds and references are drawn in dark grey, dashed, outside this list.
inline constexpr const char* kReportPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
                                                 "#56b4e9", "#7711cc", "#665500", "#aa0033", "#99bb00"};

/// `v` rounded to the nearest multiple of 1 / per_unit (per_unit 1e6: micro-units; halves away from
/// zero, std::round). Dividing by an exact power of ten keeps the shortest decimal form in JSON
/// (116.058867, not 116.05886699999999). For the numbers the JSON outputs and reports embed.
double round_to(double v, double per_unit);

/// The page style (system fonts only) and the error hook script shared by the reports: the hook,
/// placed before Chart.js, writes any script error into <pre id="errors"> and sets
/// document.body.dataset.rendered = "error".
std::string_view report_style();
std::string_view report_error_script();

/// The embedded Chart.js source, as inlined into the page.
std::string chartjs_source();

/// `text` escaped for HTML text and attribute values (& < > " ').
std::string html_escape(std::string_view text);

/// JSON text made safe inside <script type="application/json">: '<', '>' and '&' (which can only occur
/// inside JSON strings) become \u003c, \u003e, \u0026, so "</script>" or "<!--" cannot end the element.
std::string json_for_script(std::string_view json);

/// The end of a report page after its last section: a footer naming `tool` (e.g. "gpufleet pack")
/// and Chart.js, Chart.js inline, the data block (`data_json`, already json_for_script-escaped) as
/// <script id="report-data">, and the page's render script.
std::string report_page_end(std::string_view tool, std::string_view data_json, std::string_view render_script);

}  // namespace gpufleet::io
