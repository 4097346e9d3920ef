// Multi-node NVLink domains as NVIDIA's DRA driver publishes them (NVIDIA/k8s-dra-driver-gpu): a
// ComputeDomain (apiVersion resource.nvidia.com/v1beta1, api/nvidia.com/resource/v1beta1/
// computedomain.go) is the set of nodes a multi-node job shares GPU memory across through IMEX
// channels (GB200 NVL72). Its controller creates the ResourceClaimTemplate named in
// spec.channel.resourceClaimTemplate (templates/compute-domain-workload-claim-template.tmpl.yaml): one
// request "channel" of DeviceClass compute-domain-default-channel.nvidia.com, which selects each
// node's device channel-0 of driver compute-domain.nvidia.com (deployments/helm/dra-driver-nvidia-gpu/
// templates/deviceclass-compute-domain-default-channel.yaml; the kubelet plugin publishes channel-<i>
// and daemon-0 in a pool named after the node, cmd/compute-domain-kubelet-plugin/nvlib.go). A worker
// pod joins the domain by naming that template in spec.resourceClaims.
//
// IMEX shares memory only within one NVLink domain (a clique): GPU Feature Discovery labels each
// node with it, nvidia.com/gpu.clique = "<clusterUUID>.<cliqueID>" (the driver's docs/install.md). A
// gang whose pods join a ComputeDomain is confined to one clique (sched/gang_placement.h
// confine_to_one_clique; docs/dra.md "Multi-node NVLink").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet {

struct Pod;
struct ResourceClaimTemplate;  // model/dra.h (which includes this header: DraCatalog holds ComputeDomains)

/// GPU Feature Discovery's NVLink-domain label, "<clusterUUID>.<cliqueID>".
inline constexpr std::string_view kGpuCliqueLabel = "nvidia.com/gpu.clique";
/// The DeviceClass of a ComputeDomain's channel claims (NVIDIA's Helm chart installs it).
inline constexpr std::string_view kComputeDomainChannelDeviceClass = "compute-domain-default-channel.nvidia.com";
/// The request name in the controller's channel ResourceClaimTemplate.
inline constexpr std::string_view kComputeDomainChannelRequest = "channel";

/// A ComputeDomain (resource.nvidia.com/v1beta1 ComputeDomainSpec).
struct ComputeDomain {
  std::string namespace_name;  ///< "default" when the object names none
  std::string name;
  /// spec.channel.resourceClaimTemplate.name: the template (in namespace_name) workers name.
  std::string channel_template;
  /// spec.channel.allocationMode: false = Single (the default: one IMEX channel), true = All (every
  /// channel of the IMEX domain). Either way the claim allocates one device per node (channel-0);
  /// the mode only changes what the kubelet plugin injects.
  bool all_channels = false;
  /// spec.numNodes (>= 0, deprecated upstream): only gates the domain's status, not placement.
  int64_t num_nodes = 0;
};

/// "namespace/name".
std::string compute_domain_key(const ComputeDomain& domain);

/// The ResourceClaimTemplate the ComputeDomain controller creates for `domain`: namespace and name
/// channel_template, one `exactly` request "channel" of kComputeDomainChannelDeviceClass (count 1).
ResourceClaimTemplate compute_domain_channel_template(const ComputeDomain& domain);

/// The keys ("namespace/name", sorted, distinct) of the ComputeDomains `pod` joins: those whose
/// channel template one of its spec.resourceClaims names (resourceClaimTemplateName, in the pod's
/// namespace, "default" when empty). Empty when none.
std::vector<std::string> compute_domains_of(const Pod& pod, const std::vector<ComputeDomain>& domains);

}  // namespace gpufleet
