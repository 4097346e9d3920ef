#include "model/compute_domain.h"

#include <algorithm>

#include "model/dra.h"
#include "model/pod.h"

namespace gpufleet {

std::string compute_domain_key(const ComputeDomain& domain) { return domain.namespace_name + "/" + domain.name; }

ResourceClaimTemplate compute_domain_channel_template(const ComputeDomain& domain) {
  ResourceClaimTemplate t;
  t.namespace_name = domain.namespace_name;
  t.name = domain.channel_template;
  DraDeviceRequest request;
  request.name = std::string(kComputeDomainChannelRequest);
  DraExactRequest exactly;
  exactly.device_class_name = std::string(kComputeDomainChannelDeviceClass);
  request.exactly = std::move(exactly);
  t.spec.requests.push_back(std::move(request));
  return t;
}

std::vector<std::string> compute_domains_of(const Pod& pod, const std::vector<ComputeDomain>& domains) {
  std::vector<std::string> out;
  if (pod.resource_claims.empty() || domains.empty()) return out;
  const std::string& ns = pod.namespace_name.empty() ? std::string("default") : pod.namespace_name;
  for (const PodResourceClaim& pc : pod.resource_claims) {
    if (pc.resource_claim_template_name.empty()) continue;
    for (const ComputeDomain& d : domains)
      if (d.namespace_name == ns && d.channel_template == pc.resource_claim_template_name) out.push_back(compute_domain_key(d));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gpufleet
