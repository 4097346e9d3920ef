#include "inference/cold_start.h"

namespace gpufleet::inference {

ColdStartParts cold_start_parts(const ColdStartSpec& spec, double weight_bytes, bool image_on_node) {
  ColdStartParts parts;
  parts.image_pull_s = image_on_node ? 0 : spec.image_pull_s;
  if (spec.snapshot_restore) {
    parts.engine_start_s = spec.snapshot_restore_s;
    return parts;
  }
  const double bandwidth_gb_s = spec.cached_weights ? spec.cached_weight_load_bandwidth_gb_s : spec.weight_load_bandwidth_gb_s;
  parts.weight_load_s = weight_bytes / 1e9 / bandwidth_gb_s;
  parts.engine_start_s = spec.engine_start_s;
  return parts;
}

}  // namespace gpufleet::inference
