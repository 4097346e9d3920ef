// Reader of Karpenter NodePools in a `simulate --pools` file (format: docs/karpenter.md):
//
//   apiVersion: sim.gpufleet.io/v1       # what EC2NodeClass and the cloud's price list would say
//   kind: InstanceTypes
//   instanceTypes:
//     - name: g6.xlarge
//       gpu: {model: L4, count: 1}
//       cpu: "4"                          # allocatable, a Kubernetes quantity
//       memory: 16Gi
//       offerings:                        # per zone; a price per capacity type offered there
//         - {zone: us-east-1a, onDemand: 0.805, spot: 0.32}
//   ---
//   apiVersion: karpenter.sh/v1
//   kind: NodePool
//   metadata: {name: gpu}
//   spec:
//     weight: 10                          # 0..100
//     limits: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8"}
//     template:
//       spec:
//         requirements:                   # keys: node.kubernetes.io/instance-type,
//           - key: karpenter.sh/capacity-type   # karpenter.sh/capacity-type, topology.kubernetes.io/zone
//             operator: In                # In, NotIn, Exists, DoesNotExist
//             values: [spot, on-demand]
//         taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
//     disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 30s, budgets: [{nodes: "10%"}]}
//
// Each NodePool expands to one sim::SimPool per offering it allows (instance type x zone x capacity
// type with a price), named <nodepool>-<instance type with '.' as '-'>-<zone>-<od|spot>, marked with
// PoolSettings::karpenter_node_pool, provisionSeconds 60 (kProvisionKarpenterS), labels
// topology.kubernetes.io/zone and karpenter.sh/nodepool, the template's taints. Its slots
// (max_nodes): the most nodes of the offering the NodePool's limits allow (the smallest
// limit / node capacity), at most kMaxOfferingSlots; without limits kDefaultOfferingSlots. Without a
// capacity-type requirement a NodePool gets on-demand only (Karpenter v1's default).
//
// Errors (InputError with file, line, column, field): a negative limit, a limit on another resource
// than cpu, memory, nvidia.com/gpu, an instance type the NodePool names that no InstanceTypes
// document lists, a requirement on another key, an unknown operator, a NodePool that allows no
// offering, a weight outside 0..100, a duplicate name, everything validate_pool checks.
#pragma once

#include <vector>

#include "io/yaml_field.h"
#include "sim/config.h"

namespace gpufleet::io {

inline constexpr const char* kInstanceTypesKind = "InstanceTypes";
inline constexpr const char* kKarpenterApiVersion = "karpenter.sh/v1";
/// Slots of an offering of a NodePool without limits.
inline constexpr int32_t kDefaultOfferingSlots = 16;
/// The most slots of one offering.
inline constexpr int32_t kMaxOfferingSlots = 256;

/// Reads the InstanceTypes documents and karpenter.sh/v1 NodePools of `docs`; appends the offerings'
/// pools and the NodePools to `config`. Nothing when there is no NodePool. Throws InputError.
void read_karpenter_documents(const std::vector<detail::YamlNode>& docs, const detail::Source& src, sim::ClusterConfig& config);

}  // namespace gpufleet::io
