// The parts every self-contained HTML report shares (pack's, simulate's and compare's): the series
// colours, the page style, the script-error hook, Chart.js inlined, escaping, and the page's end with
// its embedded data. Nothing on a page is fetched from the network.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpufleet::io {

/// The series colours of the reports, in order (series i takes kReportPalette[i % size]): the
/// colour-blind-safe Okabe-Ito colours first (Okabe and Ito, "Color Universal Design", 2008), then
/// purple, olive, crimson and lime, so that the ten policies of `pack --policy all` get ten colours
/// that differ by a CIEDE2000 distance of at least 20 from each other (tests/report/pack_report_test.cpp).
/// Bounds and references are drawn in dark grey, dashed, outside this list.
inline constexpr const char* kReportPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00",
                                                 "#56b4e9", "#7711cc", "#665500", "#aa0033", "#99bb00"};

/// The page style (system fonts only) and the error hook script shared by the reports. Table cells
/// hold numbers, right-aligned, except the first column and the cells (th and td) of class "text",
/// left-aligned; header words wrap at spaces only, never hyphenated (a word with a hyphen goes in
/// <span class="word">, which keeps it whole). The hook,
/// placed before Chart.js, writes any script error into <pre id="errors"> and sets
/// document.body.dataset.rendered = "error".
std::string_view report_style();
std::string_view report_error_script();

/// The embedded Chart.js source, as inlined into the page.
std::string chartjs_source();
/// Its size in bytes (to reserve a page's string).
std::size_t chartjs_source_size();

/// `text` escaped for HTML text and attribute values (& < > " ').
std::string html_escape(std::string_view text);

/// JSON text made safe inside <script type="application/json">: '<', '>' and '&' (which can only occur
/// inside JSON strings) become \u003c, \u003e, \u0026, so "</script>" or "<!--" cannot end the element.
std::string json_for_script(std::string_view json);

/// The start of a report page, up to its header: the doctype, a Content-Security-Policy that lets
/// nothing be fetched (inline scripts and styles only), `<title>title</title>`, report_style(),
/// `<body data-rendered="pending">`, `<main>` (with class `main_class` when not empty), the
/// `<pre id="errors">` and the error hook (report_error_script), which must come before Chart.js.
std::string report_page_start(std::string_view title, std::string_view main_class = {});

/// The end of a report page after its last section: a footer naming `tool` (e.g. "gpufleet pack")
/// and Chart.js, Chart.js inline, the data block (`data_json`, already json_for_script-escaped) as
/// <script id="report-data">, and the page's render script. Before the render script, in its
/// <script>, the charts' shared helper gpufleetSeparateOverlaps(datasets), which the render scripts
/// call on each chart's datasets so that lines that coincide stay visible: wherever a line runs on
/// the same points as a line drawn before it (under it), it is dashed (one pattern per layer), so the
/// line underneath shows through the gaps; and a dataset whose points all equal an earlier one's gets
/// "(same as <its label>)" in the legend.
std::string report_page_end(std::string_view tool, std::string_view data_json, std::string_view render_script);

}  // namespace gpufleet::io
