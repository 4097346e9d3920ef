// The serving objects reader (readers/serving/k8s_serving.h): the examples/serving files into their structs,
// the vLLM command forms, the query reduction, and errors that name file, line, column and field.
#include "readers/serving/k8s_serving.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "util/input_error.h"

namespace io = gpufleet::io;
namespace as = gpufleet::replica_autoscaling;
namespace inf = gpufleet::inference;
using gpufleet::InputError;

namespace {

std::string example(const std::string& name) {
  return (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "serving" / name).string();
}

// "file:line:column: field 'f': message" of the InputError f throws.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string deployment(const std::string& container) {
  return "apiVersion: apps/v1\n"
         "kind: Deployment\n"
         "metadata: {name: d}\n"
         "spec:\n"
         "  template:\n"
         "    spec:\n"
         "      containers:\n" +
         container;
}

}  // namespace

TEST(K8sServingReader, ExampleDeployment) {
  const io::ServingObjects o = io::read_k8s_serving({example("vllm-deployment.yaml")});
  ASSERT_EQ(o.deployments.size(), 1u);
  const io::VllmDeployment& d = o.deployments[0];
  EXPECT_EQ(d.name, "llama-8b");
  EXPECT_EQ(d.namespace_name, "serving");
  EXPECT_EQ(d.replicas, 2);
  EXPECT_EQ(d.container, "vllm");
  EXPECT_EQ(d.engine.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(d.engine.tensor_parallel_size, 2);
  EXPECT_EQ(d.engine.max_num_seqs, 128);
  EXPECT_DOUBLE_EQ(d.engine.gpu_memory_utilization, 0.9);
  EXPECT_EQ(d.engine.dtype, inf::Precision::kBf16);
  EXPECT_EQ(d.engine.kv_cache_dtype, inf::Precision::kBf16);
  EXPECT_EQ(d.engine.max_model_len, 8192);
  EXPECT_EQ(d.engine.max_num_batched_tokens, 0);  // vLLM's default for the GPU
  EXPECT_EQ(d.gpus_per_pod, 2);
  EXPECT_EQ(d.mig_profile, "");
  EXPECT_EQ(d.node_selector.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  ASSERT_EQ(d.tolerations.size(), 1u);
  EXPECT_EQ(d.tolerations[0].operator_, "Exists");
  EXPECT_EQ(d.ignored_args, std::vector<std::string>{"--port 8000"});
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_NE(o.warnings[0].find("not modelled (ignored): --port 8000"), std::string::npos) << o.warnings[0];
  EXPECT_EQ(d.where.line, 7);
}

TEST(K8sServingReader, ExampleHpa) {
  const io::ServingObjects o = io::read_k8s_serving({example("hpa-dcgm.yaml")});
  ASSERT_EQ(o.hpas.size(), 1u);
  const as::HpaSpec& h = o.hpas[0].spec;
  EXPECT_EQ(h.name, "llama-8b");
  EXPECT_EQ(h.scale_target_name, "llama-8b");
  EXPECT_EQ(*h.min_replicas, 1);
  EXPECT_EQ(h.max_replicas, 8);
  ASSERT_EQ(h.metrics.size(), 1u);
  EXPECT_EQ(h.metrics[0].type, as::MetricSourceType::kPods);
  EXPECT_EQ(h.metrics[0].name, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(h.metrics[0].target_type, as::MetricTargetType::kAverageValue);
  EXPECT_DOUBLE_EQ(h.metrics[0].target, 60);
  EXPECT_EQ(o.hpas[0].metric_positions[0].line, 19);
  EXPECT_EQ(o.hpas[0].metric_positions[0].field, "spec.metrics[0].pods.metric.name");
  const as::ScalingRules& up = *h.behavior->scale_up;
  EXPECT_EQ(*up.stabilization_window_seconds, 0);
  EXPECT_FALSE(up.select_policy.has_value());  // as written; the API defaults come later
  ASSERT_EQ(up.policies->size(), 1u);
  EXPECT_EQ((*up.policies)[0].type, as::ScalingPolicyType::kPods);
  EXPECT_EQ((*up.policies)[0].value, 2);
  EXPECT_EQ((*up.policies)[0].period_seconds, 60);
  EXPECT_EQ(*h.behavior->scale_down->stabilization_window_seconds, 600);
  EXPECT_EQ((*h.behavior->scale_down->policies)[0].type, as::ScalingPolicyType::kPercent);
  // It runs: 2 pods averaging 90 % against 60: ceil(1.5 x 2) = 3.
  as::HpaAutoscaler a(h);
  EXPECT_EQ(a.evaluate(0, 2, 2, {{"DCGM_FI_DEV_GPU_UTIL", as::MetricSample{180, 2}}}), 3);
}

TEST(K8sServingReader, ExampleScaledObject) {
  const io::ServingObjects o = io::read_k8s_serving({example("keda-scaledobject.yaml")});
  ASSERT_EQ(o.scaled_objects.size(), 1u);
  const as::ScaledObjectSpec& s = o.scaled_objects[0].spec;
  EXPECT_EQ(s.name, "llama-8b");
  EXPECT_EQ(s.scale_target_name, "llama-8b");
  EXPECT_EQ(s.scale_target_kind, "Deployment");
  EXPECT_EQ(s.polling_interval_s, 30);
  EXPECT_EQ(s.cooldown_period_s, 300);
  EXPECT_EQ(s.min_replica_count, 0);
  EXPECT_EQ(s.max_replica_count, 5);
  EXPECT_EQ(*s.hpa_behavior->scale_down->stabilization_window_seconds, 300);
  ASSERT_EQ(s.triggers.size(), 1u);
  EXPECT_EQ(s.triggers[0].metric, "vllm:num_requests_waiting");
  EXPECT_EQ(s.triggers[0].aggregation, as::QueryAggregation::kSum);
  EXPECT_EQ(s.triggers[0].query,
            "sum(vllm:num_requests_waiting{namespace=\"serving\", model_name=\"meta-llama/Llama-3.1-8B-Instruct\"})");
  EXPECT_DOUBLE_EQ(s.triggers[0].threshold, 5);
  EXPECT_DOUBLE_EQ(s.triggers[0].activation_threshold, 0);
  EXPECT_EQ(s.triggers[0].metric_type, as::KedaMetricType::kAverageValue);
  EXPECT_TRUE(o.warnings.empty());
  // It runs: at the first poll 3 requests wait -> 0 to 1; the HPA then takes it to ceil(12 / 5) = 3.
  as::KedaAutoscaler k(s);
  EXPECT_EQ(k.evaluate(0, 0, 0, {{"vllm:num_requests_waiting", as::MetricSample{3, 0}}}), 1);
  EXPECT_EQ(k.evaluate(15, 1, 1, {{"vllm:num_requests_waiting", as::MetricSample{12, 1}}}), 3);
}

TEST(K8sServingReader, CommandForms) {
  // python -m ... api_server --model X, --flag=value, underscores, fp8, kv auto, 8k.
  const io::ServingObjects a = io::parse_k8s_serving_text(
      deployment("      - name: server\n"
                 "        image: python:3.12\n"
                 "        command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
                 "        args: [--model, Qwen/Qwen2.5-7B, --max_num_seqs=64, --quantization, fp8, --max-model-len, 25.6k,\n"
                 "               --enforce-eager, --no-enable-prefix-caching, --kv-cache-dtype, fp8_e4m3]\n"
                 "        resources: {limits: {nvidia.com/mig-3g.40gb: 1}}\n"),
      "a.yaml");
  ASSERT_EQ(a.deployments.size(), 1u);
  const io::VllmDeployment& d = a.deployments[0];
  EXPECT_EQ(d.replicas, 1);
  EXPECT_EQ(d.engine.model, "Qwen/Qwen2.5-7B");
  EXPECT_EQ(d.engine.max_num_seqs, 64);
  EXPECT_EQ(d.engine.dtype, inf::Precision::kFp8);
  EXPECT_EQ(d.engine.kv_cache_dtype, inf::Precision::kFp8);
  EXPECT_EQ(d.engine.max_model_len, 25600);
  EXPECT_FALSE(d.engine.enable_prefix_caching);
  EXPECT_EQ(d.mig_profile, "3g.40gb");
  EXPECT_EQ(d.mig_devices_per_pod, 1);
  EXPECT_EQ(d.gpus_per_pod, 0);
  EXPECT_EQ(d.ignored_args, std::vector<std::string>{"--enforce-eager"});

  // sh -c "vllm serve ..." with 8K (binary) and --dtype half (kv auto = fp16).
  const io::ServingObjects b = io::parse_k8s_serving_text(
      deployment("      - name: c\n"
                 "        image: my/vllm\n"
                 "        command: [/bin/sh, -c]\n"
                 "        args: [\"pip list && /usr/local/bin/vllm serve org/model --dtype half --max-model-len 8K -tp 4\"]\n"
                 "        resources: {limits: {nvidia.com/gpu: \"4\"}}\n"),
      "b.yaml");
  ASSERT_EQ(b.deployments.size(), 1u);
  EXPECT_EQ(b.deployments[0].engine.model, "org/model");
  EXPECT_EQ(b.deployments[0].engine.dtype, inf::Precision::kFp16);
  EXPECT_EQ(b.deployments[0].engine.kv_cache_dtype, inf::Precision::kFp16);
  EXPECT_EQ(b.deployments[0].engine.max_model_len, 8192);
  EXPECT_EQ(b.deployments[0].engine.tensor_parallel_size, 4);
  EXPECT_EQ(b.deployments[0].gpus_per_pod, 4);

  // The vllm/vllm-openai image with args only; a sidecar first.
  const io::ServingObjects c = io::parse_k8s_serving_text(
      deployment("      - name: proxy\n"
                 "        image: envoy\n"
                 "      - name: engine\n"
                 "        image: vllm/vllm-openai:latest\n"
                 "        args: [--model, m, --block-size, \"32\", --max-num-batched-tokens, \"4096\"]\n"
                 "        resources: {limits: {nvidia.com/gpu: 1}}\n"),
      "c.yaml");
  ASSERT_EQ(c.deployments.size(), 1u);
  EXPECT_EQ(c.deployments[0].container, "engine");
  EXPECT_EQ(c.deployments[0].engine.block_size, 32);
  EXPECT_EQ(c.deployments[0].engine.max_num_batched_tokens, 4096);

  // Not vLLM: skipped with a warning; other kinds skipped too.
  const io::ServingObjects n = io::parse_k8s_serving_text(
      deployment("      - name: web\n        image: nginx\n") + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "n.yaml");
  EXPECT_TRUE(n.deployments.empty());
  ASSERT_EQ(n.warnings.size(), 2u);
  EXPECT_NE(n.warnings[0].find("runs no vLLM server"), std::string::npos);
  EXPECT_EQ(n.warnings[1], "n.yaml:12: kind Service is not a serving object: skipped");
}

TEST(K8sServingReader, PrometheusQueries) {
  const io::PromQuery a = io::parse_prometheus_query("sum by (model_name) (vllm:num_requests_waiting{a=\"}\"})");
  EXPECT_EQ(a.metric, "vllm:num_requests_waiting");
  EXPECT_EQ(a.aggregation, as::QueryAggregation::kSum);
  EXPECT_FALSE(a.bare);
  const io::PromQuery b = io::parse_prometheus_query(" avg(vllm:kv_cache_usage_perc) ");
  EXPECT_EQ(b.aggregation, as::QueryAggregation::kAverage);
  EXPECT_EQ(b.metric, "vllm:kv_cache_usage_perc");
  const io::PromQuery c = io::parse_prometheus_query("vllm:num_requests_running{x=\"y\"}");
  EXPECT_TRUE(c.bare);
  EXPECT_EQ(c.metric, "vllm:num_requests_running");
  EXPECT_THROW(io::parse_prometheus_query("sum(rate(vllm:request_success_total[1m]))"), std::invalid_argument);
  EXPECT_THROW(io::parse_prometheus_query("max(vllm:num_requests_waiting)"), std::invalid_argument);
  EXPECT_THROW(io::parse_prometheus_query("sum(a) + sum(b)"), std::invalid_argument);
  EXPECT_THROW(io::parse_prometheus_query("sum(a{x=\"y\""), std::invalid_argument);
}

TEST(K8sServingReader, ErrorsNameFileLineColumnField) {
  // An engine flag without its value.
  EXPECT_EQ(error_of([] {
              io::parse_k8s_serving_text(deployment("      - name: c\n"
                                                    "        command: [vllm, serve, m]\n"
                                                    "        args: [--max-num-seqs]\n"),
                                         "d.yaml");
            }),
            "d.yaml:10:16: field 'spec.template.spec.containers[0].args[0]': --max-num-seqs needs a value");
  // A non-integer value.
  EXPECT_EQ(error_of([] {
              io::parse_k8s_serving_text(deployment("      - name: c\n"
                                                    "        command: [vllm, serve, m, --max-num-seqs, lots]\n"),
                                         "d.yaml");
            }),
            "d.yaml:9:51: field 'spec.template.spec.containers[0].command[4]': --max-num-seqs 'lots' is not an integer");
  // Tensor parallel above the GPUs.
  EXPECT_EQ(error_of([] {
              io::parse_k8s_serving_text(deployment("      - name: c\n"
                                                    "        command: [vllm, serve, m, --tensor-parallel-size, \"2\"]\n"
                                                    "        resources: {limits: {nvidia.com/gpu: 1}}\n"),
                                         "d.yaml");
            }),
            "d.yaml:9:35: field 'spec.template.spec.containers[0].command[3]': --tensor-parallel-size 2 needs 2 GPUs; "
            "the container has 1");
  // An unknown MIG profile.
  EXPECT_NE(error_of([] {
              io::parse_k8s_serving_text(deployment("      - name: c\n"
                                                    "        command: [vllm, serve, m]\n"
                                                    "        resources: {limits: {nvidia.com/mig-9g.99gb: 1}}\n"),
                                         "d.yaml");
            }).find("d.yaml:10:30: field 'spec.template.spec.containers[0].resources.limits.nvidia.com/mig-9g.99gb': MIG profile '9g.99gb'"),
            std::string::npos);
  // HPA: a policy period out of range, a Value target on a Pods metric, maxReplicas below min.
  const std::string hpa =
      "apiVersion: autoscaling/v2\n"
      "kind: HorizontalPodAutoscaler\n"
      "metadata: {name: h}\n"
      "spec:\n"
      "  scaleTargetRef: {kind: Deployment, name: d}\n";
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(hpa + "  maxReplicas: 3\n"
                                               "  behavior:\n"
                                               "    scaleUp:\n"
                                               "      policies: [{type: Pods, value: 1, periodSeconds: 3600}]\n",
                                         "h.yaml");
            }),
            "h.yaml:9:56: field 'spec.behavior.scaleUp.policies[0].periodSeconds': 3600 is out of range [1, 1800]");
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(hpa + "  maxReplicas: 3\n"
                                               "  metrics:\n"
                                               "  - type: Pods\n"
                                               "    pods:\n"
                                               "      metric: {name: x}\n"
                                               "      target: {type: Value, value: 3}\n",
                                         "h.yaml");
            }),
            "h.yaml:11:22: field 'spec.metrics[0].pods.target.type': Value is not valid for a Pods metric (use AverageValue)");
  EXPECT_EQ(error_of([&] { io::parse_k8s_serving_text(hpa + "  minReplicas: 4\n  maxReplicas: 3\n", "h.yaml"); }),
            "h.yaml:7:16: field 'spec.maxReplicas': maxReplicas 3 must be >= minReplicas 4");
  EXPECT_EQ(error_of([&] { io::parse_k8s_serving_text(hpa + "  maxReplicas: 3\n  behavior: {scaleDown: {selectPolicy: Fastest}}\n", "h.yaml"); }),
            "h.yaml:7:40: field 'spec.behavior.scaleDown.selectPolicy': unknown selectPolicy 'Fastest' (expected Max, Min or Disabled)");
  // An unknown metric name is accepted (the simulator checks it).
  EXPECT_EQ(io::parse_k8s_serving_text(hpa + "  maxReplicas: 3\n  metrics:\n  - type: External\n    external:\n"
                                             "      metric: {name: no_such_metric}\n      target: {type: Value, value: 500m}\n",
                                       "h.yaml")
                .hpas[0].spec.metrics[0].target,
            0.5);
  // ScaledObject: no threshold, a non-prometheus trigger, idle not below min.
  const std::string so =
      "apiVersion: keda.sh/v1alpha1\n"
      "kind: ScaledObject\n"
      "metadata: {name: s}\n"
      "spec:\n"
      "  scaleTargetRef: {name: d}\n";
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(so + "  triggers:\n  - type: prometheus\n    metadata: {query: sum(x)}\n", "s.yaml");
            }),
            "s.yaml:8:15: field 'spec.triggers[0].metadata.threshold': required field is missing (the prometheus scaler needs a threshold)");
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(so + "  triggers:\n  - type: cpu\n    metadata: {value: \"50\"}\n", "s.yaml");
            }),
            "s.yaml:7:11: field 'spec.triggers[0].type': trigger type 'cpu' is not modelled (gpufleet reads prometheus triggers)");
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(so + "  idleReplicaCount: 0\n  triggers:\n  - type: prometheus\n"
                                              "    metadata: {query: sum(x), threshold: \"1\"}\n",
                                         "s.yaml");
            }),
            "s.yaml:6:21: field 'spec.idleReplicaCount': idleReplicaCount 0 must be less than minReplicaCount 0");
  EXPECT_EQ(error_of([&] {
              io::parse_k8s_serving_text(so + "  triggers:\n  - type: prometheus\n"
                                              "    metadata: {query: \"max(x)\", threshold: \"1\"}\n",
                                         "s.yaml");
            }).substr(0, 60),
            "s.yaml:8:23: field 'spec.triggers[0].metadata.query': query ");
}

// The fuzz seeds are valid input (so the fuzzer starts deep in the reader).
TEST(K8sServingReader, FuzzSeedsParse) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / "k8s_serving_fuzz";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_NO_THROW(io::read_k8s_serving({e.path().string()})) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 4);
  const io::ServingObjects o = io::read_k8s_serving({dir.string()});
  EXPECT_EQ(o.deployments.size(), 2u);
  EXPECT_EQ(o.hpas.size(), 1u);
  ASSERT_EQ(o.scaled_objects.size(), 1u);
  EXPECT_EQ(o.scaled_objects[0].spec.triggers[0].aggregation, as::QueryAggregation::kAverage);
  EXPECT_EQ(o.hpas[0].spec.metrics[2].target, 10000);  // 10k
  EXPECT_EQ(o.hpas[0].spec.metrics[3].target, 0.5);    // 500m
  EXPECT_EQ(o.deployments[0].mig_profile, "1g.10gb");  // api-server-mig.yaml sorts first
  EXPECT_EQ(o.deployments[1].engine.max_model_len, 32768);
  EXPECT_EQ(o.deployments[1].engine.max_num_batched_tokens, 8192);
}

namespace gpufleet {
namespace {

// A vLLM Deployment's rollout strategy and minReadySeconds are read (the simulator's rollouts use
// them); what it carries that the serving simulation does not model is said at its field.
TEST(K8sServingReader, RolloutStrategyIsReadAndPlacementFieldsAreSaidNotModelled) {
  const io::ServingObjects o = io::parse_k8s_serving_text(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  replicas: 2
  minReadySeconds: 30
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    spec:
      schedulerName: kai-scheduler
      containers:
      - name: engine
        image: vllm/vllm-openai:latest
        args: [--model, m]
        resources: {limits: {nvidia.com/gpu: 1}}
)", "d.yaml");
  ASSERT_EQ(o.deployments.size(), 1u);
  ASSERT_TRUE(o.deployments[0].rolling_update.has_value());
  EXPECT_EQ(o.deployments[0].rolling_update->max_surge, (IntOrPercent{1, false}));
  EXPECT_EQ(o.deployments[0].rolling_update->max_unavailable, (IntOrPercent{0, false}));
  EXPECT_DOUBLE_EQ(o.deployments[0].min_ready_s, 30);
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_EQ(o.warnings[0],
            "d.yaml:12:22: field 'spec.template.spec.schedulerName': Deployment llm: a scheduler other than default-scheduler is not "
            "modelled: replicas are placed by the simulation's policy");
  // Recreate is refused at its field.
  try {
    io::parse_k8s_serving_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  strategy: {type: Recreate}\n"
                               "  template:\n    spec:\n      containers:\n      - {name: e, image: vllm/vllm-openai, args: [--model, m]}\n",
                               "r.yaml");
    ADD_FAILURE() << "Recreate accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.field(), "spec.strategy.type");
  }
}

}  // namespace
}  // namespace gpufleet
