#include "report/sim_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/html_page.h"
#include "report/json_values.h"

namespace gpufleet::io {
namespace {

// Draws the four charts from the embedded JSON, then sets data-rendered="ok".
constexpr std::string_view kRenderScript = R"js(
(function () {
  "use strict";
  if (typeof Chart === "undefined") throw new Error("Chart.js did not load");
  var data = JSON.parse(document.getElementById("report-data").textContent);
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.font.size = 13;
  Chart.defaults.color = "#333a48";
  function points(config, values) {
    return values.map(function (y, i) { return { x: config.time_h[i], y: y }; });
  }
  function dataset(label, color, pts, dashed) {
    return { label: label, data: pts, borderColor: color, backgroundColor: color, borderWidth: dashed ? 1.4 : 2,
             borderDash: dashed ? [6, 4] : [], stepped: true };
  }
  function chart(id, datasets, yTitle) {
    return new Chart(document.getElementById(id), {
      type: "line",
      data: { datasets: datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: true,
        interaction: { mode: "nearest", intersect: false },
        elements: { point: { radius: 0, hoverRadius: 3, hitRadius: 4 } },
        scales: {
          x: { type: "linear", min: 0, max: data.horizon_h, title: { display: true, text: "Simulated time (hours)" } },
          y: { min: 0, title: { display: true, text: yTitle } }
        },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 18, boxHeight: 2, padding: 14 } } }
      }
    });
  }
  var nodes = [], gpus = [], pending = [], cost = [];
  var k = 0;
  data.configs.forEach(function (c, i) {
    var color = data.palette[i % data.palette.length];
    c.pools.forEach(function (pool, j) {
      nodes.push(dataset(c.label + " / " + pool, data.palette[k++ % data.palette.length], points(c, c.nodes[j]), false));
    });
    gpus.push(dataset(c.label + ": allocated", color, points(c, c.gpus_allocated), false));
    gpus.push(dataset(c.label + ": billed", color, points(c, c.gpus_billed), true));
    pending.push(dataset(c.label, color, points(c, c.pending_pods), false));
    cost.push(dataset(c.label, color, points(c, c.cost_usd_per_hour), false));
  });
  chart("chart-nodes", gpufleetSeparateOverlaps(nodes), "Billed nodes");
  chart("chart-gpus", gpufleetSeparateOverlaps(gpus), "GPUs");
  chart("chart-pending", gpufleetSeparateOverlaps(pending), "Pending pods");
  chart("chart-cost", gpufleetSeparateOverlaps(cost), "Cost rate (USD per hour)");
  document.getElementById("chartjs-version").textContent = "v" + Chart.version;
  if (document.body.dataset.rendered !== "error") document.body.dataset.rendered = "ok";
})();
)js";

// The inference services' charts (only in reports of runs that have them): per configuration and
// service, request rate against ready replicas, TTFT p99 per minute against the SLO, queue depth,
// KV-cache usage and cost rate.
constexpr std::string_view kInferenceScript = R"js(
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function line(label, color, xs, ys, dashed, axis) {
    return { label: label, data: ys.map(function (y, i) { return { x: xs[i], y: y }; }), borderColor: color,
             backgroundColor: color, borderWidth: dashed ? 1.4 : 2, borderDash: dashed ? [6, 4] : [], stepped: true,
             yAxisID: axis || "y", spanGaps: false };
  }
  function chart(id, datasets, yTitle, y2Title) {
    var scales = {
      x: { type: "linear", min: 0, max: data.horizon_h, title: { display: true, text: "Simulated time (hours)" } },
      y: { min: 0, title: { display: true, text: yTitle } }
    };
    if (y2Title) scales.y2 = { min: 0, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: y2Title } };
    return new Chart(document.getElementById(id), {
      type: "line", data: { datasets: datasets },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
                 interaction: { mode: "nearest", intersect: false },
                 elements: { point: { radius: 0, hoverRadius: 3, hitRadius: 4 } }, scales: scales,
                 plugins: { legend: { position: "bottom", labels: { boxWidth: 18, boxHeight: 2, padding: 14 } } } }
    });
  }
  var rate = [], ttft = [], queue = [], kv = [], cost = [], k = 0;
  data.inference.forEach(function (s) {
    var color = data.palette[k++ % data.palette.length];
    rate.push(line(s.label + ": requests/s", color, s.time_h, s.request_rate, false));
    rate.push(line(s.label + ": ready replicas", color, s.time_h, s.ready_replicas, true, "y2"));
    if (s.prefill_ready_replicas) {  // a disaggregated service: each role's
      rate.push(line(s.label + ": prefill ready", data.palette[k++ % data.palette.length], s.time_h, s.prefill_ready_replicas, true, "y2"));
      rate.push(line(s.label + ": decode ready", data.palette[k++ % data.palette.length], s.time_h, s.decode_ready_replicas, true, "y2"));
    }
    ttft.push(line(s.label + ": TTFT p99", color, s.time_h, s.ttft_p99_s, false));
    if (s.slo_ttft_p99_s !== null)
      ttft.push(line(s.label + ": SLO", color, s.time_h, s.time_h.map(function () { return s.slo_ttft_p99_s; }), true));
    queue.push(line(s.label + ": waiting in engines", color, s.time_h, s.engine_waiting, false));
    queue.push(line(s.label + ": held at the router", color, s.time_h, s.router_waiting, true));
    kv.push(line(s.label, color, s.time_h, s.kv_cache_usage, false));
    cost.push(line(s.label, color, s.time_h, s.cost_usd_per_hour, false));
  });
  chart("chart-serving-rate", gpufleetSeparateOverlaps(rate), "Requests per second", "Ready replicas");
  chart("chart-serving-ttft", gpufleetSeparateOverlaps(ttft), "TTFT p99 (s)");
  chart("chart-serving-queue", gpufleetSeparateOverlaps(queue), "Requests waiting");
  chart("chart-serving-kv", gpufleetSeparateOverlaps(kv), "KV-cache usage (0..1)");
  chart("chart-serving-cost", gpufleetSeparateOverlaps(cost), "USD per hour");
})();
)js";

std::string opt(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("&ndash;"); }

// The Kueue queues, the topology counters, the checkpoints and the driver upgrades of the runs that
// have them (SimResult::queues, topology_levels, checkpoint_jobs, driver_upgrades): static tables, no
// chart.
std::string queue_sections(const std::vector<CompareEntry>& entries) {
  std::string queues, topology, checkpoints, upgrades;
  const auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); };
  for (const CompareEntry& e : entries) {
    const sim::SimResult& r = e.result;
    for (const sim::QueueResult& q : r.queues)
      queues += fmt::format("<tr><td>{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                            "<td>{:.1f}</td><td>{:.1f}%</td><td>{}</td><td>{}</td></tr>\n",
                            html_escape(e.label), html_escape(q.cluster_queue), html_escape(q.cohort), html_escape(r.admission),
                            q.workloads, q.admitted, q.pending_at_end, q.preemptions, q.evictions, q.gpu_hours, q.borrowed_pct,
                            opt(q.wait.p50), opt(q.wait.p99));
    if (r.topology_levels > 0)
      topology += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{:.2f}</td></tr>\n", html_escape(e.label),
                              r.job_starts, r.split_job_starts,
                              r.job_starts > 0 ? 100.0 * static_cast<double>(r.split_job_starts) / static_cast<double>(r.job_starts) : 0.0,
                              r.topology_slowdown_gpu_hours);
    for (const sim::CheckpointJobResult& c : r.checkpoint_jobs)
      checkpoints += fmt::format("<tr><td>{}</td><td class=\"text\">{}</td><td>{:g}</td><td>{:g}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                                 html_escape(e.label), html_escape(c.name), c.interval_s, c.cost_s, c.checkpoint_s, c.interruptions,
                                 c.mtbi_s > 0 ? fmt::format("{:.0f}", c.mtbi_s) : std::string("-"),
                                 c.daly_interval_s > 0 ? fmt::format("{:.0f}", c.daly_interval_s) : std::string("-"));
    for (const sim::DriverUpgradeResult& u : r.driver_upgrades)
      upgrades += fmt::format("<tr><td>{}</td><td class=\"text\">{}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{}</td><td>{}</td><td>{:.2f}</td></tr>\n",
                              html_escape(e.label), html_escape(u.pool), u.start_s,
                              u.finish_s < 0 ? std::string("-") : fmt::format("{:.0f}", u.finish_s), u.nodes_upgraded,
                              u.capacity_lost_gpu_hours, u.jobs_interrupted, u.pods_evicted + u.pods_deleted, u.lost_gpu_hours);
  }
  // Alerts (runs with a fault schedule), at most kReportAlerts rows per configuration.
  constexpr size_t kReportAlerts = 1000;
  std::string alerts;
  for (const CompareEntry& e : entries) {
    const sim::SimResult& r = e.result;
    if (!r.faults_enabled) continue;
    for (size_t i = 0; i < r.alerts.size() && i < kReportAlerts; ++i) {
      const sim::Alert& a = r.alerts[i];
      alerts += fmt::format("<tr><td>{}</td><td>{:.0f}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>"
                            "<td class=\"text\">{}</td></tr>\n", html_escape(e.label),
                            a.time_s, html_escape(a.alert), html_escape(a.severity), html_escape(a.subject), html_escape(a.message));
    }
    if (r.alerts.size() > kReportAlerts)
      alerts += fmt::format("<tr><td>{}</td><td colspan=\"5\" class=\"text\">{} more alerts (see --json)</td></tr>\n", html_escape(e.label),
                            r.alerts.size() - kReportAlerts);
    if (r.alerts.empty()) alerts += fmt::format("<tr><td>{}</td><td colspan=\"5\" class=\"text\">no alert fired</td></tr>\n", html_escape(e.label));
  }
  std::string html;
  if (!alerts.empty())
    html += "<section>\n<h2>Alerts</h2>\n<p class=\"note\">Alerts the fault schedule raised (rules in docs/faults.md): "
            "time in seconds, rule, severity, subject and message.</p>\n<div class=\"table-scroll\">\n<table>\n<thead>\n"
            "<tr><th>configuration</th><th>time s</th><th class=\"text\">alert</th><th class=\"text\">severity</th><th class=\"text\">subject</th><th class=\"text\">message</th>"
            "</tr>\n</thead>\n<tbody>\n" +
            alerts + "</tbody>\n</table>\n</div>\n</section>\n";
  if (!queues.empty())
    html += "<section>\n<h2>Queues</h2>\n<p class=\"note\">Kueue ClusterQueues: workloads admitted, still pending at the end, "
            "preempted and evicted (PodsReadyTimeout); nvidia.com/gpu quota reserved in GPU-hours and the share above nominal "
            "quota (borrowed); seconds from arrival to first admission (nearest-rank).</p>\n<div class=\"table-scroll\">\n"
            "<table>\n<thead>\n<tr><th>configuration</th><th class=\"text\">cluster queue</th><th class=\"text\">cohort</th><th class=\"text\">admission</th>"
            "<th>workloads</th><th>admitted</th><th>pending</th><th>preempted</th><th>evicted</th><th><span class=\"word\">GPU-hours</span></th>"
            "<th>borrowed</th><th>wait p50</th><th>wait p99</th></tr>\n</thead>\n<tbody>\n" +
            queues + "</tbody>\n</table>\n</div>\n</section>\n";
  if (!topology.empty())
    html += "<section>\n<h2>Topology</h2>\n<p class=\"note\">Job starts whose pods span several domains of a level with a "
            "slowdown, and the GPU-hours the slowdown added.</p>\n<div class=\"table-scroll\">\n<table>\n<thead>\n"
            "<tr><th>configuration</th><th>job starts</th><th>split</th><th>split share</th><th>slowdown <span class=\"word\">GPU-hours</span></th>"
            "</tr>\n</thead>\n<tbody>\n" +
            topology + "</tbody>\n</table>\n</div>\n</section>\n";
  if (!checkpoints.empty())
    html += "<section>\n<h2>Checkpoints</h2>\n<p class=\"note\">Jobs whose checkpoints cost time: seconds spent writing, "
            "interruptions, the mean time between interruptions observed on their pools and the interval Daly's formula "
            "recommends for it (docs/checkpoints-and-upgrades.md).</p>\n<div class=\"table-scroll\">\n<table>\n<thead>\n"
            "<tr><th>configuration</th><th class=\"text\">job</th><th>interval s</th><th>cost s</th><th>writing s</th>"
            "<th>interruptions</th><th>MTBI s</th><th>recommended s</th></tr>\n</thead>\n<tbody>\n" +
            checkpoints + "</tbody>\n</table>\n</div>\n</section>\n";
  if (!upgrades.empty())
    html += "<section>\n<h2>Driver upgrades</h2>\n<p class=\"note\">Rolling driver upgrades: start and finish (s), nodes "
            "upgraded, GPU-hours of capacity cordoned, job stops, pods evicted or deleted, job work lost (GPU-hours).</p>\n"
            "<div class=\"table-scroll\">\n<table>\n<thead>\n<tr><th>configuration</th><th class=\"text\">pool</th><th>start</th>"
            "<th>finish</th><th>nodes</th><th>capacity lost</th><th>job stops</th><th>pods</th><th>work lost</th></tr>\n"
            "</thead>\n<tbody>\n" +
            upgrades + "</tbody>\n</table>\n</div>\n</section>\n";
  return html;
}

// The pending pods at the horizon and at the peak of the runs with a provisioning report
// (SimResult::provisioning_report: Karpenter NodePools or a fault schedule), with their reasons.
std::string pending_section(const std::vector<CompareEntry>& entries) {
  std::string rows;
  for (const CompareEntry& e : entries) {
    const sim::SimResult& r = e.result;
    if (!r.provisioning_report) continue;
    const auto add = [&](const std::string& when, const std::vector<sim::PendingPod>& pods) {
      for (const sim::PendingPod& p : pods)
        rows += fmt::format("<tr><td>{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{:.0f}</td>"
                            "<td class=\"text\" style=\"white-space:normal\">{}</td></tr>\n",
                            html_escape(e.label), when, html_escape(p.unit), p.pods, p.priority, p.pending_since_s,
                            html_escape(p.reason.empty() ? "(no reason recorded)" : p.reason));
    };
    add("horizon", r.pending_at_horizon);
    if (r.pending_peak_s >= 0) add(fmt::format("peak ({:.2f} h)", r.pending_peak_s / 3600.0), r.pending_at_peak);
  }
  if (rows.empty()) return "";
  return "<section>\n<h2>Pending units and reasons</h2>\n<p class=\"note\">Units waiting for capacity at the horizon and at the first "
         "moment the most pods were pending, with the provisioner's or the scheduler's reason; pending since: seconds from "
         "the start.</p>\n<div class=\"table-scroll\">\n<table id=\"pending-pods\">\n<thead>\n<tr><th>configuration</th>"
         "<th class=\"text\">when</th><th class=\"text\">unit</th><th>pods</th><th>priority</th><th>pending since (s)</th><th class=\"text\">reason</th></tr>\n"
         "</thead>\n<tbody>\n" +
         rows + "</tbody>\n</table>\n</div>\n</section>\n";
}

// One configuration's chart series (thinned to at most kMaxReportPoints rows): billed nodes per pool,
// GPUs allocated and billed, pending pods (each row's pending_pods_peak; a thinned series keeps the
// largest of the rows it skips, so its top is still the run's peak), cost rate.
nlohmann::ordered_json config_series(const CompareEntry& e) {
  const sim::SimResult& r = e.result;
  const size_t rows = r.timeseries.size();
  const size_t step = rows > kMaxReportPoints ? (rows + kMaxReportPoints - 1) / kMaxReportPoints : 1;
  nlohmann::ordered_json c;
  c["label"] = e.label;
  c["policy"] = r.policy;
  c["pools"] = r.pools;
  nlohmann::ordered_json t = nlohmann::ordered_json::array(), ga = t, gb = t, pend = t, cost = t;
  std::vector<nlohmann::ordered_json> nodes(r.pools.size(), nlohmann::ordered_json::array());
  for (size_t i = 0; i < rows; i += step) {
    const sim::TimeseriesRow& row = r.timeseries[i];
    t.push_back(round_to(row.time_s / 3600.0, 1e4));
    for (size_t p = 0; p < nodes.size() && p < row.nodes_per_pool.size(); ++p) nodes[p].push_back(row.nodes_per_pool[p]);
    ga.push_back(round_to(static_cast<double>(row.gpu_allocated_milli) / 1000.0, 1e3));
    gb.push_back(round_to(static_cast<double>(row.gpu_capacity_milli) / 1000.0, 1e3));
    int64_t most = 0;  // the rows this point stands for: i .. i + step - 1
    for (size_t k = i; k < rows && k < i + step; ++k) most = std::max(most, r.timeseries[k].pending_pods_peak);
    pend.push_back(most);
    cost.push_back(round_to(row.cost_usd_per_hour, 1e4));
  }
  c["time_h"] = std::move(t);
  c["nodes"] = nodes;
  c["gpus_allocated"] = std::move(ga);
  c["gpus_billed"] = std::move(gb);
  c["pending_pods"] = std::move(pend);
  c["cost_usd_per_hour"] = std::move(cost);
  return c;
}

// One inference service's chart series (thinned as above): request rate, ready replicas, TTFT p99
// against the SLO, queue depth, KV-cache usage, cost rate.
nlohmann::ordered_json service_series(const std::string& label, const sim::InferenceServiceResult& r) {
  const size_t rows = r.timeseries.size();
  const size_t step = rows > kMaxReportPoints ? (rows + kMaxReportPoints - 1) / kMaxReportPoints : 1;
  nlohmann::ordered_json c;
  c["label"] = label;
  c["slo_ttft_p99_s"] = r.slo_ttft_p99_s ? nlohmann::ordered_json(*r.slo_ttft_p99_s) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json t = nlohmann::ordered_json::array(), rate = t, ready = t, ttft = t, qe = t, qr = t, kv = t, cost = t;
  for (size_t i = 0; i < rows; i += step) {
    const sim::InferenceSample& x = r.timeseries[i];
    t.push_back(round_to(x.time_s / 3600.0, 1e4));
    const double span = x.time_s - (i == 0 ? 0.0 : r.timeseries[i - 1].time_s);
    rate.push_back(round_to(span > 0 ? static_cast<double>(x.arrivals) / span : 0.0, 1e3));
    ready.push_back(x.ready_replicas);
    ttft.push_back(x.ttft_p99_s ? nlohmann::ordered_json(round_to(*x.ttft_p99_s, 1e4)) : nlohmann::ordered_json(nullptr));
    qe.push_back(x.engine_waiting);
    qr.push_back(x.router_waiting);
    kv.push_back(round_to(x.kv_cache_usage, 1e4));
    cost.push_back(round_to(x.cost_usd_per_hour, 1e4));
  }
  c["time_h"] = std::move(t);
  c["request_rate"] = std::move(rate);
  c["ready_replicas"] = std::move(ready);
  c["ttft_p99_s"] = std::move(ttft);
  c["engine_waiting"] = std::move(qe);
  c["router_waiting"] = std::move(qr);
  c["kv_cache_usage"] = std::move(kv);
  c["cost_usd_per_hour"] = std::move(cost);
  if (r.disaggregation) {
    nlohmann::ordered_json pre = nlohmann::ordered_json::array(), dec = pre;
    for (size_t i = 0; i < rows; i += step) {
      pre.push_back(r.timeseries[i].prefill_ready_replicas);
      dec.push_back(r.timeseries[i].decode_ready_replicas);
    }
    c["prefill_ready_replicas"] = std::move(pre);
    c["decode_ready_replicas"] = std::move(dec);
  }
  return c;
}

// The row of the inference services table for service `r`, labelled `label`.
std::string service_row(const std::string& label, const sim::InferenceServiceResult& r) {
  return fmt::format(
      "<tr><td>{}</td><td class=\"text\">{}</td><td class=\"text\" style=\"white-space:normal\">{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.4f}</td>"
      "<td>{:.1f}%</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.4f}</td></tr>\n",
      html_escape(label), html_escape(r.model), html_escape(r.autoscaler.empty() ? "none" : r.autoscaler),
      r.requests, r.finished, r.ttft.p50_s, r.ttft.p99_s, r.tpot.p99_s, r.slo_attainment * 100, r.max_ready_replicas,
      r.cold_starts, r.gpu_hours, r.cost_usd, r.usd_per_million_tokens);
}

// The series of every configuration's inference services into data["inference"]; returns the rows of
// the inference services table.
std::string add_inference_series(const std::vector<CompareEntry>& entries, nlohmann::ordered_json& data) {
  std::string serving_rows;
  data["inference"] = nlohmann::ordered_json::array();
  for (const CompareEntry& e : entries)
    for (const sim::InferenceServiceResult& r : e.result.inference) {
      const std::string label = entries.size() == 1 ? r.service : e.label + " / " + r.service;
      nlohmann::ordered_json c = service_series(label, r);
      serving_rows += service_row(label, r);
      data["inference"].push_back(std::move(c));
    }
  return serving_rows;
}

// The page from <!DOCTYPE> to the header: the Content-Security-Policy, the style, the error script.
std::string page_start(const std::string& workload, size_t configs) {
  const bool single = configs == 1;
  std::string html;
  html += report_page_start(fmt::format("gpufleet {} report", single ? "simulate" : "compare"), "wide");
  html += fmt::format("<header>\n<h1>gpufleet {}: cost and waiting over time</h1>\n<p class=\"subtitle\">workload: {}</p>\n"
                      "<p class=\"cluster\">{} configuration{}</p>\n</header>\n",
                      single ? "simulate" : "compare", html_escape(workload), configs, single ? "" : "s");
  html += "<noscript><p>JavaScript is off: the charts need it; the table below does not.</p></noscript>\n";
  return html;
}

// One chart's section: its title, note and canvas (`id`, drawn by the render scripts).
std::string chart_section(const char* id, const char* title, const char* note) {
  return fmt::format("<section>\n<h2>{}</h2>\n<p class=\"note\">{}</p>\n<div class=\"chart\"><canvas id=\"{}\" role=\"img\" "
                     "aria-label=\"{}\"></canvas></div>\n</section>\n",
                     title, note, id, title);
}

// The four charts of every report (kRenderScript draws them).
std::string chart_sections() {
  const char* charts[][3] = {
      {"chart-nodes", "Nodes per pool", "Billed nodes (provisioning, ready or cordoned) per pool, per minute."},
      {"chart-gpus", "GPU allocation", "GPUs allocated to pods (solid) and GPUs on billed nodes (dashed)."},
      {"chart-pending", "Pending pods", "Pods waiting for capacity or for Kueue's admission: the most at any moment of each "
                                        "minute (its top is the peak of the pending table and the JSON's pending_peak)."},
      {"chart-cost", "Cost rate", "USD per hour: billed nodes at their price plus unused reservations."}};
  std::string html;
  for (const auto& s : charts) html += chart_section(s[0], s[1], s[2]);
  return html;
}

// The summary table's row of configuration i: costs, saving, allocation, waiting, disruptions, pods.
std::string summary_row(const std::vector<CompareEntry>& entries, size_t i) {
  const sim::SimResult& r = entries[i].result;
  auto by_type = [&](const char* t) {
    const auto it = r.cost_by_capacity_type.find(t);
    return it == r.cost_by_capacity_type.end() ? 0.0 : it->second;
  };
  return fmt::format(
      "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{:.2f}</td><td>{:.1f}%</td>"
      "<td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.1f}%</td><td>{}</td><td>{}</td><td>{}</td>"
      "<td>{:.2f}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
      kReportPalette[i % std::size(kReportPalette)], html_escape(entries[i].label), html_escape(r.policy), r.cost_usd,
      saving_pct(entries.front().result, r), by_type("on-demand"), by_type("spot"), by_type("reserved"), r.idle_cost_usd,
      r.gpu_allocation_pct_mean, opt(r.pending.p99), opt(r.pending_production.p99), r.spot_interruptions, r.lost_gpu_hours,
      r.evictions, r.nodes_consolidated, r.consolidation_restarts, r.pods_completed, r.pods_running, r.pods_pending, r.pods_failed);
}

// The summary table, one row per configuration.
std::string summary_section(const std::vector<CompareEntry>& entries) {
  std::string rows;
  for (size_t i = 0; i < entries.size(); ++i) rows += summary_row(entries, i);
  // Two header rows (groups over their columns), header words wrapping at spaces, keep the columns
  // narrow enough for the table to fit its card on a 1400 px wide window (main.wide); on a narrower
  // one it scrolls inside the card (.table-scroll). tests/cli/sim_report_chromium_test.sh checks both.
  std::string html;
  html += "<section>\n<h2>Summary</h2>\n<p class=\"note\">Saving against the first configuration. Production: priority "
          "&ge; " + std::to_string(entries.empty() ? 1000 : entries.front().result.production_priority) +
          ". Pending seconds are nearest-rank p99.</p>\n<div class=\"table-scroll\">\n<table class=\"grouped\">\n<thead>\n"
          "<tr><th rowspan=\"2\">configuration</th><th rowspan=\"2\">policy</th><th colspan=\"6\" class=\"group\">cost "
          "(USD)</th><th rowspan=\"2\">GPU allocation</th><th colspan=\"2\" class=\"group\">p99 pending (s)</th>"
          "<th rowspan=\"2\">spot notices</th><th rowspan=\"2\">lost <span class=\"word\">GPU-hours</span></th><th rowspan=\"2\">evictions</th><th colspan=\"2\" "
          "class=\"group\">consolidation</th><th colspan=\"4\" class=\"group\">pods</th></tr>\n"
          "<tr><th>total</th><th>saving</th><th><span class=\"word\">on-demand</span></th><th>spot</th><th>reserved</th><th>idle</th><th>all</th>"
          "<th>production</th><th>nodes</th><th>restarts</th>"
          "<th>completed</th><th>running</th><th>pending</th><th>failed</th></tr>\n</thead>\n<tbody>\n";
  html += rows;
  html += "</tbody>\n</table>\n</div>\n</section>\n";
  return html;
}

// Nodes added and removed, one row per configuration: the removals by cause add up to the total (the
// summary text's "nodes:" line and the JSON's nodes_removed).
std::string nodes_section(const std::vector<CompareEntry>& entries) {
  std::string rows;
  for (const CompareEntry& e : entries) {
    const sim::SimResult& r = e.result;
    const sim::NodeRemovals& n = r.nodes_removed;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escape(e.label), r.nodes_scaled_up, r.karpenter_nodes_launched, n.total(), n.scale_down, n.consolidation,
                        n.spot_reclaim, n.not_ready_in_time, n.other);
  }
  return "<section>\n<h2>Nodes added and removed</h2>\n<p class=\"note\">Nodes the Cluster Autoscaler scaled up and "
         "Karpenter launched (launches the cloud refused included), and every node removed, by cause: the Cluster "
         "Autoscaler's scale-down, consolidation, spot reclaims at the end of a notice, nodes given up as not Ready in "
         "time, other controllers.</p>\n<div class=\"table-scroll\">\n<table id=\"nodes\">\n<thead>\n<tr><th>configuration</th>"
         "<th>scaled up</th><th>Karpenter launches</th><th>removed</th><th>by scale-down</th><th>by consolidation</th>"
         "<th>by spot reclaim</th><th>not Ready in time</th><th>other</th></tr>\n</thead>\n<tbody>\n" +
         rows + "</tbody>\n</table>\n</div>\n</section>\n";
}

// The inference services' charts (kInferenceScript draws them) and table (`serving_rows`).
std::string serving_sections(const std::string& serving_rows) {
  const char* charts[][3] = {
      {"chart-serving-rate", "Requests and replicas", "Requests per second arriving (solid) and ready replicas (dashed, right axis)."},
      {"chart-serving-ttft", "Time to first token", "TTFT p99 over the requests whose first token came in each minute; the SLO dashed."},
      {"chart-serving-queue", "Queue depth", "Requests waiting in the engines (vllm:num_requests_waiting, solid) and held at the router (dashed)."},
      {"chart-serving-kv", "KV-cache usage", "Mean over ready replicas (vllm:kv_cache_usage_perc)."},
      {"chart-serving-cost", "Serving cost rate", "USD per hour charged to each service's pods."}};
  std::string html;
  for (const auto& s : charts) html += chart_section(s[0], s[1], s[2]);
  html += "<section>\n<h2>Inference services</h2>\n<p class=\"note\">Latencies in seconds, nearest-rank percentiles over "
          "finished requests.</p>\n<div class=\"table-scroll\">\n<table>\n<thead>\n<tr><th>service</th><th class=\"text\">model</th>"
          "<th class=\"text\">autoscaler</th><th>requests</th><th>finished</th><th>TTFT p50</th><th>TTFT p99</th><th>TPOT p99</th>"
          "<th>SLO met</th><th>max ready</th><th>cold starts</th><th><span class=\"word\">GPU-hours</span></th><th>cost (USD)</th>"
          "<th>USD / M tokens</th></tr>\n</thead>\n<tbody>\n";
  html += serving_rows;
  html += "</tbody>\n</table>\n</div>\n</section>\n";
  return html;
}

}  // namespace

std::string sim_report_html(const std::string& workload, const std::vector<CompareEntry>& entries) {
  nlohmann::ordered_json data;
  data["generator"] = entries.size() == 1 ? "gpufleet simulate" : "gpufleet compare";
  data["workload"] = workload;
  data["palette"] = kReportPalette;
  double horizon_h = 0;
  data["configs"] = nlohmann::ordered_json::array();
  for (const CompareEntry& e : entries) {
    horizon_h = std::max(horizon_h, e.result.horizon_s / 3600.0);
    data["configs"].push_back(config_series(e));
  }
  data["horizon_h"] = round_to(horizon_h, 1e4);
  bool serving = false;
  for (const CompareEntry& e : entries) serving = serving || !e.result.inference.empty();
  std::string serving_rows;
  if (serving) serving_rows = add_inference_series(entries, data);
  const std::string data_json = json_for_script(data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));

  std::string html;
  html.reserve(data_json.size() + 300000);
  html += page_start(workload, entries.size());
  html += chart_sections();
  html += summary_section(entries);
  html += nodes_section(entries);
  html += queue_sections(entries);
  html += pending_section(entries);
  if (!serving) {
    html += report_page_end("gpufleet", data_json, kRenderScript);
    return html;
  }
  html += serving_sections(serving_rows);
  html += report_page_end("gpufleet", data_json, std::string(kRenderScript) + std::string(kInferenceScript));
  return html;
}

}  // namespace gpufleet::io
