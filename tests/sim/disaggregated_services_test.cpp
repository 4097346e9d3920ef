// Disaggregated inference services in the simulator (sim/controllers/inference_services.h,
// InferenceServiceSpec::disaggregation): each role's replicas are pods of their own item, placed on
// the node pool of the role's GPU; a request's TTFT and TPOT are those bench-serve gives for the same
// fixed pools (one rule, inference/disaggregated_deployment.h, two callers); each role scales on its
// own pods' metrics. Every expected value is computed by hand in the comment beside it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "inference/bench_serve.h"
#include "inference/catalog.h"
#include "inference/disaggregated_deployment.h"
#include "inference/request_sources.h"
#include "inference/step_time.h"
#include "inputs/sim/inference_service.h"
#include "inputs/sim/workload.h"
#include "readers/serving/inference_catalog.h"
#include "replica_autoscaling/keda.h"
#include "sim/simulator.h"
#include "support/inference_test_support.h"

namespace gpufleet::sim {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
// Llama-3.1-8B's bf16 KV per token at TP1: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes.
constexpr double kKvBytesPerToken = 131072;

SimPool pool(const std::string& name, const std::string& gpu, int32_t nodes, double usd_per_hour) {
  SimPool p;
  p.pool.name = name;
  p.pool.gpu_model = gpu;
  p.pool.gpus_per_node = 1;
  p.pool.cpu_milli = 16000;
  p.pool.memory_bytes = 128 * kGiB;
  p.pool.node_count = nodes;
  p.pool.min_nodes = 0;
  p.pool.max_nodes = nodes;
  p.pool.on_demand_usd_per_hour = usd_per_hour;
  return p;
}

// A role's pods: one GPU each, on `pool_name`.
WorkloadSpec role_item(const std::string& name, int32_t replicas, const std::string& pool_name) {
  WorkloadSpec s;
  s.name = name;
  s.namespace_name = "serving";
  s.kind = WorkloadKind::kService;
  s.pods = replicas;
  s.num_gpu = 1;
  s.gpu_milli = 1000;
  s.pools = {pool_name};
  return s;
}

inference::Request request(uint64_t id, double t, int32_t prompt, int32_t output) {
  inference::Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// Service "rag" on Llama-3.1-8B, every step 0.5 s (a one-row step profile), prefill pods on the L40S
// pool, decode pods on the H100 pool, KV over the rdma preset (50 GB/s per GPU, 1 ms).
InferenceServiceSpec rag(std::vector<inference::Request> requests, inference::FirstTokenFrom first) {
  InferenceServiceSpec spec = testing::half_second_step_service("rag", std::move(requests));
  spec.scrape_interval_s = 10;
  DisaggregationSpec d;
  d.link = inference::kv_transfer_link("rdma");
  d.first_token = first;
  d.prefill.item = "rag-prefill";
  d.decode.item = "rag-decode";
  spec.disaggregation = d;
  return spec;
}

const inference::ServingCatalog& catalog() { return io::builtin_serving_catalog(); }

SimResult run(const ClusterConfig& c, const Workload& w) {
  SimOptions o;
  o.serving_catalog = &catalog();
  return simulate(c, w, o);
}

ClusterConfig two_pools(int32_t h100_nodes) {
  ClusterConfig c;
  c.pools = {pool("l40s", "L40S", 1, 1.861), pool("h100", "H100-80GB", h100_nodes, 12.29)};
  c.autoscaler.enabled = false;
  return c;
}

replica_autoscaling::ScaledObjectSpec keda(const std::string& name, const char* metric, double threshold) {
  replica_autoscaling::ScaledObjectSpec so;
  so.name = name;
  so.scale_target_name = name;
  so.polling_interval_s = 30;
  so.min_replica_count = 1;
  so.max_replica_count = 4;
  replica_autoscaling::PrometheusTrigger trigger;
  trigger.metric = metric;
  trigger.query = std::string("sum(") + metric + ")";
  trigger.threshold = threshold;
  so.triggers = {trigger};
  return so;
}

TEST(DisaggregatedServices, LatenciesAreBenchServesForTheSameFixedPools) {
  // Both roles' one replica is ready at 10 + W + 20 (about 46 s), before the requests. A (t 100,
  // prompt 100, output 3): prefill step [100, 100.5] gives the first token (TTFT 0.5); its KV,
  // 100 x 131072 B, moves in 13107200 / 50e9 + 0.001 = 0.001262144 s, landing at 100.501262144;
  // the decode replica's steps end at 101.001262144 and 101.501262144 (tokens 2, 3): TPOT
  // (101.501262144 - 100.5) / 2 = 0.500631072. B (t 110, prompt 200, output 2): TTFT 0.5, transfer
  // 26214400 / 50e9 + 0.001 = 0.001524288, TPOT (0.001524288 + 0.5) / 1 = 0.501524288.
  const std::vector<inference::Request> requests = {request(0, 100, 100, 3), request(1, 110, 200, 2)};
  Workload w;
  w.horizon_s = 200;
  w.items = {role_item("rag-prefill", 1, "l40s"), role_item("rag-decode", 1, "h100")};
  w.inference = {rag(requests, inference::FirstTokenFrom::kPrefill)};
  const SimResult r = run(two_pools(1), w);
  ASSERT_EQ(r.inference.size(), 1u);
  const InferenceServiceResult& s = r.inference[0];
  EXPECT_EQ(s.finished, 2);
  EXPECT_EQ(s.prompt_tokens, 300);
  EXPECT_EQ(s.output_tokens, 5);
  EXPECT_NEAR(s.ttft.mean_s, 0.5, 1e-6);
  EXPECT_NEAR(s.ttft.max_s, 0.5, 1e-6);
  EXPECT_NEAR(s.tpot.p50_s, 0.500631072, 1e-6);
  EXPECT_NEAR(s.tpot.max_s, 0.501524288, 1e-6);
  ASSERT_TRUE(s.disaggregation.has_value());
  const DisaggregationResult& d = *s.disaggregation;
  EXPECT_EQ(d.remote_prefills, 2);
  EXPECT_EQ(d.local_prefills, 0);
  EXPECT_EQ(d.kv_transfers, 2);
  EXPECT_DOUBLE_EQ(d.kv_bytes_transferred, 300 * kKvBytesPerToken);
  EXPECT_NEAR(d.kv_transfer_mean_s, (0.001262144 + 0.001524288) / 2, 1e-12);

  // bench-serve's disaggregated run on the same requests with one replica per pool (ready at 0, idle
  // until 100: the same engines' steps): the same TTFT and TPOT (bench-serve reports ms).
  const std::unique_ptr<inference::StepTimeModel> step = inference::make_profile_step_time({{1, 1, 0.5}});
  inference::EngineLimits limits;
  limits.num_blocks = 100000;
  inference::BenchPool prefill{step.get(), limits, 1}, decode{step.get(), limits, 1};
  inference::DisaggregationConfig config;
  config.decode_kv_bytes_per_token_per_gpu = kKvBytesPerToken;
  const inference::BenchServeResult b = inference::run_bench_serve_disaggregated(requests, prefill, decode, config);
  EXPECT_NEAR(s.ttft.mean_s, b.ttft.mean_ms / 1000, 1e-6);
  EXPECT_NEAR(s.tpot.mean_s, b.tpot.mean_ms / 1000, 1e-6);
  EXPECT_NEAR(b.tpot.mean_ms / 1000, (0.500631072 + 0.501524288) / 2, 1e-9);
  EXPECT_EQ(b.kv_transfers, d.kv_transfers);

  // vLLM's semantics (first token from the decode replica): A's TTFT is the prefill step, the
  // transfer and the decode's first step, 0.5 + 0.001262144 + 0.5; B's 1.001524288; tokens 2..
  // follow every 0.5 s (TPOT 0.5).
  w.inference = {rag(requests, inference::FirstTokenFrom::kDecode)};
  const InferenceServiceResult v = run(two_pools(1), w).inference.at(0);
  EXPECT_NEAR(v.ttft.p50_s, 1.001262144, 1e-6);
  EXPECT_NEAR(v.ttft.max_s, 1.001524288, 1e-6);
  EXPECT_NEAR(v.tpot.max_s, 0.5, 1e-6);
  config.first_token = inference::FirstTokenFrom::kDecode;
  const inference::BenchServeResult bv = inference::run_bench_serve_disaggregated(requests, prefill, decode, config);
  EXPECT_NEAR(v.ttft.mean_s, bv.ttft.mean_ms / 1000, 1e-6);
  EXPECT_NEAR(v.tpot.mean_s, bv.tpot.mean_ms / 1000, 1e-6);
}

TEST(DisaggregatedServices, EachRolesPodsLandOnTheNodePoolOfItsGpu) {
  // Prefill pods may use only the L40S pool, decode pods only the H100 pool (2 nodes of 1 GPU):
  // 1 prefill replica on l40s, 2 decode replicas on the two h100 nodes.
  Workload w;
  w.horizon_s = 120;
  w.items = {role_item("rag-prefill", 1, "l40s"), role_item("rag-decode", 2, "h100")};
  w.inference = {rag({request(0, 100, 100, 3)}, inference::FirstTokenFrom::kPrefill)};
  const InferenceServiceResult s = run(two_pools(2), w).inference.at(0);
  ASSERT_EQ(s.cold_start_log.size(), 3u);
  int prefill = 0, decode = 0;
  for (const ColdStart& c : s.cold_start_log) {
    if (c.replica.rfind("rag-prefill-", 0) == 0) {
      ++prefill;
      EXPECT_EQ(c.node.rfind("l40s", 0), 0u) << c.replica << " on " << c.node;
    } else {
      ++decode;
      EXPECT_EQ(c.replica.rfind("rag-decode-", 0), 0u) << c.replica;
      EXPECT_EQ(c.node.rfind("h100", 0), 0u) << c.replica << " on " << c.node;
    }
  }
  EXPECT_EQ(prefill, 1);
  EXPECT_EQ(decode, 2);
  ASSERT_TRUE(s.disaggregation.has_value());
  EXPECT_EQ(s.disaggregation->prefill.max_ready_replicas, 1);
  EXPECT_EQ(s.disaggregation->decode.max_ready_replicas, 2);
  EXPECT_EQ(s.max_ready_replicas, 3);
  // Billing by the node: each pod holds the one GPU of its node from its bind at 0 to the horizon
  // (120 s) and pays the same share of its node's price (the GPU's part of the node, sim/rules/cost.h):
  // prefill share x 1.861 x 120 / 3600, decode share x 2 x 12.29 x 120 / 3600, so decode / prefill =
  // 2 x 12.29 / 1.861, and the service pays both.
  EXPECT_GT(s.disaggregation->prefill.cost_usd, 0);
  EXPECT_LE(s.disaggregation->prefill.cost_usd, 1.861 / 30 + 1e-12);
  EXPECT_NEAR(s.disaggregation->decode.cost_usd / s.disaggregation->prefill.cost_usd, 2 * 12.29 / 1.861, 1e-9);
  EXPECT_NEAR(s.cost_usd, s.disaggregation->prefill.cost_usd + s.disaggregation->decode.cost_usd, 1e-12);
  EXPECT_NEAR(s.disaggregation->decode.gpu_hours, 2 * 120.0 / 3600, 1e-12);
}

TEST(DisaggregatedServices, DecodeScalesUpWhilePrefillStaysAtOne) {
  // Three requests at 101 (prompt 100, output 100). Prefill: one step [101, 101.5] for the three
  // prompts; the KV lands about 1.3 ms later and the decode replica runs 99 steps of 0.5 s, to about
  // 151. Scrapes every 10 s: the one at 110 reads vllm:num_requests_running = 3 on the decode pod and
  // vllm:num_requests_waiting = 0 on the prefill pod. Each role has a KEDA ScaledObject (min 1, max 4):
  // decode on running requests per replica > 1, prefill on waiting > 5. Their HPAs sync every 15 s;
  // the sync at 120 reads the scrape of 110: decode ceil(3 / 1) = 3 (the HPA's default scale-up
  // allows +4), prefill ceil(0 / 5) -> its minimum, 1. The 2 new decode pods bind at 120 on the 2 idle
  // H100 nodes, pull the image (10 s), load the weights (W) and start (20 s): ready at 150 + W (about
  // 166). The HPA's 300 s scale-down window keeps decode at 3 up to the horizon (240).
  const std::vector<inference::Request> requests = {request(0, 101, 100, 100), request(1, 101, 100, 100), request(2, 101, 100, 100)};
  Workload w;
  w.horizon_s = 240;
  w.items = {role_item("rag-prefill", 1, "l40s"), role_item("rag-decode", 1, "h100")};
  InferenceServiceSpec spec = rag(requests, inference::FirstTokenFrom::kPrefill);
  spec.disaggregation->prefill.autoscaler.keda = keda("rag-prefill", kMetricRequestsWaiting, 5);
  spec.disaggregation->decode.autoscaler.keda = keda("rag-decode", kMetricRequestsRunning, 1);
  w.inference = {spec};
  const InferenceServiceResult s = run(two_pools(3), w).inference.at(0);
  EXPECT_EQ(s.finished, 3);
  ASSERT_EQ(s.timeseries.size(), 4u);  // rows at 60, 120, 180, 240
  const InferenceSample& at60 = s.timeseries[0];
  EXPECT_EQ(at60.prefill_desired_replicas, 1);
  EXPECT_EQ(at60.prefill_ready_replicas, 1);
  EXPECT_EQ(at60.decode_desired_replicas, 1);
  EXPECT_EQ(at60.decode_ready_replicas, 1);
  for (size_t k : {2u, 3u}) {  // 180 and 240
    const InferenceSample& row = s.timeseries[k];
    EXPECT_EQ(row.prefill_desired_replicas, 1) << row.time_s;
    EXPECT_EQ(row.prefill_ready_replicas, 1) << row.time_s;
    EXPECT_EQ(row.decode_desired_replicas, 3) << row.time_s;
    EXPECT_EQ(row.decode_ready_replicas, 3) << row.time_s;
    EXPECT_EQ(row.desired_replicas, 4) << row.time_s;  // the service's: both roles
    EXPECT_EQ(row.ready_replicas, 4) << row.time_s;
  }
  // The decode pods created at 120 became ready at 120 + 10 + W + 20.
  const double w_s = inference::weight_bytes(*catalog().find_model("Llama-3.1-8B"), inference::Precision::kBf16) / 1e9;
  int late = 0;
  for (const ColdStart& c : s.cold_start_log)
    if (c.created_s == 120) {
      ++late;
      EXPECT_EQ(c.replica.rfind("rag-decode-", 0), 0u) << c.replica;
      EXPECT_NEAR(c.ready_s, 150 + w_s, 1e-6);
    }
  EXPECT_EQ(late, 2);
  ASSERT_TRUE(s.disaggregation.has_value());
  EXPECT_EQ(s.disaggregation->prefill.max_ready_replicas, 1);
  EXPECT_EQ(s.disaggregation->decode.max_ready_replicas, 3);
  EXPECT_EQ(s.disaggregation->decode.cold_starts, 3);
}

TEST(DisaggregatedServices, RoleBoundsClampTheAutoscaler) {
  // The same load with the decode role's maxReplicas 2: KEDA asks for 3 at 120, the role gets 2.
  const std::vector<inference::Request> requests = {request(0, 101, 100, 100), request(1, 101, 100, 100), request(2, 101, 100, 100)};
  Workload w;
  w.horizon_s = 240;
  w.items = {role_item("rag-prefill", 1, "l40s"), role_item("rag-decode", 1, "h100")};
  InferenceServiceSpec spec = rag(requests, inference::FirstTokenFrom::kPrefill);
  spec.disaggregation->decode.autoscaler.keda = keda("rag-decode", kMetricRequestsRunning, 1);
  spec.disaggregation->decode.min_replicas = 1;
  spec.disaggregation->decode.max_replicas = 2;
  w.inference = {spec};
  const InferenceServiceResult s = run(two_pools(3), w).inference.at(0);
  ASSERT_EQ(s.timeseries.size(), 4u);
  EXPECT_EQ(s.timeseries[3].decode_desired_replicas, 2);
  EXPECT_EQ(s.timeseries[3].prefill_desired_replicas, 1);  // no autoscaler: as set
}

TEST(DisaggregatedServices, InvalidRoleBoundsAreRefused) {
  Workload w;
  w.horizon_s = 60;
  w.items = {role_item("rag-prefill", 1, "l40s"), role_item("rag-decode", 1, "h100")};
  InferenceServiceSpec spec = rag({request(0, 1, 10, 2)}, inference::FirstTokenFrom::kPrefill);
  spec.disaggregation->decode.min_replicas = 3;
  spec.disaggregation->decode.max_replicas = 2;
  w.inference = {spec};
  try {
    run(two_pools(1), w);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "inference service 'rag': role 'rag-decode': replica bounds [3, 2] are not 0 <= min <= max");
  }
}

}  // namespace
}  // namespace gpufleet::sim
