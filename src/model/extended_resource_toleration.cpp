#include "model/extended_resource_toleration.h"

#include <algorithm>
#include <string>

#include "model/resources.h"

namespace gpufleet {

void add_extended_resource_tolerations(const Pod& request, std::vector<Toleration>& tolerations) {
  std::vector<std::string> resources;
  if (request.num_gpu > 0) resources.emplace_back(kGpuResource);
  if (request.shared_replicas > 0) resources.emplace_back(kGpuSharedResource);
  for (const MigRequest& mig : request.mig_requests) resources.push_back(std::string(kMigResourcePrefix) + mig.profile);
  std::sort(resources.begin(), resources.end());  // admission.go walks a sorted set of names
  for (std::string& resource : resources) {
    Toleration toleration;
    toleration.key = std::move(resource);
    toleration.operator_ = "Exists";
    toleration.effect = "NoSchedule";
    const bool present = std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) {
      return t.key == toleration.key && t.operator_ == toleration.operator_ && t.value == toleration.value &&
             t.effect == toleration.effect;
    });
    if (!present) tolerations.push_back(std::move(toleration));
  }
}

}  // namespace gpufleet
