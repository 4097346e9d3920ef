// The planner's choice for an inference service (src/plan/serving_plan.h) on a tiny synthetic service:
// a generator's traffic to Llama-3.2-1B on one-GPU L4 and L40S options. The bisection finds the fewest
// static replicas meeting a loose TPOT SLO (that count meets it, one fewer does not), fp8 is never
// tried without allowFp8 (and is with it), an impossible SLO names the limit that binds, a service
// without an SLO is refused, and apply_service_plan sets the item and engine as planned.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/serving_plan.h"
#include "readers/serving/inference_catalog.h"

namespace gpufleet::plan {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

CostBoundOption one_gpu(const std::string& type, const std::string& gpu, double usd) {
  CostBoundOption o;
  o.instance_type = type;
  o.zone = "z1";
  o.gpu_model = gpu;
  o.gpus = 1;
  o.cpu_milli = 3920;
  o.memory_bytes = 14 * kGiB;
  o.on_demand_usd_per_hour = usd;
  return o;
}

sim::Workload tiny_service(double tpot_slo_s) {
  sim::Workload w;
  w.horizon_s = 1200;
  sim::WorkloadSpec item;
  item.name = "svc";
  item.namespace_name = "serving";
  item.kind = sim::WorkloadKind::kService;
  item.pods = 1;
  item.num_gpu = 1;
  item.gpu_milli = 1000;
  item.cpu_milli = 2000;
  item.memory_bytes = 8 * kGiB;
  w.items.push_back(item);
  sim::InferenceServiceSpec spec;
  spec.service = "svc";
  spec.engine.model = "Llama-3.2-1B";
  spec.engine.max_model_len = 4096;
  inference::GeneratedSourceOptions g;
  g.horizon_s = w.horizon_s;
  g.rate.mean_rate_per_s = 40;
  g.lengths.prompt_mean = 600;
  g.lengths.prompt_median = 400;
  g.lengths.output_mean = 200;
  g.lengths.output_median = 150;
  g.lengths.prompt = inference::lognormal_from_mean_median(600, 400);
  g.lengths.output = inference::lognormal_from_mean_median(200, 150);
  g.max_prompt_tokens = 3000;
  g.max_output_tokens = 1000;
  spec.traffic = g;
  spec.slo.tpot_p99_s = tpot_slo_s;
  spec.cold_start.image_pull_s = 10;
  spec.cold_start.engine_start_s = 10;
  w.inference.push_back(spec);
  return w;
}

// The 2024 constants, whose step times these cases were built on (a load one L4 replica cannot serve
// within 90 ms TPOT); the search does not depend on which set is in force.
const inference::ServingCatalog& v0_catalog() {
  static const inference::ServingCatalog c = [] {
    inference::ServingCatalog x = io::builtin_serving_catalog();
    x.select_engine_version("vllm-v0-2024");
    return x;
  }();
  return c;
}

PlanSearchOptions search_options() {
  PlanSearchOptions s;
  s.serving_catalog = &v0_catalog();
  s.threads = 2;
  return s;
}

TEST(ServingPlan, BisectionFindsTheFewestReplicasMeetingTheSlo) {
  const sim::Workload w = tiny_service(0.09);
  PlanConstraints k;
  const ServingPlanResult r = plan_service(w, 0, {one_gpu("l4.x", "L4", 0.8)}, k, search_options());
  ASSERT_TRUE(r.chosen.has_value()) << r.infeasible_reason;
  // The static service with the fewest replicas that meets the SLO.
  int32_t fewest = 0;
  for (const ServicePlan& p : r.tried)
    if (!p.autoscaled && p.meets && (fewest == 0 || p.replicas < fewest)) fewest = p.replicas;
  ASSERT_GT(fewest, 1) << "the test wants a load one replica cannot serve within the SLO";
  bool fewer_tried = false;
  for (const ServicePlan& p : r.tried) {
    EXPECT_FALSE(p.fp8);
    if (!p.autoscaled && p.replicas == fewest - 1) {
      fewer_tried = true;
      EXPECT_FALSE(p.meets);
    }
    if (!p.autoscaled && p.replicas < fewest) {
      EXPECT_FALSE(p.meets) << p.label();
    }
  }
  EXPECT_TRUE(fewer_tried);
  const ServicePlan& c = r.tried[*r.chosen];
  EXPECT_TRUE(c.meets);
  EXPECT_LE(c.tpot_p99_s, 0.09);
  for (const ServicePlan& p : r.tried) {
    if (p.meets) {
      EXPECT_LE(c.node_cost_usd, p.node_cost_usd) << p.label();
    }
  }
  EXPECT_GT(r.bound_usd, 0);
  EXPECT_LE(r.bound_usd, c.cost_usd);
  // The same search again gives the same plan (deterministic with threads).
  const ServingPlanResult again = plan_service(w, 0, {one_gpu("l4.x", "L4", 0.8)}, k, search_options());
  ASSERT_EQ(again.tried.size(), r.tried.size());
  EXPECT_EQ(again.chosen, r.chosen);
  EXPECT_EQ(again.tried[*again.chosen].node_cost_usd, c.node_cost_usd);
}

TEST(ServingPlan, Fp8OnlyWhenAllowed) {
  const sim::Workload w = tiny_service(0.05);
  const std::vector<CostBoundOption> options = {one_gpu("l4.x", "L4", 0.8), one_gpu("l40s.x", "L40S", 1.861)};
  PlanConstraints k;
  k.allow_fp8 = false;
  const ServingPlanResult bf16 = plan_service(w, 0, options, k, search_options());
  for (const ServicePlan& p : bf16.tried) EXPECT_FALSE(p.fp8) << p.label();
  k.allow_fp8 = true;
  const ServingPlanResult fp8 = plan_service(w, 0, options, k, search_options());
  EXPECT_TRUE(std::any_of(fp8.tried.begin(), fp8.tried.end(), [](const ServicePlan& p) { return p.fp8; }));
}

TEST(ServingPlan, InfeasibleSloNamesTheBindingLimit) {
  const sim::Workload w = tiny_service(0.0001);  // 0.1 ms per output token: no GPU decodes that fast
  PlanConstraints k;
  const ServingPlanResult r = plan_service(w, 0, {one_gpu("l4.x", "L4", 0.8)}, k, search_options());
  EXPECT_FALSE(r.chosen.has_value());
  EXPECT_EQ(r.binding, "tpotP99Seconds");
  EXPECT_NE(r.infeasible_reason.find("TPOT p99"), std::string::npos) << r.infeasible_reason;
  EXPECT_NE(r.infeasible_reason.find("tpotP99Seconds"), std::string::npos) << r.infeasible_reason;
}

TEST(ServingPlan, RefusesAServiceWithoutSlo) {
  sim::Workload w = tiny_service(0.05);
  w.inference[0].slo = {};
  EXPECT_THROW(plan_service(w, 0, {one_gpu("l4.x", "L4", 0.8)}, {}, search_options()), std::invalid_argument);
}

TEST(ServingPlan, ApplySetsTheServiceAsPlanned) {
  sim::Workload w = tiny_service(0.05);
  ServicePlan p;
  p.option = one_gpu("g6e.xlarge", "L40S", 1.861);
  p.tensor_parallel = 1;
  p.fp8 = true;
  p.replicas = 4;
  p.autoscaled = true;
  p.min_replicas = 2;
  p.max_replicas = 8;
  p.capacity_rps_per_replica = 7;
  p.headroom = 1.3;
  p.lead_s = 240;
  apply_service_plan(w, 0, p);
  EXPECT_EQ(w.items[0].pods, 4);
  EXPECT_EQ(w.items[0].pools, std::vector<std::string>{"svc-g6e-xlarge"});
  EXPECT_EQ(w.inference[0].engine.dtype, inference::Precision::kFp8);
  EXPECT_EQ(w.inference[0].engine.kv_cache_dtype, inference::Precision::kFp8);
  ASSERT_TRUE(w.inference[0].autoscaler.keda.has_value());
  ASSERT_TRUE(w.inference[0].autoscaler.predictive.has_value());
  EXPECT_EQ(w.inference[0].autoscaler.keda->max_replica_count, 8);
  EXPECT_EQ(w.inference[0].autoscaler.predictive->capacity_rps_per_replica, 7);
  EXPECT_EQ(service_max_nodes(p), 8);
  const sim::ClusterConfig c = service_cluster("svc", p.option, service_max_nodes(p), 60);
  ASSERT_EQ(c.pools.size(), 1u);
  EXPECT_EQ(c.pools[0].pool.name, "svc-g6e-xlarge");
  EXPECT_EQ(c.pools[0].pool.max_nodes, 8);
  EXPECT_EQ(c.autoscaler.scale_down_unneeded_s, 60);
}

}  // namespace
}  // namespace gpufleet::plan
