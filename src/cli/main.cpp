// gpufleet command line. Thin: parses arguments (CLI11 lives only in this file) and calls the
// commands. Exit status: 0 success, 1 internal error, 2 bad input or usage.
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/bench_serve_command.h"
#include "cli/command_checks.h"
#include "cli/pack_command.h"
#include "cli/place_command.h"
#include "cli/serve_command.h"
#include "cli/compare_command.h"
#include "cli/plan_command.h"
#include "cli/simulate_command.h"
#include "sched/policy_registry.h"
#include "util/edit_distance.h"
#include "util/input_error.h"
#include "util/memory_ceiling.h"

namespace {

// A name that must not be empty (an empty value would otherwise read as "not given").
const CLI::Validator non_empty_name(
    [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); }, "NAME");

// --seed: cli::seed_problem's rule, the same for every command. CLI11 2.1 alone would read an
// unsigned option with strtoull, which turns "-1" into 18446744073709551615, silently.
const CLI::Validator kSeed(
    [](const std::string& text) -> std::string { return gpufleet::cli::seed_problem(text); },
    "SEED");

// The workload options simulate and compare share: a workload file or the openb trace, and which
// priority counts as production.
template <class Priority>
void add_workload_options(CLI::App* cmd, gpufleet::cli::WorkloadSource& w, Priority& production_priority) {
  cmd->add_option("--workload", w.workload_path, "workload file: jobs, services, generator (docs/simulate.md)");
  cmd->add_option("--openb-pods", w.openb_pods_path, "replay an openb pod list CSV with its own times instead of --workload");
  cmd->add_option("--snapshot", w.snapshot_path,
                  "start from a cluster snapshot (kubectl get pods -A -o json): its Running and Pending pods at time 0, instead of --workload");
  cmd->add_option("--history", w.history_path, "--snapshot: the past pods, an openb pod list CSV replayed after time 0 (the trace options apply)");
  cmd->add_option("--snapshot-job-seconds", w.snapshot_job_s,
                  "--snapshot: seconds each of its jobs (a Job's pod, a bare pod) runs from time 0 (0 = to the horizon)")->capture_default_str();
  cmd->add_option("--time-scale", w.time_scale, "openb: divide arrival times by K (lifetimes kept)")->capture_default_str();
  cmd->add_option("--trace-start", w.trace_start_s, "openb: trace second that becomes time 0")->capture_default_str();
  cmd->add_option("--horizon", w.horizon_s, "openb, --snapshot: simulated seconds (0 = up to the last arrival; required by --snapshot without --history)")->capture_default_str();
  cmd->add_option("--be-checkpoint", w.be_checkpoint_s, "openb: checkpoint interval of BE pods, seconds (0 = none)")->capture_default_str();
  cmd->add_option("--production-priority", production_priority, "pods at or above this priority are production")->capture_default_str();
  cmd->add_option("--serving-catalog", w.serving_catalog_path, "serving catalog for inference services (default: the built-in data/inference/catalog.yaml)");
  cmd->add_option("--engine-version", w.engine_version, "inference services' latency constants: vllm-v1 (default) or vllm-v0-2024 (the catalog's engineVersions)")
      ->check(non_empty_name);
}

// The work budget of simulate and compare (inputs/sim/work_estimate.h, docs/input-limits.md "Work budget").
// A budget: a finite number above 0 (CLI11's PositiveNumber lets "nan" through and prints its range
// as a 300-digit number).
const CLI::Validator kFiniteAboveZero(
    [](const std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v) || !(v > 0))
        return "'" + text + "' is not a finite number above 0";
      return {};
    },
    "NUMBER > 0");

void add_budget_options(CLI::App* cmd, gpufleet::sim::WorkBudget& b, int64_t& max_memory_mib) {
  const auto& positive = kFiniteAboveZero;
  cmd->add_option("--max-memory-mib", max_memory_mib,
                  "memory ceiling of the run, MiB (address space): past it the run stops with exit status 2 (default: three "
                  "quarters of the machine's memory)")
      ->check(CLI::Range(int64_t{64}, int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--max-requests", b.max_requests, "work budget: most inference requests per run")->check(positive)->capture_default_str();
  cmd->add_option("--max-events", b.max_events, "work budget: most simulation events per run")->check(positive)->capture_default_str();
  cmd->add_option("--max-pods", b.max_pods, "work budget: most pods created per run")->check(positive)->capture_default_str();
  cmd->add_option("--max-node-checks", b.max_node_checks, "work budget: most node checks per run (node slots x scans + pods x node slots)")
      ->check(positive)->capture_default_str();
}

// A mistyped command or option, found before CLI11 parses: CLI11 alone reports a missing required
// option first ("--cluster is required" for `place --polcy x --cluster ...` loses nothing, but
// `place --polcy x` would hide the typo) and never suggests. "" when every word is known. Only words
// that start with "--" are checked as options (a value such as -5 is not an option), up to "--".
std::string unknown_word_problem(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return {};
  const std::string command = argv[1];
  std::vector<std::string> commands;
  CLI::App* sub = nullptr;
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(s->get_name());
    if (s->get_name() == command) sub = s;
  }
  if (sub == nullptr) {
    const std::string guess = gpufleet::closest_word(command, commands);
    return fmt::format("unknown command '{}'{} (commands: {})", command, guess.empty() ? "" : fmt::format(": did you mean '{}'?", guess),
                       fmt::join(commands, ", "));
  }
  std::vector<std::string> options;
  for (const CLI::Option* o : sub->get_options())
    for (const std::string& name : o->get_lnames()) options.push_back("--" + name);
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() <= 2 || arg.substr(0, 2) != "--") continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (sub->get_option_no_throw(name) != nullptr) continue;
    const std::string guess = gpufleet::closest_word(name, options);
    return fmt::format("{}: unknown option '{}'{} (see gpufleet {} --help)", command, name,
                       guess.empty() ? "" : fmt::format(": did you mean '{}'?", guess), command);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpufleet: place, scale and price GPU workloads on Kubernetes GPU node pools"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpufleet 0.1.0");

  gpufleet::cli::PackCommandOptions pack;
  CLI::App* pack_cmd = app.add_subcommand(
      "pack", "Pack a pod trace onto a cluster with placement policies (FGD ATC'23 protocol) and report GPU allocation");
  pack_cmd->add_option("--nodes", pack.nodes_path, "openb node list CSV (default: the openb GPU node list, else synthetic)");
  pack_cmd->add_option("--pods", pack.pods_path, "openb pod list CSV, 11- or 5-column (default: openb_pod_list_default, else synthetic)");
  pack_cmd->add_option("--policy", pack.policies,
                       fmt::format("policy name, comma list, or 'all': {}", fmt::join(gpufleet::sched::policy_names(), ", ")))
      ->capture_default_str();
  pack_cmd->add_option("--seeds", pack.seeds, "seeds: 42-51, 42,43 or a mix")->capture_default_str();
  pack_cmd->add_option("--tune", pack.tune, "inflate the workload until GPU requests reach TUNE x cluster GPUs")->capture_default_str();
  pack_cmd->add_option("--jobs", pack.jobs, "parallel runs (0 = one per core)")->capture_default_str();
  pack_cmd->add_option("--json", pack.json_path, "write the runs as JSON to FILE");
  pack_cmd->add_option("--csv", pack.csv_path, "write the curves as CSV to FILE");
  pack_cmd->add_option("--report", pack.report_path, "write a self-contained HTML report (charts + summary) to FILE");
  pack_cmd->add_option("--reference", pack.reference_path, "compare with the FGD artifact's analysis_allo_discrete.csv");
  pack_cmd->add_flag("!--no-bound", pack.bound, "skip the LP upper bound on allocation (faster)");
  pack_cmd->add_flag("--timings", pack.timings, "record wall time per run in the JSON (makes it differ run to run)");
  pack_cmd->add_flag("-q,--quiet", pack.quiet, "no progress on stderr");

  gpufleet::cli::PlaceCommandOptions place;
  CLI::App* place_cmd = app.add_subcommand(
      "place", "Place a Kubernetes workload on a cluster as kube-scheduler would; say where each pod runs or why it is pending");
  place_cmd->add_option("--cluster", place.cluster_paths, "Node YAML/JSON, node-pool files, device-plugin / mig-parted configs, DRA ResourceSlices and DeviceClasses (files or directories)")
      ->required();
  place_cmd->add_option("--workload", place.workload_paths, "Pods, Deployments, StatefulSets, Jobs, DaemonSets, PriorityClasses, ResourceQuotas, Kueue objects and queued jobs, PodGroups, DRA ResourceClaims and ResourceClaimTemplates (files or directories)");
  place_cmd->add_option("--admission", place.admission, "Kueue admission: quota (Kueue's, quota only) or placement (only what the cluster holds now); default: the Configuration's, else quota")
      ->check(CLI::IsMember({"quota", "placement"}));
  place_cmd->add_option("--policy", place.policy, "placement policy (see pack --help)")->capture_default_str();
  place_cmd->add_option("--seed", place.seed, "seed for policies that draw random numbers")->check(kSeed)->capture_default_str();
  place_cmd->add_option("--json", place.json_path, "write placements, pending and quota-rejected pods as JSON to FILE");
  place_cmd->add_flag("-q,--quiet", place.quiet, "no reader warnings on stderr (they stay in --json's warnings)");
  place_cmd->add_option("--feature-gates", place.feature_gates, "Kubernetes feature gates that are off by default, as kube's flag: DRAConsumableCapacity=true (docs/dra.md)");
  place_cmd->add_option("--percentage-of-nodes-to-score", place.percentage_of_nodes_to_score,
                        "kube-scheduler's percentageOfNodesToScore, 0-100 (0: kube's adaptive default, 50 - nodes/125 %, at least 5 % and 100 nodes); default: every node (docs/place.md)")
      ->check(CLI::Range(0, 100));

  gpufleet::cli::SimulateCommandOptions simulate;
  int64_t max_memory_mib = gpufleet::default_memory_ceiling_mib();
  CLI::App* simulate_cmd = app.add_subcommand(
      "simulate", "Simulate a workload over time on autoscaled node pools with on-demand, spot and reserved capacity; report cost, chargeback and waiting times");
  simulate_cmd->add_option("--pools", simulate.pools_path, "node-pool file, optionally with an Autoscaling document (docs/simulate.md)")->required();
  add_workload_options(simulate_cmd, simulate.workload, simulate.production_priority);
  simulate_cmd->add_option("--faults", simulate.faults_path, "fault schedule file: node failures, XIDs, device-plugin failures, spot notices (docs/faults.md)");
  simulate_cmd->add_option("--policy", simulate.policy, "placement policy (see pack --help)")->capture_default_str();
  simulate_cmd->add_option("--seed", simulate.seed, "seed for the policy, spot interruptions and the workload generator")->check(kSeed)->capture_default_str();
  simulate_cmd->add_option("--json", simulate.json_path, "write the result as JSON to FILE");
  simulate_cmd->add_option("--timeseries", simulate.timeseries_path, "write one CSV row per simulated minute to FILE");
  simulate_cmd->add_option("--serving-timeseries", simulate.serving_timeseries_path, "write the inference services' per-minute CSV to FILE");
  simulate_cmd->add_option("--report", simulate.report_path, "write a self-contained HTML report (charts over time) to FILE");
  add_budget_options(simulate_cmd, simulate.budget, max_memory_mib);
  simulate_cmd->add_flag("-q,--quiet", simulate.quiet, "no progress on stderr");
  simulate_cmd->add_option("--feature-gates", simulate.feature_gates, "Kubernetes feature gates that are off by default, as kube's flag: DRAConsumableCapacity=true (docs/dra.md)");

  gpufleet::cli::CompareCommandOptions compare;
  CLI::App* compare_cmd = app.add_subcommand(
      "compare", "Simulate several configurations (pools file + policy) on the same workload; one table, JSON and report");
  compare_cmd->add_option("--config", compare.configs, "[LABEL=]POOLS[,POLICY], repeated; the first is the baseline")->required();
  add_workload_options(compare_cmd, compare.workload, compare.production_priority);
  compare_cmd->add_option("--faults", compare.faults_path, "fault schedule file applied to every configuration (docs/faults.md)");
  compare_cmd->add_option("--seed", compare.seed, "seed of every run")->check(kSeed)->capture_default_str();
  compare_cmd->add_option("--json", compare.json_path, "write every run as JSON to FILE");
  compare_cmd->add_option("--report", compare.report_path, "write a self-contained HTML report to FILE");
  add_budget_options(compare_cmd, compare.budget, max_memory_mib);
  compare_cmd->add_flag("-q,--quiet", compare.quiet, "no progress on stderr");

  gpufleet::cli::PlanCommandOptions plan;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "Find the pools, commitments, spot and autoscaler settings that meet the SLOs at least cost; pools file, JSON, CSV, report");
  plan_cmd->add_option("--catalog", plan.catalog_path, "price catalog (PriceCatalog, optionally PlanConstraints; docs/plan.md)")->required();
  plan_cmd->add_option("--constraints", plan.constraints_path, "constraints and SLOs (PlanConstraints) if not in the catalog file");
  add_workload_options(plan_cmd, plan.workload, plan.production_priority);
  plan_cmd->add_option("--seed", plan.seed, "seed of every run")->check(kSeed)->capture_default_str();
  plan_cmd->add_option("--race-fraction", plan.race_fraction, "race every candidate on this first part of the horizon, (0, 1]")
      ->capture_default_str();
  plan_cmd->add_option("--finalists", plan.finalists, "candidates the race keeps for the whole horizon")->check(CLI::Range(int64_t{1}, int64_t{1000}))
      ->capture_default_str();
  plan_cmd->add_option("--refine-rounds", plan.refine_rounds, "rounds of local search around the best finalist (0 = none)")
      ->check(CLI::Range(0, 20))->capture_default_str();
  plan_cmd->add_option("--threads", plan.threads, "simulations at once (0 = one per core)")->check(CLI::Range(0, 256))->capture_default_str();
  plan_cmd->add_option("--pools-out", plan.pools_out, "write the plan's pools file (simulate --pools reads it) to FILE");
  plan_cmd->add_option("--karpenter-out", plan.karpenter_out, "write the plan's Karpenter NodePools to FILE");
  plan_cmd->add_option("--kueue-out", plan.kueue_out, "write Kueue ResourceFlavors and a ClusterQueue sized to the plan to FILE");
  plan_cmd->add_option("--mig-parted-out", plan.mig_parted_out, "write the nvidia/mig-parted config of the plan's MIG pools to FILE");
  plan_cmd->add_option("--device-plugin-out", plan.device_plugin_out,
                       "write the NVIDIA device plugin's time-slicing/MPS ConfigMap of the plan's shared pools to FILE");
  plan_cmd->add_option("--workload-out", plan.workload_out,
                       "write the planned workload (inference services configured; simulate --workload reads it) to FILE");
  plan_cmd->add_option("--keda-out", plan.keda_out, "write the KEDA ScaledObjects of the inference services the plan autoscales to FILE");
  plan_cmd->add_option("--json", plan.json_path, "write the plan, frontier, waterfall and every run as JSON to FILE");
  plan_cmd->add_option("--csv", plan.csv_path, "write one row per simulation to FILE");
  plan_cmd->add_option("--report", plan.report_path, "write a self-contained HTML report to FILE");
  plan_cmd->add_option("--current", plan.current_path,
                       "the cluster running today (kubectl get nodes -o json, or a node-pool file): diff the plan against it");
  plan_cmd->add_option("--diff-out", plan.diff_out, "write the plan's diff against --current as a markdown table to FILE");
  plan_cmd->add_option("--shards", plan.shards, "race only one shard of the candidates (an Indexed Job's completions)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000}));
  plan_cmd->add_option("--shard-index", plan.shard_index, "this shard's index (default: $JOB_COMPLETION_INDEX)")
      ->check(CLI::Range(int64_t{0}, int64_t{9999}));
  plan_cmd->add_option("--shard-out", plan.shard_out, "write this shard's race results to FILE");
  plan_cmd->add_option("--merge", plan.merge_paths, "finish the plan from these shard files instead of racing");
  add_budget_options(plan_cmd, plan.budget, max_memory_mib);
  plan_cmd->add_flag("-q,--quiet", plan.quiet, "no progress on stderr");

  gpufleet::cli::BenchServeCommandOptions bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench-serve", "vLLM's serving benchmark (vllm bench serve) against simulated vLLM replicas; prints vLLM's result block");
  bench_cmd->add_option("--model", bench.model, "serving catalog model or alias (e.g. Llama-3.1-8B)")->required();
  bench_cmd->add_option("--gpu", bench.gpu, "catalog GPU (e.g. H100-80GB)")->required();
  bench_cmd->add_option("--tensor-parallel-size", bench.tensor_parallel_size, "GPUs per replica")->capture_default_str();
  bench_cmd->add_option("--dtype", bench.dtype, "weights: auto (bf16), bf16, fp16, fp8")->capture_default_str();
  bench_cmd->add_option("--kv-cache-dtype", bench.kv_cache_dtype, "KV cache: auto, bf16, fp16, fp8")->capture_default_str();
  bench_cmd->add_option("--gpu-memory-utilization", bench.gpu_memory_utilization, "share of GPU memory vLLM may use")->capture_default_str();
  bench_cmd->add_option("--max-num-seqs", bench.max_num_seqs, "most requests in a batch (0 = vLLM's default for the GPU)")->capture_default_str();
  bench_cmd->add_option("--max-num-batched-tokens", bench.max_num_batched_tokens, "tokens per step (0 = vLLM's default for the GPU)")->capture_default_str();
  bench_cmd->add_option("--max-model-len", bench.max_model_len, "context length (0 = the model's)")->capture_default_str();
  bench_cmd->add_option("--num-replicas", bench.num_replicas, "replicas behind the router (--routing)")->capture_default_str();
  bench_cmd->add_option("--serving-catalog", bench.serving_catalog_path, "serving catalog YAML (default: built in, data/inference/catalog.yaml)");
  bench_cmd->add_option("--engine-version", bench.engine_version, "latency constants: vllm-v1 (default) or vllm-v0-2024 (the catalog's engineVersions)")
      ->check(non_empty_name);
  bench_cmd->add_option("--step-profile", bench.step_profile_path, "measured step times CSV (num_seqs,tokens,step_s) instead of the roofline");
  bench_cmd->add_option("--backend", bench.backend, "client API: vllm or openai (/v1/completions), openai-chat (/v1/chat/completions)")
      ->capture_default_str();
  bench_cmd->add_option("--endpoint", bench.endpoint, "URL path the client posts to (openai-chat: /v1/chat/completions)")
      ->capture_default_str();
  bench_cmd->add_option("--num-prompts", bench.num_prompts, "requests to send (a trace: its first N)")->capture_default_str();
  bench_cmd->add_option("--request-rate", bench.request_rate, "requests per second (inf: all at t=0)")->capture_default_str();
  bench_cmd->add_option("--burstiness", bench.burstiness, "gamma shape of the gaps (1 = Poisson)")->capture_default_str();
  bench_cmd->add_option("--max-concurrency", bench.max_concurrency, "most requests in flight (0 = no limit)")->capture_default_str();
  bench_cmd->add_option("--dataset-name", bench.dataset_name, "random, sharegpt or sonnet (vLLM's datasets; docs/bench-serve.md)")
      ->capture_default_str();
  bench_cmd->add_option("--random-input-len", bench.random_input_len, "random dataset: prompt tokens")->capture_default_str();
  bench_cmd->add_option("--random-output-len", bench.random_output_len, "random dataset: output tokens")->capture_default_str();
  bench_cmd->add_option("--random-range-ratio", bench.random_range_ratio, "random dataset: lengths uniform in len x [1-r, 1+r]")->capture_default_str();
  bench_cmd->add_option("--sonnet-input-len", bench.sonnet_input_len, "sonnet dataset: prompt tokens")->capture_default_str();
  bench_cmd->add_option("--sonnet-output-len", bench.sonnet_output_len, "sonnet dataset: output tokens")->capture_default_str();
  bench_cmd->add_option("--sonnet-prefix-len", bench.sonnet_prefix_len, "sonnet dataset: prompt tokens shared by every request")
      ->capture_default_str();
  bench_cmd->add_option("--trace", bench.trace_path, "replay an Azure LLM CSV or Mooncake JSONL trace instead (docs/request-traces.md)");
  bench_cmd->add_option("--time-scale", bench.time_scale, "trace: multiply arrival times by K")->capture_default_str();
  bench_cmd->add_option("--seed", bench.seed, "seed of the dataset and the arrival gaps")->check(kSeed)->capture_default_str();
  bench_cmd->add_option("--json", bench.json_path, "write the result JSON (vLLM's keys) to FILE");
  bench_cmd->add_option("--prefill-replicas", bench.prefill_replicas,
                        "disaggregated prefill/decode: prefill replicas (0 = aggregated; docs/disaggregated-serving.md)")->capture_default_str();
  bench_cmd->add_option("--prefill-gpu", bench.prefill_gpu, "disaggregated: the prefill replicas' GPU (default --gpu)");
  bench_cmd->add_option("--prefill-tensor-parallel-size", bench.prefill_tensor_parallel_size,
                        "disaggregated: GPUs per prefill replica (0 = --tensor-parallel-size)")->capture_default_str();
  bench_cmd->add_option("--decode-replicas", bench.decode_replicas, "disaggregated: decode replicas (0 = --num-replicas)")->capture_default_str();
  bench_cmd->add_option("--decode-gpu", bench.decode_gpu, "disaggregated: the decode replicas' GPU (default --gpu)");
  bench_cmd->add_option("--decode-tensor-parallel-size", bench.decode_tensor_parallel_size,
                        "disaggregated: GPUs per decode replica (0 = --tensor-parallel-size)")->capture_default_str();
  bench_cmd->add_option("--kv-transfer-link", bench.kv_transfer_link, "disaggregated: KV transfer link nvlink, rdma or tcp")->capture_default_str();
  bench_cmd->add_option("--kv-transfer-gbps", bench.kv_transfer_gbps, "disaggregated: link bandwidth in Gb/s instead of the link's (per GPU for nvlink/rdma)");
  bench_cmd->add_option("--kv-transfer-latency-ms", bench.kv_transfer_latency_ms, "disaggregated: fixed time per KV transfer instead of the link's");
  bench_cmd->add_option("--max-local-prefill-length", bench.max_local_prefill_length,
                        "disaggregated: prompts of at most N tokens are prefilled by the decode replica (Dynamo's)")->capture_default_str();
  bench_cmd->add_option("--first-token-from", bench.first_token_from,
                        "disaggregated: the client's first token from the prefill replica or the decode replica (vLLM NixlConnector)")->capture_default_str();
  bench_cmd->add_option("--price-catalog", bench.price_catalog_path,
                        "price catalog YAML (kind PriceCatalog, e.g. examples/plan/catalog.yaml): print GPU-hours and USD per million tokens");
  bench_cmd->add_option("--routing", bench.routing,
                        "router: least-outstanding, round-robin, prefix-affinity, endpoint-picker; several, comma-separated: one "
                        "comparison table (docs/inference-routing.md)")->capture_default_str();
  bench_cmd->add_option("--endpoint-picker-config", bench.endpoint_picker_config_path,
                        "EndpointPickerConfig / InferencePool / InferenceObjective YAML for endpoint-picker (default: the EPP's default config)");
  bench_cmd->add_option("--inference-objective", bench.inference_objective, "InferenceObjective of the requests (its priority < 0: sheddable)");
  bench_cmd->add_option("--usd-per-gpu-hour", bench.usd_per_gpu_hour, "GPU price for the routing table's cost columns")->capture_default_str();

  gpufleet::cli::ServeCommandOptions serve;
  CLI::App* serve_cmd = app.add_subcommand(
      "serve", "Serve beside kube-scheduler: extender verbs (filter, prioritize, preempt, bind), /metrics, health; or --replay a workload through them");
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT to listen on (port 0: any free port)")->capture_default_str();
  serve_cmd->add_option("--tls-cert", serve.tls_cert_path, "PEM certificate: serve HTTPS (with --tls-key)");
  serve_cmd->add_option("--tls-key", serve.tls_key_path, "PEM private key of --tls-cert");
  serve_cmd->add_option("--policy", serve.policy, "placement policy (see pack --help)")->capture_default_str();
  serve_cmd->add_option("--seed", serve.seed, "seed for policies that draw random numbers")->check(kSeed)->capture_default_str();
  serve_cmd->add_option("--cluster-config", serve.cluster_config_paths, "device-plugin / mig-parted configs, PriorityClasses, ResourceQuotas, PDBs for every snapshot (files or directories); with --replay, more --cluster");
  serve_cmd->add_option("--snapshot", serve.snapshot_path, "start from a `kubectl get nodes,pods -o json` file (more can be POSTed to /snapshot)");
  serve_cmd->add_option("--prices", serve.prices_path, "gpufleet pool file whose instance types and prices cost the nodes in /metrics");
  serve_cmd->add_option("--kubeconfig", serve.kubeconfig_path, "list and watch Nodes and Pods from the API server of this kubeconfig");
  serve_cmd->add_option("--context", serve.kube_context, "kubeconfig context (default: its current-context)");
  serve_cmd->add_flag("--in-cluster", serve.in_cluster, "list and watch with the pod's service account (KUBERNETES_SERVICE_HOST)");
  serve_cmd->add_option("--keda-grpc", serve.keda_grpc_listen, "HOST:PORT for the KEDA external scaler (gRPC); off when absent");
  serve_cmd->add_option("--keda-tls-cert", serve.keda_tls_cert_path, "PEM certificate of the KEDA scaler's TLS (with --keda-tls-key)");
  serve_cmd->add_option("--keda-tls-key", serve.keda_tls_key_path, "PEM private key of the KEDA scaler's TLS");
  serve_cmd->add_option("--keda-client-ca", serve.keda_client_ca_path,
                        "PEM CA: KEDA must present a client certificate it signs (mutual TLS; trigger metadata tlsClientCert)");
  serve_cmd->add_option("--threads", serve.threads, "most worker threads, started on demand (each runs one received request at a time)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  serve_cmd->add_option("--request-timeout", serve.request_timeout_s, "seconds a request (head and body) may take to arrive from its first byte (then 408)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  serve_cmd->add_option("--max-connections", serve.max_connections, "most open connections (beyond: the idle one idle longest is closed, else new ones wait)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  serve_cmd->add_option("--shutdown-grace-seconds", serve.shutdown_grace_s, "after SIGTERM or SIGINT, seconds the requests in flight have to finish")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  serve_cmd->add_flag("--replay", serve.replay, "drive the server with --cluster and --workload as kube-scheduler would and compare with place");
  serve_cmd->add_option("--cluster", serve.cluster_paths, "--replay: the cluster, as place --cluster takes it (files or directories)");
  serve_cmd->add_option("--workload", serve.workload_paths, "--replay: the workload, as place --workload takes it (files or directories)");
  serve_cmd->add_option("--json", serve.json_path, "--replay: write the decisions as JSON to FILE");
  serve_cmd->add_flag("-q,--quiet", serve.quiet, "no messages on stderr");
  if (const std::string problem = unknown_word_problem(app, argc, argv); !problem.empty()) {
    std::fprintf(stderr, "gpufleet: error: %s\n", problem.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpufleet: error: %s (see gpufleet --help)\n", e.what());
    return 2;
  }
  try {
    if (app.got_subcommand(bench_cmd)) return gpufleet::cli::run_bench_serve_command(bench);
    if (app.got_subcommand(pack_cmd)) return gpufleet::cli::run_pack_command(pack);
    if (app.got_subcommand(place_cmd)) return gpufleet::cli::run_place_command(place);
    if ((app.got_subcommand(simulate_cmd) || app.got_subcommand(compare_cmd) || app.got_subcommand(plan_cmd)) && max_memory_mib > 0)
      gpufleet::set_memory_ceiling_mib(max_memory_mib);
    if (app.got_subcommand(simulate_cmd)) return gpufleet::cli::run_simulate_command(simulate);
    if (app.got_subcommand(compare_cmd)) return gpufleet::cli::run_compare_command(compare);
    if (app.got_subcommand(plan_cmd)) return gpufleet::cli::run_plan_command(plan);
    if (app.got_subcommand(serve_cmd)) return gpufleet::cli::run_serve_command(serve);
  } catch (const gpufleet::InputError& e) {
    std::fprintf(stderr, "gpufleet: error: %s\n", e.what());
    return 2;
  } catch (const gpufleet::UsageError& e) {
    std::fprintf(stderr, "gpufleet: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "gpufleet: error: %s\n", gpufleet::memory_ceiling_message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpufleet: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
