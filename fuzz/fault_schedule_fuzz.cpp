// libFuzzer target: fault schedules (io::parse_fault_schedule_text), as a `--faults` file for fixed
// pools (an on-demand pool in zone us-east-1a, a spot pool in us-east-1b) and inside a pools file
// (io::parse_sim_cluster_text reads its FaultSchedule document). Build and run: scripts/fuzz
// (fuzz/CMakeLists.txt). InputError is the expected rejection; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "readers/sim/fault_schedule.h"
#include "readers/sim/sim_pools.h"
#include "fuzz_support.h"

namespace io = gpufleet::io;

namespace {

// The pools the schedules name (the same as tests/readers/fault_schedule_test.cpp's kPools).
constexpr const char* kPools = R"(apiVersion: gpufleet.io/v1
kind: NodePoolSet
pools:
- name: h100
  gpu: {model: H100-80GB, count: 8}
  cpu: "190"
  memory: 1900Gi
  nodes: 2
  min: 0
  max: 4
  labels: {topology.kubernetes.io/zone: us-east-1a}
  prices: {onDemand: 98.32}
- name: spot
  gpu: {model: L4, count: 1}
  cpu: "4"
  memory: 16Gi
  nodes: 2
  min: 0
  max: 8
  labels: {topology.kubernetes.io/zone: us-east-1b}
  prices: {onDemand: 0.8, spot: 0.3}
---
apiVersion: sim.gpufleet.io/v1
kind: Autoscaling
pools:
  spot: {capacityType: spot}
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpufleet::sim::ClusterConfig cluster = io::parse_sim_cluster_text(kPools, "pools.yaml");
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  gpufleet::fuzz::reader_accepts([&] { io::parse_fault_schedule_text(text, "fuzz.yaml", cluster.pools, true); });
  gpufleet::fuzz::reader_accepts([&] { io::parse_sim_cluster_text(std::string(kPools) + "---\n" + std::string(text), "fuzz.yaml"); });
  return 0;
}
