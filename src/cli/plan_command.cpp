#include "cli/plan_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "cli/command_checks.h"
#include "plan/cost_bound.h"
#include "plan/current_diff.h"
#include "plan/search.h"
#include "plan/serving_plan.h"
#include "readers/plan/current_cluster.h"
#include "readers/plan/plan_file.h"
#include "readers/plan/plan_shard.h"
#include "report/current_diff_output.h"
#include "report/plan_output.h"
#include "report/workload_yaml.h"
#include "sim/simulator.h"
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
  for (const std::string& path : {o.workload.workload_path, o.workload.openb_pods_path, o.workload.serving_catalog_path,
                                  o.workload.snapshot_path, o.workload.history_path}) {
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

// --mig-parted-out and --device-plugin-out: the GPU Operator's configs of the plan's shared pools
// (written even when the plan has none, saying so).
void add_sharing_outputs(const PlanCommandOptions& o, const sim::ClusterConfig& cluster, const std::string& comment,
                         std::vector<std::pair<std::string, std::string>>& outputs) {
  if (!o.mig_parted_out.empty()) outputs.emplace_back(o.mig_parted_out, io::mig_parted_config_yaml(cluster, comment));
  if (!o.device_plugin_out.empty()) outputs.emplace_back(o.device_plugin_out, io::device_plugin_config_yaml(cluster, comment));
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
  if (!o.diff_out.empty() && o.current_path.empty()) throw UsageError("--diff-out needs --current FILE (the cluster running today)");
  check_workload_source(o.workload);
  std::vector<InputArg> inputs = {{"--catalog", o.catalog_path},
                                  {"--constraints", o.constraints_path},
                                  {"--workload", o.workload.workload_path},
                                  {"--openb-pods", o.workload.openb_pods_path},
                                  {"--snapshot", o.workload.snapshot_path},
                                  {"--history", o.workload.history_path},
                                  {"--serving-catalog", o.workload.serving_catalog_path},
                                  {"--current", o.current_path}};
  for (const std::string& m : o.merge_paths) inputs.push_back({"--merge", m});
  check_output_paths({{"--pools-out", o.pools_out},
                      {"--karpenter-out", o.karpenter_out},
                      {"--kueue-out", o.kueue_out},
                      {"--mig-parted-out", o.mig_parted_out},
                      {"--device-plugin-out", o.device_plugin_out},
                      {"--workload-out", o.workload_out},
                      {"--keda-out", o.keda_out},
                      {"--json", o.json_path},
                      {"--csv", o.csv_path},
                      {"--report", o.report_path},
                      {"--diff-out", o.diff_out},
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
    // What the one-file form checks at the entry (readers/plan/plan_file.h), checked here for a
    // separate file: every allowed model and zone must be the catalog's.
    for (const std::string& model : constraints.allowed_gpu_models) {
      bool found = false;
      for (const plan::InstanceType& t : file.catalog.instance_types) found = found || t.gpu_model == model;
      if (!found)
        throw InputError(o.constraints_path, 0, "allowedGpuModels",
                         fmt::format("model '{}' is the GPU of no instance type of the catalog {}", model, o.catalog_path));
    }
    for (const std::string& zone : constraints.allowed_zones) {
      bool found = false;
      for (const plan::InstanceType& t : file.catalog.instance_types)
        for (const plan::Offering& offering : t.offerings) found = found || offering.zone == zone;
      if (!found)
        throw InputError(o.constraints_path, 0, "zones", fmt::format("zone '{}' is in no offering of the catalog {}", zone, o.catalog_path));
    }
  }

  // The cluster running today: read (and refused when bad) before any run, in every mode, a shard's
  // too; it does not change the plan (so not the shards' fingerprint): the diff is made at the end.
  std::optional<plan::CurrentGroups> current;
  if (!o.current_path.empty()) {
    std::vector<std::string> warnings;
    current = plan::group_current(io::read_current_cluster(o.current_path, warnings));
    warnings.insert(warnings.end(), current->warnings.begin(), current->warnings.end());
    for (const std::string& w : warnings) std::fprintf(stderr, "gpufleet: warning: %s\n", w.c_str());
  }

  const inference::ServingCatalog serving = load_serving_catalog(o.workload);
  // The plan makes the pools, so the workload is read accepting any pool name. An inference service's
  // pools are then replaced by its plan (plan/serving_plan.h); a job or plain service that names pools
  // is refused, since none of the plan's pools would have that name.
  const sim::ClusterConfig no_pools;
  sim::Workload workload = load_workload(o.workload, no_pools, o.seed, serving, /*any_pool_name=*/true);
  const std::string description = describe_workload_source(o.workload);
  std::set<std::string> inference_services;
  for (const sim::InferenceServiceSpec& spec : workload.inference) {
    inference_services.insert(spec.service);
    if (spec.disaggregation) {
      const std::string what = fmt::format("inference service '{}' is disaggregated: plan sizes aggregated services only", spec.service);
      throw InputError(spec.origin.file, spec.origin.line, spec.origin.field, what, spec.origin.column);
    }
    if (!spec.slo.ttft_p99_s && !spec.slo.tpot_p99_s) {
      const std::string what = fmt::format("inference service '{}' has no slo: plan chooses its configuration against its "
                                           "ttftP99Seconds and tpotP99Seconds",
                                           spec.service);
      if (spec.origin.known()) throw InputError(spec.origin.file, spec.origin.line, spec.origin.field, what, spec.origin.column);
      throw InputError(o.workload.workload_path, 0, "", what);
    }
  }
  for (sim::WorkloadSpec& item : workload.items) {
    if (item.kind == sim::WorkloadKind::kService && inference_services.count(item.name) > 0) {
      item.pools.clear();
      continue;
    }
    if (!item.pools.empty()) {
      std::string names;
      for (const std::string& p : item.pools) names += (names.empty() ? "" : ", ") + p;
      throw InputError(workload_source_file(o.workload), 0, "pools",
                       fmt::format("'{}' names pools ({}): plan makes the pools of jobs and plain services, so leave its pools "
                                   "out (only an inference service's pools are replaced by the plan)",
                                   item.name, names));
    }
  }
  if (workload.items.empty())
    throw InputError(workload_source_file(o.workload), 0, "",
                     "the workload has no jobs or services: there is nothing to plan for");
  const bool has_inference = !workload.inference.empty();
  // The job plan covers the jobs and plain services; the inference services are planned apart.
  sim::Workload jobs = workload;
  if (has_inference) {
    jobs.inference.clear();
    jobs.items.clear();
    for (const sim::WorkloadSpec& item : workload.items)
      if (!(item.kind == sim::WorkloadKind::kService && inference_services.count(item.name) > 0)) jobs.items.push_back(item);
  }
  const bool has_jobs = !jobs.items.empty();
  if (has_inference && !o.workload_out.empty() && o.keda_out.empty())
    throw UsageError("--workload-out with inference services needs --keda-out FILE: an autoscaled service's workload reads its "
                     "ScaledObject from it");
  if (!has_jobs && (sharding || !o.merge_paths.empty()))
    throw UsageError("the workload has only inference services, which plan searches in one process: run it without --shards and --merge");
  if (!has_jobs && (!o.csv_path.empty() || !o.report_path.empty()))
    throw UsageError("--csv and --report show the plan of jobs and services; this workload has only inference services: use --json");

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
    if (has_jobs) bounds = plan::plan_bounds(jobs, options, constraints, search);
  } catch (const std::invalid_argument& e) {
    throw InputError(o.catalog_path, 0, "", e.what());
  }
  if (has_jobs && bounds.items_no_option_holds.size() == jobs.items.size())
    throw InputError(o.catalog_path, 0, "",
                     fmt::format("no allowed instance type holds any pod of the workload (GPUs, CPU, memory or gpu_spec; first: {}): "
                                 "there is nothing to plan",
                                 bounds.items_no_option_holds.front()));
  if (!bounds.items_no_option_holds.empty())
    std::fprintf(stderr, "gpufleet: warning: %zu workload items fit no allowed instance type (GPUs, CPU, memory or gpu_spec) and fail in "
                 "every plan, the baseline's too (first: %s)\n",
                 bounds.items_no_option_holds.size(), bounds.items_no_option_holds.front().c_str());
  const std::vector<plan::PlanCandidate> candidates =
      has_jobs ? plan::plan_candidates(bounds, options, constraints, jobs) : std::vector<plan::PlanCandidate>{};
  if (has_jobs && candidates.empty())
    throw InputError(o.catalog_path, 0, "instanceTypes",
                     "no allowed instance type holds every pod of the workload (GPUs, CPU, memory or gpu_spec of the largest pod)");
  // The largest candidate's run must fit the work budget.
  if (has_jobs) {
    const plan::PlanCandidate* largest = &candidates.front();
    for (const auto& c : candidates)
      if (c.max_nodes() > largest->max_nodes()) largest = &c;
    sim::SimOptions so;
    so.policy = largest->policy;
    sim::check_work_budget(plan::candidate_cluster(*largest), jobs, so, o.budget);
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
  } else if (has_jobs) {
    const size_t shards = sharding ? static_cast<size_t>(o.shards) : 1;
    const size_t shard = sharding ? shard_index(o) : 0;
    const size_t mine = shard < candidates.size() ? (candidates.size() - shard + shards - 1) / shards : 0;
    Progress progress(sharding ? fmt::format("plan shard {}/{}", shard, shards) : std::string("plan: race"), static_cast<int64_t>(mine),
                      !o.quiet);
    search.on_simulation_done = [&] {
      std::lock_guard<std::mutex> g(lock);
      progress.advance();
    };
    race = plan::race_shard(candidates, jobs, search, shard, shards);
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

  plan::PlanOutcome outcome;
  if (has_jobs) {
    // The finalists, the baseline, the waterfall's steps (at most 4) and at most 10 neighbours a round.
    Progress progress("plan: finalists",
                      static_cast<int64_t>(std::min<size_t>(search.finalists, candidates.size()) + 5 + 10 * o.refine_rounds), !o.quiet);
    search.on_simulation_done = [&] {
      std::lock_guard<std::mutex> g(lock);
      progress.advance();
    };
    try {
      outcome = plan::finish_plan(bounds, candidates, std::move(race), jobs, options, constraints, search);
    } catch (const std::invalid_argument& e) {
      throw InputError(o.catalog_path, 0, "", e.what());
    }
    progress.finish();
  }

  // The inference services, each on its own pool (plan/serving_plan.h), after the job plan.
  std::vector<plan::ServingPlanResult> services;
  for (size_t i = 0; i < workload.inference.size(); ++i) {
    Progress progress(fmt::format("plan: service {}", workload.inference[i].service), 0, !o.quiet);
    search.on_simulation_done = [&] {
      std::lock_guard<std::mutex> g(lock);
      progress.advance();
    };
    try {
      services.push_back(plan::plan_service(workload, i, options, constraints, search));
    } catch (const std::invalid_argument& e) {
      throw InputError(o.workload.workload_path, 0, "", e.what());
    }
    progress.finish();
  }
  search.on_simulation_done = nullptr;

  // The planned cluster and workload: the job plan's pools, then each service's pool.
  const bool job_plan_ok = !has_jobs || outcome.recommended.has_value();
  bool services_ok = true;
  sim::ClusterConfig cluster;
  if (has_jobs && outcome.recommended) cluster = plan::candidate_cluster(outcome.candidates[outcome.finalists[*outcome.recommended].index]);
  sim::Workload planned = workload;
  std::vector<std::string> service_labels;
  for (size_t i = 0; i < services.size(); ++i) {
    if (!services[i].chosen) {
      services_ok = false;
      continue;
    }
    const plan::ServicePlan& p = services[i].tried[*services[i].chosen];
    plan::apply_service_plan(planned, i, p);
    service_labels.push_back(fmt::format("{}: {}", services[i].service, p.label()));
    const sim::ClusterConfig sc = plan::service_cluster(services[i].service, p.option, plan::service_max_nodes(p), p.scale_down_s);
    if (cluster.pools.empty()) cluster = sc;
    else cluster.pools.push_back(sc.pools.front());
  }
  std::optional<double> total_usd;
  if (has_inference && job_plan_ok && services_ok) {
    // Jobs and services together, as `simulate --pools <pools-out> --workload <workload-out>` runs them.
    sim::SimOptions so;
    so.policy = has_jobs ? outcome.candidates[outcome.finalists[*outcome.recommended].index].policy : "gpufleet";
    so.seed = o.seed;
    so.production_priority = o.production_priority;
    so.serving_catalog = &serving;
    total_usd = sim::simulate(cluster, planned, so).cost_usd;
  }

  // The diff against the current cluster, from the plan's cluster (jobs' pools and services' pools).
  std::optional<plan::CurrentDiff> diff;
  std::string plan_label;
  if (current && job_plan_ok && services_ok && (!has_inference || total_usd)) {
    double cost = 0, horizon = workload.horizon_s;
    if (has_jobs) {
      const plan::CandidateResult& r = outcome.finalists[*outcome.recommended];
      plan_label = r.label;
      cost = r.cost_usd;
      horizon = r.horizon_s;
    }
    for (const std::string& l : service_labels) plan_label += (plan_label.empty() ? "" : "; ") + l;
    if (has_inference) cost = *total_usd;
    diff = plan::current_diff(*current, cluster, cost, horizon);
  }

  std::vector<std::pair<std::string, std::string>> outputs;
  if (!has_inference && outcome.recommended) {
    const plan::CandidateResult& r = outcome.finalists[*outcome.recommended];
    const std::string comment = fmt::format(
        "gpufleet plan: {}\nworkload: {}, seed {}\npredicted: {:.2f} USD over {:g} s; simulate with --policy {} and the same workload and "
        "seed to reproduce it.",
        r.label, description, o.seed, r.cost_usd, r.horizon_s, outcome.candidates[r.index].policy);
    if (!o.pools_out.empty()) outputs.emplace_back(o.pools_out, io::sim_pools_yaml(cluster, comment));
    if (!o.karpenter_out.empty()) outputs.emplace_back(o.karpenter_out, io::karpenter_node_pools_yaml(cluster, "default"));
    if (!o.kueue_out.empty()) outputs.emplace_back(o.kueue_out, io::kueue_objects_yaml(cluster, "plan"));
    add_sharing_outputs(o, cluster, comment, outputs);
    if (!o.workload_out.empty())
      outputs.emplace_back(o.workload_out, io::sim_workload_yaml(planned, o.workload_out, {}, "gpufleet plan: the workload as planned"));
  }
  if (has_inference && total_usd) {
    std::string what = has_jobs ? outcome.finalists[*outcome.recommended].label : std::string();
    for (const std::string& l : service_labels) what += (what.empty() ? "" : "; ") + l;
    const std::string comment = fmt::format(
        "gpufleet plan: {}\nworkload: {}, seed {}\npredicted: {:.2f} USD over {:g} s (every node); simulate with --policy {}, the planned "
        "workload (--workload-out) and the same seed to reproduce it.",
        what, description, o.seed, *total_usd, workload.horizon_s,
        has_jobs ? outcome.candidates[outcome.finalists[*outcome.recommended].index].policy : "gpufleet");
    if (!o.pools_out.empty()) outputs.emplace_back(o.pools_out, io::sim_pools_yaml(cluster, comment));
    if (!o.karpenter_out.empty()) outputs.emplace_back(o.karpenter_out, io::karpenter_node_pools_yaml(cluster, "default"));
    if (!o.kueue_out.empty()) outputs.emplace_back(o.kueue_out, io::kueue_objects_yaml(cluster, "plan"));
    add_sharing_outputs(o, cluster, comment, outputs);
    std::map<std::string, std::string> scaled_object_files;
    std::string keda;
    for (const sim::InferenceServiceSpec& spec : planned.inference) {
      if (!spec.autoscaler.keda) continue;
      if (!keda.empty()) keda += "---\n";
      keda += io::keda_scaled_object_yaml(planned, spec.service,
                                          fmt::format("gpufleet plan: the replica autoscaler of service {}, under the predictive scaler "
                                                      "(the workload's autoscaler.predictive)",
                                                      spec.service));
      scaled_object_files[spec.service] = o.keda_out;
    }
    if (scaled_object_files.size() > 1 && !o.workload_out.empty())
      throw UsageError("--workload-out: more than one inference service is autoscaled, and a workload reads one ScaledObject per file");
    if (!o.keda_out.empty() && !keda.empty()) outputs.emplace_back(o.keda_out, keda);
    if (!o.workload_out.empty()) {
      try {
        outputs.emplace_back(o.workload_out, io::sim_workload_yaml(planned, o.workload_out, scaled_object_files, comment));
      } catch (const std::invalid_argument& e) {
        throw InputError(o.workload.workload_path, 0, "", e.what());
      }
    }
  }
  if (!o.diff_out.empty() && diff) outputs.emplace_back(o.diff_out, io::current_diff_markdown(*diff, plan_label));
  if (!o.json_path.empty()) {
    std::string json = has_jobs ? io::plan_json(outcome, description, services, total_usd)
                                : io::services_plan_json(description, services, total_usd);
    if (current) json = io::with_current_diff_json(json, diff ? &*diff : nullptr);
    outputs.emplace_back(o.json_path, std::move(json));
  }
  if (!o.csv_path.empty()) outputs.emplace_back(o.csv_path, io::plan_csv(outcome));
  if (!o.report_path.empty()) outputs.emplace_back(o.report_path, io::plan_report_html(outcome, description));
  if (!outputs.empty()) write_files_atomically(outputs);
  std::string text = has_jobs ? io::plan_summary_text(outcome, description) : fmt::format("workload: {}\n", description);
  if (has_inference) text += io::services_summary_text(services, total_usd);
  if (diff) text += io::current_diff_text(*diff);
  else if (current) text += fmt::format("current cluster: {}: no plan, so no diff\n", o.current_path);
  for (const auto& [path, body] : outputs) text += fmt::format("wrote {}\n", path);
  std::fputs(text.c_str(), stdout);
  for (size_t i = 0; i < services.size(); ++i) {
    if (services[i].chosen) continue;
    const sim::FieldOrigin& at = workload.inference[i].origin;
    if (at.known()) throw InputError(at.file, at.line, at.field, services[i].infeasible_reason, at.column);
    throw InputError(o.workload.workload_path, 0, "", services[i].infeasible_reason);
  }
  if (has_jobs && !outcome.recommended) {
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
