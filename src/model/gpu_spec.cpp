#include "model/gpu_spec.h"

namespace gpufleet {

bool gpu_spec_allows(std::string_view spec, std::string_view node_model) {
  if (spec.empty()) return true;
  if (node_model.empty()) return false;
  bool any_item = false;
  while (true) {
    const size_t bar = spec.find('|');
    const std::string_view item = spec.substr(0, bar);
    if (!item.empty()) {
      any_item = true;
      if (item == node_model) return true;
    }
    if (bar == std::string_view::npos) break;
    spec.remove_prefix(bar + 1);
  }
  return !any_item;
}

}  // namespace gpufleet
