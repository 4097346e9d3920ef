// Where a value of the simulator's inputs was read: the file, the 1-based line and column and the
// field path, so that checks made after reading (the work budget, inputs/sim/work_estimate.h; a model
// that does not fit its GPUs) can name the field. Empty file: built in code, no position.
#pragma once

#include <string>

namespace gpufleet::sim {

struct FieldOrigin {
  std::string file;
  int line = 0, column = 0;
  std::string field;  ///< e.g. "services[0].inference.traffic"
  bool known() const { return !file.empty(); }
};

}  // namespace gpufleet::sim
