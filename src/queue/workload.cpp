#include "queue/workload.h"

#include <algorithm>

namespace gpufleet::queue {

int32_t Workload::pod_count() const {
  int32_t n = 0;
  for (const PodSet& s : pod_sets) n += s.count;
  return n;
}

std::vector<std::pair<std::string, ResourceAmount>> pod_resource_requests(const Pod& pod) {
  std::vector<std::pair<std::string, ResourceAmount>> out;
  if (pod.cpu_milli > 0) out.emplace_back(std::string(kCpu), pod.cpu_milli);
  if (pod.memory_bytes > 0) out.emplace_back(std::string(kMemory), pod.memory_bytes);
  if (pod.gpu_request_milli() > 0) out.emplace_back(std::string(kGpu), pod.gpu_request_milli());
  if (pod.shared_replicas > 0) out.emplace_back(std::string(kGpuSharedResource), pod.shared_replicas);
  for (const MigRequest& m : pod.mig_requests)
    if (m.count > 0) out.emplace_back(std::string(kMigResourcePrefix) + m.profile, m.count);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpufleet::queue
