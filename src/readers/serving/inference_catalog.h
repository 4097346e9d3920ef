// Reader for the serving catalog (inference/catalog.h): the LLMs, the GPUs' performance figures and
// the constants of the KV-cache and step-time models. The built-in catalog is data/inference/
// catalog.yaml, embedded by the build (cmake/ServingCatalog.cmake); a user may pass an edited copy.
// Format (every figure of the built-in file carries its source in a comment; docs/inference-model.md):
//
//   apiVersion: gpufleet.io/v1
//   kind: ServingCatalog
//   models:                          # required, at least one
//   - name: Llama-3.1-8B             # required; names and aliases unique ignoring case
//     aliases: [meta-llama/Llama-3.1-8B-Instruct]   # optional
//     params: 8.03e9                 # required, in [1e6, 1e13]
//     activeParams: 8.03e9           # optional, in [1e6, params]; default params
//     experts: 1                     # optional, 1..1024; expertsPerToken 1..experts (MoE)
//     expertsPerToken: 1
//     layers: 32                     # required, 1..1024
//     hidden: 4096                   # required, 1..1048576
//     heads: 32                      # required, 1..4096; hidden... as in config.json
//     kvHeads: 8                     # required, 1..heads, heads a multiple of it
//     headDim: 128                   # optional, 1..4096; default hidden / heads (hidden a multiple of heads)
//     vocab: 128256                  # required, 1..16777216
//     maxContextTokens: 131072       # required, 1..16777216
//     source: "..."                  # required, non-empty
//   gpus:                            # required, at least one
//   - name: H100-80GB                # required; a GPU catalog name (model/gpu_catalog.h), unique
//     memoryBandwidthGBps: 3350      # required, (0, 1e5]
//     bf16Tflops: 989                # required, (0, 1e5]
//     fp8Tflops: 1979                # optional, [0, 1e5]; 0 = no FP8
//     bf16Supported: true            # optional, default true
//     interconnectGBps: 450          # required, (0, 1e5]
//     source: "..."                  # required
//   engineVersions:                  # the latency constants per engine version, the first in force
//   - name: vllm-v1                  # required, 1..64 characters, unique ignoring case (--engine-version)
//     source: "..."                  # required
//     decodeBandwidthEfficiency: 0.7 # required, (0, 1]   prefillComputeEfficiency: required, (0, 1]
//     prefillComputeEfficiencyByGpu: {H100-80GB: 0.601}   # optional; GPUs of `gpus`, each (0, 1]
//     stepOverheadSeconds: 0.0015    # required, [0, 10]  perSequenceOverheadSeconds, allreduceLatencySeconds: required, [0, 1]
//     timeSliceSwitchFraction: 0.05  # optional, [0, 10]
//     frontendSeconds: 0.0045        # optional, [0, 10], default 0; frontendPerRequestSeconds: optional, [0, 1], default 0
//     frontendChatRequestSeconds, frontendPerOutputTokenSeconds: optional, [0, 1], default 0 (LatencyConstants)
//   latency:                         # instead of engineVersions: one set named "custom", every key optional
//     (the keys above but name and source; default: LatencyConstants)
//   memory:                          # required, every key required
//     activationBytesPerTokenHidden: 2.69   # [0, 1e4]   activationBytesPerSeqVocab: [0, 1e4]
//     nonTorchGiB: 0.13              # [0, 1024]       nonTorchTensorParallelGiB: [0, 1024]
//     cudaReservedFraction: 0.00587  # [0, 0.5)
//   coldStart:                       # optional; each key optional (default: ColdStartDefaults)
//     imagePullSeconds, engineStartSeconds, snapshotRestoreSeconds: durations in [0, 1e10]
//     weightLoadBandwidthGBps, cachedWeightLoadBandwidthGBps: (0, 1e5]
//
// Errors throw InputError with the file, the 1-based line and column and the field path (e.g.
// `models[2].kvHeads`): YAML syntax, unknown keys (never dropped), missing required fields, numbers
// that are not numbers or out of range, duplicate names, a GPU not in the GPU catalog, a wrong
// apiVersion or kind. The file limit is YamlLimits::max_file_bytes (readers/formats/input_limits.h).
#pragma once

#include <string>
#include <string_view>

#include "inference/catalog.h"

namespace gpufleet::io {

/// Parses catalog text; `file_name` names it in errors. Throws InputError.
inference::ServingCatalog parse_serving_catalog_text(std::string_view text, const std::string& file_name);

/// Reads a catalog file. Throws InputError (also when the file cannot be read or is too large).
inference::ServingCatalog load_serving_catalog(const std::string& path);

/// The built-in catalog (data/inference/catalog.yaml as embedded at build time), parsed once; the
/// reference stays valid for the program's life. Throws InputError if the embedded text is invalid
/// (a test keeps it valid).
const inference::ServingCatalog& builtin_serving_catalog();

}  // namespace gpufleet::io
