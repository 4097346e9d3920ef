// The Kubernetes reader's memory-based GPU sharing (readers/k8s/k8s_yaml.cpp memory_share, hami_node):
// HAMi's resources and defaults, its node annotation in both formats, KAI-Scheduler's annotations, and
// the bad inputs upstream refuses, each an InputError at its file, line, column and field.
#include <string>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "support/expect_input_error.h"

namespace gpufleet::io {
namespace {

using testing::expect_input_error;

// Line 4 holds the annotations, line 6 the scheduler, line 8 the container, line 9 its limits.
std::string pod(const std::string& annotations, const std::string& scheduler, const std::string& limits,
                const std::string& name = "a") {
  return "kind: Pod\nmetadata:\n  name: " + name + "\n  annotations: {" + annotations + "}\nspec:\n  schedulerName: " + scheduler +
         "\n  containers:\n  - name: c\n    resources: {limits: {" + limits + "}}\n";
}

TEST(GpuMemoryShareReader, HamiRequestsAndDefaults) {
  const K8sObjects k = parse_k8s_text(pod("", "default-scheduler", "nvidia.com/gpu: 2, nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30") +
                                          "---\n" + pod("", "default-scheduler", "nvidia.com/gpumem-percentage: 100", "b") + "---\n" +
                                          pod("", "hami-scheduler", "cpu: 1", "c"),
                                      "p.yaml");
  ASSERT_EQ(k.pods.size(), 3u);
  ASSERT_TRUE(k.pods[0].gpu_memory_share);
  EXPECT_EQ(*k.pods[0].gpu_memory_share, (GpuMemoryShare{GpuMemoryScheduler::kHami, 2, 3000, 100, 30, 0}));
  EXPECT_EQ(k.pods[0].num_gpu, 0);
  // Percentage 100 without nvidia.com/gpu: one vGPU (defaultGPUNum), gpucores 100 (exclusive).
  EXPECT_EQ(*k.pods[1].gpu_memory_share, (GpuMemoryShare{GpuMemoryScheduler::kHami, 1, 0, 100, 100, 0}));
  // A hami-scheduler pod without GPUs shares nothing.
  EXPECT_FALSE(k.pods[2].gpu_memory_share);
}

TEST(GpuMemoryShareReader, HamiNodeAnnotationBothFormats) {
  const K8sObjects k = parse_k8s_text(R"(kind: Node
metadata:
  name: json
  annotations:
    hami.io/node-nvidia-register: '[{"id":"a","count":4,"devmem":81920,"devcore":100,"type":"NVIDIA","numa":0,"health":true,"index":0,"mode":"hami-core"},{"id":"b","count":4,"devmem":81920,"devcore":100,"type":"NVIDIA","numa":0,"health":true,"index":1,"mode":"hami-core"},{"id":"c","count":4,"devmem":81920,"devcore":100,"type":"NVIDIA","numa":0,"health":false,"index":2,"mode":"hami-core"}]'
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10", nvidia.com/gpu: "12"}}
---
kind: Node
metadata:
  name: legacy
  annotations: {hami.io/node-nvidia-register: 'GPU-0,5,15360,100,NVIDIA-Tesla T4,0,true:GPU-1,5,15360,100,NVIDIA-Tesla T4,0,true:'}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10", nvidia.com/gpu: "10"}}
)",
                                      "n.yaml");
  ASSERT_EQ(k.nodes.size(), 2u);
  EXPECT_EQ(k.nodes[0].gpu_count, 2);  // the unhealthy card is left out
  EXPECT_EQ(k.nodes[0].gpu_memory_mib, 81920);
  EXPECT_EQ(*k.nodes[0].hami, (HamiDevices{4, 100}));
  EXPECT_EQ(k.nodes[1].gpu_count, 2);
  EXPECT_EQ(k.nodes[1].gpu_memory_mib, 15360);
  EXPECT_EQ(*k.nodes[1].hami, (HamiDevices{5, 100}));
}

TEST(GpuMemoryShareReader, KaiAnnotations) {
  const K8sObjects k = parse_k8s_text(
      pod("gpu-memory: \"2000\", gpu-fraction-num-devices: \"2\"", "kai-scheduler", "cpu: 1") + R"(---
kind: Node
metadata:
  name: k
  labels: {nvidia.com/gpu.memory: "46068"}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10", nvidia.com/gpu: "1"}}
)",
      "p.yaml");
  EXPECT_EQ(*k.pods[0].gpu_memory_share, (GpuMemoryShare{GpuMemoryScheduler::kKai, 2, 2000, 100, 0, 0}));
  EXPECT_EQ(k.nodes[0].gpu_memory_mib, 46000);
}

TEST(GpuMemoryShareReaderErrors, UpstreamRefusals) {
  // HAMi: GenerateResourceRequests refuses a gpumem that is not a whole number.
  expect_input_error([] { parse_k8s_text(pod("", "default-scheduler", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1.5"), "p.yaml"); },
                     "p.yaml", 9, 64, "spec.containers[0].resources.limits.nvidia.com/gpumem", "is not a whole number of MiB");
  // HAMi's webhook: validateMemoryPercentage.
  expect_input_error([] { parse_k8s_text(pod("", "default-scheduler", "nvidia.com/gpumem-percentage: 150"), "p.yaml"); }, "p.yaml",
                     8, 3, "spec.containers", "must be an integer between 0 and 100");
  // KAI's ValidateGpuRequests, in its words.
  expect_input_error([] { parse_k8s_text(pod("gpu-fraction: \"1.5\"", "kai-scheduler", "cpu: 1"), "p.yaml"); }, "p.yaml", 4, 31,
                     "metadata.annotations.gpu-fraction", "gpu-fraction annotation value must be a positive number smaller than 1.0");
  expect_input_error([] { parse_k8s_text(pod("gpu-fraction: \"1\"", "kai-scheduler", "cpu: 1"), "p.yaml"); }, "p.yaml", 4, 31,
                     "metadata.annotations.gpu-fraction", "smaller than 1.0");
  expect_input_error([] { parse_k8s_text(pod("gpu-fraction: \"0.5\", gpu-memory: \"100\"", "kai-scheduler", "cpu: 1"), "p.yaml"); },
                     "p.yaml", 4, 50, "metadata.annotations.gpu-memory", "cannot request both GPU and GPU memory");
  expect_input_error([] { parse_k8s_text(pod("gpu-memory: abc", "kai-scheduler", "cpu: 1"), "p.yaml"); }, "p.yaml", 4, 29,
                     "metadata.annotations.gpu-memory", "gpu-memory annotation value must be a positive integer greater than 0");
  expect_input_error([] { parse_k8s_text(pod("gpu-fraction: \"0.5\"", "kai-scheduler", "nvidia.com/gpu: 1"), "p.yaml"); }, "p.yaml",
                     4, 31, "metadata.annotations.gpu-fraction",
                     "cannot have both GPU fraction request and whole GPU resource request/limit");
  // HAMi's device list: a memory that is not a number (the annotation's value, line 4 column 33).
  expect_input_error(
      [] {
        parse_k8s_text("kind: Node\nmetadata:\n  name: n\n  annotations: {hami.io/node-nvidia-register: 'GPU-0,10,abc,100,T4,0,true:'}\n"
                       "status: {allocatable: {cpu: \"8\", memory: 8Gi, pods: \"10\", nvidia.com/gpu: \"10\"}}\n",
                       "n.yaml");
      },
      "n.yaml", 4, 47, "metadata.annotations.hami.io/node-nvidia-register", "devmem 'abc' is not a whole number");
}

}  // namespace
}  // namespace gpufleet::io
