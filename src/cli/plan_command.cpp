#include "cli/plan_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "plan/cost_bound.h"
#include "plan/search.h"
#include "readers/plan/plan_file.h"
#include "readers/plan/plan_shard.h"
#include "report/plan_output.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/progress.h"

namespace gpufleet::cli {

namespace {

// FNV-1a, 64 bits: the fingerprint of a plan's inputs, so that shards of different plans never merge.
uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// The bytes of an input file, "" when none is given (it was read once already, so it exists).
std::string file_bytes(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Covers what the race results depend on: the workload files' contents (not only their names), the
// seed and race options, and every candidate with its prices and node shape (an edited price in the
// catalog changes every cost of the race, not the labels).
std::string fingerprint(const std::string& workload, const PlanCommandOptions& o, const std::vector<plan::PlanCandidate>& candidates) {
  uint64_t h = 14695981039346656037ULL;
  h = fnv1a(h, workload);
  for (const std::string& path : {o.workload.workload_path, o.workload.openb_pods_path, o.workload.serving_catalog_path}) {
    const std::string bytes = file_bytes(path);
    h = fnv1a(h, fmt::format("|file {} bytes|", bytes.size()));
    h = fnv1a(h, bytes);
  }
  h = fnv1a(h, fmt::format("|seed {}|prio {}|race {}|", o.seed, o.production_priority, o.race_fraction));
  for (const plan::PlanCandidate& c : candidates) {
    h = fnv1a(h, fmt::format("{}|{}|", c.label(), c.max_nodes()));
    for (const plan::PoolChoice& pool : c.pools) {
      const plan::CostBoundOption& p = pool.option;
      h = fnv1a(h, fmt::format("{}|{}|{}|{}|{}|{:.17g}|{:.17g}|{:.17g}|{:.17g}|", pool.max_nodes, p.gpu_model, p.gpus, p.cpu_milli,
                               p.memory_bytes, p.on_demand_usd_per_hour, p.spot_usd_per_hour.value_or(-1),
                               p.committed_usd_per_hour.value_or(-1), p.spot_interruptions_per_hour));
    }
  }
  return fmt::format("{:016x}", h);
}

size_t shard_index(const PlanCommandOptions& o) {
  int64_t index = o.shard_index;
  if (index < 0) {
    const char* env = std::getenv("JOB_COMPLETION_INDEX");
    if (env == nullptr || *env == '\0')
      throw UsageError("--shards: give --shard-index or set JOB_COMPLETION_INDEX (a Kubernetes Indexed Job sets it)");
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end == env || *end != '\0' || v < 0)
      throw UsageError(fmt::format("JOB_COMPLETION_INDEX '{}' is not an index (an integer >= 0)", env));
    index = v;
  }
  if (index >= o.shards) throw UsageError(fmt::format("shard index {} is not below --shards {}", index, o.shards));
  return static_cast<size_t>(index);
}

}  // namespace

int run_plan_command(const PlanCommandOptions& o) {
  if (o.catalog_path.empty()) throw UsageError("--catalog is required");
  const bool sharding = o.shards > 0;
  if (sharding && o.shard_out.empty()) throw UsageError("--shards: give --shard-out FILE for the shard's results");
  if (!sharding && (!o.shard_out.empty() || o.shard_index >= 0)) throw UsageError("--shard-out and --shard-index need --shards");
  if (sharding && !o.merge_paths.empty()) throw UsageError("--merge finishes a sharded plan: run it without --shards");
  if (!(o.race_fraction > 0 && o.race_fraction <= 1)) throw UsageError(fmt::format("--race-fraction {} is outside (0, 1]", o.race_fraction));
  if (o.finalists < 1) throw UsageError("--finalists must be at least 1");
  if (o.refine_rounds < 0) throw UsageError("--refine-rounds must be at least 0");
  check_workload_source(o.workload);
  std::vector<InputArg> inputs = {{"--catalog", o.catalog_path},
                                  {"--constraints", o.constraints_path},
                                  {"--workload", o.workload.workload_path},
                                  {"--openb-pods", o.workload.openb_pods_path},
                                  {"--serving-catalog", o.workload.serving_catalog_path}};
  for (const std::string& m : o.merge_paths) inputs.push_back({"--merge", m});
  check_output_paths({{"--pools-out", o.pools_out},
                      {"--karpenter-out", o.karpenter_out},
                      {"--kueue-out", o.kueue_out},
                      {"--json", o.json_path},
                      {"--csv", o.csv_path},
                      {"--report", o.report_path},
                      {"--shard-out", o.shard_out}},
                     inputs);

  io::PlanFile file = io::read_plan_file(o.catalog_path);
  if (!file.has_catalog) throw InputError(o.catalog_path, 0, "", "no PriceCatalog document (apiVersion plan.gpufleet.io/v1)");
  for (const std::string& w : file.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  plan::PlanConstraints constraints = file.constraints;
  if (!o.constraints_path.empty()) {
    io::PlanFile c = io::read_plan_file(o.constraints_path);
    for (const std::string& w : c.warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
    if (!c.has_constraints) throw InputError(o.constraints_path, 0, "", "no PlanConstraints document (apiVersion plan.gpufleet.io/v1)");
    constraints = c.constraints;
  }

  const inference::ServingCatalog serving = load_serving_catalog(o.workload);
  const sim::ClusterConfig no_pools;  // the workload names no pools of its own: the plan makes them
  const sim::Workload workload = load_workload(o.workload, no_pools, o.seed, serving);
  const std::string description = describe_workload_source(o.workload);

  plan::PlanSearchOptions search;
  search.seed = o.seed;
  search.production_priority = o.production_priority;
  search.race_fraction = o.race_fraction;
  search.finalists = static_cast<size_t>(o.finalists);
  search.threads = o.threads;
  search.refine_rounds = o.refine_rounds;
  search.serving_catalog = &serving;

  const std::vector<plan::CostBoundOption> options = plan::admissible_options(file.catalog, constraints);
  if (options.empty())
    throw InputError(o.constraints_path.empty() ? o.catalog_path : o.constraints_path, 0, "",
                     "no instance type of the catalog is allowed (allowedGpuModels, zones)");
  plan::PlanBounds bounds;
  try {
    bounds = plan::plan_bounds(workload, options, constraints, search);
  } catch (const std::invalid_argument& e) {
    throw InputError(o.catalog_path, 0, "", e.what());
  }
  const std::vector<plan::PlanCandidate> candidates = plan::plan_candidates(bounds, options, constraints, workload);
  if (candidates.empty())
    throw InputError(o.catalog_path, 0, "instanceTypes",
                     "no allowed instance type holds every pod of the workload (GPUs, CPU, memory or gpu_spec of the largest pod)");
  // The largest candidate's run must fit the work budget.
  {
    const plan::PlanCandidate* largest = &candidates.front();
    for (const auto& c : candidates)
      if (c.max_nodes() > largest->max_nodes()) largest = &c;
    sim::SimOptions so;
    so.policy = largest->policy;
    sim::check_work_budget(plan::candidate_cluster(*largest), workload, so, o.budget);
  }
  const std::string print = fingerprint(description, o, candidates);

  std::mutex lock;
  std::vector<plan::CandidateResult> race;
  if (!o.merge_paths.empty()) {
    std::vector<bool> seen_shard;
    size_t shards = 0;
    for (const std::string& path : o.merge_paths) {
      io::PlanShard s = io::read_plan_shard(path);
      if (s.fingerprint != print)
        throw InputError(path, 0, "fingerprint",
                         fmt::format("{} is another plan's shard (this plan's inputs give {}): same workload, catalog, "
                                     "constraints, seed and --race-fraction?",
                                     s.fingerprint, print));
      if (s.candidates != candidates.size())
        throw InputError(path, 0, "candidates", fmt::format("{}, this plan has {}", s.candidates, candidates.size()));
      if (shards == 0) {
        shards = s.shards;
        seen_shard.assign(shards, false);
      } else if (s.shards != shards) {
        throw InputError(path, 0, "shards", fmt::format("{}, the first shard file says {}", s.shards, shards));
      }
      if (seen_shard[s.shard]) throw InputError(path, 0, "shard", fmt::format("shard {} is given twice", s.shard));
      seen_shard[s.shard] = true;
      for (auto& r : s.results) race.push_back(std::move(r));
    }
    for (size_t i = 0; i < shards; ++i)
      if (!seen_shard[i]) throw UsageError(fmt::format("--merge: shard {} of {} is missing", i, shards));
  } else {
    const size_t shards = sharding ? static_cast<size_t>(o.shards) : 1;
    const size_t shard = sharding ? shard_index(o) : 0;
    const size_t mine = shard < candidates.size() ? (candidates.size() - shard + shards - 1) / shards : 0;
    Progress progress(sharding ? fmt::format("plan shard {}/{}", shard, shards) : std::string("plan: race"), static_cast<int64_t>(mine),
                      !o.quiet);
    search.on_simulation_done = [&] {
      std::lock_guard<std::mutex> g(lock);
      progress.advance();
    };
    race = plan::race_shard(candidates, workload, search, shard, shards);
    progress.finish();
    if (sharding) {
      write_files_atomically({{o.shard_out, io::plan_shard_json(print, shard, shards, candidates.size(), race)}});
      std::fputs(fmt::format("shard {} of {}: {} of {} candidates raced; results: {}\n", shard, shards, race.size(), candidates.size(),
                             o.shard_out)
                     .c_str(),
                 stdout);
      return 0;
    }
  }

  // The finalists, the baseline, the waterfall's steps (at most 3) and at most 10 neighbours a round.
  Progress progress("plan: finalists", static_cast<int64_t>(std::min<size_t>(search.finalists, candidates.size()) + 4 + 10 * o.refine_rounds),
                    !o.quiet);
  search.on_simulation_done = [&] {
    std::lock_guard<std::mutex> g(lock);
    progress.advance();
  };
  plan::PlanOutcome outcome;
  try {
    outcome = plan::finish_plan(bounds, candidates, std::move(race), workload, options, constraints, search);
  } catch (const std::invalid_argument& e) {
    throw InputError(o.catalog_path, 0, "", e.what());
  }
  progress.finish();

  std::vector<std::pair<std::string, std::string>> outputs;
  if (outcome.recommended) {
    const plan::CandidateResult& r = outcome.finalists[*outcome.recommended];
    const sim::ClusterConfig cluster = plan::candidate_cluster(outcome.candidates[r.index]);
    const std::string comment = fmt::format(
        "gpufleet plan: {}\nworkload: {}, seed {}\npredicted: {:.2f} USD over {:g} s; simulate with --policy {} and the same workload and "
        "seed to reproduce it.",
        r.label, description, o.seed, r.cost_usd, r.horizon_s, outcome.candidates[r.index].policy);
    if (!o.pools_out.empty()) outputs.emplace_back(o.pools_out, io::sim_pools_yaml(cluster, comment));
    if (!o.karpenter_out.empty()) outputs.emplace_back(o.karpenter_out, io::karpenter_node_pools_yaml(cluster, "default"));
    if (!o.kueue_out.empty()) outputs.emplace_back(o.kueue_out, io::kueue_objects_yaml(cluster, "plan"));
  }
  if (!o.json_path.empty()) outputs.emplace_back(o.json_path, io::plan_json(outcome, description));
  if (!o.csv_path.empty()) outputs.emplace_back(o.csv_path, io::plan_csv(outcome));
  if (!o.report_path.empty()) outputs.emplace_back(o.report_path, io::plan_report_html(outcome, description));
  if (!outputs.empty()) write_files_atomically(outputs);
  std::string text = io::plan_summary_text(outcome, description);
  for (const auto& [path, body] : outputs) text += fmt::format("wrote {}\n", path);
  std::fputs(text.c_str(), stdout);
  if (!outcome.recommended) {
    // Exit 2 naming the constraint that binds, where it was read.
    const sim::FieldOrigin* at = nullptr;
    if (outcome.binding_constraint == "productionP99PendingSeconds") at = &constraints.production_p99_pending_origin;
    if (outcome.binding_constraint == "maxSpotShare") at = &constraints.max_spot_share_origin;
    if (outcome.binding_constraint == "budgetUsd") at = &constraints.budget_origin;
    if (outcome.binding_constraint == "minGpuAllocation") at = &constraints.min_gpu_allocation_origin;
    if (at != nullptr && at->known()) throw InputError(at->file, at->line, at->field, outcome.infeasible_reason, at->column);
    throw InputError(o.constraints_path.empty() ? o.catalog_path : o.constraints_path, 0, "", outcome.infeasible_reason);
  }
  return 0;
}

}  // namespace gpufleet::cli
