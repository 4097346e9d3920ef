#include "io/html_report.h"

#include <cmath>
#include <cstddef>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pack/bucketing.h"

// Generated at build time from the Chart.js UMD build (cmake/ChartJs.cmake): the file in 16 KiB chunks.
namespace gpufleet::io::embedded {
extern const std::string_view kChartJsChunks[];
extern const std::size_t kChartJsChunkCount;
extern const std::size_t kChartJsSize;
}  // namespace gpufleet::io::embedded

namespace gpufleet::io {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Per-bucket mean over the runs that have a value there (NaN buckets skipped); NaN if none has.
std::vector<double> mean_curve(const std::vector<const pack::PackRun*>& runs,
                               std::vector<double> pack::PackRun::*curve) {
  std::vector<double> sum(pack::kCurveBuckets, 0.0);
  std::vector<int> count(pack::kCurveBuckets, 0);
  for (const pack::PackRun* r : runs) {
    const std::vector<double>& c = r->*curve;
    for (size_t i = 0; i < c.size() && i < sum.size(); ++i) {
      if (std::isnan(c[i])) continue;
      sum[i] += c[i];
      ++count[i];
    }
  }
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = count[i] ? sum[i] / count[i] : kNaN;
  return sum;
}

nlohmann::ordered_json number(double v, int decimals) {
  if (!std::isfinite(v)) return nullptr;
  return pack::round_half_even(v, decimals);
}

nlohmann::ordered_json curve_json(const std::vector<double>& curve, int decimals) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (double v : curve) out.push_back(number(v, decimals));
  return out;
}

std::string cell(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string("\u2013");
}

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
th { font-size: 13px; font-weight: 600; color: #4a5263; vertical-align: bottom; white-space: normal; }
th:first-child, td:first-child { text-align: left; }
tbody tr:nth-child(even) { background: #f8f9fb; }
td.best { font-weight: 700; }
.table-scroll { overflow-x: auto; }
main.wide { max-width: 1400px; }
table.grouped { font-size: 13.5px; }
table.grouped th, table.grouped td { padding: 5px 4px; }
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

// Draws both charts from the embedded JSON, then sets data-rendered="ok".
constexpr std::string_view kRenderScript = R"js(
(function () {
  "use strict";
  if (typeof Chart === "undefined") throw new Error("Chart.js did not load");
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var palette = data.palette;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 13;
  Chart.defaults.color = "#333a48";

  function series(curve) {
    return curve.map(function (y, x) { return { x: x, y: y }; });
  }
  function policyDatasets(key) {
    return data.policies.map(function (p, i) {
      var color = palette[i % palette.length];
      return {
        label: p.name + " (" + p.runs + (p.runs === 1 ? " run)" : " runs)"),
        data: series(p[key]),
        borderColor: color,
        backgroundColor: color,
        borderWidth: 2
      };
    });
  }
  // Lowest value of any dataset with lo <= x <= hi (0 if none).
  function lowest(datasets, lo, hi) {
    var m = Infinity;
    datasets.forEach(function (d) {
      d.data.forEach(function (p) { if (p.x >= lo && p.x <= hi && p.y !== null && p.y < m) m = p.y; });
    });
    return isFinite(m) ? m : 0;
  }
  function lineChart(id, datasets, yTitle, yMax, xMin, yMin) {
    return new Chart(document.getElementById(id), {
      type: "line",
      data: { datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        spanGaps: true,  // sparse runs (tiny clusters) leave empty buckets between events
        interaction: { mode: "index", intersect: false },
        elements: { point: { radius: 0, hoverRadius: 3, hitRadius: 4 }, line: { tension: 0 } },
        scales: {
          x: {
            type: "linear", min: xMin || 0, max: 130,
            ticks: { stepSize: 10, callback: function (v) { return v + "%"; } },
            title: { display: true, text: "Arrived workload (% of cluster GPU capacity requested so far)" }
          },
          y: {
            min: yMin || 0, suggestedMax: yMax,
            ticks: { callback: function (v) { return v + "%"; } },
            title: { display: true, text: yTitle }
          }
        },
        plugins: {
          legend: { position: "bottom", labels: { boxWidth: 18, boxHeight: 2, padding: 16 } },
          tooltip: {
            callbacks: {
              title: function (items) { return items.length ? "arrived " + items[0].parsed.x + "%" : ""; },
              label: function (item) {
                var y = item.parsed.y;
                return item.dataset.label + ": " + (y === null || isNaN(y) ? "no data" : y.toFixed(2) + "%");
              }
            }
          }
        }
      }
    });
  }

  // Fresh dataset objects per chart (Chart.js attaches its state to them).
  function allocationDatasets() {
    var sets = policyDatasets("allocation_pct");
    if (data.bound_pct) {
      sets.push({
        label: "upper bound (LP, mean over all runs)",
        data: series(data.bound_pct),
        borderColor: "#3b3f4a",
        backgroundColor: "#3b3f4a",
        borderDash: [7, 5],
        borderWidth: 1.6,
        order: 1  // drawn behind the policies where they coincide
      });
    }
    return sets;
  }
  lineChart("chart-allocation", allocationDatasets(), "GPU allocation (% of cluster GPU capacity)", 100);
  var detail = allocationDatasets();
  var detailMin = Math.max(0, Math.floor(lowest(detail, 80, 130) / 5) * 5 - 5);
  lineChart("chart-allocation-detail", detail, "GPU allocation (%)", 100, 80, detailMin);
  lineChart("chart-frag", policyDatasets("frag_pct"), "Fragmentation ratio (% of idle GPU capacity)", 100);
  document.getElementById("chartjs-version").textContent = "v" + Chart.version;
  if (document.body.dataset.rendered !== "error") document.body.dataset.rendered = "ok";
})();
)js";

}  // namespace

double round_to(double v, double per_unit) { return std::round(v * per_unit) / per_unit; }

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

std::string chartjs_source() {
  std::string out;
  out.reserve(embedded::kChartJsSize);
  for (size_t i = 0; i < embedded::kChartJsChunkCount; ++i) out += embedded::kChartJsChunks[i];
  return out;
}

std::string pack_report_html(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs,
                             const std::string& subtitle) {
  const std::vector<PolicySummary> summary = summarize(runs);  // policies in first-seen order

  // 1. The data: per-policy mean curves, the mean bound, the summary.
  nlohmann::ordered_json data;
  data["generator"] = "gpufleet pack";
  data["subtitle"] = subtitle;
  data["cluster"] = {{"nodes", cluster.nodes}, {"gpus", cluster.gpus}};
  data["palette"] = kReportPalette;
  data["policies"] = nlohmann::ordered_json::array();
  std::vector<const pack::PackRun*> with_bound;
  for (const auto& r : runs)
    if (!r.bound_pct.empty()) with_bound.push_back(&r);
  for (const PolicySummary& s : summary) {
    std::vector<const pack::PackRun*> mine;
    nlohmann::ordered_json seeds = nlohmann::ordered_json::array();
    for (const auto& r : runs) {
      if (r.policy != s.policy) continue;
      mine.push_back(&r);
      seeds.push_back(r.seed);
    }
    nlohmann::ordered_json p;
    p["name"] = s.policy;
    p["runs"] = s.runs;
    p["seeds"] = std::move(seeds);
    p["allocation_pct"] = curve_json(mean_curve(mine, &pack::PackRun::allocation_pct), 2);
    p["frag_pct"] = curve_json(mean_curve(mine, &pack::PackRun::frag_pct), 3);
    p["frag_gpu_pct"] = curve_json(mean_curve(mine, &pack::PackRun::frag_gpu_pct), 2);
    data["policies"].push_back(std::move(p));
  }
  data["bound_pct"] = with_bound.empty() ? nlohmann::ordered_json(nullptr)
                                         : curve_json(mean_curve(with_bound, &pack::PackRun::bound_pct), 2);
  data["summary"] = nlohmann::ordered_json::array();
  for (const PolicySummary& s : summary) {
    data["summary"].push_back({{"policy", s.policy},
                               {"runs", s.runs},
                               {"alloc100_mean", number(s.alloc100_mean, 2)},
                               {"alloc100_sd", number(s.alloc100_sd, 2)},
                               {"alloc130_mean", number(s.alloc130_mean, 2)},
                               {"bound100_mean", number(s.bound100_mean, 2)},
                               {"gap100", number(s.bound100_mean - s.alloc100_mean, 2)},
                               {"wc_bound100_mean", number(s.wc_bound100_mean, 2)},
                               {"unallocated_gpus100_mean", number(s.unallocated100_mean, 1)},
                               {"failed_pods_mean", number(s.failed_pods_mean, 1)}});
  }
  // Invalid UTF-8 (a file path can hold any bytes) becomes U+FFFD instead of throwing.
  const std::string data_json =
      json_for_script(data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));

  // 2. The summary table (static HTML).
  double best = -1;
  for (const PolicySummary& s : summary)
    if (std::isfinite(s.alloc100_mean) && s.alloc100_mean > best) best = s.alloc100_mean;
  const bool any_bound = !with_bound.empty();
  std::string rows;
  for (size_t i = 0; i < summary.size(); ++i) {
    const PolicySummary& s = summary[i];
    const bool is_best = summary.size() > 1 && std::isfinite(s.alloc100_mean) && s.alloc100_mean == best;
    rows += fmt::format(
        "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td>"
        "<td{}>{} &plusmn; {}</td><td>{}</td>",
        kReportPalette[i % std::size(kReportPalette)], html_escape(s.policy), s.runs, is_best ? " class=\"best\"" : "",
        cell(s.alloc100_mean, 2), cell(s.alloc100_sd, 2), cell(s.alloc130_mean, 2));
    if (any_bound)
      rows += fmt::format("<td>{}</td><td>{}</td><td>{}</td>", cell(s.bound100_mean, 2),
                          cell(s.bound100_mean - s.alloc100_mean, 2), cell(s.wc_bound100_mean, 2));
    rows += fmt::format("<td>{}</td><td>{}</td></tr>\n", cell(s.unallocated100_mean, 1), cell(s.failed_pods_mean, 1));
  }
  const std::string bound_headers =
      any_bound ? "<th>upper bound @100% arrived (%)</th><th>gap to bound (points)</th>"
                  "<th>bound for policies that place every pod that fits @100% (%)</th>"
                : "";

  // 3. The page. Order matters: the error hook before Chart.js, the data before the render script.
  std::string html;
  html.reserve(embedded::kChartJsSize + data_json.size() + 16384);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: inline scripts and styles only.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data:\">\n";
  html += "<title>gpufleet pack report</title>\n<style>";
  html += kStyle;
  html += "</style>\n</head>\n<body data-rendered=\"pending\">\n<main>\n";
  html += "<pre id=\"errors\"></pre>\n<script>";
  html += kErrorScript;
  html += "</script>\n";
  html += "<header>\n<h1>gpufleet pack: GPU allocation by placement policy</h1>\n";
  html += fmt::format("<p class=\"subtitle\">{}</p>\n", html_escape(subtitle));
  html += fmt::format("<p class=\"cluster\">cluster: {} nodes, {} GPUs &middot; {} runs, {} {}</p>\n</header>\n",
                      cluster.nodes, cluster.gpus, runs.size(), summary.size(),
                      summary.size() == 1 ? "policy" : "policies");
  html += "<noscript><p>JavaScript is off: the charts need it; the table below does not.</p></noscript>\n";

  html += "<section>\n<h2>GPU allocation as the workload arrives</h2>\n<p class=\"note\">Allocated GPU capacity as a share "
          "of the cluster's, after each whole percent of the workload has arrived (failed pods count as arrived), mean "
          "over seeds. Higher is better.";
  if (any_bound) html += " The dashed line is the LP upper bound that no placement could exceed, mean over all runs.";
  html += "</p>\n<div class=\"chart\"><canvas id=\"chart-allocation\" role=\"img\" aria-label=\"GPU allocation "
          "against arrived workload, one line per policy\"></canvas></div>\n"
          "<h2 class=\"detail\">Detail: 80&ndash;130% arrived</h2>\n<p class=\"note\">The same curves where pods start "
          "to fail and the policies part.</p>\n<div class=\"chart detail\"><canvas id=\"chart-allocation-detail\" "
          "role=\"img\" aria-label=\"GPU allocation from 80 to 130 percent arrived\"></canvas></div>\n</section>\n";

  html += "<section>\n<h2>Fragmentation</h2>\n<p class=\"note\">Fragmentation ratio (FGD paper): the share of idle GPU "
          "capacity that the trace's typical pods cannot use, mean over seeds. Lower is better.</p>\n"
          "<div class=\"chart\"><canvas id=\"chart-frag\" role=\"img\" aria-label=\"Fragmentation ratio against arrived "
          "workload, one line per policy\"></canvas></div>\n</section>\n";

  html += "<section>\n<h2>Summary</h2>\n<p class=\"note\">Per policy, over its seeds. &ldquo;@100%&rdquo; is the point "
          "where the arrived GPU requests equal the cluster's GPUs.</p>\n<div class=\"table-scroll\">\n<table>\n<thead><tr><th>policy</th><th>runs</th>"
          "<th>GPU allocation @100% arrived, mean &plusmn; sd (%)</th><th>allocation @130% arrived (%)</th>";
  html += bound_headers;
  html += "<th>unallocated GPUs @100%</th><th>failed pods (mean per run)</th></tr></thead>\n<tbody>\n";
  html += rows;
  html += "</tbody>\n</table>\n</div>\n</section>\n";

  html += report_page_end("gpufleet pack", data_json, kRenderScript);
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
  html += render_script;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace gpufleet::io
