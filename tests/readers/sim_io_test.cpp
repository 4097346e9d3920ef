// Readers and writers of `gpufleet simulate` (src/readers/sim/, src/report/sim_output.h): the example files, defaults, errors
// with positions, and the JSON keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/sim_output.h"
#include "readers/sim/sim_pools.h"
#include "readers/sim/workload_file.h"
#include "sim/simulator.h"
#include "util/input_error.h"

namespace gpufleet {
namespace {

const char* kPools = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: a
  gpu: {model: L4, count: 1}
  cpu: "4"
  memory: 16Gi
  nodes: 0
  max: 4
  prices: {onDemand: 1.0, spot: 0.3, reserved: 0.6}
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SimPoolsReader, ExampleAndDefaults) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "simulate";
  const sim::ClusterConfig c = io::read_sim_cluster_file((dir / "pools.yaml").string());
  ASSERT_EQ(c.pools.size(), 4u);
  EXPECT_EQ(c.pools[1].settings.reserved_nodes, 1);
  EXPECT_EQ(c.pools[2].settings.capacity_type, sim::CapacityType::kSpot);
  EXPECT_DOUBLE_EQ(c.pools[2].settings.provision_s, 60);   // karpenter
  EXPECT_DOUBLE_EQ(c.pools[0].settings.provision_s, 180);  // default
  EXPECT_DOUBLE_EQ(c.autoscaler.scale_up_delay_s, 30);

  const sim::ClusterConfig bare = io::parse_sim_cluster_text(kPools, "p.yaml");
  EXPECT_TRUE(bare.autoscaler.enabled);
  EXPECT_EQ(bare.autoscaler.expander, sim::Expander::kLeastWaste);
  EXPECT_EQ(bare.pools[0].settings.capacity_type, sim::CapacityType::kOnDemand);
}

TEST(SimPoolsReader, ErrorsNameTheField) {
  auto with = [](const std::string& doc) {
    return error_of([&] { io::parse_sim_cluster_text(std::string(kPools) + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n" + doc, "p.yaml"); });
  };
  EXPECT_EQ(with("pools:\n  b: {}\n"), "p.yaml:15:6: field 'pools.b': unknown pool 'b' (pools in this file: a)");
  EXPECT_EQ(with("pools:\n  a: {reservedNodes: 5}\n"), "p.yaml:15:22: field 'pools.a.reservedNodes': 5 is out of range [0, 4]");
  EXPECT_EQ(with("autoscaler: {expander: random}\n"), "p.yaml:14:24: field 'autoscaler.expander': unknown expander 'random' (expected least-waste, price)");
  EXPECT_EQ(with("autoscaler: {utilizationThreshold: 1.5}\n"), "p.yaml:14:36: field 'autoscaler.utilizationThreshold': 1.5 is outside [0, 1]");
  EXPECT_NE(with("pools:\n  a: {capacityType: spot, reservedNodes: 1}\n").find("a spot pool cannot hold reserved nodes"), std::string::npos);
  EXPECT_NE(with("kind2: x\n").find("unknown key 'kind2'"), std::string::npos);
  // Durations share the workload reader's seconds(): at most 1e10 s. A rate per node-hour is not a
  // duration: its cap is 60 per node-hour (one a minute).
  EXPECT_EQ(with("autoscaler: {scaleDownUnneededSeconds: 2e10}\n"),
            "p.yaml:14:40: field 'autoscaler.scaleDownUnneededSeconds': 2e10 is absurdly large");
  EXPECT_EQ(with("pools:\n  a: {capacityType: spot, spotInterruptionsPerNodeHour: -1}\n"),
            "p.yaml:15:57: field 'pools.a.spotInterruptionsPerNodeHour': -1 is negative");
  EXPECT_EQ(with("pools:\n  a: {capacityType: spot, spotInterruptionsPerNodeHour: 2e10}\n"),
            "p.yaml:15:57: field 'pools.a.spotInterruptionsPerNodeHour': 2e10 is above the maximum of 60 per node-hour");
  EXPECT_EQ(with("pools:\n  a: {capacityType: spot, spotInterruptionsPerNodeHour: 1e300}\n"),
            "p.yaml:15:57: field 'pools.a.spotInterruptionsPerNodeHour': 1e300 is above the maximum of 60 per node-hour");
  EXPECT_EQ(with("pools:\n  a: {capacityType: spot, spotInterruptionsPerNodeHour: 60}\n"), "no error");
}

TEST(SimPoolsReader, ProvisioningFailureSettings) {
  const std::string head = std::string(kPools) + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n";
  const sim::ClusterConfig bare = io::parse_sim_cluster_text(kPools, "p.yaml");
  EXPECT_DOUBLE_EQ(bare.autoscaler.max_node_provision_s, 900);
  EXPECT_DOUBLE_EQ(bare.autoscaler.initial_backoff_s, 300);
  EXPECT_DOUBLE_EQ(bare.autoscaler.max_backoff_s, 1800);
  EXPECT_DOUBLE_EQ(bare.autoscaler.backoff_reset_s, 10800);
  EXPECT_DOUBLE_EQ(bare.autoscaler.launch_failure_s, 60);
  EXPECT_DOUBLE_EQ(bare.pools[0].settings.gpu_advertise_delay_s, 0);
  const sim::ClusterConfig c = io::parse_sim_cluster_text(
      head + "autoscaler: {maxNodeProvisionSeconds: 600, initialBackoffSeconds: 60, maxBackoffSeconds: 240, "
             "backoffResetSeconds: 3600, launchFailureSeconds: 30}\npools:\n  a: {gpuAdvertiseDelaySeconds: 90}\n",
      "p.yaml");
  EXPECT_DOUBLE_EQ(c.autoscaler.max_node_provision_s, 600);
  EXPECT_DOUBLE_EQ(c.autoscaler.initial_backoff_s, 60);
  EXPECT_DOUBLE_EQ(c.autoscaler.max_backoff_s, 240);
  EXPECT_DOUBLE_EQ(c.autoscaler.backoff_reset_s, 3600);
  EXPECT_DOUBLE_EQ(c.autoscaler.launch_failure_s, 30);
  EXPECT_DOUBLE_EQ(c.pools[0].settings.gpu_advertise_delay_s, 90);
  auto err = [&](const std::string& doc) { return error_of([&] { io::parse_sim_cluster_text(head + doc, "p.yaml"); }); };
  EXPECT_EQ(err("autoscaler: {maxNodeProvisionSeconds: 0}\n"),
            "p.yaml:14:39: field 'autoscaler.maxNodeProvisionSeconds': 0 must be positive");
  EXPECT_EQ(err("autoscaler: {maxBackoffSeconds: 100}\n"),
            "p.yaml:14:33: field 'autoscaler.maxBackoffSeconds': maxBackoffSeconds 100 is below initialBackoffSeconds 300");
  EXPECT_EQ(err("autoscaler: {launchFailureSeconds: -1}\n"), "p.yaml:14:36: field 'autoscaler.launchFailureSeconds': -1 is negative");
  EXPECT_EQ(err("pools:\n  a: {gpuAdvertiseDelaySeconds: -5}\n"), "p.yaml:15:33: field 'pools.a.gpuAdvertiseDelaySeconds': -5 is negative");
}

TEST(SimPoolsReader, SettingsUnderAnotherApiVersionAreAnError) {
  // Skipped, such a document would leave the default settings in force without a word.
  auto err = [](const std::string& doc) {
    return error_of([&] { io::parse_sim_cluster_text(std::string(kPools) + "---\n" + doc, "p.yaml"); });
  };
  EXPECT_EQ(err("apiVersion: sim.gpufleet.io/v2\nkind: Autoscaling\nautoscaler: {enabled: false}\n"),
            "p.yaml:12:13: field 'apiVersion': apiVersion 'sim.gpufleet.io/v2' is not supported for kind Autoscaling "
            "(expected sim.gpufleet.io/v1)");
  EXPECT_EQ(err("kind: Autoscaling\nautoscaler: {enabled: false}\n"),
            "p.yaml:12:7: field 'kind': kind Autoscaling needs apiVersion sim.gpufleet.io/v1 (apiVersion is missing)");
  EXPECT_EQ(err("apiVersion: gpufleet.io/sim/v1\nkind: Autoscaling\n"),
            "p.yaml:12:13: field 'apiVersion': apiVersion 'gpufleet.io/sim/v1' is not supported for kind Autoscaling "
            "(expected sim.gpufleet.io/v1)");
  EXPECT_EQ(err("apiVersion: sim.gpufleet.io/v1beta1\nkind: Workload\n"),
            "p.yaml:12:13: field 'apiVersion': apiVersion 'sim.gpufleet.io/v1beta1' is not supported for kind Workload "
            "(expected sim.gpufleet.io/v1)");
  // Kubernetes objects beside the pools are still skipped.
  EXPECT_EQ(err("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), "no error");
  const sim::ClusterConfig c =
      io::parse_sim_cluster_text(std::string(kPools) + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\nautoscaler: {enabled: false}\n", "p.yaml");
  EXPECT_FALSE(c.autoscaler.enabled);
}

TEST(SimPoolsReader, ConsolidationBlock) {
  const std::string head = std::string(kPools) + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n";
  const sim::ClusterConfig bare = io::parse_sim_cluster_text(kPools, "p.yaml");
  EXPECT_FALSE(bare.consolidation.enabled);
  EXPECT_DOUBLE_EQ(bare.consolidation.threshold, 0.4);
  EXPECT_DOUBLE_EQ(bare.consolidation.interval_s, 10);
  EXPECT_DOUBLE_EQ(bare.consolidation.consolidate_after_s, 0);
  const sim::ClusterConfig c = io::parse_sim_cluster_text(
      head + "consolidation: {enabled: true, threshold: 0.25, intervalSeconds: 30, consolidateAfterSeconds: 120}\n", "p.yaml");
  EXPECT_TRUE(c.consolidation.enabled);
  EXPECT_DOUBLE_EQ(c.consolidation.threshold, 0.25);
  EXPECT_DOUBLE_EQ(c.consolidation.interval_s, 30);
  EXPECT_DOUBLE_EQ(c.consolidation.consolidate_after_s, 120);
  auto err = [&](const std::string& doc) { return error_of([&] { io::parse_sim_cluster_text(head + doc, "p.yaml"); }); };
  EXPECT_EQ(err("consolidation: {threshold: 2}\n"), "p.yaml:14:28: field 'consolidation.threshold': 2 is outside [0, 1]");
  EXPECT_EQ(err("consolidation: {intervalSeconds: 0}\n"), "p.yaml:14:34: field 'consolidation.intervalSeconds': 0 must be positive");
  // A tick every microsecond never ends: intervals are at least 1 s.
  EXPECT_EQ(err("consolidation: {intervalSeconds: 0.5}\n"),
            "p.yaml:14:34: field 'consolidation.intervalSeconds': 0.5 is below the minimum of 1 s");
  EXPECT_EQ(err("autoscaler: {scanIntervalSeconds: 1e-6}\n"),
            "p.yaml:14:35: field 'autoscaler.scanIntervalSeconds': 1e-6 is below the minimum of 1 s");
  EXPECT_EQ(err("autoscaler: {scanIntervalSeconds: -1}\n"), "p.yaml:14:35: field 'autoscaler.scanIntervalSeconds': -1 must be positive");
  EXPECT_EQ(err("autoscaler: {scanIntervalSeconds: 1}\nconsolidation: {intervalSeconds: 1}\n"), "no error");
  EXPECT_EQ(err("consolidation: {consolidateAfterSeconds: -1}\n"),
            "p.yaml:14:42: field 'consolidation.consolidateAfterSeconds': -1 is negative");
  EXPECT_NE(err("consolidation: {policy: x}\n").find("unknown key 'policy'"), std::string::npos);
}

TEST(SimPoolsReader, AdmissionPlugins) {
  const std::string head = std::string(kPools) + "---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n";
  EXPECT_FALSE(io::parse_sim_cluster_text(kPools, "p.yaml").extended_resource_toleration);
  EXPECT_TRUE(io::parse_sim_cluster_text(head + "admissionPlugins: [ExtendedResourceToleration]\n", "p.yaml").extended_resource_toleration);
  EXPECT_FALSE(io::parse_sim_cluster_text(head + "admissionPlugins: []\n", "p.yaml").extended_resource_toleration);
  auto err = [&](const std::string& doc) { return error_of([&] { io::parse_sim_cluster_text(head + doc, "p.yaml"); }); };
  EXPECT_EQ(err("admissionPlugins: [ExtendedResourceToleration, PodNodeSelector]\n"),
            "p.yaml:14:48: field 'admissionPlugins[1]': unknown admission plugin 'PodNodeSelector' (the simulation models "
            "ExtendedResourceToleration)");
}

TEST(SimWorkloadReader, DoNotDisrupt) {
  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\n";
  const io::SimWorkloadFile f = io::parse_sim_workload_text(
      head + "services:\n- {name: a, doNotDisrupt: true}\n- {name: b}\njobs:\n- {name: j, durationSeconds: 10, doNotDisrupt: true}\n",
      "w.yaml", {});
  ASSERT_EQ(f.workload.items.size(), 3u);
  const auto marked = [&](const std::string& name) {
    for (const sim::WorkloadSpec& s : f.workload.items)
      if (s.name == name) return s.do_not_disrupt;
    ADD_FAILURE() << "no item " << name;
    return false;
  };
  EXPECT_TRUE(marked("a"));
  EXPECT_FALSE(marked("b"));
  EXPECT_TRUE(marked("j"));
  EXPECT_EQ(error_of([&] { io::parse_sim_workload_text(head + "services:\n- {name: a, doNotDisrupt: maybe}\n", "w.yaml", {}); })
                .find("w.yaml:5:27: field 'services[0].doNotDisrupt'"),
            0u);
}

TEST(SimWorkloadReader, DisruptionBudget) {
  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\nservices:\n";
  const io::SimWorkloadFile f = io::parse_sim_workload_text(
      head + "- {name: a, replicas: 4, disruptionBudget: {maxUnavailable: 25%}}\n- {name: b, disruptionBudget: {minAvailable: 1}}\n",
      "w.yaml", {});
  ASSERT_TRUE(f.workload.items[0].disruption_budget.has_value());
  EXPECT_EQ(f.workload.items[0].disruption_budget->max_unavailable, (IntOrPercent{25, true}));
  EXPECT_FALSE(f.workload.items[0].disruption_budget->min_available.has_value());
  EXPECT_EQ(f.workload.items[1].disruption_budget->min_available, (IntOrPercent{1, false}));
  auto err = [&](const std::string& svc) { return error_of([&] { io::parse_sim_workload_text(head + svc, "w.yaml", {}); }); };
  EXPECT_EQ(err("- {name: a, disruptionBudget: {}}\n"),
            "w.yaml:5:31: field 'services[0].disruptionBudget': one of minAvailable or maxUnavailable is required");
  EXPECT_EQ(err("- {name: a, disruptionBudget: {minAvailable: 1, maxUnavailable: 1}}\n"),
            "w.yaml:5:65: field 'services[0].disruptionBudget.maxUnavailable': minAvailable and maxUnavailable cannot both be set");
  EXPECT_EQ(err("- {name: a, disruptionBudget: {maxUnavailable: 150%}}\n"),
            "w.yaml:5:48: field 'services[0].disruptionBudget.maxUnavailable': '150%' is more than 100%");
  EXPECT_EQ(err("- {name: a, disruptionBudget: {maxUnavailable: -1}}\n"),
            "w.yaml:5:48: field 'services[0].disruptionBudget.maxUnavailable': -1 is negative");
  EXPECT_NE(err("- {name: a, disruptionBudget: {maxUnavailable: x%}}\n").find("is not a valid percent"), std::string::npos);
  // The same int-or-percent reader as the Kubernetes PDB reader (readers/formats/yaml_field.h): any number of
  // digits before '%', as kube's strconv.Atoi; the item's count limit stays 100000.
  EXPECT_EQ(err("- {name: a, disruptionBudget: {maxUnavailable: 1000%}}\n"),
            "w.yaml:5:48: field 'services[0].disruptionBudget.maxUnavailable': '1000%' is more than 100%");
  EXPECT_EQ(err("- {name: a, disruptionBudget: {minAvailable: 100001}}\n"),
            "w.yaml:5:46: field 'services[0].disruptionBudget.minAvailable': 100001 is out of range [0, 100000]");
  const io::SimWorkloadFile padded =
      io::parse_sim_workload_text(head + "- {name: a, disruptionBudget: {minAvailable: 0050%}}\n", "w.yaml", {});
  EXPECT_EQ(padded.workload.items[0].disruption_budget->min_available, (IntOrPercent{50, true}));
}

TEST(SimWorkloadReader, ExampleAndErrors) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "simulate";
  const std::vector<std::string> pools = {"inference-l4", "training-h100", "training-h100-spot", "dev-a10g"};
  const io::SimWorkloadFile f = io::read_sim_workload_file((dir / "workload.yaml").string(), pools);
  EXPECT_DOUBLE_EQ(f.workload.horizon_s, 172800);
  ASSERT_EQ(f.workload.items.size(), 4u);  // 3 jobs after the service
  EXPECT_EQ(f.workload.items[0].kind, sim::WorkloadKind::kJob);
  EXPECT_EQ(f.workload.items[0].pods, 2);
  EXPECT_EQ(f.workload.items[3].kind, sim::WorkloadKind::kService);
  EXPECT_EQ(f.workload.items[3].pods, 3);
  ASSERT_TRUE(f.generator.has_value());
  EXPECT_EQ(f.generator->templates.size(), 2u);
  EXPECT_EQ(f.generator->templates[1].spec.gpu_milli, 500);

  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\njobs:\n";
  auto err = [&](const std::string& jobs) { return error_of([&] { io::parse_sim_workload_text(head + jobs, "w.yaml", {"a"}); }); };
  EXPECT_EQ(err("- {name: j, durationSeconds: 0}\n"), "w.yaml:5:30: field 'jobs[0].durationSeconds': 0 must be positive");
  EXPECT_EQ(err("- {name: j}\n"), "w.yaml:5:3: field 'jobs[0].durationSeconds': required field is missing");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, gpus: 2, gpuMilli: 500}\n"),
            "w.yaml:5:52: field 'jobs[0].gpuMilli': a fraction of a GPU needs gpus: 1");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, capacity: cheap}\n"),
            "w.yaml:5:43: field 'jobs[0].capacity': unknown capacity preference 'cheap' (expected on-demand, spot-ok, spot)");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1}\n- {name: j, durationSeconds: 1}\n"), "w.yaml:6:10: field 'jobs[1].name': duplicate name 'j'");
  EXPECT_EQ(err("- {name: j, durationSeconds: 1, gpus: 9}\n"), "w.yaml:5:39: field 'jobs[0].gpus': 9 is out of range [0, 8]");
  EXPECT_NE(error_of([&] { io::parse_sim_workload_text("apiVersion: sim.gpufleet.io/v1\nkind: Workload\n", "w.yaml", {}); })
                .find("horizonSeconds': required field is missing"),
            std::string::npos);
  // The horizon bounds the run (a time-series row per minute, a tick per scan interval): at most 1e8 s.
  auto horizon = [](const std::string& h) {
    return error_of([&] { io::parse_sim_workload_text("apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: " + h + "\n", "w.yaml", {}); });
  };
  EXPECT_EQ(horizon("1e8"), "no error");
  EXPECT_EQ(horizon("100000001"), "w.yaml:3:17: field 'horizonSeconds': 100000001 is above the maximum of 100000000 s (about 3 years)");
  EXPECT_EQ(horizon("1e10"), "w.yaml:3:17: field 'horizonSeconds': 1e10 is above the maximum of 100000000 s (about 3 years)");
  // A file of another kind, or an empty one, is said whole; a document of the simulator's group with
  // a mistyped kind is still said at its field.
  auto file = [](const std::string& text) { return error_of([&] { io::parse_sim_workload_text(text, "w.yaml", {}); }); };
  EXPECT_EQ(file(""), "w.yaml: field 'kind': the file is empty: expected a Workload (sim.gpufleet.io/v1)");
  EXPECT_EQ(file("apiVersion: gpufleet.io/v1\nkind: NodePoolSet\npools: []\n---\napiVersion: sim.gpufleet.io/v1\nkind: Autoscaling\n"),
            "w.yaml: field 'kind': the file holds a NodePoolSet (gpufleet.io/v1) and an Autoscaling (sim.gpufleet.io/v1), not a "
            "Workload (sim.gpufleet.io/v1); give it to simulate --pools (or place --cluster)");
  EXPECT_EQ(file("apiVersion: v1\nkind: Node\n---\napiVersion: v1\nkind: Node\n---\nkind: Pod\n"),
            "w.yaml: field 'kind': the file holds 2 Node objects (v1) and a Pod, not a Workload (sim.gpufleet.io/v1)");
  EXPECT_EQ(file("apiVersion: sim.gpufleet.io/v1\nkind: FaultSchedule\nfaults: []\n"),
            "w.yaml: field 'kind': the file holds a FaultSchedule (sim.gpufleet.io/v1), not a Workload (sim.gpufleet.io/v1); give "
            "it to simulate --pools");
  EXPECT_EQ(file("apiVersion: sim.gpufleet.io/v1\nkind: Wrkload\n"), "w.yaml:2:7: field 'kind': kind 'Wrkload' is not supported (expected Workload)");
}

TEST(SimWorkloadReader, GeneratorJobCountIsBounded) {
  // jobsPerHour x (endSeconds - startSeconds) / 3600 at most 1e7: 1e9 per hour crowded a million
  // jobs (maxJobs' default) into 4 s, which no run could work through.
  const std::string head = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 172800\ngenerate:\n";
  const std::string rest = "  durationSeconds: {min: 60, max: 600}\n  templates: [{gpus: 1}]\n";
  auto gen = [&](const std::string& lines) { return error_of([&] { io::parse_sim_workload_text(head + lines + rest, "w.yaml", {}); }); };
  const std::string too_many =
      "w.yaml:5:16: field 'generate.jobsPerHour': 1e9 jobs per hour over 48 h (startSeconds to endSeconds) is 4.8e+10 jobs, "
      "above the maximum of 10000000";
  EXPECT_EQ(gen("  jobsPerHour: 1e9\n"), too_many);
  EXPECT_EQ(gen("  jobsPerHour: 1e9\n  maxJobs: 10\n"), too_many);  // maxJobs does not lift it
  EXPECT_EQ(gen("  jobsPerHour: 208333\n"), "no error");             // 9,999,984 jobs in 48 h
  EXPECT_EQ(gen("  jobsPerHour: 1e9\n  endSeconds: 36\n"), "no error");  // exactly 1e7 in 36 s
  EXPECT_NE(gen("  jobsPerHour: 1e9\n  endSeconds: 37\n").find("jobs, above the maximum of 10000000"), std::string::npos);
}

TEST(SimOutput, JsonHasTheIssueKeys) {
  sim::ClusterConfig c = io::parse_sim_cluster_text(kPools, "p.yaml");
  sim::Workload w;
  w.horizon_s = 120;
  const sim::SimResult r = sim::simulate(c, w, sim::SimOptions{});
  const nlohmann::json j = nlohmann::json::parse(io::sim_result_json(r));
  for (const char* key : {"cost_usd", "cost_by_pool", "cost_by_capacity_type", "chargeback", "idle_cost_usd",
                          "gpu_allocation_pct_mean", "pending_s", "spot_interruptions", "lost_gpu_hours", "pods",
                          "nodes_consolidated", "consolidation_restarts", "consolidation_moved_pods", "consolidation_lost_gpu_hours"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["pending_s"]["p50"].is_null());  // no samples
  EXPECT_TRUE(j["pending_s"].contains("by_priority"));
  EXPECT_EQ(j["cost_by_capacity_type"].size(), 3u);
  EXPECT_EQ(io::sim_timeseries_csv(r), "time_s,nodes_a,gpus_allocated,gpus_billed,pending_pods,cost_usd_per_hour\n"
                                       "0,0,0.000,0.000,0,0.0000\n60,0,0.000,0.000,0,0.0000\n");
}


// Runs with a provisioning report: a provisioning line and the pods pending at the horizon per
// reason, most pods first; other runs' summaries have neither.
TEST(SimOutput, SummaryCountsPendingPodsByReason) {
  sim::SimResult r;
  r.horizon_s = 3600;
  EXPECT_EQ(io::sim_summary_text(r).find("provisioning:"), std::string::npos);
  r.provisioning_report = true;
  r.karpenter_nodes_launched = 2;
  r.launch_failures = 1;
  r.pending_at_horizon = {{"a", 2, 0, 10, "pool limit reached (NodePool gpu: cpu)"}, {"b", 1, 0, 20, ""},
                          {"c", 1, 5, 30, "pool limit reached (NodePool gpu: cpu)"}};
  const std::vector<io::PendingReasonCount> counts = io::pending_by_reason(r.pending_at_horizon);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].reason, "pool limit reached (NodePool gpu: cpu)");
  EXPECT_EQ(counts[0].units, 2);
  EXPECT_EQ(counts[0].pods, 3);
  EXPECT_EQ(counts[1].reason, "");
  const std::string text = io::sim_summary_text(r);
  EXPECT_NE(text.find("provisioning: 2 Karpenter nodes launched, 1 launches refused, 0 failed scale-ups\n"
                      "pending at the horizon by reason:\n"
                      "  3 pods (2 units): pool limit reached (NodePool gpu: cpu)\n"
                      "  1 pod (1 unit): (no reason recorded)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpufleet
