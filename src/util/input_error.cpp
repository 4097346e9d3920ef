#include "util/input_error.h"

#include <fmt/format.h>

namespace gpufleet {

std::string InputError::format(const std::string& file, int line, int column, const std::string& field,
                               const std::string& message) {
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  if (column > 0) where += fmt::format(":{}", column);
  if (field.empty()) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: field '{}': {}", where, field, message);
}

}  // namespace gpufleet
