#include "inputs/plan/plan_inputs.h"

#include <cctype>

namespace gpufleet::plan {

std::string_view commitment_name(Commitment commitment) {
  switch (commitment) {
    case Commitment::kReserved1y: return "reserved1y";
    case Commitment::kReserved3y: return "reserved3y";
    case Commitment::kCapacityBlock: return "capacityBlock";
  }
  return "reserved1y";
}

std::optional<double> Offering::commitment_usd_per_hour(Commitment commitment) const {
  switch (commitment) {
    case Commitment::kReserved1y: return reserved_1y_usd_per_hour;
    case Commitment::kReserved3y: return reserved_3y_usd_per_hour;
    case Commitment::kCapacityBlock: return capacity_block_usd_per_hour;
  }
  return std::nullopt;
}

std::optional<double> on_demand_usd_per_gpu_hour(const PriceCatalog& catalog, std::string_view gpu_model) {
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
  };
  std::optional<double> best;
  for (const InstanceType& t : catalog.instance_types) {
    if (t.gpus <= 0 || !same(t.gpu_model, gpu_model)) continue;
    for (const Offering& o : t.offerings) {
      const double p = o.on_demand_usd_per_hour / t.gpus;
      if (!best || p < *best) best = p;
    }
  }
  return best;
}

}  // namespace gpufleet::plan
