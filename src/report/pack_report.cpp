#include "report/pack_report.h"

#include <cmath>
#include <cstddef>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pack/bucketing.h"
#include "report/html_page.h"

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
      data: { datasets: gpufleetSeparateOverlaps(datasets) },
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
  html.reserve(chartjs_source_size() + data_json.size() + 16384);
  html += report_page_start("gpufleet pack report");
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

}  // namespace gpufleet::io
