// model/dra_gpu_share.h: a DRA device's share of its GPU, and the GPUs a node's slices publish.
#include "model/dra_gpu_share.h"

#include <gtest/gtest.h>

namespace gpufleet {
namespace {

DraAttribute str(const std::string& v) { return {DraAttribute::Kind::kString, 0, false, v}; }
DraAttribute num(int64_t v) { return {DraAttribute::Kind::kInt, v, false, {}}; }

DraDevice device(const std::string& name, const std::string& type, const std::string& index_key, int64_t index, const char* memory) {
  DraDevice d;
  d.name = name;
  d.attributes["type"] = str(type);
  d.attributes[index_key] = num(index);
  d.capacity["memory"] = Quantity::parse(memory);
  return d;
}

// Static MIG (no counters): a MIG device is its memory over its parent GPU's; the GPU 1000; a MIG
// device whose parent is not published 0; another driver's device 0.
TEST(DraGpuShare, MemoryShareOfTheParentWithoutCounters) {
  ResourceSlice s;
  s.driver = kNvidiaDraDriver;
  s.pool = "n0";
  s.node_name = "n0";
  s.devices = {device("gpu-0", "gpu", "index", 0, "40Gi"), device("gpu-0-mig-1g.5gb-0", "mig", "parentIndex", 0, "5Gi"),
               device("gpu-1-mig-3g.20gb-0", "mig", "parentIndex", 1, "20Gi")};
  EXPECT_EQ(dra_device_gpu_milli(s, s.devices[0]), 1000);
  EXPECT_EQ(dra_device_gpu_milli(s, s.devices[1]), 125);  // 5Gi / 40Gi
  EXPECT_EQ(dra_device_gpu_milli(s, s.devices[2]), 0);    // GPU 1 not published
  // GPUs: index 0 (the GPU and its partition) and parentIndex 1: 2 on n0.
  DraCatalog c;
  c.slices.push_back(s);
  ResourceSlice other = s;
  other.driver = "gpu.example.com";
  c.slices.push_back(other);
  EXPECT_EQ(dra_gpus_by_node(c), (std::map<std::string, int32_t>{{"n0", 2}}));
  EXPECT_EQ(dra_device_gpu_milli(other, other.devices[0]), 0);
  const DraGpuShares shares(c);
  DraAllocation a;
  a.devices = {{"r", kNvidiaDraDriver, "n0", "gpu-0"}, {"r", kNvidiaDraDriver, "n0", "gpu-0-mig-1g.5gb-0"},
               {"r", "gpu.example.com", "n0", "gpu-0"}};
  EXPECT_EQ(shares.allocation_milli(a), 1125);
}

// Partitionable devices: the consumed `memory` counter over the counter set's, floored.
TEST(DraGpuShare, CountersGiveTheShare) {
  ResourceSlice s;
  s.driver = kNvidiaDraDriver;
  s.pool = "n0";
  s.node_name = "n0";
  s.shared_counters = {{"gpu-0-cs", {{"memory", Quantity::parse("96Gi")}}}};
  DraDevice mig = device("gpu-0-mig-2g", "mig", "parentIndex", 0, "24Gi");
  mig.consumes_counters = {{"gpu-0-cs", {{"memory", Quantity::parse("40Gi")}}}};
  s.devices = {mig};
  EXPECT_EQ(dra_device_gpu_milli(s, s.devices[0]), 416);  // floor(1000 x 40 / 96), the counter, not the capacity
}

}  // namespace
}  // namespace gpufleet
