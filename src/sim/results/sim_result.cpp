#include "sim/results/sim_result.h"

namespace gpufleet::sim {

const char* unit_state_name(UnitState state) {
  switch (state) {
    case UnitState::kWaiting: return "waiting";
    case UnitState::kPending: return "pending";
    case UnitState::kRunning: return "running";
    case UnitState::kCompleted: return "completed";
    case UnitState::kFailed: return "failed";
    case UnitState::kRemoved: return "removed";
    case UnitState::kQueued: return "queued";
  }
  return "unknown";
}

}  // namespace gpufleet::sim
