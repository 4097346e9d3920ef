#include "model/scheduling_constraints.h"

#include <algorithm>

namespace gpufleet {

const std::string* find_label(const Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

// labels.NewRequirement's validity checks and labels.Requirement.Matches for the four operators of
// a LabelSelectorRequirement (k8s.io/apimachinery/pkg/labels/selector.go).
bool label_selector_matches(const LabelSelector& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    const std::string* v = find_label(labels, key);
    if (!v || *v != value) return false;
  }
  for (const SelectorRequirement& r : selector.match_expressions) {
    const std::string* v = find_label(labels, r.key);
    const bool listed = v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
    if (r.operator_ == "In" || r.operator_ == "NotIn") {
      if (r.values.empty()) return false;
      if (listed != (r.operator_ == "In")) return false;
    } else if (r.operator_ == "Exists" || r.operator_ == "DoesNotExist") {
      if (!r.values.empty()) return false;
      if ((v != nullptr) != (r.operator_ == "Exists")) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace gpufleet
