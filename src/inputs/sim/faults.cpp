#include "inputs/sim/faults.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/scheduling_constraints.h"
#include "model/xid.h"

namespace gpufleet::sim {

const char* fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNodeFailure: return "node-failure";
    case FaultKind::kXid: return "xid";
    case FaultKind::kDevicePluginFailure: return "device-plugin-failure";
    case FaultKind::kSpotInterruption: return "spot-interruption";
  }
  return "?";
}

bool launch_blocked(const FaultSchedule& schedule, const std::string& pool, const std::string& zone,
                    const std::string& capacity_type, double t) {
  for (const CapacityOutage& o : schedule.outages) {
    if (t < o.from_s || t >= o.to_s) continue;
    if (!o.pool.empty() && o.pool != pool) continue;
    if (!o.zone.empty() && o.zone != zone) continue;
    if (!o.capacity_type.empty() && o.capacity_type != capacity_type) continue;
    return true;
  }
  return false;
}

std::string node_zone(const NodePool& pool, int32_t index) {
  Labels labels = pool.labels;
  set_topology_labels(pool, index, labels);
  const std::string* zone = find_label(labels, kZoneLabel);
  return zone != nullptr ? *zone : std::string();
}

}  // namespace gpufleet::sim
