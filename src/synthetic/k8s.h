// A synthetic Kubernetes GPU cluster and workload in the common production shape (inference,
// training and dev pools with taints, a CPU pool, three zones, PriorityClasses production > training
// > dev), for the `place` benchmark and tests at any scale. Every constraint kind the placement
// honours appears: taints and tolerations, nodeSelector, required and preferred node affinity, pod
// anti-affinity on hostname, priorities. Not a trace: proportions are chosen to fill most of the
// cluster and leave a few percent of pods pending.
//
// Nodes, by share of `node_count` (names <pool>-<i>, label topology.kubernetes.io/zone = zone-a|b|c
// round-robin, nvidia.com/gpu.product and gpufleet.io/pool as expand_pool sets them):
//   inference-l4   35%  4 x L4,        48 CPU,  192 GiB, taint workload-type=inference:NoSchedule
//   inference-t4   10%  1 x T4,         4 CPU,   16 GiB, taint workload-type=inference:NoSchedule
//   training-h100  10%  8 x H100-80GB, 192 CPU, 2 TiB,   taint workload-type=training:NoSchedule
//   training-a100  10%  8 x A100-80GB,  96 CPU, 1 TiB,   taint workload-type=training:NoSchedule
//   dev-a10g       10%  1 x A10G,        8 CPU,  32 GiB, taint workload-type=dev:NoSchedule
//   cpu            25%  no GPU,         96 CPU, 384 GiB
// Pods, by share of `pod_count` (in Deployments of 50 replicas sharing an app label):
//   inference      14%  1 GPU, nodeSelector product L4 (half of them) or T4; priority 1000;
//                       every 10th Deployment has required anti-affinity on kubernetes.io/hostname
//   training        2%  8 GPUs (a tenth ask 4), required affinity product In [H100, A100], preferring
//                       H100 (weight 100); priority 100
//   dev             1%  1 GPU, tolerates dev; priority 0, preemptionPolicy Never
//   cpu            83%  1-4 CPU, 2-8 GiB, no GPU; priority 0
#pragma once

#include <cstdint>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::synthetic {

/// `node_count` nodes (see above). node_count >= 0.
std::vector<Node> synthetic_k8s_nodes(int32_t node_count);

/// `pod_count` pods in creation order, drawn with a GoRand seeded by `seed`.
std::vector<Pod> synthetic_k8s_pods(int64_t pod_count, int64_t seed);

}  // namespace gpufleet::synthetic
