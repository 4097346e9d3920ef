#include "report/html_page.h"

#include <cstddef>

#include <fmt/format.h>

// Generated at build time from the Chart.js UMD build (cmake/ChartJs.cmake): the file in 16 KiB chunks.
namespace gpufleet::io::embedded {
extern const std::string_view kChartJsChunks[];
extern const std::size_t kChartJsChunkCount;
extern const std::size_t kChartJsSize;
}  // namespace gpufleet::io::embedded

namespace gpufleet::io {
namespace {

// Page style: system fonts only (nothing is fetched), readable at laptop and print widths.
constexpr std::string_view kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1d2330;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 40px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 18px; margin: 0 0 4px; }
.subtitle { white-space: pre-line; margin: 0 0 4px; color: #4a5263;
            font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
.cluster { margin: 0 0 18px; color: #4a5263; }
section { background: #fff; border: 1px solid #dde1e8; border-radius: 8px; padding: 18px 20px 14px; margin: 0 0 18px; }
.note { margin: 0 0 12px; color: #5b6375; font-size: 13.5px; }
.chart { position: relative; height: 440px; }
.chart.detail { height: 340px; }
h2.detail { font-size: 15.5px; margin-top: 22px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 7px 10px; border-bottom: 1px solid #e4e7ed; text-align: right; white-space: nowrap; }
th { font-size: 13px; font-weight: 600; color: #4a5263; vertical-align: bottom; white-space: normal;
     hyphens: none; overflow-wrap: normal; word-break: normal; }
th:first-child, td:first-child { text-align: left; }
th.text, td.text { text-align: left; }
.word { white-space: nowrap; }
tbody tr:nth-child(even) { background: #f8f9fb; }
td.best { font-weight: 700; }
.table-scroll { overflow-x: auto; }
main.wide { max-width: 1400px; }
table.grouped { font-size: 13px; }
table.grouped th, table.grouped td { padding: 5px 3px; }
table.grouped th { font-size: 11.5px; }
table.grouped th.group { text-align: center; border-bottom: 1px solid #c9ced8; }
table.grouped thead tr + tr th:first-child { text-align: right; }
table.grouped thead tr:first-child th:nth-child(2), table.grouped tbody td:nth-child(2) { text-align: left; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 7px; vertical-align: 0; }
#errors { margin: 0 0 18px; padding: 12px 14px; background: #fdecec; color: #8a1111; border: 1px solid #f2b8b8;
          border-radius: 6px; white-space: pre-wrap; }
#errors:empty { display: none; }
footer { color: #6b7385; font-size: 12.5px; }
)css";

// Installed before Chart.js runs, so that errors in the library are caught too.
constexpr std::string_view kErrorScript = R"js(
(function () {
  "use strict";
  function report(text) {
    var pre = document.getElementById("errors");
    pre.textContent += text + "\n";
    document.body.dataset.rendered = "error";
  }
  window.gpufleetReportError = report;
  window.onerror = function (message, source, line, column, error) {
    report(error && error.stack ? String(error.stack) : message + " (" + source + ":" + line + ":" + column + ")");
  };
  window.addEventListener("unhandledrejection", function (event) {
    report("unhandled promise rejection: " + String(event.reason));
  });
  var consoleError = console.error;
  console.error = function () {
    report("console.error: " + Array.prototype.map.call(arguments, String).join(" "));
    return consoleError.apply(console, arguments);
  };
})();
)js";

// Defines gpufleetSeparateOverlaps(datasets) for the render scripts (before they run, in their
// <script>): see report_page_end in html_page.h.
constexpr std::string_view kChartScript = R"js(
window.gpufleetSeparateOverlaps = function (datasets) {
  "use strict";
  var dashes = [[8, 6], [3, 5], [12, 4, 3, 4], [2, 8]];
  function x(p, i) { return p !== null && typeof p === "object" ? p.x : i; }
  function y(p) { return p !== null && typeof p === "object" ? p.y : p; }
  function same(a, b, k) { return k < a.length && k < b.length && x(a[k], k) === x(b[k], k) && y(a[k]) === y(b[k]); }
  // Chart.js draws the datasets sorted by (order, index) from the last to the first: the first is on top.
  var drawn = datasets.map(function (d, i) { return i; }).sort(function (a, b) {
    var oa = datasets[a].order || 0, ob = datasets[b].order || 0;
    return oa !== ob ? ob - oa : b - a;
  });
  drawn.forEach(function (i, p) {
    var d = datasets[i], layers = [], any = false;
    for (var k = 0; k + 1 < d.data.length; ++k) {
      var n = 0;
      for (var q = 0; q < p; ++q) {
        var under = datasets[drawn[q]].data;
        if (same(d.data, under, k) && same(d.data, under, k + 1)) ++n;
      }
      layers.push(n);
      any = any || n > 0;
    }
    if (any) {
      d.segment = Object.assign({}, d.segment, { borderDash: function (ctx) {
        var n = layers[ctx.p0DataIndex];
        return n > 0 ? dashes[(n - 1) % dashes.length] : undefined;
      } });
    }
  });
  datasets.forEach(function (d, i) {
    for (var j = 0; j < i; ++j) {
      var e = datasets[j];
      if (e.data.length !== d.data.length || e.data.length === 0) continue;
      var identical = true;
      for (var k = 0; k < d.data.length && identical; ++k) identical = same(d.data, e.data, k);
      if (identical) { d.label += " (same as " + e.label + ")"; break; }
    }
  });
  return datasets;
};
)js";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string json_for_script(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string_view report_style() { return kStyle; }
std::string_view report_error_script() { return kErrorScript; }

std::size_t chartjs_source_size() { return embedded::kChartJsSize; }

std::string chartjs_source() {
  std::string out;
  out.reserve(embedded::kChartJsSize);
  for (size_t i = 0; i < embedded::kChartJsChunkCount; ++i) out += embedded::kChartJsChunks[i];
  return out;
}

std::string report_page_start(std::string_view title, std::string_view main_class) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: inline scripts and styles only.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:\">\n";
  html += "<title>" + html_escape(title) + "</title>\n<style>";
  html += report_style();
  html += "</style>\n</head>\n<body data-rendered=\"pending\">\n<main";
  if (!main_class.empty()) html += " class=\"" + html_escape(main_class) + "\"";
  html += ">\n<pre id=\"errors\"></pre>\n<script>";
  html += report_error_script();
  html += "</script>\n";
  return html;
}

std::string report_page_end(std::string_view tool, std::string_view data_json, std::string_view render_script) {
  std::string html = fmt::format(
      "<footer>Generated by {}. Charts drawn with Chart.js <span id=\"chartjs-version\"></span> (MIT License), "
      "embedded in this page: it loads nothing from the network.</footer>\n</main>\n<script>\n",
      tool);
  html += chartjs_source();
  html += "\n</script>\n<script type=\"application/json\" id=\"report-data\">";
  html += data_json;
  html += "</script>\n<script>";
  html += kChartScript;
  html += render_script;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace gpufleet::io
