#include "report/pack_output.h"

#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpufleet::io {
namespace {

nlohmann::json curve_json(const std::vector<double>& curve, int decimals) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : curve) {
    if (std::isnan(v)) out.push_back(nullptr);
    else out.push_back(pack::round_half_even(v, decimals));
  }
  return out;
}

std::string cell(double v, int decimals) { return std::isnan(v) ? "" : fmt::format("{:.{}f}", v, decimals); }

struct Stats {
  double sum = 0, sum_sq = 0;
  int n = 0;
  void add(double v) {
    if (std::isnan(v)) return;
    sum += v;
    sum_sq += v * v;
    ++n;
  }
  double mean() const { return n ? sum / n : std::nan(""); }
  double sd() const { return n > 1 ? std::sqrt(std::max(0.0, (sum_sq - sum * sum / n) / (n - 1))) : 0.0; }
};

}  // namespace

std::string pack_runs_json(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs, bool with_timings) {
  nlohmann::ordered_json doc;
  doc["cluster"] = {{"nodes", cluster.nodes}, {"gpus", cluster.gpus}};
  doc["runs"] = nlohmann::ordered_json::array();
  for (const auto& r : runs) {
    nlohmann::ordered_json j;
    j["policy"] = r.policy;
    j["seed"] = r.seed;
    j["tune"] = r.tune;
    j["allocation_pct"] = curve_json(r.allocation_pct, 2);
    j["frag_pct"] = curve_json(r.frag_pct, 4);
    j["frag_gpu_pct"] = curve_json(r.frag_gpu_pct, 2);
    if (!r.bound_pct.empty()) {
      j["bound_pct"] = curve_json(r.bound_pct, 2);
      if (std::isnan(r.work_conserving_bound_pct_at_100)) j["work_conserving_bound_pct_at_100"] = nullptr;
      else j["work_conserving_bound_pct_at_100"] = pack::round_half_even(r.work_conserving_bound_pct_at_100, 2);
    }
    if (std::isnan(r.unallocated_gpus_at_100)) j["unallocated_gpus_at_100"] = nullptr;
    else j["unallocated_gpus_at_100"] = pack::round_half_even(r.unallocated_gpus_at_100, 2);
    j["pods"] = r.pods;
    j["failed_pods"] = r.failed_pods;
    if (with_timings) j["elapsed_s"] = pack::round_half_even(r.elapsed_s, 4);
    else j["elapsed_s"] = nullptr;
    doc["runs"].push_back(std::move(j));
  }
  return doc.dump(1) + "\n";
}

std::string pack_runs_csv(const std::vector<pack::PackRun>& runs) {
  std::string out = "policy,seed,tune,arrived_pct,allocation_pct,frag_pct,frag_gpu_pct\n";
  for (const auto& r : runs) {
    for (size_t x = 0; x < r.allocation_pct.size(); ++x) {
      out += fmt::format("{},{},{},{},{},{},{}\n", r.policy, r.seed, r.tune, x, cell(r.allocation_pct[x], 2),
                         cell(r.frag_pct[x], 4), cell(r.frag_gpu_pct[x], 2));
    }
  }
  return out;
}

std::vector<PolicySummary> summarize(const std::vector<pack::PackRun>& runs) {
  std::vector<PolicySummary> out;
  std::map<std::string, size_t> index;
  struct Acc {
    Stats a100, a130, b100, wc100, un100, failed, secs;
  };
  std::vector<Acc> acc;
  for (const auto& r : runs) {
    auto [it, inserted] = index.try_emplace(r.policy, out.size());
    if (inserted) {
      out.push_back(PolicySummary{r.policy});
      acc.emplace_back();
    }
    Acc& a = acc[it->second];
    a.a100.add(r.allocation_pct.size() > 100 ? r.allocation_pct[100] : std::nan(""));
    a.a130.add(r.allocation_pct.size() > 130 ? r.allocation_pct[130] : std::nan(""));
    a.b100.add(r.bound_pct.size() > 100 ? r.bound_pct[100] : std::nan(""));
    a.wc100.add(r.work_conserving_bound_pct_at_100);
    a.un100.add(r.unallocated_gpus_at_100);
    a.failed.add(static_cast<double>(r.failed_pods));
    a.secs.add(r.elapsed_s);
    ++out[it->second].runs;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].alloc100_mean = acc[i].a100.mean();
    out[i].alloc100_sd = acc[i].a100.sd();
    out[i].alloc130_mean = acc[i].a130.mean();
    out[i].bound100_mean = acc[i].b100.mean();
    out[i].wc_bound100_mean = acc[i].wc100.mean();
    out[i].unallocated100_mean = acc[i].un100.mean();
    out[i].failed_pods_mean = acc[i].failed.mean();
    out[i].seconds_per_run = acc[i].secs.mean();
  }
  return out;
}

std::string pack_summary_text(const ClusterInfo& cluster, const std::vector<pack::PackRun>& runs) {
  std::string out = fmt::format("cluster: {} nodes, {} GPUs\n", cluster.nodes, cluster.gpus);
  out += fmt::format("{:<15} {:>4} {:>16} {:>10} {:>9} {:>7} {:>12} {:>16} {:>12} {:>8}\n", "policy", "runs",
                     "alloc@100% (sd)", "alloc@130%", "bound@100", "gap", "wc-bound@100", "unalloc GPUs@100",
                     "failed pods", "s/run");
  auto num = [](double v, int decimals) { return std::isnan(v) ? std::string("-") : fmt::format("{:.{}f}", v, decimals); };
  for (const auto& s : summarize(runs)) {
    const bool has_bound = !std::isnan(s.bound100_mean);
    out += fmt::format("{:<15} {:>4} {:>9} ({}) {:>10} {:>9} {:>7} {:>12} {:>16} {:>12} {:>8.3f}\n", s.policy, s.runs,
                       num(s.alloc100_mean, 2), num(s.alloc100_sd, 2), num(s.alloc130_mean, 2),
                       has_bound ? num(s.bound100_mean, 2) : "-",
                       has_bound ? num(s.bound100_mean - s.alloc100_mean, 2) : "-", num(s.wc_bound100_mean, 2),
                       num(s.unallocated100_mean, 1), num(s.failed_pods_mean, 1), s.seconds_per_run);
  }
  return out;
}

}  // namespace gpufleet::io
