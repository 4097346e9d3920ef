// Reader of NVIDIA's ComputeDomain (apiVersion resource.nvidia.com/v1beta1, the DRA driver's CRD:
// NVIDIA/k8s-dra-driver-gpu api/nvidia.com/resource/v1beta1/computedomain.go and the CRD schema
// deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_computedomains.yaml); the model:
// model/compute_domain.h. The Kubernetes reader's kind dispatch (readers/k8s/k8s_yaml.cpp) calls it.
//
// Read: metadata.name and namespace, spec.channel.resourceClaimTemplate.name (required, a DNS
// subdomain as any object name), spec.channel.allocationMode (Single | All, default Single),
// spec.numNodes (>= 0). Refused (InputError at the field, exit 2): unknown keys, a missing channel or
// template name, an allocationMode outside the enum, a negative numNodes, a second ComputeDomain of
// the same namespace/name or one naming the channel template of another. Read and not modelled (a
// warning each): numNodes > 0 (only gates the domain's Ready status), allocationMode All (the claim
// still allocates channel-0 per node; only what the kubelet plugin injects differs) and status (the
// IMEX daemons' nodes and readiness: placement assumes every daemon ready).
#pragma once

#include <functional>
#include <string>

#include "model/dra.h"

namespace gpufleet::io {

namespace detail {
class Field;
}

/// Whether `kind` and `api_version` name a ComputeDomain this reader reads (any
/// resource.nvidia.com/ version: the reader checks v1beta1 and fails on others).
bool is_compute_domain_object(const std::string& kind, const std::string& api_version);

/// Reads one ComputeDomain into catalog.compute_domains. `warn(what, at, consequence)` as
/// read_dra_object's. Throws InputError (see above).
void read_compute_domain(const detail::Field& object, DraCatalog& catalog,
                         const std::function<void(const std::string&, const detail::Field&, const std::string&)>& warn);

/// After all objects are read: adds to catalog.templates the channel template of each ComputeDomain
/// whose template the input does not hold (as the ComputeDomain controller creates it); a template
/// the input holds (a dump of a live cluster) is kept as read.
void add_compute_domain_templates(DraCatalog& catalog);

}  // namespace gpufleet::io
