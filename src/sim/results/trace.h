// One event the simulation handled, recorded when SimOptions::trace asks for it (for tests).
#pragma once

#include <string>

namespace gpufleet::sim {

/// One event handled, as SimOptions::trace records it.
struct TraceEntry {
  double time_s = 0;
  std::string event;    ///< the registered name of its kind, e.g. "arrival", "node-ready"
  std::string subject;  ///< unit or node name ("" for ticks)
};

}  // namespace gpufleet::sim
