#include "model/gpu_memory_share.h"

#include <algorithm>

namespace gpufleet {

std::string_view gpu_memory_scheduler_name(GpuMemoryScheduler scheduler) {
  return scheduler == GpuMemoryScheduler::kHami ? "HAMi" : "KAI-Scheduler";
}

int64_t memory_share_request_mib(const GpuMemoryShare& request, int64_t card_memory_mib) {
  if (request.memory_mib > 0) return request.memory_mib;
  if (request.scheduler == GpuMemoryScheduler::kHami) return card_memory_mib * request.memory_percentage / 100;
  return static_cast<int64_t>(request.fraction * static_cast<double>(card_memory_mib));
}

int64_t kai_gpu_memory_mib(int64_t label_value) {
  constexpr int64_t kDefaultGpuMemoryMib = 100;     // node_info.go DefaultGpuMemory
  constexpr int64_t kTibInMib = int64_t{1} << 20;   // node_info.go TibInMib
  constexpr int64_t kBytesPerMib = int64_t{1} << 20;  // node_info.go BitToMib
  if (label_value < 0) return kDefaultGpuMemoryMib;
  const int64_t mib = label_value < kTibInMib ? label_value : label_value / kBytesPerMib;
  return mib - mib % 100;
}

int32_t memory_share_gpu_milli(int64_t used_mib, int64_t card_mib) {
  if (used_mib <= 0 || card_mib <= 0) return 0;
  const int64_t milli = std::min<int64_t>(1000, used_mib * 1000 / card_mib);
  return static_cast<int32_t>(std::max<int64_t>(1, milli));
}

}  // namespace gpufleet
