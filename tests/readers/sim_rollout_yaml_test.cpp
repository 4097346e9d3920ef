// Rolling updates, rollouts, external metrics, service autoscalers and the HPA controller's flags in
// the workload file (readers/sim/workload_file.h): a full example read to exact values, the defaults,
// and each error at its file, line, column and field (in the workload file, or in the HPA or
// ScaledObject file a service autoscaler names).
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "readers/sim/workload_file.h"
#include "support/expect_input_error.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using gpufleet::testing::expect_input_error;
namespace as = replica_autoscaling;

const char* kHead = "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 3600\n";

// An HPA on the External metric queue_depth, 10 per replica (metric name at 13:22).
const char* kHpa = R"(apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api-hpa
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric:
        name: queue_depth
      target: {type: AverageValue, averageValue: "10"}
)";

// A KEDA ScaledObject: one replica per 5 of queue_depth (the query at 12:14).
const char* kKeda = R"(apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: api
spec:
  scaleTargetRef:
    name: api
  maxReplicaCount: 8
  triggers:
  - type: prometheus
    metadata:
      query: sum(queue_depth)
      serverAddress: http://prometheus:9090
      threshold: "5"
)";

class RolloutYaml : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufleet-rollout-yaml-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    write("hpa.yaml", kHpa);
    write("keda.yaml", kKeda);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  SimWorkloadFile parse(const std::string& body) const { return parse_sim_workload_text(kHead + body, path("w.yaml"), {}); }
  // The body (after the 3 head lines, so its first line is line 4) must fail at line:column, field.
  void expect_error(const std::string& body, int line, int column, const std::string& field, const std::string& message,
                    const std::string& file = "w.yaml") const {
    SCOPED_TRACE(body);
    expect_input_error([&] { parse(body); }, path(file), line, column, field, message);
  }
  // An error inside a file the body names (an HPA, a ScaledObject): reported at the referencing
  // field (line:column, field of w.yaml), the referenced file's own error line as its message.
  void expect_error_in(const std::string& body, int line, int column, const std::string& field, const std::string& file,
                       int inner_line, int inner_column, const std::string& inner_field, const std::string& message) const {
    expect_error(body, line, column, field,
                 fmt::format("{}:{}:{}: field '{}': {}", path(file), inner_line, inner_column, inner_field, message));
  }
  std::filesystem::path dir_;
};

TEST_F(RolloutYaml, FullExample) {
  const SimWorkloadFile f = parse(R"(services:
- name: api
  replicas: 10
  gpus: 1
  minReadySeconds: 60
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  autoscaler:
    kubernetes: hpa.yaml
- name: web
  strategy:
    rollingUpdate: {maxSurge: 50%, maxUnavailable: "10%"}
rollouts:
- service: api
  atSeconds: 600
- service: web
  atSeconds: 3600
externalMetrics:
- name: queue_depth
  points:
  - {timeSeconds: 0, value: 100}
  - {timeSeconds: 300, value: 250.5}
  - {timeSeconds: 300, value: 40}
- name: backlog
  points: [{timeSeconds: 60, value: -1}]
hpaController:
  syncPeriodSeconds: 30
  tolerance: 0.05
  downscaleStabilizationSeconds: 120
  perPodWithinTolerance: statusReplicas
)");
  const sim::Workload& w = f.workload;
  ASSERT_EQ(w.items.size(), 2u);
  const sim::WorkloadSpec& api = w.items[0];
  EXPECT_EQ(api.pods, 10);
  EXPECT_EQ(api.rolling_update.max_surge, (IntOrPercent{1, false}));
  EXPECT_EQ(api.rolling_update.max_unavailable, (IntOrPercent{0, false}));
  EXPECT_DOUBLE_EQ(api.min_ready_s, 60);
  EXPECT_EQ(w.items[1].rolling_update.max_surge, (IntOrPercent{50, true}));
  EXPECT_EQ(w.items[1].rolling_update.max_unavailable, (IntOrPercent{10, true}));

  ASSERT_EQ(w.rollouts.size(), 2u);
  EXPECT_EQ(w.rollouts[0].service, "api");
  EXPECT_DOUBLE_EQ(w.rollouts[0].at_s, 600);
  EXPECT_EQ(w.rollouts[1].service, "web");
  EXPECT_DOUBLE_EQ(w.rollouts[1].at_s, 3600);  // the horizon itself is inside

  ASSERT_EQ(w.external_metrics.size(), 2u);
  EXPECT_EQ(w.external_metrics[0].name, "queue_depth");
  EXPECT_EQ(w.external_metrics[0].points,
            (std::vector<std::pair<double, double>>{{0, 100}, {300, 250.5}, {300, 40}}));  // equal times allowed
  EXPECT_EQ(w.external_metrics[1].name, "backlog");
  EXPECT_EQ(w.external_metrics[1].points, (std::vector<std::pair<double, double>>{{60, -1}}));

  ASSERT_EQ(w.service_autoscalers.size(), 1u);
  const sim::ServiceAutoscalerSpec& a = w.service_autoscalers[0];
  EXPECT_EQ(a.service, "api");
  EXPECT_EQ(a.description, "hpa api-hpa (queue_depth AverageValue 10)");
  ASSERT_TRUE(a.autoscaler.hpa.has_value());
  EXPECT_FALSE(a.autoscaler.keda.has_value());
  EXPECT_FALSE(a.autoscaler.predictive.has_value());
  const as::HpaSpec& hpa = *a.autoscaler.hpa;
  EXPECT_EQ(hpa.name, "api-hpa");
  EXPECT_EQ(hpa.scale_target_name, "api");
  EXPECT_EQ(hpa.min_replicas, 2);
  EXPECT_EQ(hpa.max_replicas, 20);
  ASSERT_EQ(hpa.metrics.size(), 1u);
  EXPECT_EQ(hpa.metrics[0].type, as::MetricSourceType::kExternal);
  EXPECT_EQ(hpa.metrics[0].name, "queue_depth");
  EXPECT_EQ(hpa.metrics[0].target_type, as::MetricTargetType::kAverageValue);
  EXPECT_DOUBLE_EQ(hpa.metrics[0].target, 10);
  const as::HpaControllerOptions& o = a.autoscaler.hpa_controller;
  EXPECT_DOUBLE_EQ(o.sync_period_s, 30);
  EXPECT_DOUBLE_EQ(o.tolerance, 0.05);
  EXPECT_DOUBLE_EQ(o.downscale_stabilization_s, 120);
  EXPECT_TRUE(o.keep_status_within_tolerance);
  EXPECT_TRUE(f.warnings.empty());
}

TEST_F(RolloutYaml, Defaults) {
  const SimWorkloadFile f = parse("services:\n- name: api\n  replicas: 4\n- name: b\n  strategy: {}\n"
                                  "- name: c\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}\n");
  const sim::Workload& w = f.workload;
  ASSERT_EQ(w.items.size(), 3u);
  EXPECT_EQ(w.items[0].rolling_update.max_surge, (IntOrPercent{25, true}));
  EXPECT_EQ(w.items[0].rolling_update.max_unavailable, (IntOrPercent{25, true}));
  EXPECT_DOUBLE_EQ(w.items[0].min_ready_s, 0);
  EXPECT_EQ(w.items[1].rolling_update.max_surge, (IntOrPercent{25, true}));
  EXPECT_EQ(w.items[1].rolling_update.max_unavailable, (IntOrPercent{25, true}));
  // A field of rollingUpdate left out is 25% (SetDefaults_Deployment), so maxSurge 0 alone is valid.
  EXPECT_EQ(w.items[2].rolling_update.max_surge, (IntOrPercent{0, false}));
  EXPECT_EQ(w.items[2].rolling_update.max_unavailable, (IntOrPercent{25, true}));
  EXPECT_TRUE(w.rollouts.empty());
  EXPECT_TRUE(w.external_metrics.empty());
  EXPECT_TRUE(w.service_autoscalers.empty());

  // hpaController's defaults are the kube-controller-manager's; a partial block keeps the others.
  const SimWorkloadFile g = parse("services:\n- name: api\n  autoscaler: {kubernetes: hpa.yaml}\n"
                                  "externalMetrics: [{name: queue_depth, points: [{timeSeconds: 0, value: 1}]}]\n");
  ASSERT_EQ(g.workload.service_autoscalers.size(), 1u);
  const as::HpaControllerOptions& d = g.workload.service_autoscalers[0].autoscaler.hpa_controller;
  EXPECT_DOUBLE_EQ(d.sync_period_s, 15);
  EXPECT_DOUBLE_EQ(d.tolerance, 0.1);
  EXPECT_DOUBLE_EQ(d.downscale_stabilization_s, 300);
  EXPECT_FALSE(d.keep_status_within_tolerance);
  const SimWorkloadFile h = parse("services:\n- name: api\n  autoscaler: {kubernetes: hpa.yaml}\n"
                                  "externalMetrics: [{name: queue_depth, points: [{timeSeconds: 0, value: 1}]}]\n"
                                  "hpaController: {tolerance: 0, perPodWithinTolerance: specReplicas}\n");
  const as::HpaControllerOptions& p = h.workload.service_autoscalers[0].autoscaler.hpa_controller;
  EXPECT_DOUBLE_EQ(p.sync_period_s, 15);
  EXPECT_DOUBLE_EQ(p.tolerance, 0);
  EXPECT_FALSE(p.keep_status_within_tolerance);
}

TEST_F(RolloutYaml, KedaServiceAutoscaler) {
  const SimWorkloadFile f = parse("services:\n- name: api\n  autoscaler: {kubernetes: keda.yaml}\n"
                                  "externalMetrics: [{name: queue_depth, points: [{timeSeconds: 0, value: 1}]}]\n"
                                  "hpaController: {syncPeriodSeconds: 20}\n");
  ASSERT_EQ(f.workload.service_autoscalers.size(), 1u);
  const sim::ServiceAutoscalerSpec& a = f.workload.service_autoscalers[0];
  EXPECT_EQ(a.description, "keda api (queue_depth > 5)");
  ASSERT_TRUE(a.autoscaler.keda.has_value());
  EXPECT_FALSE(a.autoscaler.hpa.has_value());
  EXPECT_DOUBLE_EQ(a.autoscaler.hpa_controller.sync_period_s, 20);  // the HPA the ScaledObject makes
}

TEST_F(RolloutYaml, HpaControllerAppliesToInferenceServices) {
  write("keda-waiting.yaml", R"(apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: chat}
spec:
  scaleTargetRef: {name: chat}
  triggers:
  - type: prometheus
    metadata: {query: sum(vllm:num_requests_waiting), threshold: "5"}
)");
  const SimWorkloadFile f = parse(R"(services:
- name: chat
  gpus: 1
  inference:
    model: Llama-3.1-8B
    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 100, promptMedian: 80, outputMean: 50, outputMedian: 40}}}
    autoscaler: {kubernetes: keda-waiting.yaml}
hpaController: {downscaleStabilizationSeconds: 60, perPodWithinTolerance: statusReplicas}
)");
  ASSERT_EQ(f.workload.inference.size(), 1u);
  const as::ReplicaAutoscalerSpec& a = f.workload.inference[0].autoscaler;
  ASSERT_TRUE(a.keda.has_value());
  EXPECT_DOUBLE_EQ(a.hpa_controller.downscale_stabilization_s, 60);
  EXPECT_TRUE(a.hpa_controller.keep_status_within_tolerance);
  EXPECT_EQ(f.workload.inference[0].autoscaler_description, "keda chat (vllm:num_requests_waiting > 5)");
  EXPECT_TRUE(f.workload.service_autoscalers.empty());
}

TEST_F(RolloutYaml, StrategyErrors) {
  expect_error("services:\n- name: a\n  minReadySeconds: -1\n", 6, 20, "services[0].minReadySeconds", "-1 is negative");
  expect_error("services:\n- name: a\n  minReadySeconds: 1.5\n", 6, 20, "services[0].minReadySeconds", "'1.5' is not an integer");
  expect_error("services:\n- name: a\n  strategy: {type: Recreate}\n", 6, 20, "services[0].strategy.type",
               "type Recreate is not modelled: a rollout replaces the replicas as RollingUpdate does (maxSurge, maxUnavailable)");
  expect_error("services:\n- name: a\n  strategy: {type: Canary}\n", 6, 20, "services[0].strategy.type",
               "unknown strategy type 'Canary' (expected RollingUpdate; Recreate is not modelled)");
  expect_error("services:\n- name: a\n  strategy:\n    rollingUpdate: {maxSurge: 0, maxUnavailable: 0%}\n", 7, 50,
               "services[0].strategy.rollingUpdate.maxUnavailable", "may not be 0 when maxSurge is 0 (a rollout could replace no replica)");
  expect_error("services:\n- name: a\n  strategy:\n    rollingUpdate: {maxSurge: 150%}\n", 7, 31,
               "services[0].strategy.rollingUpdate.maxSurge", "'150%' is more than 100%");
  expect_error("services:\n- name: a\n  strategy:\n    rollingUpdate: {maxUnavailable: -1}\n", 7, 37,
               "services[0].strategy.rollingUpdate.maxUnavailable", "-1 is negative");
  expect_error("services:\n- name: a\n  strategy:\n    rollingUpdate: {maxSurge: x%}\n", 7, 31,
               "services[0].strategy.rollingUpdate.maxSurge", "is not a valid percent");
  expect_error("services:\n- name: a\n  strategy: {rollingUpdate: {maxSurge: 1, partition: 2}}\n", 6, 43,
               "services[0].strategy.rollingUpdate.partition", "unknown key 'partition' (expected maxSurge, maxUnavailable)");
  // Jobs have no rollouts.
  expect_error("jobs:\n- {name: j, durationSeconds: 1, strategy: {}}\n", 5, 33, "jobs[0].strategy", "unknown key 'strategy'");
}

TEST_F(RolloutYaml, RolloutErrors) {
  const std::string items = "services:\n- name: api\njobs:\n- {name: train, durationSeconds: 10}\n";  // lines 4-7
  expect_error(items + "rollouts:\n- {service: nope, atSeconds: 10}\n", 9, 13, "rollouts[0].service",
               "'nope' is not a service of the workload (services: api)");
  expect_error(items + "rollouts:\n- {service: train, atSeconds: 10}\n", 9, 13, "rollouts[0].service",
               "'train' is a job, not a service (services: api)");
  expect_error(items + "rollouts:\n- {service: api, atSeconds: 3601}\n", 9, 29, "rollouts[0].atSeconds",
               "3601 is after the horizon (3600 s)");
  expect_error(items + "rollouts:\n- {service: api, atSeconds: -5}\n", 9, 29, "rollouts[0].atSeconds", "-5 is negative");
  expect_error(items + "rollouts:\n- {service: api}\n", 9, 3, "rollouts[0].atSeconds", "required field is missing");
  expect_error(items + "rollouts:\n- {atSeconds: 1}\n", 9, 3, "rollouts[0].service", "required field is missing");
  expect_error(items + "rollouts:\n- {service: api, atSeconds: 1, image: v2}\n", 9, 32, "rollouts[0].image",
               "unknown key 'image' (expected service, atSeconds)");
  expect_error(items + "rollouts: {service: api}\n", 8, 11, "rollouts", "expected a list");
}

TEST_F(RolloutYaml, ExternalMetricErrors) {
  expect_error("externalMetrics:\n- {name: q, points: [{timeSeconds: 0, value: 1}]}\n- {name: q, points: [{timeSeconds: 0, value: 1}]}\n",
               6, 10, "externalMetrics[1].name", "duplicate external metric name 'q'");
  expect_error("externalMetrics:\n- name: q\n  points:\n  - {timeSeconds: 10, value: 1}\n  - {timeSeconds: 5, value: 2}\n", 8, 19,
               "externalMetrics[0].points[1].timeSeconds", "5 is before the previous point's 10 (points in time order)");
  expect_error("externalMetrics:\n- {name: q, points: []}\n", 5, 21, "externalMetrics[0].points", "at least one point is required");
  expect_error("externalMetrics:\n- {name: q}\n", 5, 3, "externalMetrics[0].points", "at least one point is required");
  expect_error("externalMetrics:\n- {name: q, points: [{timeSeconds: 0, value: .nan}]}\n", 5, 46,
               "externalMetrics[0].points[0].value", "'.nan' is not a number");
  expect_error("externalMetrics:\n- {name: q, points: [{timeSeconds: 0}]}\n", 5, 22, "externalMetrics[0].points[0].value",
               "required field is missing");
  expect_error("externalMetrics:\n- {name: q, points: [{timeSeconds: -1, value: 1}]}\n", 5, 36,
               "externalMetrics[0].points[0].timeSeconds", "-1 is negative");
  expect_error("externalMetrics:\n- {name: '', points: [{timeSeconds: 0, value: 1}]}\n", 5, 10, "externalMetrics[0].name",
               "must not be empty");
}

TEST_F(RolloutYaml, ServiceAutoscalerErrors) {
  const std::string metrics = "externalMetrics: [{name: queue_depth, points: [{timeSeconds: 0, value: 1}]}]\n";  // line 4
  // An inference service keeps its autoscaler in its inference block.
  expect_error(metrics + "services:\n- name: chat\n  inference: {model: Llama-3.1-8B}\n  autoscaler: {kubernetes: hpa.yaml}\n", 8, 3,
               "services[0].autoscaler",
               "a service with inference: has its autoscaler in the inference block (inference.autoscaler)");
  expect_error(metrics + "services:\n- name: api\n  autoscaler:\n    predictive: {capacityRpsPerReplica: 10}\n", 8, 5,
               "services[0].autoscaler.predictive",
               "predictive is for inference services: it forecasts their request rate, which a service without inference does not have");
  expect_error(metrics + "services:\n- name: api\n  autoscaler: {}\n", 7, 15, "services[0].autoscaler", "kubernetes is required");
  expect_error(metrics + "services:\n- name: api\n  autoscaler: {kubernetes: hpa.yaml, minReplicas: 1}\n", 7, 38,
               "services[0].autoscaler.minReplicas", "unknown key 'minReplicas' (expected kubernetes, predictive)");
  // Errors in the HPA file, at their position there.
  expect_error_in("services:\n- name: api\n  autoscaler: {kubernetes: hpa.yaml}\n", 6, 28, "services[0].autoscaler.kubernetes", "hpa.yaml", 13, 15, "spec.metrics[0].external.metric.name",
                  "metric 'queue_depth' is not one of the workload's externalMetrics (externalMetrics: none)");
  expect_error_in("externalMetrics: [{name: backlog, points: [{timeSeconds: 0, value: 1}]}, {name: lag, points: [{timeSeconds: 0, value: 1}]}]\n"
               "services:\n- name: api\n  autoscaler: {kubernetes: hpa.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes", "hpa.yaml", 13, 15, "spec.metrics[0].external.metric.name",
                  "metric 'queue_depth' is not one of the workload's externalMetrics (externalMetrics: backlog, lag)");
  write("hpa-pods.yaml", std::string(kHpa).replace(std::string(kHpa).find("type: External\n    external:"),
                                                   std::string("type: External\n    external:").size(), "type: Pods\n    pods:"));
  expect_error_in(metrics + "services:\n- name: api\n  autoscaler: {kubernetes: hpa-pods.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes", "hpa-pods.yaml", 13, 15, "spec.metrics[0].pods.metric.name",
                  "metric 'queue_depth' is of type Pods: a service without inference exports no per-pod metrics (use External or Object)");
  write("hpa-cpu.yaml", R"(apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api-cpu
spec:
  scaleTargetRef: {name: api}
  maxReplicas: 4
)");
  expect_error_in(metrics + "services:\n- name: api\n  autoscaler: {kubernetes: hpa-cpu.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes", "hpa-cpu.yaml", 4, 9, "metadata.name",
                  "no metrics: the HPA's default, Resource cpu at 80% utilization, is a per-pod metric, which a service without "
               "inference does not export (give External or Object metrics)");
  expect_error_in("externalMetrics: [{name: lag, points: [{timeSeconds: 0, value: 1}]}]\nservices:\n- name: api\n  autoscaler: {kubernetes: keda.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes", "keda.yaml", 12, 14, "spec.triggers[0].metadata.query",
                  "metric 'queue_depth' is not one of the workload's externalMetrics (externalMetrics: lag)");
  expect_error(metrics + "services:\n- name: api\n  autoscaler: {kubernetes: none.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes",
               path("none.yaml") + ": no such file or directory");
  write("two.yaml", std::string(kHpa) + "---\n" + kKeda);
  expect_error(metrics + "services:\n- name: api\n  autoscaler: {kubernetes: two.yaml}\n", 7, 28, "services[0].autoscaler.kubernetes",
               "two.yaml has 1 HorizontalPodAutoscaler and 1 ScaledObject objects; exactly one is needed");
}

TEST_F(RolloutYaml, InferenceAutoscalerKeepsItsRules) {
  // The inference block's autoscaler is read by the same function under the serving rules: the serving
  // metrics, any HPA metric type, predictive allowed; external metrics are not among them.
  const std::string service = "services:\n- name: chat\n  gpus: 1\n  inference:\n    model: Llama-3.1-8B\n"
                              "    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 100, promptMedian: 80, "
                              "outputMean: 50, outputMedian: 40}}}\n";  // lines 4-9
  expect_error_in("externalMetrics: [{name: queue_depth, points: [{timeSeconds: 0, value: 1}]}]\n" + service +
                   "    autoscaler: {kubernetes: hpa.yaml}\n", 11, 30, "services[0].inference.autoscaler.kubernetes", "hpa.yaml", 13, 15, "spec.metrics[0].external.metric.name",
                  "metric 'queue_depth' is exported by no simulated component (exported: ");
  const SimWorkloadFile f = parse(service + "    autoscaler: {predictive: {capacityRpsPerReplica: 10}}\n");
  ASSERT_EQ(f.workload.inference.size(), 1u);
  EXPECT_TRUE(f.workload.inference[0].autoscaler.predictive.has_value());
  EXPECT_EQ(f.workload.inference[0].autoscaler_description, "predictive 10 req/s per replica, lead 0 s");
}

TEST_F(RolloutYaml, HpaControllerErrors) {
  expect_error("hpaController: {syncPeriodSeconds: 0}\n", 4, 36, "hpaController.syncPeriodSeconds", "0 is outside [1, 86400]");
  expect_error("hpaController: {syncPeriodSeconds: 1e-3}\n", 4, 36, "hpaController.syncPeriodSeconds", "1e-3 is outside [1, 86400]");
  expect_error("hpaController: {tolerance: -0.1}\n", 4, 28, "hpaController.tolerance", "-0.1 is negative");
  expect_error("hpaController: {downscaleStabilizationSeconds: 1e9}\n", 4, 48, "hpaController.downscaleStabilizationSeconds",
               "1e9 is above the maximum of 100000000 s");
  expect_error("hpaController: {perPodWithinTolerance: status}\n", 4, 40, "hpaController.perPodWithinTolerance",
               "'status' is not specReplicas or statusReplicas");
  expect_error("hpaController: {cpuInitializationPeriod: 300}\n", 4, 17, "hpaController.cpuInitializationPeriod",
               "unknown key 'cpuInitializationPeriod' (expected syncPeriodSeconds, tolerance, downscaleStabilizationSeconds, "
               "perPodWithinTolerance)");
}

TEST_F(RolloutYaml, ErrorsExitThroughInputError) {
  // A bad field is an InputError (the CLI's exit status 2) whose what() is "file:line:column: field 'f': message".
  try {
    parse("services:\n- name: api\nrollouts:\n- {service: api, atSeconds: 4000}\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path("w.yaml") + ":7:29: field 'rollouts[0].atSeconds': 4000 is after the horizon (3600 s)");
  }
}

}  // namespace
}  // namespace gpufleet::io
