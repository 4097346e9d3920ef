// The inference routing objects reader (readers/serving/endpoint_picker_config.h): the example into
// its structs, the loader's defaults, and errors naming file, line, column and field.
#include "readers/serving/endpoint_picker_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "readers/sim/workload_file.h"
#include "util/input_error.h"

namespace io = gpufleet::io;
using gpufleet::InputError;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { io::parse_endpoint_picker_text(text, "e.yaml"); });
}

const char* kHead = "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n";

TEST(EndpointPickerConfigReader, ReadsTheExample) {
  const io::EndpointPickerObjects x =
      io::read_endpoint_picker_file((std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples/inference-routing/epp.yaml").string());
  ASSERT_EQ(x.pools.size(), 1u);
  EXPECT_EQ(x.pools[0].name, "llama-8b");
  EXPECT_EQ(x.pools[0].selector.at("app"), "vllm-llama-8b");
  EXPECT_EQ(x.pools[0].target_ports, (std::vector<int32_t>{8000}));
  EXPECT_EQ(x.pools[0].endpoint_picker_name, "llama-8b-epp");
  EXPECT_EQ(x.pools[0].endpoint_picker_port, 9002);
  ASSERT_EQ(x.objectives.size(), 1u);
  EXPECT_EQ(x.objectives[0].effective_priority(), -1);
  EXPECT_TRUE(x.objectives[0].sheddable());
  ASSERT_TRUE(x.config.has_value());
  ASSERT_TRUE(x.resolved);
  ASSERT_EQ(x.resolved->scorers.size(), 3u);
  EXPECT_DOUBLE_EQ(x.resolved->scorers[2].weight, 3);
  EXPECT_EQ(x.resolved->picker.type, "max-score-picker");
  EXPECT_EQ(x.resolved->saturation.queue_depth_threshold, 5);
  EXPECT_DOUBLE_EQ(x.resolved->saturation.metrics_staleness_threshold_s, 0.2);
  EXPECT_TRUE(x.warnings.empty());
}

TEST(EndpointPickerConfigReader, NoConfigMeansTheDefault) {
  const io::EndpointPickerObjects x = io::parse_endpoint_picker_text("", "e.yaml");
  EXPECT_FALSE(x.config.has_value());
  ASSERT_TRUE(x.resolved);
  EXPECT_EQ(x.resolved->scorers.size(), 3u);
}

TEST(EndpointPickerConfigReader, ParametersOverrideTheDefaults) {
  const io::EndpointPickerObjects x = io::parse_endpoint_picker_text(
      std::string(kHead) +
          "plugins:\n- name: p\n  type: prefix-cache-scorer\n  parameters: {autoTune: false, blockSizeTokens: 64, maxPrefixTokensToMatch: 1024}\n"
          "- type: utilization-detector\n  parameters: {queueDepthThreshold: 8, headroom: 0.25, metricsStalenessThreshold: 1m30s}\n",
      "e.yaml");
  ASSERT_TRUE(x.resolved->prefix);
  EXPECT_FALSE(x.resolved->prefix->auto_tune);
  EXPECT_EQ(x.resolved->prefix->block_size_tokens, 64);
  EXPECT_EQ(x.resolved->prefix->max_prefix_tokens_to_match, 1024);
  EXPECT_EQ(x.resolved->saturation.queue_depth_threshold, 8);
  EXPECT_DOUBLE_EQ(x.resolved->saturation.headroom, 0.25);
  EXPECT_DOUBLE_EQ(x.resolved->saturation.metrics_staleness_threshold_s, 90);
  // No profile: every filter, scorer and picker with weight 1; the detector is a filter.
  EXPECT_EQ(x.resolved->scorers.size(), 1u);
  EXPECT_EQ(x.resolved->filters.size(), 1u);
}

TEST(EndpointPickerConfigReader, ErrorsNameFileLineColumnAndField) {
  EXPECT_EQ(parse_error(std::string(kHead) + "plugins:\n- type: weighted-random-picker\n"),
            "e.yaml:4:9: field 'plugins[0].type': plugin type 'weighted-random-picker' is not modelled (modelled: queue-scorer, "
            "kv-cache-utilization-scorer, prefix-cache-scorer, prefix-cache-affinity-filter, utilization-detector, max-score-picker, "
            "random-picker, single-profile-handler)");
  EXPECT_EQ(parse_error(std::string(kHead) + "plugins:\n- type: queue-scorer\nschedulingProfiles:\n- name: d\n  plugins:\n  - pluginRef: nope\n"),
            "e.yaml:8:16: field 'schedulingProfiles[0].plugins[0].pluginRef': no plugin named 'nope'");
  EXPECT_EQ(parse_error(std::string(kHead) + "plugins:\n- type: utilization-detector\n  parameters: {kvCacheUtilThreshold: 1.5}\n"),
            "e.yaml:5:38: field 'plugins[0].parameters.kvCacheUtilThreshold': kvCacheUtilThreshold 1.5 must be in (0, 1]");
  EXPECT_EQ(parse_error(std::string(kHead) + "plugins:\n- type: queue-scorer\n  parameters: {x: 1}\n"),
            "e.yaml:5:16: field 'plugins[0].parameters.x': unknown key 'x': plugin type 'queue-scorer' takes no parameters");
  EXPECT_EQ(parse_error(std::string(kHead) + "flowControl: {maxRequests: 10}\n"),
            "e.yaml:3:14: field 'flowControl': flow control (queues, priority bands) is not modelled; shedding of sheddable "
            "requests is (saturationDetector)");
  EXPECT_EQ(parse_error("apiVersion: inference.networking.x-k8s.io/v1alpha2\nkind: InferenceObjective\nmetadata: {name: o}\n"
                        "spec: {priority: 1, poolRef: {name: missing}}\n"),
            "e.yaml:4:37: field 'spec.poolRef.name': no InferencePool 'missing' in namespace 'default' in this input");
  EXPECT_EQ(parse_error("apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: p}\n"
                        "spec: {selector: {matchLabels: {a: b}}, targetPorts: [{number: 8000}], endpointPickerRef: {name: e}}\n"),
            "e.yaml:4:91: field 'spec.endpointPickerRef.port': port is required when kind is 'Service' or unspecified "
            "(defaults to 'Service')");
  EXPECT_EQ(parse_error("apiVersion: inference.networking.x-k8s.io/v1alpha2\nkind: InferencePool\n"),
            "e.yaml:1:13: field 'apiVersion': apiVersion 'inference.networking.x-k8s.io/v1alpha2' is not supported for "
            "InferencePool (expected inference.networking.k8s.io/v1)");
}

TEST(EndpointPickerConfigReader, ProfileMistakesAndDuplicatesAreErrors) {
  // No schedulingProfiles: the loader makes one of every plugin; a second picker there is reported
  // at the (absent) schedulingProfiles, the made-up profile not being in the file.
  EXPECT_EQ(parse_error(std::string(kHead) + "plugins:\n- type: max-score-picker\n- type: random-picker\n"),
            "e.yaml:1:1: field 'schedulingProfiles': a second picker 'random-picker' in one profile");
  const std::string two = std::string(kHead) + "plugins:\n- type: queue-scorer\n- type: max-score-picker\nschedulingProfiles:\n- name: d\n  plugins:\n";
  EXPECT_EQ(parse_error(two + "  - {pluginRef: queue-scorer, weight: 1}\n  - {pluginRef: queue-scorer, weight: 5}\n"),
            "e.yaml:10:17: field 'schedulingProfiles[0].plugins[1].pluginRef': 'queue-scorer' is already in this profile (plugins[0])");
  EXPECT_EQ(parse_error(two + "  - {pluginRef: max-score-picker, weight: 5}\n"),
            "e.yaml:9:43: field 'schedulingProfiles[0].plugins[0].weight': only a scorer takes a weight ('max-score-picker' is a "
            "max-score-picker)");
  const std::string pool =
      "apiVersion: inference.networking.k8s.io/v1\nkind: InferencePool\nmetadata: {name: p}\n"
      "spec: {selector: {matchLabels: {a: b}}, targetPorts: [{number: 8000}], endpointPickerRef: {name: e, port: {number: 9002}}}\n";
  const std::string objective = "---\napiVersion: inference.networking.x-k8s.io/v1alpha2\nkind: InferenceObjective\nmetadata: {name: o}\n"
                                "spec: {priority: -1, poolRef: {name: p}}\n";
  EXPECT_EQ(parse_error(pool + objective + objective), "e.yaml:13:18: field 'metadata.name': InferenceObjective 'o' is defined twice");
  // Two objectives and none named: the caller must choose.
  const io::EndpointPickerObjects two_objectives = io::parse_endpoint_picker_text(
      pool + objective + "---\napiVersion: inference.networking.x-k8s.io/v1alpha2\nkind: InferenceObjective\nmetadata: {name: q}\n"
                         "spec: {priority: 2, poolRef: {name: p}}\n",
      "e.yaml");
  try {
    io::select_objective(two_objectives, "", "e.yaml");
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "e.yaml has 2 InferenceObjectives (o, q): name one");
  }
  EXPECT_EQ(io::select_objective(two_objectives, "q", "e.yaml")->effective_priority(), 2);
}

TEST(EndpointPickerConfigReader, OtherKindsAreSkippedWithAWarning) {
  const io::EndpointPickerObjects x =
      io::parse_endpoint_picker_text("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "e.yaml");
  ASSERT_EQ(x.warnings.size(), 1u);
  EXPECT_EQ(x.warnings[0], "e.yaml:2: kind Service is not an inference routing object: skipped");
}

// A simulate workload's inference service routed by the endpoint picker (readers/serving/sim_inference.h).
std::string workload(const std::string& router) {
  return "apiVersion: sim.gpufleet.io/v1\nkind: Workload\nhorizonSeconds: 60\nservices:\n- name: chat\n"
         "  gpus: 1\n  pools: [p]\n  inference:\n    model: Llama-3.1-8B\n"
         "    traffic: {generate: {meanRatePerSecond: 1, tokens: {promptMean: 100, promptMedian: 100, outputMean: 10, outputMedian: 10}}}\n"
         "    router: " + router + "\n";
}

TEST(EndpointPickerConfigReader, SimulateRouterReadsTheFileAndTheObjective) {
  const std::string dir = (std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples/inference-routing").string();
  const io::SimWorkloadFile f = io::parse_sim_workload_text(
      workload("{policy: endpoint-picker, endpointPickerConfig: epp.yaml, inferenceObjective: batch-summaries}"), dir + "/w.yaml", {"p"});
  ASSERT_EQ(f.workload.inference.size(), 1u);
  const gpufleet::inference::RouterConfig& r = f.workload.inference[0].router;
  EXPECT_EQ(r.policy, gpufleet::inference::RoutingPolicy::kEndpointPicker);
  EXPECT_EQ(r.objective_priority, -1);
  ASSERT_TRUE(r.endpoint_picker);
  EXPECT_EQ(r.endpoint_picker->scorers.size(), 3u);
  // Without a file: the EPP's default, priority 0.
  const io::SimWorkloadFile d = io::parse_sim_workload_text(workload("{policy: endpoint-picker}"), dir + "/w.yaml", {"p"});
  EXPECT_FALSE(d.workload.inference[0].router.endpoint_picker);
  EXPECT_EQ(d.workload.inference[0].router.objective_priority, 0);
  EXPECT_EQ(error_of([&] { io::parse_sim_workload_text(workload("{policy: round-robin, endpointPickerConfig: epp.yaml}"), dir + "/w.yaml", {"p"}); }),
            dir + "/w.yaml:11:57: field 'services[0].inference.router.endpointPickerConfig': needs policy: endpoint-picker");
  EXPECT_EQ(error_of([&] {
              io::parse_sim_workload_text(workload("{policy: endpoint-picker, endpointPickerConfig: epp.yaml, inferenceObjective: x}"),
                                          dir + "/w.yaml", {"p"});
            }),
            dir + "/w.yaml:11:91: field 'services[0].inference.router.inferenceObjective': no InferenceObjective 'x' in " + dir + "/epp.yaml");
}

}  // namespace
