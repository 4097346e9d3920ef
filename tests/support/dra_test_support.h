// Helpers shared by the Dynamic Resource Allocation tests of `place`: a YAML text placed as `place`
// places it, and its result as one line per pod. No GoogleTest here.
#pragma once

#include <string>
#include <vector>

#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"

namespace gpufleet::testing {

/// Places the objects of `text` (read as "in.yaml") with `place`'s defaults; `consumable_capacity`
/// turns on the DRAConsumableCapacity feature gate (off by default, as kube's).
inline place::PlaceResult place_dra_text(const std::string& text, bool consumable_capacity = false) {
  io::PlaceInputs in = io::place_inputs_from_objects(io::parse_k8s_text(text, "in.yaml"), "");
  in.input.dra.consumable_capacity = consumable_capacity;
  return place::place_workload(in.input, place::PlaceOptions{});
}

/// The DeviceClass `gpu` (every device of driver gpu.example.com), a YAML document starting with
/// its "---" line: 7 lines.
inline std::string dra_gpu_device_class() {
  return R"Y(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
)Y";
}

/// Node `a` (8 CPUs, 64Gi), the DeviceClass `gpu` (every device of driver gpu.example.com) and the
/// head of node a's ResourceSlice of that driver (pool `a`), up to its `devices:` key: the caller
/// appends the device lines ("  - {name: gpu-0}\n"...) and any further objects. 20 lines, so an
/// input error in what follows is at line 21 or later.
inline std::string dra_one_node_cluster_head() {
  return R"Y(apiVersion: v1
kind: Node
metadata: {name: a}
status: {allocatable: {cpu: "8", memory: 64Gi, pods: "110"}}
)Y" + dra_gpu_device_class() + R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: a}
spec:
  driver: gpu.example.com
  pool: {name: a, generation: 1, resourceSliceCount: 1}
  nodeName: a
  devices:
)Y";
}

/// "pod -> node request=device[ capacity:consumed]..." per placement (consumed capacity in whole
/// units, only for shares of a device with allowMultipleAllocations), then "pod: reason" per pending pod.
inline std::vector<std::string> dra_summary(const place::PlaceResult& r) {
  std::vector<std::string> out;
  for (const auto& p : r.placements) {
    std::string s = p.pod + " -> " + p.node;
    for (const DraClaimAllocation& c : p.claims)
      for (const DraDeviceResult& d : c.allocation.devices) {
        s += " " + d.request + "=" + d.device;
        for (const auto& [name, milli] : d.consumed_capacity_milli) s += " " + name + ":" + std::to_string(milli / 1000);
      }
    out.push_back(s);
  }
  for (const auto& u : r.pending) out.push_back(u.pod + ": " + u.reason);
  return out;
}

}  // namespace gpufleet::testing
