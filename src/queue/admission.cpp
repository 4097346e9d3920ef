#include "queue/admission.h"

#include <algorithm>

namespace gpufleet::queue {

const char* event_type_name(WorkloadEvent::Type type) {
  switch (type) {
    case WorkloadEvent::Type::kAdmitted: return "Admitted";
    case WorkloadEvent::Type::kPending: return "Pending";
    case WorkloadEvent::Type::kPreempted: return "Preempted";
    case WorkloadEvent::Type::kEvicted: return "Evicted";
    case WorkloadEvent::Type::kRequeued: return "Requeued";
    case WorkloadEvent::Type::kFinished: return "Finished";
  }
  return "";
}

FlavorInjection flavor_injection(const KueueObjects& objects, const PodSetAssignment& assignment) {
  FlavorInjection out;
  std::vector<std::string> seen;
  for (const auto& [resource, flavor] : assignment.flavors) {
    if (std::find(seen.begin(), seen.end(), flavor) != seen.end()) continue;
    seen.push_back(flavor);
    for (const ResourceFlavor& f : objects.flavors) {
      if (f.name != flavor) continue;
      for (const auto& kv : f.node_labels)
        if (std::find(out.node_selector.begin(), out.node_selector.end(), kv) == out.node_selector.end()) out.node_selector.push_back(kv);
      out.tolerations.insert(out.tolerations.end(), f.tolerations.begin(), f.tolerations.end());
    }
  }
  return out;
}

}  // namespace gpufleet::queue
