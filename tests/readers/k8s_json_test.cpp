// Kubernetes files as JSON objects (readers/kube_api/k8s_json.h): one object per document and per List
// item, a List in a List unpacked as the Kubernetes reader unpacks it, typed lists' items given their
// kind, in file order.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"
#include "readers/kube_api/k8s_json.h"

namespace gpufleet::io {
namespace {

TEST(K8sJson, ListsAreUnpackedInOrderAsTheReaderUnpacksThem) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("gpufleet_k8s_json_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: PodList
  items:
  - metadata: {name: a}
    spec: {containers: [{name: c}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
  spec: {containers: [{name: c}]}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 10
)";
  const std::vector<nlohmann::json> objects = read_k8s_json_objects({path.string()});
  std::vector<std::string> seen;
  for (const nlohmann::json& o : objects) seen.push_back(o["kind"].get<std::string>() + "/" + o["metadata"]["name"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"Pod/a", "Pod/b", "PriorityClass/high"}));
  // The Kubernetes reader makes the same pods of the file, in the same order.
  const K8sObjects read = read_k8s_inputs({path.string()});
  ASSERT_EQ(read.pods.size(), 2u);
  EXPECT_EQ(read.pods[0].name, "a");
  EXPECT_EQ(read.pods[1].name, "b");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpufleet::io
