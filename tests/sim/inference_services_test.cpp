// Inference services in the simulator (sim/controllers/inference_services.h): a replica serves from
// the end of its cold start, requests wait at the router while no replica is ready, the image is
// pulled once per node, KEDA scales a service to zero and back, and the outputs add up. Every
// expected value is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "replica_autoscaling/keda.h"
#include "inference/catalog.h"
#include "inference/request_sources.h"
#include "readers/serving/inference_catalog.h"
#include "readers/sim/workload_file.h"
#include "inputs/sim/inference_service.h"
#include "sim/simulator.h"
#include "inputs/sim/workload.h"
#include "support/inference_test_support.h"

namespace gpufleet::sim {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

SimPool l40s_pool(int32_t gpus, int32_t nodes, int32_t max) {
  SimPool p;
  p.pool.name = "l40s";
  p.pool.gpu_model = "L40S";
  p.pool.gpus_per_node = gpus;
  p.pool.cpu_milli = 16000;
  p.pool.memory_bytes = 128 * kGiB;
  p.pool.node_count = nodes;
  p.pool.min_nodes = 0;
  p.pool.max_nodes = max;
  p.pool.on_demand_usd_per_hour = 3.6;
  return p;
}

WorkloadSpec service(int32_t replicas) {
  WorkloadSpec s;
  s.name = "chat";
  s.namespace_name = "serving";
  s.kind = WorkloadKind::kService;
  s.pods = replicas;
  s.num_gpu = 1;
  s.gpu_milli = 1000;
  return s;
}

inference::Request request(double t, int32_t prompt, int32_t output) {
  inference::Request r;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// Llama-3.1-8B with every step taking 0.5 s (a one-row step profile), requests from a list.
InferenceServiceSpec chat(std::vector<inference::Request> requests) {
  return testing::half_second_step_service("chat", std::move(requests));
}

const inference::ServingCatalog& catalog() { return io::builtin_serving_catalog(); }

double weight_load_s() {  // Llama-3.1-8B bf16 at 1 GB/s
  return inference::weight_bytes(*catalog().find_model("Llama-3.1-8B"), inference::Precision::kBf16) / 1e9;
}

SimResult run(const ClusterConfig& c, const Workload& w) {
  SimOptions o;
  o.serving_catalog = &catalog();
  return simulate(c, w, o);
}

TEST(InferenceServices, ColdStartThenHandComputedLatencies) {
  // One L40S node at 0; the replica binds at 0 and is ready at R = 10 (image) + W (weights, 16 GB
  // at 1 GB/s) + 20 (engine). r0 (t 1, 100 prompt, 3 output) waits at the router until R: its
  // prefill step runs [R, R+0.5] (first token), two decode steps end at R+1.5. r1 (t R+10, 50, 2):
  // [R+10, R+10.5] first token, [R+10.5, R+11] second. TTFT {R-0.5, 0.5}; TPOT (1.5-0.5)/2 = 0.5
  // and (11-10.5)/1 = 0.5.
  const double w_s = weight_load_s();
  const double ready = 10 + w_s + 20;
  ClusterConfig c;
  c.pools = {l40s_pool(1, 1, 1)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 200;
  w.items = {service(1)};
  w.inference = {chat({request(1, 100, 3), request(ready + 10, 50, 2)})};
  const SimResult r = run(c, w);
  ASSERT_EQ(r.inference.size(), 1u);
  const InferenceServiceResult& s = r.inference[0];
  EXPECT_EQ(s.requests, 2);
  EXPECT_EQ(s.finished, 2);
  EXPECT_EQ(s.timed_out + s.dropped + s.unfinished, 0);
  EXPECT_EQ(s.prompt_tokens, 150);
  EXPECT_EQ(s.output_tokens, 5);
  EXPECT_NEAR(s.ttft.max_s, ready - 0.5, 1e-4);
  EXPECT_NEAR(s.ttft.p50_s, 0.5, 1e-6);  // nearest rank of 2: the smaller
  EXPECT_NEAR(s.ttft.p99_s, ready - 0.5, 1e-4);
  EXPECT_NEAR(s.tpot.p99_s, 0.5, 1e-6);
  EXPECT_NEAR(s.e2e.max_s, ready + 1.5 - 1, 1e-4);
  ASSERT_EQ(s.cold_start_log.size(), 1u);
  const ColdStart& cs = s.cold_start_log[0];
  EXPECT_EQ(cs.replica, "chat-0");
  EXPECT_DOUBLE_EQ(cs.created_s, 0);
  EXPECT_DOUBLE_EQ(cs.bound_s, 0);
  EXPECT_DOUBLE_EQ(cs.image_pull_s, 10);
  EXPECT_NEAR(cs.weight_load_s, w_s, 1e-9);
  EXPECT_DOUBLE_EQ(cs.engine_start_s, 20);
  EXPECT_NEAR(cs.ready_s, ready, 1e-9);
  EXPECT_EQ(s.cold_starts, 1);
  EXPECT_EQ(s.max_ready_replicas, 1);
  // One GPU held for the whole 200 s; the service's cost is its pod's chargeback (the only pod).
  EXPECT_NEAR(s.gpu_hours, 200.0 / 3600, 1e-12);
  EXPECT_NEAR(s.cost_usd, r.chargeback.at("serving"), 1e-12);
  EXPECT_NEAR(s.usd_per_million_tokens, s.cost_usd / 155 * 1e6, 1e-9);
  EXPECT_NEAR(s.usd_per_million_output_tokens, s.cost_usd / 5 * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0);  // no SLO: the finished fraction
}

TEST(InferenceServices, SloAttainmentCountsTimeoutsAsMisses) {
  // As above with a TTFT SLO of 1 s and a 20 s timeout: r0 waits for the cold start (R > 30 s) and
  // times out at 21; r1 meets the SLO. Attainment 1 / 2.
  const double ready = 10 + weight_load_s() + 20;
  ClusterConfig c;
  c.pools = {l40s_pool(1, 1, 1)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 200;
  w.items = {service(1)};
  InferenceServiceSpec spec = chat({request(1, 100, 3), request(ready + 10, 50, 2)});
  spec.slo.ttft_p99_s = 1.0;
  spec.router.request_timeout_s = 20;
  w.inference = {spec};
  const InferenceServiceResult s = run(c, w).inference.at(0);
  EXPECT_EQ(s.finished, 1);
  EXPECT_EQ(s.timed_out, 1);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 0.5);
}

TEST(InferenceServices, ImageIsPulledOncePerNode) {
  // One node of 2 L40S GPUs, 2 replicas bound at 0: the first starts the 10 s pull, the second waits
  // for the same pull (10 - 0 = 10 s left), so both are ready at R. (A replica bound after the pull
  // pays none: KedaScalesToZeroAndWakesOnTheRouterQueue.)
  ClusterConfig c;
  c.pools = {l40s_pool(2, 1, 1)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 100;
  w.items = {service(2)};
  w.inference = {chat({request(50, 10, 1)})};
  const InferenceServiceResult s = run(c, w).inference.at(0);
  ASSERT_EQ(s.cold_start_log.size(), 2u);
  EXPECT_DOUBLE_EQ(s.cold_start_log[0].image_pull_s, 10);
  EXPECT_DOUBLE_EQ(s.cold_start_log[1].image_pull_s, 10);  // the pull in progress: 10 s left at 0
  EXPECT_EQ(s.max_ready_replicas, 2);
  EXPECT_NEAR(s.gpu_hours, 2 * 100.0 / 3600, 1e-12);
}

TEST(InferenceServices, KedaScalesToZeroAndWakesOnTheRouterQueue) {
  // KEDA on the router's held requests (minReplicaCount 0, activation > 0, threshold 1, polls every
  // 30 s, cooldown 300 s); scrapes every 15 s. The Deployment's one replica binds at 0 and starts
  // pulling the image (done at 10; the node keeps it); the first poll, at 0, finds nothing active and
  // scales to 0. A request at 600.5 is held; the scrape at 615 sees 1 held; the poll at 630 makes it
  // active: 0 -> 1. The replica binds at 630 on the node that has the image: ready at 630 + W + 20
  // (no pull), serves the request in one 0.5 s step. Once served, the trigger is inactive; 300 s after
  // the last active poll the service goes to 0.
  const double ready = weight_load_s() + 20;
  ClusterConfig c;
  c.pools = {l40s_pool(1, 1, 1)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 3600;
  w.items = {service(1)};
  InferenceServiceSpec spec = chat({request(600.5, 10, 1)});
  replica_autoscaling::ScaledObjectSpec so;
  so.name = "chat";
  so.scale_target_name = "chat";
  so.polling_interval_s = 30;
  so.cooldown_period_s = 300;
  so.min_replica_count = 0;
  so.max_replica_count = 4;
  replica_autoscaling::PrometheusTrigger trigger;
  trigger.metric = kMetricRouterWaiting;
  trigger.query = "sum(gpufleet:router_requests_waiting)";
  trigger.threshold = 1;
  so.triggers = {trigger};
  spec.autoscaler.keda = so;
  w.inference = {spec};
  const InferenceServiceResult s = run(c, w).inference.at(0);
  EXPECT_EQ(s.finished, 1);
  // Cold starts: exactly one replica became ready, at 630 + R.
  EXPECT_EQ(s.cold_starts, 1);
  double ready_at = -1;
  for (const ColdStart& cs : s.cold_start_log)
    if (cs.ready_s >= 0) {
      ready_at = cs.ready_s;
      EXPECT_DOUBLE_EQ(cs.image_pull_s, 0);
      EXPECT_DOUBLE_EQ(cs.created_s, 630);
    }
  EXPECT_NEAR(ready_at, 630 + ready, 1e-6);
  // The request waited from 600.5 to the replica, then one 0.5 s step.
  EXPECT_NEAR(s.ttft.max_s, 630 + ready + 0.5 - 600.5, 1e-4);
  // Scaled to zero again: desired 0 in the last rows, and nothing ready.
  ASSERT_FALSE(s.timeseries.empty());
  EXPECT_EQ(s.timeseries.back().desired_replicas, 0);
  EXPECT_EQ(s.timeseries.back().ready_replicas, 0);
  // Zero before the wake-up: no replica ready in the rows up to 600 s.
  for (const InferenceSample& row : s.timeseries)
    if (row.time_s <= 600) {
      EXPECT_EQ(row.ready_replicas, 0) << row.time_s;
    }
  // The replica lived from 630 to its removal; it cost GPU time only then (< 1 h of one GPU).
  EXPECT_GT(s.gpu_hours, 0);
  EXPECT_LT(s.gpu_hours, (3600.0 - 630) / 3600);
}

TEST(InferenceServices, ModelThatDoesNotFitIsRefused) {
  // Llama-3.1-70B bf16 needs 141 GB of weights; one L40S has 48 GB.
  ClusterConfig c;
  c.pools = {l40s_pool(1, 1, 1)};
  Workload w;
  w.horizon_s = 100;
  w.items = {service(1)};
  InferenceServiceSpec spec = chat({request(1, 10, 1)});
  spec.engine.model = "Llama-3.1-70B";
  spec.step_profile.clear();
  w.inference = {spec};
  try {
    run(c, w);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("inference service 'chat'"), std::string::npos) << what;
    EXPECT_NE(what.find("L40S"), std::string::npos) << what;
  }
}

TEST(InferenceServices, ReplicasNoNodeCanHoldAreNoted) {
  // Each replica asks 256 GiB of memory; the node has 128 GiB: the pod fails ("pod didn't trigger
  // scale-up"), every request times out, and the result says why.
  ClusterConfig c;
  c.pools = {l40s_pool(1, 1, 1)};
  Workload w;
  w.horizon_s = 100;
  WorkloadSpec item = service(1);
  item.memory_bytes = 256 * kGiB;
  w.items = {item};
  InferenceServiceSpec spec = chat({request(1, 10, 1)});
  spec.router.request_timeout_s = 30;
  w.inference = {spec};
  const InferenceServiceResult s = run(c, w).inference.at(0);
  EXPECT_EQ(s.timed_out, 1);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("1 replica pod(s) can never be scheduled: pod didn't trigger scale-up"), std::string::npos)
      << s.notes[0];
}

TEST(InferenceServices, StepProfileFromACsvFile) {
  // stepProfile may name a CSV beside the workload file (num_seqs,tokens,step_s): one row, 0.25 s.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpufleet-step-profile-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "profile.csv") << "num_seqs,tokens,step_s\n1,1,0.25\n";
  const std::string yaml =
      "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 100\nservices:\n- name: chat\n  gpus: 1\n"
      "  inference:\n    model: Llama-3.1-8B\n    stepProfile: profile.csv\n"
      "    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 10, promptMedian: 10, outputMean: 2, "
      "outputMedian: 2}}}\n";
  const io::SimWorkloadFile f = io::parse_sim_workload_text(yaml, (dir / "w.yaml").string(), {"l40s"});
  ASSERT_EQ(f.workload.inference.size(), 1u);
  ASSERT_EQ(f.workload.inference[0].step_profile.size(), 1u);
  EXPECT_DOUBLE_EQ(f.workload.inference[0].step_profile[0].step_s, 0.25);
  std::filesystem::remove_all(dir);
}

TEST(InferenceServices, SameSeedSameResult) {
  ClusterConfig c;
  c.pools = {l40s_pool(1, 0, 4)};
  Workload w;
  w.horizon_s = 900;
  w.items = {service(1)};
  InferenceServiceSpec spec = chat({});
  spec.step_profile.clear();  // the roofline
  inference::GeneratedSourceOptions g;
  g.rate.mean_rate_per_s = 3;
  g.horizon_s = 900;
  g.lengths.prompt = inference::lognormal_from_mean_median(1155, 1020);
  g.lengths.output = inference::lognormal_from_mean_median(211, 129);
  g.max_prompt_tokens = 4096;
  g.max_output_tokens = 1024;
  spec.traffic = g;  // seeded per run
  w.inference = {spec};
  const InferenceServiceResult a = run(c, w).inference.at(0);
  const InferenceServiceResult b = run(c, w).inference.at(0);
  EXPECT_GT(a.requests, 2000);  // 3/s for 900 s: ~2,700
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.finished, b.finished);
  EXPECT_DOUBLE_EQ(a.ttft.p99_s, b.ttft.p99_s);
  EXPECT_EQ(a.requests, a.finished + a.timed_out + a.dropped + a.unfinished);
}

TEST(InferenceServices, ServiceFromTheVllmDeployment) {
  // examples/serving/from-deployment.yaml names vllm-deployment.yaml: `vllm serve
  // meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --max-num-seqs 128
  // --gpu-memory-utilization 0.9 --dtype bfloat16 --max-model-len 8192 --shutdown-timeout 25 --port 8000`, replicas 2,
  // nvidia.com/gpu: 2, namespace serving; the item gives none of these, so they come from it.
  const std::string dir = std::string(GPUFLEET_SOURCE_DIR) + "/examples/serving/";
  const io::SimWorkloadFile f = io::read_sim_workload_file(dir + "from-deployment.yaml", {"l4", "l40s", "h100"});
  ASSERT_EQ(f.workload.items.size(), 1u);
  const WorkloadSpec& item = f.workload.items[0];
  EXPECT_EQ(item.pods, 2);
  EXPECT_EQ(item.num_gpu, 2);
  EXPECT_EQ(item.namespace_name, "serving");
  ASSERT_EQ(f.workload.inference.size(), 1u);
  const InferenceServiceSpec& spec = f.workload.inference[0];
  EXPECT_EQ(catalog().find_model(spec.engine.model)->name, "Llama-3.1-8B");
  EXPECT_EQ(spec.engine.tensor_parallel_size, 2);
  EXPECT_EQ(spec.engine.max_num_seqs, 128);
  EXPECT_EQ(spec.engine.max_model_len, 8192);
  EXPECT_DOUBLE_EQ(spec.engine.gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(spec.engine.shutdown_timeout_s, 25);  // --shutdown-timeout 25: drains on SIGTERM
  ASSERT_EQ(spec.notes.size(), 1u);
  EXPECT_NE(spec.notes[0].find("--port 8000"), std::string::npos) << spec.notes[0];
  EXPECT_EQ(spec.autoscaler_description, "hpa llama-8b (DCGM_FI_DEV_GPU_UTIL AverageValue 60)");
}

}  // namespace
}  // namespace gpufleet::sim

namespace gpufleet::sim {
namespace {

TEST(InferenceServices, RolloutRemovesTheOldReplicaOnlyWhenTheNewOneServes) {
  // One replica, maxSurge 1, maxUnavailable 0, two one-GPU nodes; a rollout at 100 s. The new
  // replica chat-1 binds at 100 on the empty node and is ready at 100 + R (image 10 s on a node that
  // has not pulled it, weights, engine 20 s); only then is chat-0 removed: the rollout completes at
  // 100 + R with one replica available throughout.
  const double ready = 10 + weight_load_s() + 20;
  ClusterConfig c;
  c.pools = {l40s_pool(1, 2, 2)};
  c.autoscaler.enabled = false;
  Workload w;
  w.horizon_s = 400;
  w.items = {service(1)};
  w.items[0].rolling_update = RollingUpdateStrategy{{1, false}, {0, false}};
  w.inference = {chat({request(1, 100, 3)})};
  w.rollouts = {{"chat", 100}};
  const SimResult r = run(c, w);
  ASSERT_EQ(r.rollouts.size(), 1u);
  EXPECT_NEAR(r.rollouts[0].completed_s, 100 + ready, 1e-6);
  EXPECT_EQ(r.rollouts[0].min_available, 1);
  EXPECT_EQ(r.rollouts[0].max_pods, 2);
  const InferenceServiceResult& s = r.inference.at(0);
  ASSERT_EQ(s.cold_start_log.size(), 2u);
  EXPECT_EQ(s.cold_start_log[1].replica, "chat-1");
  EXPECT_DOUBLE_EQ(s.cold_start_log[1].created_s, 100);
  EXPECT_NEAR(s.cold_start_log[1].ready_s, 100 + ready, 1e-6);
  EXPECT_EQ(s.max_ready_replicas, 2);  // old and new both serve for an instant at 100 + R
  EXPECT_EQ(r.pods_running, 1);
}

}  // namespace
}  // namespace gpufleet::sim
