#include "sim/cost.h"

#include "model/resources.h"

namespace gpufleet::sim {

PriceSplit price_split(const NodePool& pool) {
  const double cpu = static_cast<double>(pool.cpu_milli) / 1000.0 * kOpenCostCpuUsdPerVcpuHour;
  const double mem = static_cast<double>(pool.memory_bytes) / static_cast<double>(int64_t{1} << 30) * kOpenCostRamUsdPerGibHour;
  const double gpu = static_cast<double>(pool.gpus_per_node) * kOpenCostGpuUsdPerGpuHour;
  const double total = cpu + mem + gpu;
  if (total <= 0) return {};
  return {cpu / total, mem / total, gpu / total};
}

double pod_price_share(const NodePool& pool, const PriceSplit& split, const Pod& pod) {
  double share = 0;
  if (pool.cpu_milli > 0) share += split.cpu * static_cast<double>(pod.cpu_milli) / static_cast<double>(pool.cpu_milli);
  if (pool.memory_bytes > 0) share += split.memory * static_cast<double>(pod.memory_bytes) / static_cast<double>(pool.memory_bytes);
  if (pool.gpus_per_node > 0)
    share += split.gpu * static_cast<double>(pod.gpu_request_milli()) / (static_cast<double>(pool.gpus_per_node) * kGpuMilliPerGpu);
  return share;
}

double node_price_usd_per_hour(const SimPool& p, bool reserved_covered) {
  if (reserved_covered && p.pool.reserved_usd_per_hour) return *p.pool.reserved_usd_per_hour;
  if (p.settings.capacity_type == CapacityType::kSpot && p.pool.spot_usd_per_hour) return *p.pool.spot_usd_per_hour;
  return p.pool.on_demand_usd_per_hour;
}

const char* billed_capacity_type(const SimPool& p, bool reserved_covered) {
  if (reserved_covered) return "reserved";
  return p.settings.capacity_type == CapacityType::kSpot ? "spot" : "on-demand";
}

}  // namespace gpufleet::sim
