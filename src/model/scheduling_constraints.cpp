#include "model/scheduling_constraints.h"

namespace gpufleet {

const std::string* find_label(const Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace gpufleet
