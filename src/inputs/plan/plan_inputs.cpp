#include "inputs/plan/plan_inputs.h"

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

}  // namespace gpufleet::plan
