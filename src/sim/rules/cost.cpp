#include "sim/rules/cost.h"

#include <algorithm>

#include "model/gpu_catalog.h"
#include "model/gpu_memory_share.h"
#include "model/resources.h"

namespace gpufleet::sim {
namespace {

// Whether the pool's GPUs are time-sliced (expand_pool: time-slicing applies to the GPUs without MIG).
bool time_sliced(const NodePool& pool) { return pool.time_slicing_replicas && !pool.mig_devices; }

}  // namespace

double pod_gpus_held(const NodePool& pool, const Pod& pod) {
  double gpus = 0;
  if (time_sliced(pool)) {
    const double replicas = static_cast<double>(*pool.time_slicing_replicas);
    gpus += static_cast<double>(pod.num_gpu) / replicas + static_cast<double>(pod.shared_replicas) / replicas;
  } else {
    gpus += static_cast<double>(pod.gpu_request_milli()) / kGpuMilliPerGpu;
  }
  // A memory-share pod: its memory over each card's (model/gpu_memory_share.h), the card's memory as
  // its scheduler counts it on the pool's model: HAMi's devmem (the whole memory) on a HAMi pool,
  // KAI's floor to 100 MiB elsewhere (expand_pool sets the same on the nodes).
  if (pod.gpu_memory_share)
    if (const GpuModelInfo* model = find_gpu_model(pool.gpu_model)) {
      const int64_t card = pool.hami_split_count ? model->memory_mib : kai_gpu_memory_mib(model->memory_mib);
      if (card > 0)
        gpus += static_cast<double>(pod.gpu_memory_share->cards) *
                static_cast<double>(std::min(memory_share_request_mib(*pod.gpu_memory_share, card), card)) / static_cast<double>(card);
    }
  if (!pod.mig_requests.empty())
    if (const GpuModelInfo* model = find_gpu_model(pool.gpu_model))
      for (const MigRequest& r : pod.mig_requests)
        if (const MigProfile* profile = model->find_mig_profile(r.profile))
          gpus += static_cast<double>(r.count) * profile->compute_slices / kMigComputeSlices;
  return gpus;
}

PriceSplit price_split(const NodePool& pool) {
  const double cpu = static_cast<double>(pool.cpu_milli) / 1000.0 * kOpenCostCpuUsdPerVcpuHour;
  const double mem = static_cast<double>(pool.memory_bytes) / static_cast<double>(int64_t{1} << 30) * kOpenCostRamUsdPerGibHour;
  const double gpu = static_cast<double>(pool.gpus_per_node) * kOpenCostGpuUsdPerGpuHour;
  const double total = cpu + mem + gpu;
  if (total <= 0) return {};
  return {cpu / total, mem / total, gpu / total};
}

double pod_price_share(const NodePool& pool, const PriceSplit& split, const Pod& pod, int64_t dra_gpu_milli) {
  double share = 0;
  if (pool.cpu_milli > 0) share += split.cpu * static_cast<double>(pod.cpu_milli) / static_cast<double>(pool.cpu_milli);
  if (pool.memory_bytes > 0) share += split.memory * static_cast<double>(pod.memory_bytes) / static_cast<double>(pool.memory_bytes);
  if (pool.gpus_per_node > 0) {
    if (time_sliced(pool) || pod.has_device_requests() || pod.gpu_memory_share)
      share += split.gpu * pod_gpus_held(pool, pod) / static_cast<double>(pool.gpus_per_node);
    else  // whole GPUs and fractions of plain GPUs: the same share, computed as it always was
      share += split.gpu * static_cast<double>(pod.gpu_request_milli()) / (static_cast<double>(pool.gpus_per_node) * kGpuMilliPerGpu);
    share += split.gpu * static_cast<double>(dra_gpu_milli) / (static_cast<double>(pool.gpus_per_node) * kGpuMilliPerGpu);
  }
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
