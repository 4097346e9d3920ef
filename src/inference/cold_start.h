// A new replica's cold start, in the parts it is made of: the node (when none is free, the pool
// autoscaler provisions one: the simulator's business, not this file's), the image pull, loading
// the weights, and the engine's start (torch.compile, CUDA graph capture, the KV profile run). A
// snapshot restore (CRIU + cuda-checkpoint, as NVIDIA Dynamo Snapshot) replaces load and start.
//
// Published durations (defaults in data/inference/catalog.yaml): image pull and extract of a 20 GB
// vLLM image ~10 min, < 30 s with lazy-pulled uncompressed layers (bentoml.com/blog/cold-starting-
// llms-on-kubernetes-in-under-30-seconds); weights 14-48 s for 15 GB from GP3 SSD (NVIDIA Run:ai
// Model Streamer blog); engine init ~34 s for a small model with a warm compile cache
// (vllm-project/vllm#20264), minutes for a 70B model at TP 8 (vllm-project/vllm#19824); restore ~10 s
// against ~1 min cold (docs.nvidia.com/dynamo, Dynamo Snapshot).
#pragma once

namespace gpufleet::inference {

/// How a service's replicas start. Seconds and 1e9 bytes per second.
struct ColdStartSpec {
  double image_pull_s = 120;        ///< pull + extract, paid once per node (the kubelet keeps the image)
  double weight_load_bandwidth_gb_s = 1.0;  ///< from the model store (network storage)
  bool cached_weights = false;      ///< weights on a node-local cache volume: cached bandwidth instead
  double cached_weight_load_bandwidth_gb_s = 5.0;
  double engine_start_s = 60;       ///< engine init after the weights: compile, CUDA graphs, profile run
  bool snapshot_restore = false;    ///< restore a process snapshot instead of load + start
  double snapshot_restore_s = 10;
};

/// The parts of one cold start, seconds; total = the sum.
struct ColdStartParts {
  double image_pull_s = 0;
  double weight_load_s = 0;
  double engine_start_s = 0;        ///< or the snapshot restore
  double total_s() const { return image_pull_s + weight_load_s + engine_start_s; }
};

/// The cold start of a replica whose model has `weight_bytes` (all GPUs of the replica together)
/// on a node that has (image_on_node) or has not pulled the image yet: image_pull_s unless on the
/// node; weight_bytes / 1e9 / bandwidth (the cached one with cached_weights), or 0 with a snapshot;
/// engine_start_s, or snapshot_restore_s with a snapshot.
ColdStartParts cold_start_parts(const ColdStartSpec& spec, double weight_bytes, bool image_on_node);

}  // namespace gpufleet::inference
