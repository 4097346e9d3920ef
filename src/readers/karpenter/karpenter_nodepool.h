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
//       metadata: {labels: {team: ml}}    # put on the offering pools' nodes (nodeSelector, affinity)
//       spec:
//         requirements:                   # keys: node.kubernetes.io/instance-type,
//           - key: karpenter.sh/capacity-type   # karpenter.sh/capacity-type, topology.kubernetes.io/zone
//             operator: In                # In, NotIn, Exists, DoesNotExist
//             values: [spot, on-demand]     # none with Exists, DoesNotExist; minValues is refused
//         taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
//     disruption:                         # consolidation of the NodePool's nodes (docs/karpenter.md)
//       consolidationPolicy: WhenEmptyOrUnderutilized   # or WhenEmpty
//       consolidateAfter: 30s             # s, m, h or Never; default 0s
//       budgets:                          # at most kMaxDisruptionBudgets; none = [{nodes: "10%"}]
//         - {nodes: "10%"}                # N or 0..100%
//         - {nodes: "0", reasons: [Underutilized], schedule: "0 9 * * mon-fri", duration: 8h}
//
// Each NodePool expands to one sim::SimPool per offering it allows (instance type x zone x capacity
// type with a price), named <nodepool>-<instance type with '.' as '-'>-<zone>-<od|spot>, marked with
// PoolSettings::karpenter_node_pool, provisionSeconds 60 (kProvisionKarpenterS), labels
// topology.kubernetes.io/zone and karpenter.sh/nodepool plus the template's labels, and the
// template's taints (so tolerations and nodeSelectors act on them). Its slots
// (max_nodes): the most nodes of the offering the NodePool's limits allow (the smallest
// limit / node capacity), at most kMaxOfferingSlots; without limits kDefaultOfferingSlots. Without a
// capacity-type requirement a NodePool gets on-demand only (Karpenter v1's default).
//
// Errors (InputError with file, line, column, field): a negative limit, a limit on another resource
// than cpu, memory, nvidia.com/gpu, an instance type the NodePool names that no InstanceTypes
// document lists, a duplicate instance type name, two offerings of one instance type in one zone, a
// metadata.name that is not a DNS-1123 subdomain or that makes an offering pool name longer than a
// DNS label (63 characters), a requirement on another key, an unknown operator, Exists or
// DoesNotExist with values, minValues (not modelled), a taint effect other than NoSchedule,
// PreferNoSchedule, NoExecute, an invalid template label or one Karpenter sets (zone, nodepool,
// capacity type, instance type), a NodePool that allows no
// offering, a weight outside 0..100, a duplicate name, an unknown consolidationPolicy, a
// consolidateAfter that is not a duration (or above kMaxHorizonSeconds), a budget's nodes that is not
// N or 0..100%, an unknown disruption reason, a schedule without a duration or the reverse, more than
// kMaxDisruptionBudgets budgets, offerings whose slots bring the file's pools above
// kMaxTotalPoolNodes (readers/k8s/pool_file.h) in all, everything validate_pool checks. A budget's schedule
// is read, not evaluated: the budget counts as always active.
#pragma once

#include <cstddef>
#include <vector>

#include "readers/formats/yaml_field.h"
#include "inputs/sim/cluster_config.h"

namespace gpufleet::io {

inline constexpr const char* kInstanceTypesKind = "InstanceTypes";
inline constexpr const char* kKarpenterApiVersion = "karpenter.sh/v1";
/// Slots of an offering of a NodePool without limits.
inline constexpr int32_t kDefaultOfferingSlots = 16;
/// The most slots of one offering.
inline constexpr int32_t kMaxOfferingSlots = 256;
/// The most spec.disruption.budgets of a NodePool (kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go
/// Budgets +kubebuilder:validation:MaxItems=50).
inline constexpr size_t kMaxDisruptionBudgets = 50;

/// Reads the InstanceTypes documents and karpenter.sh/v1 NodePools of `docs`; appends the offerings'
/// pools and the NodePools to `config`. Nothing when there is no NodePool. Throws InputError.
void read_karpenter_documents(const std::vector<detail::YamlNode>& docs, const detail::Source& src, sim::ClusterConfig& config);

}  // namespace gpufleet::io
