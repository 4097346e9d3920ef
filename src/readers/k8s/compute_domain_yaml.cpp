#include "readers/k8s/compute_domain_yaml.h"

#include <fmt/format.h>

#include "model/dns_name.h"
#include "readers/formats/yaml_field.h"

namespace gpufleet::io {

using Val = detail::Field;

bool is_compute_domain_object(const std::string& kind, const std::string& api_version) {
  return kind == "ComputeDomain" && api_version.rfind("resource.nvidia.com/", 0) == 0;
}

void read_compute_domain(const Val& v, DraCatalog& catalog,
                         const std::function<void(const std::string&, const Val&, const std::string&)>& warn) {
  v.only_keys({"apiVersion", "kind", "metadata", "spec", "status"});
  const Val api = v["apiVersion"];
  if (api.required_str() != "resource.nvidia.com/v1beta1")
    api.fail(fmt::format("unsupported apiVersion '{}' for ComputeDomain (expected resource.nvidia.com/v1beta1)", api.scalar()));
  ComputeDomain d;
  const Val name = v["metadata"]["name"];
  d.name = name.required_str();
  d.namespace_name = v["metadata"]["namespace"].str("default");
  if (d.namespace_name.empty()) d.namespace_name = "default";
  for (const ComputeDomain& other : catalog.compute_domains)
    if (other.namespace_name == d.namespace_name && other.name == d.name)
      name.fail(fmt::format("duplicate ComputeDomain '{}'", compute_domain_key(d)));

  const Val spec = v["spec"];
  spec.require_map();
  spec.only_keys({"numNodes", "channel"});
  const Val channel = spec["channel"];
  if (!channel.present()) spec.fail("a ComputeDomain needs spec.channel (with resourceClaimTemplate.name)");
  channel.require_map();
  channel.only_keys({"resourceClaimTemplate", "allocationMode"});
  const Val rct = channel["resourceClaimTemplate"];
  if (!rct.present()) channel.fail("spec.channel needs resourceClaimTemplate (with name)");
  rct.require_map();
  rct.only_keys({"name"});
  const Val template_name = rct["name"];
  d.channel_template = template_name.required_str();
  if (!dns1123_subdomain_ok(d.channel_template))
    template_name.fail(fmt::format("'{}' is not a valid ResourceClaimTemplate name (a DNS subdomain: lower-case letters, digits, '-' and '.')",
                                   d.channel_template));
  for (const ComputeDomain& other : catalog.compute_domains)
    if (other.namespace_name == d.namespace_name && other.channel_template == d.channel_template)
      template_name.fail(fmt::format("ResourceClaimTemplate '{}' is already the channel template of ComputeDomain '{}'", d.channel_template,
                                     compute_domain_key(other)));
  const Val mode = channel["allocationMode"];
  const std::string m = mode.str("Single");
  if (m == "All") {
    d.all_channels = true;
    warn("ComputeDomain channel allocationMode All", mode, "each worker's claim still takes one channel device per node (channel-0)");
  } else if (m != "Single") {
    mode.fail(fmt::format("unknown allocationMode '{}' (expected Single or All)", m));
  }
  const Val num_nodes = spec["numNodes"];
  d.num_nodes = num_nodes.present() ? num_nodes.integer(0, INT32_MAX) : 0;
  if (d.num_nodes > 0)
    warn("ComputeDomain numNodes", num_nodes, "it only gates the domain's Ready status; the workers are placed as if every IMEX daemon were ready");
  if (v["status"].present())
    warn("ComputeDomain status", v["status"], "the IMEX daemons' nodes and readiness are ignored; the workers are placed anew");
  catalog.compute_domains.push_back(std::move(d));
}

void add_compute_domain_templates(DraCatalog& catalog) {
  for (const ComputeDomain& d : catalog.compute_domains) {
    const std::string key = d.namespace_name + "/" + d.channel_template;
    if (catalog.templates.count(key) == 0) catalog.templates.emplace(key, compute_domain_channel_template(d));
  }
}

}  // namespace gpufleet::io
