// Multi-node NVLink domains in `place`: a gang whose pods join an NVIDIA ComputeDomain
// (model/compute_domain.h) is placed within the nodes of one nvidia.com/gpu.clique value, or stays
// pending with the reason (place/queued_placement.h, sched/gang_placement.h confine_to_one_clique).
// The channel devices and DeviceClass are those NVIDIA's DRA driver publishes and installs
// (NVIDIA/k8s-dra-driver-gpu cmd/compute-domain-kubelet-plugin/deviceinfo.go, deployments/helm/
// dra-driver-nvidia-gpu/templates/deviceclass-compute-domain-default-channel.yaml). Expected outcomes
// are hand-computed in the comments.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "place/place_workload.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/place_inputs.h"
#include "sched/gang_placement.h"

namespace gpufleet {
namespace {

place::PlaceResult place_text(const std::string& text) {
  io::PlaceInputs in = io::place_inputs_from_objects(io::parse_k8s_text(text, "in.yaml"), "");
  return place::place_workload(in.input, place::PlaceOptions{});
}

const std::string kChannelClass = R"Y(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: compute-domain-default-channel.nvidia.com}
spec:
  selectors:
  - cel:
      expression: "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'channel' && device.attributes['compute-domain.nvidia.com'].id == 0"
)Y";

// A node of 4 device-plugin GPUs in `clique` with the compute-domain driver's channel-0 and daemon-0.
std::string node(const std::string& name, const std::string& clique) {
  return "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n  labels: {nvidia.com/gpu.clique: \"" + clique +
         "\"}\nstatus:\n  allocatable: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"4\", pods: \"110\"}\n"
         "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " +
         name + "-cd}\nspec:\n  driver: compute-domain.nvidia.com\n  pool: {name: " + name +
         ", generation: 1, resourceSliceCount: 1}\n  nodeName: " + name +
         "\n  devices:\n  - {name: channel-0, attributes: {type: {string: channel}, id: {int: 0}}}\n"
         "  - {name: daemon-0, attributes: {type: {string: daemon}, id: {int: 0}}}\n";
}

// A PodGroup `name` of `pods` workers with `gpus` GPUs each, joining ComputeDomain <name>-domain
// (`domain` false: the same gang without it).
std::string gang(const std::string& name, int pods, int gpus, bool domain = true) {
  std::string out = "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: " + name + "}\nspec: {minMember: " +
                    std::to_string(pods) + "}\n";
  if (domain)
    out += "---\napiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {name: " + name +
           "-domain}\nspec: {channel: {resourceClaimTemplate: {name: " + name + "-channel}}}\n";
  for (int i = 0; i < pods; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
           "\n  labels: {scheduling.x-k8s.io/pod-group: " + name +
           "}\nspec:\n  containers:\n  - name: w\n    image: i\n    resources: {limits: {nvidia.com/gpu: " + std::to_string(gpus) + "}}\n";
    if (domain) out += "  resourceClaims:\n  - {name: imex, resourceClaimTemplateName: " + name + "-channel}\n";
  }
  return out;
}

std::string prebound(const std::string& name, const std::string& node_name, int gpus) {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n  nodeName: " + node_name +
         "\n  containers:\n  - name: w\n    image: i\n    resources: {limits: {nvidia.com/gpu: " + std::to_string(gpus) + "}}\n";
}

// Two cliques of 4 nodes x 4 GPUs; a-0 and a-1 are full (4-GPU pods bound), so clique A has 2 free
// nodes and B 4. A gang of 4 pods x 4 GPUs needs 4 whole nodes of one clique: only B has them
// (16 free GPUs; A has 8 < 16 and is not searched). Each pod takes one node's channel-0.
TEST(ComputeDomain, GangLandsInOneClique) {
  std::string text = kChannelClass;
  for (int i = 0; i < 4; ++i) text += node("a-" + std::to_string(i), "u.1");
  for (int i = 0; i < 4; ++i) text += node("b-" + std::to_string(i), "u.2");
  text += prebound("busy-0", "a-0", 4) + prebound("busy-1", "a-1", 4) + gang("train", 4, 4);
  const place::PlaceResult r = place_text(text);
  ASSERT_TRUE(r.pending.empty()) << r.pending[0].reason;
  std::set<std::string> nodes;
  for (const place::Placement& p : r.placements) {
    if (p.pod.rfind("default/train-", 0) != 0) continue;
    nodes.insert(p.node);
    ASSERT_EQ(p.claims.size(), 1u) << p.pod;
    EXPECT_EQ(p.claims[0].claim, p.pod + "-imex");
    ASSERT_EQ(p.claims[0].allocation.devices.size(), 1u);
    EXPECT_EQ(p.claims[0].allocation.devices[0].driver, "compute-domain.nvidia.com");
    EXPECT_EQ(p.claims[0].allocation.devices[0].pool, p.node);
    EXPECT_EQ(p.claims[0].allocation.devices[0].device, "channel-0");
    EXPECT_EQ(p.claims[0].allocation.devices[0].request, "channel");
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"b-0", "b-1", "b-2", "b-3"}));
}

// The brief's cluster: two cliques of 2 nodes x 4 GPUs (16 GPUs in all). A gang of 4 pods x 4 GPUs
// fits the cluster (one pod per node) but no clique (8 GPUs each, less than the 16 it asks): pending
// with the reason; without the ComputeDomain the same gang spans both cliques.
TEST(ComputeDomain, GangTooBigForAnyCliqueStaysPending) {
  std::string cluster = kChannelClass;
  for (int i = 0; i < 2; ++i) cluster += node("a-" + std::to_string(i), "u.1");
  for (int i = 0; i < 2; ++i) cluster += node("b-" + std::to_string(i), "u.2");
  const place::PlaceResult r = place_text(cluster + gang("train", 4, 4));
  EXPECT_TRUE(r.placements.empty());
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/train");
  EXPECT_EQ(r.pending[0].reason,
            "no domain of nvidia.com/gpu.clique can hold 4 pods (ComputeDomain default/train-domain needs one NVLink domain): "
            "none of its 2 domains fits them");
  const place::PlaceResult free = place_text(cluster + gang("train", 4, 4, false));
  EXPECT_TRUE(free.pending.empty());
  EXPECT_EQ(free.placements.size(), 4u);
}

// The example of docs/dra.md: `train` (3 x 4 GPUs) takes the clique with the fewest free GPUs that
// holds it, B (14 free: nvl-b-0 runs a 2-GPU pod) on nvl-b-1..3; `sweep` (5 x 2 GPUs, 10) fits only
// clique A by GPUs (16 free) but A has 4 channel-0 devices for 5 workers: pending.
TEST(ComputeDomain, Example) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "examples" / "dra";
  io::PlaceInputs in = io::read_place_inputs({(dir / "compute-domain-cluster.yaml").string()}, {(dir / "compute-domain-workload.yaml").string()},
                                             "--cluster");
  const place::PlaceResult r = place::place_workload(in.input, place::PlaceOptions{});
  std::vector<std::string> got;
  for (const place::Placement& p : r.placements) got.push_back(p.pod + " -> " + p.node);
  EXPECT_EQ(got, (std::vector<std::string>{"default/inference-0 -> nvl-b-0", "default/train-0 -> nvl-b-1", "default/train-1 -> nvl-b-2",
                                           "default/train-2 -> nvl-b-3"}));
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "default/sweep");
  EXPECT_NE(r.pending[0].reason.find("no domain of nvidia.com/gpu.clique can hold 5 pods (ComputeDomain default/sweep-domain needs one "
                                     "NVLink domain): none of its 2 domains fits them; first failure: "),
            std::string::npos)
      << r.pending[0].reason;
}

// confine_to_one_clique on the levels a gang may already have.
TEST(ComputeDomain, ConfineToOneClique) {
  sched::GangRequest none;
  sched::confine_to_one_clique(none, "why");
  EXPECT_EQ(none.levels.labels, (std::vector<std::string>{"nvidia.com/gpu.clique"}));
  EXPECT_EQ(none.topology.mode, sched::GangTopology::Mode::kRequired);
  EXPECT_EQ(none.topology.level, 0);
  EXPECT_EQ(none.topology_reason, "why");
  // Kueue levels without the clique: inserted before the hostname; a preferred rack is replaced.
  sched::GangRequest rack;
  rack.levels.labels = {"example.com/rack", "kubernetes.io/hostname"};
  rack.topology = {sched::GangTopology::Mode::kPreferred, 0};
  sched::confine_to_one_clique(rack, "why");
  EXPECT_EQ(rack.levels.labels, (std::vector<std::string>{"example.com/rack", "nvidia.com/gpu.clique", "kubernetes.io/hostname"}));
  EXPECT_EQ(rack.topology.mode, sched::GangTopology::Mode::kRequired);
  EXPECT_EQ(rack.topology.level, 1);
  // A required host (finer than the clique) is kept, its index moved past the inserted level.
  sched::GangRequest host;
  host.levels.labels = {"example.com/rack", "kubernetes.io/hostname"};
  host.topology = {sched::GangTopology::Mode::kRequired, 1};
  sched::confine_to_one_clique(host, "why");
  EXPECT_EQ(host.topology.level, 2);
  EXPECT_EQ(host.levels.labels[2], "kubernetes.io/hostname");
  EXPECT_EQ(host.topology_reason, "");
}

}  // namespace
}  // namespace gpufleet
