// Layering probe: compiled as a file of src/model/ (tests/CMakeLists.txt). The domain model sits below
// the scheduler, so this include must not be found.
#include "sched/scheduler.h"
