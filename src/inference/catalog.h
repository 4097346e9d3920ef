// The serving catalog: what the LLM replica model knows about models and GPUs, and the constants
// of its latency model. Plain data, no I/O: the figures live in data/inference/catalog.yaml (each
// with its source), which the build embeds and readers/serving/inference_catalog.h reads; a user may pass an
// edited copy instead (`--serving-catalog FILE`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpufleet::inference {

/// Numeric formats of weights and KV cache (vLLM `--dtype`, `--quantization fp8`, `--kv-cache-dtype`).
enum class Precision { kBf16, kFp16, kFp8 };
/// "bf16", "fp16", "fp8".
const char* precision_name(Precision p);
/// Bytes per element: 2 (bf16, fp16) or 1 (fp8).
int32_t precision_bytes(Precision p);

/// A transformer LLM's shape (its Hugging Face config.json). Dense unless experts > 1.
struct LlmModel {
  std::string name;                  ///< e.g. "Llama-3.1-8B" (the catalog's key, matched ignoring case)
  std::vector<std::string> aliases;  ///< other names users write, e.g. "meta-llama/Llama-3.1-8B-Instruct"
  double params = 0;                 ///< total parameters (weights read from memory once per step)
  double active_params = 0;          ///< parameters used per token (MoE: top-k experts); dense = params
  int32_t experts = 1;               ///< MoE: num_local_experts; 1 = dense
  int32_t experts_per_token = 1;     ///< MoE: num_experts_per_tok (top-k); 1 when dense
  int32_t layers = 0;                ///< num_hidden_layers
  int32_t hidden = 0;                ///< hidden_size
  int32_t heads = 0;                 ///< num_attention_heads
  int32_t kv_heads = 0;              ///< num_key_value_heads (GQA)
  int32_t head_dim = 0;              ///< hidden / heads unless the config says otherwise
  int32_t vocab = 0;                 ///< vocab_size
  int32_t max_context_tokens = 0;    ///< max_position_embeddings
  std::string source;                ///< where the figures come from
};

/// A GPU's performance figures (dense tensor throughput; NVIDIA datasheets). `name` is a model of
/// the GPU catalog (model/gpu_catalog.h), whose memory_mib is the memory used here.
struct GpuPerformance {
  std::string name;                  ///< "H100-80GB", ...
  double memory_bandwidth_gb_s = 0;  ///< HBM/GDDR bandwidth, 1e9 bytes per second
  double bf16_tflops = 0;            ///< dense FP16/BF16 tensor TFLOPS
  double fp8_tflops = 0;             ///< dense FP8 tensor TFLOPS; 0 = no FP8 support
  bool bf16_supported = true;        ///< compute capability >= 8.0 (vLLM refuses bf16 below)
  double interconnect_gb_s = 0;      ///< per-GPU all-reduce bandwidth between GPUs of a node (NVLink or PCIe)
  std::string source;
};

/// The roofline model's efficiency factors and overheads (inference/step_time.h) for one engine
/// version: one named set of constants, calibrated on published measurements of that version
/// (data/inference/catalog.yaml says which; docs/inference-calibration.md shows the fit).
struct LatencyConstants {
  /// The set's name, what `--engine-version` selects: "vllm-v1" (vLLM >= 0.8, V1 engine) or
  /// "vllm-v0-2024" (vLLM 0.5-0.6, V0 engine) in the built-in catalog; "custom" for a catalog's
  /// single `latency` block.
  std::string engine_version = "custom";
  std::string source;                        ///< what the set was fitted on
  double decode_bandwidth_efficiency = 0.7;  ///< achieved / peak memory bandwidth (MBU)
  /// Achieved / peak tensor FLOPS (MFU) in prefill, for a GPU not in prefill_compute_efficiency_by_gpu.
  double prefill_compute_efficiency = 0.5;
  /// Per GPU (serving catalog names): the MFU measured for that GPU, which replaces the one above.
  std::vector<std::pair<std::string, double>> prefill_compute_efficiency_by_gpu;
  double step_overhead_s = 0.003;            ///< fixed CPU time per engine step (scheduling, sampling, launch)
  double per_sequence_overhead_s = 0.00002;  ///< CPU time per sequence in the batch
  double allreduce_latency_s = 0.00001;      ///< per all-reduce call (2 per layer with TP > 1)
  double time_slice_switch_fraction = 0.05;  ///< extra step time per co-scheduled time-sliced replica
  /// The front end: vLLM's OpenAI API server, one Python asyncio process per replica
  /// (vllm/entrypoints/openai/api_server.py) that parses HTTP, renders the chat template and
  /// tokenises each request, and whose output handler (vllm/v1/engine/async_llm.py) detokenises and
  /// streams every output the engine core sends. It does not occupy the GPU. Modelled as one FIFO
  /// server per replica (StepTimeModel::frontend, replica_engine.h): a request reaches the engine
  /// after its arrival work, frontend_per_request_s (+ frontend_chat_request_s through
  /// /v1/chat/completions), and the tokens of each step reach the client after that step's output
  /// work, frontend_per_output_token_s x its requests, both queued behind earlier work; then
  /// frontend_s later (latency that queues for nothing: network, event-loop wake-ups). Seconds, >= 0;
  /// all 0 = no front end.
  double frontend_s = 0;
  double frontend_per_request_s = 0;
  double frontend_chat_request_s = 0;
  double frontend_per_output_token_s = 0;

  /// prefill_compute_efficiency_by_gpu's figure for `gpu` (ASCII case ignored), else
  /// prefill_compute_efficiency.
  double prefill_efficiency(std::string_view gpu) const;
};

/// The memory a vLLM engine sets aside besides weights and KV cache, per GPU
/// (vllm/v1/worker/gpu_worker.py determine_available_memory: the activation peak of a profile run at
/// max_num_batched_tokens, plus non-torch allocations). The profile run
/// (vllm/v1/worker/gpu_model_runner.py profile_run) is a forward pass over max_num_batched_tokens
/// tokens split into min(max_num_seqs, tokens) requests, then the sampler over one logits row per
/// request; its peak follows the vocabulary more than the hidden size, hence two terms.
struct MemoryConstants {
  /// activation peak = this x profile tokens x hidden + activation_bytes_per_seq_vocab x profile
  /// sequences x vocab (the second term added to the header's first form: the sampler's logits)
  double activation_bytes_per_token_hidden = 0;
  double activation_bytes_per_seq_vocab = 0;
  double non_torch_bytes = 0;                    ///< CUDA context and allocator outside torch, per GPU
  double non_torch_tensor_parallel_bytes = 0;    ///< added per GPU when tensor_parallel_size > 1 (NCCL)
  /// Share of nvidia-smi's memory total that CUDA does not offer (torch.cuda.mem_get_info's total is
  /// memory_mib x (1 - this)); vLLM's gpu_memory_utilization applies to the CUDA total.
  double cuda_reserved_fraction = 0;
};

/// Default durations of a replica's cold start (inference/cold_start.h), seconds or bytes per second.
struct ColdStartDefaults {
  double image_pull_s = 120;                 ///< vLLM image (~10-20 GB) pulled and extracted
  double weight_load_bandwidth_gb_s = 1.0;   ///< from network storage, 1e9 B/s
  double cached_weight_load_bandwidth_gb_s = 5.0;  ///< from a node-local cached-weights volume
  double engine_start_s = 60;                ///< compile, CUDA graphs, profile run
  double snapshot_restore_s = 10;            ///< a CRIU / cuda-checkpoint restore replaces load + start
};

struct ServingCatalog {
  std::vector<LlmModel> models;
  std::vector<GpuPerformance> gpus;
  /// The constants in force: engine_versions' first set unless select_engine_version chose another.
  LatencyConstants latency;
  /// Every named set the catalog holds, the default first (a catalog with one `latency` block: it alone).
  std::vector<LatencyConstants> engine_versions;
  MemoryConstants memory;
  ColdStartDefaults cold_start;

  /// The model whose name or alias equals `name` ignoring ASCII case; nullptr when none.
  const LlmModel* find_model(std::string_view name) const;
  /// The GPU whose name equals `name` ignoring ASCII case (catalog names, model/gpu_catalog.h); nullptr.
  const GpuPerformance* find_gpu(std::string_view name) const;
  /// find_model / find_gpu, throwing std::invalid_argument ("model 'x' is not in the serving
  /// catalog") when there is none.
  const LlmModel& model(std::string_view name) const;
  const GpuPerformance& gpu(std::string_view name) const;
  /// Makes engine_versions' set named `name` (ASCII case ignored) the one in force. Throws
  /// std::invalid_argument naming the sets the catalog has when there is none by that name.
  void select_engine_version(std::string_view name);
};

/// KV cache bytes per token per replica (all GPUs): 2 (K and V) x layers x kv_heads x head_dim x
/// bytes per element.
double kv_bytes_per_token(const LlmModel& model, Precision kv_dtype);
/// Weight bytes of the whole model: params x bytes per element (quantization scales ignored).
double weight_bytes(const LlmModel& model, Precision dtype);

}  // namespace gpufleet::inference
