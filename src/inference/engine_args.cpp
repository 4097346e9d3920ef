#include "inference/engine_args.h"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "model/gpu_catalog.h"
#include "util/ascii.h"

namespace gpufleet::inference {
namespace {

// vllm/engine/arg_utils.py get_batch_defaults: device_memory >= 70 * GiB_bytes and "a100" not in
// the lower-cased device name.
bool large_tier(const std::string& gpu, int64_t memory_mib) {
  return memory_mib >= 70 * 1024 && ascii_lower(gpu).find("a100") == std::string::npos;
}

}  // namespace

int32_t default_max_num_batched_tokens(const std::string& gpu, int64_t memory_mib) {
  return large_tier(gpu, memory_mib) ? 8192 : 2048;
}

int32_t default_max_num_seqs(const std::string& gpu, int64_t memory_mib) {
  return large_tier(gpu, memory_mib) ? 1024 : 256;
}

void validate_engine_args(const EngineArgs& args) {
  const auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (args.tensor_parallel_size < 1) fail(fmt::format("tensor_parallel_size {} is below 1", args.tensor_parallel_size));
  if (!(args.gpu_memory_utilization > 0 && args.gpu_memory_utilization <= 1))
    fail(fmt::format("gpu_memory_utilization {} is outside (0, 1]", args.gpu_memory_utilization));
  if (args.max_num_seqs < 1) fail(fmt::format("max_num_seqs {} is below 1", args.max_num_seqs));
  if (args.max_num_batched_tokens < 0)
    fail(fmt::format("max_num_batched_tokens {} is negative", args.max_num_batched_tokens));
  if (args.max_model_len < 0) fail(fmt::format("max_model_len {} is negative", args.max_model_len));
  if (args.block_size < 1) fail(fmt::format("block_size {} is below 1", args.block_size));
}

void validate_replica_hardware(const ReplicaHardware& hw) {
  const auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (!(hw.compute_fraction > 0 && hw.compute_fraction <= 1))
    fail(fmt::format("compute_fraction {} is outside (0, 1]", hw.compute_fraction));
  if (!(hw.bandwidth_fraction > 0 && hw.bandwidth_fraction <= 1))
    fail(fmt::format("bandwidth_fraction {} is outside (0, 1]", hw.bandwidth_fraction));
  if (hw.memory_mib < 0) fail(fmt::format("memory_mib {} is negative", hw.memory_mib));
  if (hw.time_slice_replicas < 1) fail(fmt::format("time_slice_replicas {} is below 1", hw.time_slice_replicas));
}

int64_t device_memory_mib(const ReplicaHardware& hw) {
  if (hw.memory_mib > 0) return hw.memory_mib;
  const GpuModelInfo* info = find_gpu_model(hw.gpu);
  if (info == nullptr) throw std::invalid_argument(fmt::format("GPU '{}' is not in the GPU catalog", hw.gpu));
  return info->memory_mib;
}

int32_t effective_max_num_batched_tokens(const EngineArgs& args, const ReplicaHardware& hw) {
  return args.max_num_batched_tokens > 0 ? args.max_num_batched_tokens
                                         : default_max_num_batched_tokens(hw.gpu, device_memory_mib(hw));
}

}  // namespace gpufleet::inference
