// Rolling updates of services (sim/controllers/rolling_update.h) and the autoscalers of services
// without inference (sim/controllers/service_autoscaling.h): scenario S27 (an HPA on an external
// queue metric during a rollout with surge; kubernetes/kubernetes issue 138505), the 25%/25% default
// strategy step by step, and the resolved fenceposts. Expected values by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/resources.h"
#include "report/rollout_output.h"
#include "report/sim_output.h"
#include "sim/controllers/service_autoscaling.h"
#include "sim/simulator.h"

namespace gpufleet::sim {
namespace {

namespace as = replica_autoscaling;

// A pool of `nodes` one-GPU L4 nodes (the autoscaler may add up to 20), a new node Ready 4 min
// after its launch.
ClusterConfig one_gpu_nodes(int32_t nodes) {
  SimPool p;
  p.pool.name = "gpu";
  p.pool.gpu_model = "L4";
  p.pool.gpus_per_node = 1;
  p.pool.cpu_milli = 16000;
  p.pool.memory_bytes = 64 * 1024 * kBytesPerMib;
  p.pool.node_count = p.pool.min_nodes = nodes;
  p.pool.max_nodes = 20;
  p.pool.on_demand_usd_per_hour = 1;
  p.settings.provision_s = 240;
  ClusterConfig c;
  c.pools = {p};
  c.autoscaler.enabled = true;
  return c;
}

WorkloadSpec service(const std::string& name, int32_t replicas, RollingUpdateStrategy strategy, double min_ready_s) {
  WorkloadSpec s;
  s.name = name;
  s.kind = WorkloadKind::kService;
  s.pods = replicas;
  s.num_gpu = 1;
  s.gpu_milli = 1000;
  s.rolling_update = strategy;
  s.min_ready_s = min_ready_s;
  return s;
}

SimResult run(const ClusterConfig& c, const Workload& w) {
  SimOptions o;
  o.seed = 1;
  return simulate(c, w, o);
}

// S27: 10 replicas of 1 GPU, maxSurge 1, maxUnavailable 0, minReadySeconds 60 (so the rollout lasts
// 10 x 60 s = 10 min), on exactly 11 one-GPU nodes; an HPA on the external metric queue_depth,
// AverageValue 10 per replica, tolerance 10%, evaluated every 15 s; the metric stays at 100.
Workload s27(bool keep_status_within_tolerance) {
  Workload w;
  w.horizon_s = 1800;
  w.items = {service("api", 10, RollingUpdateStrategy{{1, false}, {0, false}}, 60)};
  w.rollouts = {{"api", 300}};
  w.external_metrics = {{"queue_depth", {{0, 100}}}};
  as::HpaSpec hpa;
  hpa.name = "api";
  hpa.scale_target_name = "api";
  hpa.min_replicas = 1;
  hpa.max_replicas = 20;
  hpa.metrics = {{as::MetricSourceType::kExternal, "queue_depth", as::MetricTargetType::kAverageValue, 10}};
  ServiceAutoscalerSpec a;
  a.service = "api";
  a.autoscaler.hpa = hpa;
  a.autoscaler.hpa_controller.keep_status_within_tolerance = keep_status_within_tolerance;
  a.description = "hpa api (queue_depth AverageValue 10)";
  w.service_autoscalers = {a};
  return w;
}

// Expected: the wanted count stays 100 / 10 = 10 at every evaluation although 11 pods exist during
// the rollout; the rollout replaces one replica a minute from 300 s and completes at 900 s; 10 pods
// after it; the node pool never scales up.
TEST(RollingUpdateSim, S27HpaKeepsTenWhileSurgePodsExist) {
  const SimResult r = run(one_gpu_nodes(11), s27(false));
  ASSERT_EQ(r.rollouts.size(), 1u);
  const RolloutResult& ro = r.rollouts[0];
  EXPECT_EQ(ro.revision, 1u);
  EXPECT_EQ(ro.max_surge, 1);
  EXPECT_EQ(ro.max_unavailable, 0);
  EXPECT_DOUBLE_EQ(ro.completed_s, 900);
  EXPECT_EQ(ro.replicas_created, 10);
  EXPECT_EQ(ro.replicas_removed, 10);
  EXPECT_EQ(ro.max_pods, 11);
  EXPECT_EQ(ro.min_available, 10);
  ASSERT_EQ(r.service_scaling.size(), 1u);
  const ServiceScalingResult& s = r.service_scaling[0];
  ASSERT_EQ(s.evaluations.size(), 121u);  // t = 0, 15, ..., 1800
  EXPECT_EQ(s.min_desired, 10);
  EXPECT_EQ(s.max_desired, 10);
  int32_t saw_surge = 0;
  for (const ServiceScalingResult::Evaluation& e : s.evaluations) {
    EXPECT_EQ(e.spec_replicas, 10) << e.time_s;
    saw_surge += e.status_replicas == 11 ? 1 : 0;
  }
  EXPECT_GT(saw_surge, 30);  // the surge pod exists through most of the 40 evaluations of 300..900 s
  EXPECT_EQ(s.evaluations.back().status_replicas, 10);
  EXPECT_EQ(r.nodes_scaled_up, 0);
}

// The controller before kubernetes/kubernetes pull request 141134: within tolerance it keeps
// status.replicas, so at the first evaluation with the surge pod (300 s) the wanted count becomes 11;
// the rollout then surges to 12 pods, one more than the nodes: the Cluster Autoscaler adds a node.
TEST(RollingUpdateSim, S27StatusReplicasWithinToleranceDriftsUpAndScalesNodes) {
  const SimResult r = run(one_gpu_nodes(11), s27(true));
  const ServiceScalingResult& s = r.service_scaling.at(0);
  EXPECT_GE(s.max_desired, 11);
  EXPECT_GE(r.nodes_scaled_up, 1);
  EXPECT_GE(r.rollouts.at(0).max_pods, 12);
}

// 8 replicas, the default 25% / 25% (surge ceil(2) = 2, unavailable floor(2) = 2), minReady 30 s, 10
// nodes. At 100 s: 2 new (10 pods), 2 old removed (8 available - minAvailable 6), 2 more new (10
// pods; 10 - 6 - 4 unavailable new = 0: stop). At 130 s the 4 new are available: 10 available, 4
// old removed, 4 new created. At 160 s the last 4 are available: the last 2 old go; complete.
TEST(RollingUpdateSim, DefaultStrategyStepByStep) {
  Workload w;
  w.horizon_s = 600;
  w.items = {service("web", 8, RollingUpdateStrategy{}, 30)};
  w.rollouts = {{"web", 100}};
  const SimResult r = run(one_gpu_nodes(10), w);
  const RolloutResult& ro = r.rollouts.at(0);
  EXPECT_EQ(ro.max_surge, 2);
  EXPECT_EQ(ro.max_unavailable, 2);
  EXPECT_DOUBLE_EQ(ro.completed_s, 160);
  EXPECT_EQ(ro.replicas_created, 8);
  EXPECT_EQ(ro.replicas_removed, 8);
  EXPECT_EQ(ro.max_pods, 10);
  EXPECT_EQ(ro.min_available, 6);
  EXPECT_EQ(r.pods_running, 8);
  EXPECT_EQ(r.nodes_scaled_up, 0);
  const nlohmann::ordered_json j = io::rollouts_json(r);
  EXPECT_EQ(j.at(0).at("duration_s"), 60.0);
  EXPECT_EQ(j.at(0).at("superseded_s"), nullptr);
}

// A rollout whose new pods cannot be placed (no spare node, maxUnavailable 0, the pool at its
// maximum) stays incomplete: the surge pod waits and no old replica is removed.
TEST(RollingUpdateSim, NoRoomForTheSurgePodBlocksTheRollout) {
  ClusterConfig c = one_gpu_nodes(4);
  c.pools[0].pool.max_nodes = 4;
  Workload w;
  w.horizon_s = 600;
  w.items = {service("web", 4, RollingUpdateStrategy{{1, false}, {0, false}}, 0)};
  w.rollouts = {{"web", 60}};
  const SimResult r = run(c, w);
  const RolloutResult& ro = r.rollouts.at(0);
  EXPECT_LT(ro.completed_s, 0);
  EXPECT_EQ(ro.replicas_created, 1);
  EXPECT_EQ(ro.replicas_removed, 0);
  EXPECT_EQ(r.pods_running, 4);
  EXPECT_EQ(r.pods_pending, 1);
  EXPECT_NE(io::rollouts_summary_text(r).find("not complete by the horizon"), std::string::npos);
}

TEST(RollingUpdate, ResolveFenceposts) {
  // ResolveFenceposts: surge rounds up, unavailable down; both 0 -> unavailable 1.
  EXPECT_EQ(resolve_fenceposts(RollingUpdateStrategy{}, 10), std::make_pair(3, 2));
  EXPECT_EQ(resolve_fenceposts(RollingUpdateStrategy{{10, true}, {10, true}}, 5), std::make_pair(1, 0));
  EXPECT_EQ(resolve_fenceposts(RollingUpdateStrategy{{0, true}, {10, true}}, 5), std::make_pair(0, 1));
  EXPECT_EQ(resolve_fenceposts(RollingUpdateStrategy{{2, false}, {1, false}}, 100), std::make_pair(2, 1));
}

TEST(RollingUpdate, ExternalMetricIsAStepFunction) {
  const ExternalMetricSeries m{"q", {{10, 5}, {20, 7}}};
  EXPECT_FALSE(external_metric_at(m, 9.9).has_value());
  EXPECT_EQ(external_metric_at(m, 10), 5);
  EXPECT_EQ(external_metric_at(m, 19.9), 5);
  EXPECT_EQ(external_metric_at(m, 20), 7);
  EXPECT_EQ(external_metric_at(m, 1e9), 7);
}

TEST(RollingUpdate, ChecksTheWorkload) {
  Workload w;
  w.horizon_s = 100;
  w.items = {service("web", 2, RollingUpdateStrategy{}, 0)};
  w.rollouts = {{"nope", 10}};
  EXPECT_THROW(validate_rollouts_and_autoscalers(w), std::invalid_argument);
  w.rollouts = {{"web", 200}};
  EXPECT_THROW(validate_rollouts_and_autoscalers(w), std::invalid_argument);
  w.rollouts = {{"web", 50}};
  EXPECT_NO_THROW(validate_rollouts_and_autoscalers(w));
  w.items[0].rolling_update = RollingUpdateStrategy{{0, false}, {0, false}};
  EXPECT_THROW(validate_rollouts_and_autoscalers(w), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::sim
