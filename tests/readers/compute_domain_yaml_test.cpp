// NVIDIA's ComputeDomain (readers/k8s/compute_domain_yaml.h): the fields read, the channel template
// the controller would create, the warnings for fields read but not modelled, and one error per bad
// value at its file, line, column and field.
#include <string>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "support/expect_input_error.h"

namespace gpufleet {
namespace {

TEST(ComputeDomainYaml, ReadsTheDomainAndAddsTheControllersTemplate) {
  const io::K8sObjects o = io::parse_k8s_text(R"Y(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex, namespace: train}
spec:
  channel:
    resourceClaimTemplate: {name: imex-channel-0}
)Y",
                                              "cd.yaml");
  ASSERT_EQ(o.dra.compute_domains.size(), 1u);
  const ComputeDomain& d = o.dra.compute_domains[0];
  EXPECT_EQ(compute_domain_key(d), "train/imex");
  EXPECT_EQ(d.channel_template, "imex-channel-0");
  EXPECT_FALSE(d.all_channels);
  EXPECT_EQ(d.num_nodes, 0);
  // templates/compute-domain-workload-claim-template.tmpl.yaml: one request "channel" of the default
  // channel DeviceClass.
  ASSERT_EQ(o.dra.templates.count("train/imex-channel-0"), 1u);
  const ResourceClaimTemplate& t = o.dra.templates.at("train/imex-channel-0");
  ASSERT_EQ(t.spec.requests.size(), 1u);
  EXPECT_EQ(t.spec.requests[0].name, "channel");
  ASSERT_TRUE(t.spec.requests[0].exactly.has_value());
  EXPECT_EQ(t.spec.requests[0].exactly->device_class_name, "compute-domain-default-channel.nvidia.com");
  EXPECT_EQ(t.spec.requests[0].exactly->count, 1);
  EXPECT_TRUE(o.not_modelled.empty());
}

// A template the input holds (the controller's, in a dump of a live cluster) is kept as read, in
// either order.
TEST(ComputeDomainYaml, KeepsATemplateTheInputHolds) {
  const std::string domain = R"Y(---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex}
spec: {channel: {resourceClaimTemplate: {name: chan}}}
)Y";
  const std::string tmpl = R"Y(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: chan}
spec:
  spec:
    devices:
      requests:
      - name: ch
        exactly: {deviceClassName: my-channel-class}
)Y";
  for (const std::string& text : {domain + tmpl, tmpl + domain}) {
    const io::K8sObjects o = io::parse_k8s_text(text, "cd.yaml");
    ASSERT_EQ(o.dra.templates.count("default/chan"), 1u);
    EXPECT_EQ(o.dra.templates.at("default/chan").spec.requests[0].name, "ch");
    EXPECT_EQ(o.dra.templates.at("default/chan").spec.requests[0].exactly->device_class_name, "my-channel-class");
  }
}

TEST(ComputeDomainYaml, WarnsForFieldsReadButNotModelled) {
  const io::K8sObjects o = io::parse_k8s_text(R"Y(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex}
spec:
  numNodes: 4
  channel:
    resourceClaimTemplate: {name: chan}
    allocationMode: All
status:
  status: Ready
  nodes:
  - {name: n0, ipAddress: 10.0.0.1, cliqueID: "u.1", index: 0, status: Ready}
)Y",
                                              "cd.yaml");
  ASSERT_EQ(o.dra.compute_domains.size(), 1u);
  EXPECT_TRUE(o.dra.compute_domains[0].all_channels);
  EXPECT_EQ(o.dra.compute_domains[0].num_nodes, 4);
  ASSERT_EQ(o.not_modelled.size(), 3u);
  EXPECT_EQ(o.not_modelled[0].what, "ComputeDomain channel allocationMode All");
  EXPECT_EQ(o.not_modelled[0].first.line, 8);
  EXPECT_EQ(o.not_modelled[1].what, "ComputeDomain numNodes");
  EXPECT_EQ(o.not_modelled[1].first.line, 5);
  EXPECT_EQ(o.not_modelled[2].what, "ComputeDomain status");
}

TEST(ComputeDomainYaml, BadValuesFailAtTheirField) {
  const std::string head = "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: imex}\n";
  auto bad = [&](const std::string& spec, int line, int column, const std::string& field, const std::string& fragment) {
    testing::expect_input_error([&] { io::parse_k8s_text(head + spec, "cd.yaml"); }, "cd.yaml", line, column, field, fragment);
  };
  bad("spec: {numNodes: 1}\n", 4, 7, "spec", "needs spec.channel");
  bad("spec: {channel: {allocationMode: Single}}\n", 4, 17, "spec.channel", "needs resourceClaimTemplate");
  bad("spec: {channel: {resourceClaimTemplate: {}}}\n", 4, 41, "spec.channel.resourceClaimTemplate.name", "");
  bad("spec: {channel: {resourceClaimTemplate: {name: Chan_0}}}\n", 4, 48, "spec.channel.resourceClaimTemplate.name",
      "'Chan_0' is not a valid ResourceClaimTemplate name");
  bad("spec: {channel: {resourceClaimTemplate: {name: c}, allocationMode: Many}}\n", 4, 68, "spec.channel.allocationMode",
      "unknown allocationMode 'Many' (expected Single or All)");
  bad("spec: {numNodes: -1, channel: {resourceClaimTemplate: {name: c}}}\n", 4, 18, "spec.numNodes", "");
  bad("spec: {channel: {resourceClaimTemplate: {name: c}, mode: All}}\n", 4, 52, "spec.channel.mode", "");
  testing::expect_input_error(
      [&] { io::parse_k8s_text("apiVersion: resource.nvidia.com/v1\nkind: ComputeDomain\nmetadata: {name: x}\n", "cd.yaml"); }, "cd.yaml", 1,
      13, "apiVersion", "unsupported apiVersion 'resource.nvidia.com/v1' for ComputeDomain");
  const std::string two = head + "spec: {channel: {resourceClaimTemplate: {name: c}}}\n---\n" +
                          "apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: other}\n"
                          "spec: {channel: {resourceClaimTemplate: {name: c}}}\n";
  testing::expect_input_error([&] { io::parse_k8s_text(two, "cd.yaml"); }, "cd.yaml", 9, 48, "spec.channel.resourceClaimTemplate.name",
                              "ResourceClaimTemplate 'c' is already the channel template of ComputeDomain 'default/imex'");
  const std::string dup = head + "spec: {channel: {resourceClaimTemplate: {name: c}}}\n---\n" + head +
                          "spec: {channel: {resourceClaimTemplate: {name: d}}}\n";
  testing::expect_input_error([&] { io::parse_k8s_text(dup, "cd.yaml"); }, "cd.yaml", 8, 18, "metadata.name",
                              "duplicate ComputeDomain 'default/imex'");
}

}  // namespace
}  // namespace gpufleet
