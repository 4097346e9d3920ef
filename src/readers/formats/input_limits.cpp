#include "readers/formats/input_limits.h"

#include <fmt/format.h>

namespace gpufleet::io {

std::string limit_message(uint64_t limit, std::string_view what, std::string_view name) {
  return fmt::format("more than {} {} (limit {}, docs/input-limits.md)", limit, what, name);
}

}  // namespace gpufleet::io
