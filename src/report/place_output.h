// Writers for `gpufleet place` results: JSON (the schema documented in docs/place.md) and the
// human-readable listing. Pure functions returning strings; the CLI writes files atomically.
#pragma once

#include <string>
#include <vector>

#include "readers/k8s/device_setup.h"
#include "readers/k8s/k8s_objects.h"
#include "place/place_workload.h"

namespace gpufleet::io {

/// JSON document:
/// {"policy": "gpufleet", "nodes": N,
///  "placements": [{"pod": "ns/name", "node": "n", "gpus": [0], "mig": "3g.40gb" or null,
///                  "preempted": ["ns/victim"], "priority": P, "prebound": false}],
///  "pending": [{"pod": "ns/name", "reason": "..."}],
///  "quota_rejected": [{"pod": "ns/name", "reason": "..."}],
///  "admissions": [{"workload": "ns/name", "type": "Admitted", "cluster_queue": "cq", "reason": "...",
///                  "message": "...", "by": "ns/preemptor" (Preempted only)}]  (only with Kueue workloads),
///  "gpu_allocation_pct": x,
///  "warnings": ["..."],
///  "node_warnings": [{"node": "n", "resource": "nvidia.com/gpu", "advertised": 28, "expected": 32,
///                     "gpus": 8, "replicas": 4, "strategy": "mps", "message": "..."}]}
/// A placement holding MPS replicas also has "mps": {"replicas": R, "pinned_device_mem_limit_mib": M,
/// "active_thread_percentage": P} (Placement::mps). A placement of a pod with ResourceClaims (Dynamic
/// Resource Allocation, docs/dra.md) also has "resource_claims": [{"claim": "ns/name", "devices":
/// [{"request": "r" or "r/sub", "driver": "d", "pool": "p", "device": "x"}]}] (Placement::claims); the
/// text form appends "  claim ns/name: driver/pool/device, ..." per claim. node_warnings (only when there are some): Nodes
/// whose advertised GPU count disagrees with their labels and sharing (readers/k8s/device_setup.h rule 5).
/// gpu_allocation_pct = 100 x allocated gpu_milli / cluster gpu_milli (0 without GPUs), 2 decimals; DRA
/// GPUs count too: NVIDIA DRA devices by their share of a GPU (model/dra_gpu_share.h, docs/dra.md).
/// warnings: what the inputs' reading decided differently from Kubernetes or left out (readers/k8s/place_inputs.h).
/// not_modelled (only when there are some): the fields read but not modelled, each once with where it
/// first appears: [{"what": "scheduler 'kai-scheduler'", "objects": 2, "file": "w.yaml", "line": 6,
/// "column": 18, "field": "spec.schedulerName", "consequence": "..."}] (readers/k8s/k8s_objects.h NotModelled).
std::string place_result_json(const place::PlaceResult& result, const std::vector<std::string>& warnings = {},
                              const std::vector<NodeCountMismatch>& node_warnings = {},
                              const std::vector<NotModelled>& not_modelled = {});

/// One line per pod, e.g. `ml/train-0  -> p5-0  gpus 0-7`, `ml/chat-0  -> t4-0  gpu 0  mps 1/4 (3840 MiB,
/// 25% SMs)` or `dev/nb-1  pending: 0/12 nodes ...`,
/// then a summary line: placed, pending, quota-rejected, preempted, GPU allocation.
std::string place_result_text(const place::PlaceResult& result);

}  // namespace gpufleet::io
