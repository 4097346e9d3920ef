#include "queue/kueue_objects.h"

namespace gpufleet::queue {

int64_t amount_unit_scale(std::string_view resource) {
  return resource == kCpu || resource == kGpu ? 1000 : 1;
}

}  // namespace gpufleet::queue
