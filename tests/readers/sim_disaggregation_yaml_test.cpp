// inference.disaggregation in a simulator workload file (readers/serving/sim_inference.h
// parse_disaggregation): the roles become service items of their own (replicas, gpus, pools) with
// their own autoscalers, the link presets and a custom link, and every bad value is one error naming
// the file, line, column and field.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "readers/sim/workload_file.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// A workload whose service "rag" has `disaggregation` (indented by 4, under inference:) and whose
// service-level lines (indented by 2) are `service_extra` (none: line 13 is "    disaggregation:",
// its first line 14).
std::string workload(const std::string& disaggregation, const std::string& service_extra = "") {
  return "apiVersion: sim.gpufleet.io/v1\n"                       // 1
         "kind: Workload\n"                                       // 2
         "horizonSeconds: 3600\n"                                 // 3
         "services:\n"                                            // 4
         "- name: rag\n"                                          // 5
         "  namespace: serving\n"                                 // 6
         "  cpu: \"3\"\n"                                         // 7
         "  memory: 24Gi\n" +                                     // 8
         service_extra +
         "  inference:\n"
         "    model: Llama-3.1-8B\n"
         "    traffic:\n"
         "      generate: {meanRatePerSecond: 1, tokens: {promptMean: 8000, promptMedian: 7800, outputMean: 200, outputMedian: 180}}\n"
         "    disaggregation:\n" +  // 13
         disaggregation;
}

const std::string kRoles =
    "      prefill: {replicas: 2, gpus: 1, pools: [l40s]}\n"     // 14
    "      decode: {replicas: 1, minReplicas: 1, maxReplicas: 4, gpus: 2, pools: [h100], autoscaler: {kubernetes: keda.yaml}}\n";

class DisaggregationYaml : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufleet-disagg-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "keda.yaml") << "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata:\n  name: rag-decode\nspec:\n"
                                         "  scaleTargetRef:\n    name: rag-decode\n  minReplicaCount: 1\n  maxReplicaCount: 4\n"
                                         "  triggers:\n  - type: prometheus\n    metadata:\n"
                                         "      query: sum(vllm:kv_cache_usage_perc)\n      threshold: \"0.6\"\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string source() const { return (dir_ / "w.yaml").string(); }
  SimWorkloadFile parse(const std::string& text) const { return parse_sim_workload_text(text, source(), {"l40s", "h100"}); }
  std::string error(const std::string& text) const {
    try {
      parse(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

TEST_F(DisaggregationYaml, RolesBecomeItemsOfTheirOwn) {
  const SimWorkloadFile f = parse(workload(
      "      kvTransferLink: {gbps: 400, latencyMs: 2, perGpu: false}\n      maxLocalPrefillTokens: 1000\n      firstTokenFrom: decode\n" +
      kRoles));
  // The service's item is replaced by its roles' (namespace, cpu and memory shared).
  ASSERT_EQ(f.workload.items.size(), 2u);
  const sim::WorkloadSpec& p = f.workload.items[0];
  const sim::WorkloadSpec& d = f.workload.items[1];
  EXPECT_EQ(p.name, "rag-prefill");
  EXPECT_EQ(p.pods, 2);
  EXPECT_EQ(p.num_gpu, 1);
  EXPECT_EQ(p.pools, (std::vector<std::string>{"l40s"}));
  EXPECT_EQ(p.namespace_name, "serving");
  EXPECT_EQ(p.cpu_milli, 3000);
  EXPECT_EQ(d.name, "rag-decode");
  EXPECT_EQ(d.pods, 1);
  EXPECT_EQ(d.num_gpu, 2);
  EXPECT_EQ(d.gpu_milli, 1000);
  EXPECT_EQ(d.pools, (std::vector<std::string>{"h100"}));
  ASSERT_EQ(f.workload.inference.size(), 1u);
  const sim::InferenceServiceSpec& spec = f.workload.inference[0];
  EXPECT_EQ(spec.service, "rag");
  ASSERT_TRUE(spec.disaggregation.has_value());
  const sim::DisaggregationSpec& x = *spec.disaggregation;
  // 400 Gb/s = 50 GB/s, one path per replica pair, 2 ms.
  EXPECT_EQ(x.link.name, "custom");
  EXPECT_DOUBLE_EQ(x.link.gb_s, 50);
  EXPECT_FALSE(x.link.per_gpu);
  EXPECT_DOUBLE_EQ(x.link.latency_s, 0.002);
  EXPECT_EQ(x.max_local_prefill_tokens, 1000);
  EXPECT_EQ(x.first_token, inference::FirstTokenFrom::kDecode);
  EXPECT_EQ(x.prefill.item, "rag-prefill");
  EXPECT_EQ(x.prefill.tensor_parallel_size, 1);
  EXPECT_TRUE(x.prefill.autoscaler.empty());
  EXPECT_EQ(x.decode.tensor_parallel_size, 2);
  EXPECT_EQ(x.decode.min_replicas, 1);
  EXPECT_EQ(x.decode.max_replicas, 4);
  EXPECT_EQ(x.prefill.replicas, 2);
  EXPECT_EQ(x.decode.replicas, 1);
  ASSERT_TRUE(x.decode.autoscaler.keda.has_value());
  EXPECT_EQ(x.decode.autoscaler.keda->triggers.at(0).metric, "vllm:kv_cache_usage_perc");
  EXPECT_EQ(x.decode.autoscaler_description, "keda rag-decode (vllm:kv_cache_usage_perc > 0.6)");
  EXPECT_TRUE(spec.autoscaler.empty());
  // The defaults: the rdma preset, every prompt remote, the first token from the prefill replica.
  const sim::DisaggregationSpec def = *parse(workload(kRoles)).workload.inference.at(0).disaggregation;
  EXPECT_EQ(def.link.name, "rdma");
  EXPECT_DOUBLE_EQ(def.link.gb_s, 50);
  EXPECT_TRUE(def.link.per_gpu);
  EXPECT_EQ(def.max_local_prefill_tokens, 0);
  EXPECT_EQ(def.first_token, inference::FirstTokenFrom::kPrefill);
}

TEST_F(DisaggregationYaml, BadValuesNameFileLineColumnAndField) {
  const std::string at = source() + ":";
  EXPECT_EQ(error(workload("      kvTransferLink: infiniband\n" + kRoles)),
            at + "14:23: field 'services[0].inference.disaggregation.kvTransferLink': unknown link 'infiniband' (expected nvlink, "
                 "rdma, tcp, or {gbps, latencyMs, perGpu})");
  EXPECT_EQ(error(workload("      firstTokenFrom: client\n" + kRoles)),
            at + "14:23: field 'services[0].inference.disaggregation.firstTokenFrom': unknown value 'client' (expected prefill, decode)");
  EXPECT_EQ(error(workload("      kvTransferLink: {gbps: 0}\n" + kRoles)),
            at + "14:30: field 'services[0].inference.disaggregation.kvTransferLink.gbps': 0 is outside [0.001, 1000000] Gb/s");
  // bench-serve's bounds (inference::check_kv_transfer_gbps): a link so slow no transfer ever ends is refused.
  EXPECT_EQ(error(workload("      kvTransferLink: {gbps: 1e-300}\n" + kRoles)),
            at + "14:30: field 'services[0].inference.disaggregation.kvTransferLink.gbps': 1e-300 is outside [0.001, 1000000] Gb/s");
  EXPECT_EQ(error(workload("      kvTransferLink: {gbps: 10, latencyMs: 2e6}\n" + kRoles)),
            at + "14:45: field 'services[0].inference.disaggregation.kvTransferLink.latencyMs': 2e6 is outside [0, 1000000] ms");
  EXPECT_EQ(error(workload("      prefill: {replicas: -1, gpus: 1}\n      decode: {gpus: 1}\n")),
            at + "14:27: field 'services[0].inference.disaggregation.prefill.replicas': -1 is negative");
  EXPECT_EQ(error(workload("      prefill: {gpus: 1}\n      decode: {minReplicas: 3, maxReplicas: 2, gpus: 1}\n")),
            at + "15:45: field 'services[0].inference.disaggregation.decode.maxReplicas': 2 is below minReplicas 3");
  EXPECT_EQ(error(workload("      prefill: {gpus: 1}\n      decode: {replicas: 5, maxReplicas: 4, gpus: 1}\n")),
            at + "15:26: field 'services[0].inference.disaggregation.decode.replicas': 5 is outside [minReplicas 0, maxReplicas 4]");
  EXPECT_EQ(error(workload("      prefill: {replicas: 1}\n      decode: {gpus: 1}\n")),
            at + "14:16: field 'services[0].inference.disaggregation.prefill': gpus is required: each role's pods request their "
                 "own GPUs (= its tensorParallelSize)");
  EXPECT_EQ(error(workload("      prefill: {gpus: 1}\n")),
            at + "14:7: field 'services[0].inference.disaggregation.decode': is required: a disaggregated service has a prefill and "
                 "a decode role");
  EXPECT_EQ(error(workload("      prefill: {gpus: 1, pools: [a100]}\n      decode: {gpus: 1}\n")),
            at + "14:34: field 'services[0].inference.disaggregation.prefill.pools[0]': unknown pool 'a100' (pools: l40s, h100)");
  EXPECT_EQ(error(workload(kRoles, "  gpus: 1\n")),
            at + "9:3: field 'services[0].gpus': gpus is per role with inference.disaggregation (its prefill: and decode: blocks)");
  const std::string unknown = error(workload("      prefill: {gpus: 1, role: prefill}\n      decode: {gpus: 1}\n"));
  EXPECT_NE(unknown.find(at + "14:26: field 'services[0].inference.disaggregation.prefill.role': unknown key 'role'"), std::string::npos)
      << unknown;
}

}  // namespace
}  // namespace gpufleet::io
