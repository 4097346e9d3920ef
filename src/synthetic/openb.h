// A synthetic cluster and workload shaped on the published composition of the Alibaba openb trace
// (alibaba/clusterdata cluster-trace-gpu-v2023, csv/openb_node_list_gpu_node.csv and
// csv/openb_pod_list_default.csv; Weng et al., ATC'23, Table 1), for demos and tests
// when the real trace is absent. It is NOT the trace: only its composition is matched.
//
// Cluster (scale 1): the 1213 GPU nodes by type, GPU count, vCPU and memory (G2 549 x 8 GPU,
// T4 387 x 2 + 17 x 4, P100 134, V100M16 55, G3 39 x 8, V100M32 30, A10 2; 6212 GPUs).
// Pods: 13.3% CPU-only, 48.0% one whole GPU, 37.8% a fraction of one GPU (fractions drawn from the
// trace's most common values: 810, 470, 320, 650, 230, ...), 0.2% 2-GPU, 0.2% 4-GPU, 0.5% 8-GPU;
// CPU and memory requests from the most common request sizes of each kind.
#pragma once

#include <cstdint>
#include <vector>

#include "model/node.h"
#include "model/pod.h"

namespace gpufleet::synthetic {

/// The openb-shaped node list, `copies` times (names "synth-node-NNNNN"). copies >= 1.
std::vector<Node> synthetic_openb_nodes(int copies = 1);

/// `count` pods ("synth-pod-NNNNN") drawn with a GoRand seeded by `seed`.
std::vector<Pod> synthetic_openb_pods(int64_t count, int64_t seed);

}  // namespace gpufleet::synthetic
