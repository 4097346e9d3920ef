#include "cli/pack_command.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "readers/traces/fgd_reference.h"
#include "report/pack_report.h"
#include "readers/traces/openb_csv.h"
#include "report/pack_output.h"
#include "pack/pack_experiment.h"
#include "pack/reference_check.h"
#include "sched/policy_registry.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/parallel.h"
#include "util/progress.h"
#include "synthetic/openb.h"

#ifndef GPUFLEET_SOURCE_DIR
#define GPUFLEET_SOURCE_DIR "."
#endif

namespace gpufleet::cli {
namespace fs = std::filesystem;

namespace {

constexpr const char* kOpenbDir = "alibaba-gpu-v2023";

}  // namespace

std::vector<int64_t> parse_seed_list(std::string_view text) {
  std::vector<int64_t> seeds;
  if (text.empty()) throw UsageError("--seeds: empty list");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(start, comma - start);
    const size_t dash = item.find('-', 1);
    if (dash != std::string_view::npos) {
      const int64_t lo = parse_seed(item.substr(0, dash), "--seeds");
      const int64_t hi = parse_seed(item.substr(dash + 1), "--seeds");
      if (hi < lo) throw UsageError(fmt::format("--seeds: empty range '{}'", item));
      if (hi - lo >= 100000) throw UsageError(fmt::format("--seeds: range '{}' is too long", item));
      for (int64_t s = lo; s <= hi; ++s) seeds.push_back(s);
    } else {
      seeds.push_back(parse_seed(item, "--seeds"));
    }
    start = comma + 1;
  }
  return seeds;
}

std::string find_traces_dir() {
  std::vector<fs::path> candidates;
  auto has_openb = [](const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / kOpenbDir / "csv" / "openb_pod_list_default.csv", ec);
  };
  if (const char* env = std::getenv("GPUFLEET_TRACES"); env && *env) {
    if (!has_openb(env))
      throw UsageError(fmt::format("GPUFLEET_TRACES={}: no {}/csv/openb_pod_list_default.csv there", env, kOpenbDir));
    candidates.emplace_back(env);
  }
  candidates.emplace_back("../shared/traces");
  candidates.emplace_back(fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "traces");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (has_openb(c)) return fs::weakly_canonical(c, ec).string();
  }
  return {};
}

int run_pack_command(const PackCommandOptions& o) {
  // 1. Validate every argument and read every input before any work or output.
  const std::vector<std::string> policies = sched::parse_policy_list(o.policies);
  const std::vector<int64_t> seeds = parse_seed_list(o.seeds);
  if (!(o.tune > 0) || o.tune > 100) throw UsageError(fmt::format("--tune: {} is not in (0, 100]", o.tune));
  if (o.jobs < 0) throw UsageError("--jobs: must be >= 0");

  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::string workload_name;
  std::string source_label;
  const std::string traces = (o.nodes_path.empty() || o.pods_path.empty()) ? find_traces_dir() : std::string();
  const fs::path openb = traces.empty() ? fs::path() : fs::path(traces) / kOpenbDir / "csv";
  std::string nodes_path = o.nodes_path, pods_path = o.pods_path;
  if (nodes_path.empty() && !traces.empty()) nodes_path = (openb / "openb_node_list_gpu_node.csv").string();
  if (pods_path.empty() && !traces.empty()) pods_path = (openb / "openb_pod_list_default.csv").string();
  check_output_paths({{"--json", o.json_path}, {"--csv", o.csv_path}, {"--report", o.report_path}},
                     {{"--nodes", nodes_path}, {"--pods", pods_path}, {"--reference", o.reference_path}});
  if (!nodes_path.empty()) nodes = io::read_openb_nodes(nodes_path);
  else nodes = synthetic::synthetic_openb_nodes(1);
  if (!pods_path.empty()) {
    pods = io::read_openb_pods(pods_path);
    workload_name = fs::path(pods_path).stem().string();
  } else {
    pods = synthetic::synthetic_openb_pods(8152, 1);
    workload_name = "synthetic";
  }
  source_label = fmt::format("nodes: {}\npods:  {}\n",
                             nodes_path.empty() ? "SYNTHETIC openb-shaped cluster (real trace not found)" : nodes_path,
                             pods_path.empty() ? "SYNTHETIC openb-shaped workload, 8152 pods (real trace not found)" : pods_path);
  std::vector<pack::ReferenceRun> reference;
  if (!o.reference_path.empty()) reference = io::read_fgd_reference(o.reference_path);

  int64_t gpus = 0;
  for (const Node& n : nodes) gpus += n.gpu_count;
  if (gpus == 0) throw InputError(nodes_path.empty() ? "synthetic" : nodes_path, 0, "gpu", "the cluster has no GPUs");
  const io::ClusterInfo cluster{nodes.size(), gpus};

  // 2. Run policies x seeds, in parallel, results in a fixed order (pack::run_pack_grid).
  const size_t tasks = pack::pack_grid_tasks(policies.size(), seeds.size(), o.bound);
  const int jobs = parallel_threads(o.jobs, tasks);
  // Which files are read, before the run: on stderr, unless stdout is the same terminal, where the
  // summary's first lines say it at the end (it would be printed twice).
  if (!o.quiet && !(isatty(fileno(stdout)) && isatty(fileno(stderr)))) std::fprintf(stderr, "%s", source_label.c_str());
  std::vector<pack::PackRun> runs;
  {
    const std::string what = o.bound ? fmt::format("pack {} runs and {} seeds' bounds", policies.size() * seeds.size(), seeds.size())
                                     : fmt::format("pack {} runs", policies.size() * seeds.size());
    Progress progress(fmt::format("{} on {} jobs", what, jobs), static_cast<int64_t>(tasks), !o.quiet);
    runs = pack::run_pack_grid(nodes, pods, policies, seeds, o.tune, o.bound, jobs, &progress);
  }

  // 3. Outputs: files first (atomically), then the summary.
  const std::string run_label = fmt::format("workload: {}, tune {}, seeds {}\n", workload_name, o.tune, o.seeds);
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!o.json_path.empty()) outputs.emplace_back(o.json_path, io::pack_runs_json(cluster, runs, o.timings));
  if (!o.csv_path.empty()) outputs.emplace_back(o.csv_path, io::pack_runs_csv(runs));
  if (!o.report_path.empty()) outputs.emplace_back(o.report_path, io::pack_report_html(cluster, runs, source_label + run_label));
  try {
    write_files_atomically(outputs);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());  // e.g. the disk filled up meanwhile; nothing was half-written
  }
  std::string summary = source_label + run_label;
  summary += io::pack_summary_text(cluster, runs);
  if (!reference.empty()) {
    const auto cmp = pack::compare_with_reference(runs, reference, workload_name, o.tune);
    summary += fmt::format("\nagainst the FGD reference ({}), mean over matching seeds:\n", o.reference_path);
    summary += fmt::format("{:<12} {:>5} {:>10} {:>10} {:>8} {:>18}\n", "policy", "seeds", "ours@100", "ref@100", "diff", "max|diff| (at %)");
    for (const auto& c : cmp)
      summary += fmt::format("{:<12} {:>5} {:>10.2f} {:>10.2f} {:>+8.2f} {:>11.2f} ({:>3})\n", c.policy, c.seeds, c.ours_at_100,
                             c.reference_at_100, c.ours_at_100 - c.reference_at_100, c.max_abs_diff, c.max_diff_at);
    if (cmp.empty()) summary += fmt::format("(no reference rows for workload {} at tune {})\n", workload_name, o.tune);
  }
  if (!o.json_path.empty()) summary += fmt::format("json: {}\n", o.json_path);
  if (!o.csv_path.empty()) summary += fmt::format("csv:  {}\n", o.csv_path);
  if (!o.report_path.empty()) summary += fmt::format("report: {}\n", o.report_path);
  std::fputs(summary.c_str(), stdout);
  return 0;
}

}  // namespace gpufleet::cli
