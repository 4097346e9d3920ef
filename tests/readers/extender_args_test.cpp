// The readers of kube-scheduler's extender request bodies (readers/kube_api/extender_args.h): filter/prioritize in
// both nodeCacheCapable forms, preempt in both victim forms, bind; one InputError per bad field; the
// fuzz targets' seed corpora (fuzz/corpus/extender_*_fuzz: valid-* read, bad-* refused).
#include "readers/kube_api/extender_args.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/expect_input_error.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// A pod as kube-scheduler v1.20+ marshals it from its informer: no kind/apiVersion (empty TypeMeta),
// server-set metadata, status. Requests 2 GPUs, 8 CPUs, 64Gi.
const std::string kPod = R"({"metadata":{"name":"train-0","namespace":"ml","uid":"0b9f-01","resourceVersion":"48213",
  "creationTimestamp":"2026-12-01T10:00:00Z","annotations":{"gpufleet.io/gpu-index":"0,1"}},
  "spec":{"containers":[{"name":"trainer","resources":{"limits":{"nvidia.com/gpu":"2"},
  "requests":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":"2"}}}],"priority":100,
  "preemptionPolicy":"PreemptLowerPriority","schedulerName":"default-scheduler"},"status":{"phase":"Pending"}})";

const std::string kNode1 = R"({"metadata":{"name":"n1","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},
  "status":{"allocatable":{"cpu":"96","memory":"1000Gi","nvidia.com/gpu":"8"}}})";
const std::string kNode2 = R"({"metadata":{"name":"n2"},"status":{"allocatable":{"cpu":"16","memory":"64Gi"}}})";

void expect_error(const std::function<void()>& read, const std::string& field, const std::string& fragment) {
  testing::expect_input_error(read, "filter", 0, 0, field, fragment);
}
void expect_filter_error(const std::string& body, const std::string& field, const std::string& fragment) {
  expect_error([&] { parse_extender_args(body, "filter"); }, field, fragment);
}
void expect_preempt_error(const std::string& body, const std::string& field, const std::string& fragment) {
  expect_error([&] { parse_extender_preemption_args(body, "filter"); }, field, fragment);
}
void expect_bind_error(const std::string& body, const std::string& field, const std::string& fragment) {
  expect_error([&] { parse_extender_binding_args(body, "filter"); }, field, fragment);
}

// ------------------------------------------------------------------------------ filter, prioritize

TEST(ExtenderArgs, NodeNamesFormReadsThePodAsPlaceDoes) {
  const ExtenderArgs a = parse_extender_args(R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":["n1","n2"]})", "filter");
  EXPECT_EQ(a.pod.name, "train-0");
  EXPECT_EQ(a.pod.namespace_name, "ml");
  EXPECT_EQ(a.pod.uid, "0b9f-01");
  EXPECT_EQ(a.pod.num_gpu, 2);
  EXPECT_EQ(a.pod.gpu_milli, 1000);
  EXPECT_EQ(a.pod.cpu_milli, 8000);
  EXPECT_EQ(a.pod.memory_bytes, int64_t{64} << 30);
  EXPECT_EQ(a.pod.priority, 100);
  EXPECT_EQ(a.pod.node_name, "");
  EXPECT_FALSE(a.pod.assigned_devices.has_value());  // not bound: its annotations are not read
  EXPECT_EQ(a.node_names, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(a.node_cache_capable);
  EXPECT_TRUE(a.node_items.is_null());
}

TEST(ExtenderArgs, NodeListFormKeepsTheItems) {
  const ExtenderArgs a = parse_extender_args(
      R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)" + kNode1 + "," + kNode2 + R"(]},"NodeNames":null})",
      "filter");
  EXPECT_EQ(a.node_names, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_FALSE(a.node_cache_capable);
  ASSERT_TRUE(a.node_items.is_array());
  ASSERT_EQ(a.node_items.size(), 2u);
  EXPECT_EQ(a.node_items[0]["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(a.node_items[1]["metadata"]["name"], "n2");
  EXPECT_EQ(a.pod.num_gpu, 2);
}

TEST(ExtenderArgs, NoNodesAndGoKeyMatching) {
  const std::string cpu_pod = R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}})";
  for (const std::string& tail : {std::string(R"(,"Nodes":null,"NodeNames":null})"), std::string("}")}) {
    const ExtenderArgs a = parse_extender_args(R"({"Pod":)" + cpu_pod + tail, "filter");
    EXPECT_TRUE(a.node_names.empty());
    EXPECT_FALSE(a.node_cache_capable);
    EXPECT_TRUE(a.node_items.is_null());
    EXPECT_EQ(a.pod.namespace_name, "default");
    EXPECT_EQ(a.pod.num_gpu, 0);
  }
  // Nodes with items null (Go's nil slice): zero nodes, the NodeList form.
  const ExtenderArgs empty = parse_extender_args(R"({"Pod":)" + cpu_pod + R"(,"Nodes":{"items":null}})", "filter");
  EXPECT_TRUE(empty.node_names.empty());
  EXPECT_FALSE(empty.node_cache_capable);
  EXPECT_EQ(empty.node_items, nlohmann::json::array());
  // Go's encoding/json matches keys ignoring case (the lower-case tags of pkg/scheduler/api/v1); an
  // exact match wins over a case variant.
  const ExtenderArgs lower = parse_extender_args(R"({"pod":)" + cpu_pod + R"(,"nodenames":["a"]})", "filter");
  EXPECT_EQ(lower.pod.name, "p");
  EXPECT_EQ(lower.node_names, (std::vector<std::string>{"a"}));
  const ExtenderArgs exact = parse_extender_args(R"({"pod":)" + cpu_pod + R"(,"nodenames":["a"],"NodeNames":["b"]})", "filter");
  EXPECT_EQ(exact.node_names, (std::vector<std::string>{"b"}));
  // NodeNames given: Nodes is not read.
  const ExtenderArgs both = parse_extender_args(R"({"Pod":)" + cpu_pod + R"(,"Nodes":{"items":[)" + kNode1 + R"(]},"NodeNames":["x"]})", "filter");
  EXPECT_EQ(both.node_names, (std::vector<std::string>{"x"}));
  EXPECT_TRUE(both.node_items.is_null());
}

TEST(ExtenderArgs, BoundPodReadsItsDeviceAnnotations) {
  const std::string pod = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","uid":"u-b",
    "annotations":{"gpufleet.io/gpu-index":"3,5","gpufleet.io/mig-devices":"1:0:1g.10gb"}},
    "spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2","nvidia.com/mig-1g.10gb":"1"}}}]}})";
  const ExtenderArgs a = parse_extender_args(R"({"Pod":)" + pod + R"(,"NodeNames":[]})", "filter");
  EXPECT_EQ(a.pod.uid, "u-b");
  EXPECT_EQ(a.pod.node_name, "n1");
  ASSERT_TRUE(a.pod.assigned_devices.has_value());
  EXPECT_EQ(a.pod.assigned_devices->gpus, (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(a.pod.assigned_devices->mig, (std::vector<MigDevice>{{1, 0, "1g.10gb"}}));
  EXPECT_TRUE(a.node_cache_capable);
  EXPECT_TRUE(a.node_names.empty());
}

TEST(ExtenderArgsErrors, EachFieldNamed) {
  const std::string pod = R"({"Pod":)" + kPod;
  expect_filter_error(R"({"NodeNames":["n1"]})", "Pod", "required field is missing");
  expect_filter_error(R"({"Pod":null,"NodeNames":["n1"]})", "Pod", "required field is missing");
  expect_filter_error(R"({"Pod":[],"NodeNames":["n1"]})", "Pod", "expected an object, got an array");
  expect_filter_error(R"({"Pod":{"kind":"Node","metadata":{"name":"x"}}})", "Pod.kind", "expected \"Pod\", got Node");
  expect_filter_error(R"({"Pod":{"metadata":{},"spec":{"containers":[{"name":"c"}]}}})", "Pod.metadata.name",
                      "required field is missing");
  expect_filter_error(R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}})",
                      "Pod.spec.containers[0].resources.requests.cpu", "'lots' is not a valid quantity");
  expect_filter_error(pod + R"(,"NodeNames":"n1"})", "NodeNames", "expected an array, got a string");
  expect_filter_error(pod + R"(,"NodeNames":["n1","n2",3]})", "NodeNames[2]", "expected a string, got a number");
  expect_filter_error(pod + R"(,"NodeNames":["n1",""]})", "NodeNames[1]", "must not be empty");
  expect_filter_error(pod + R"(,"NodeNames":["n1","n2","n1"]})", "NodeNames[2]", "duplicate node 'n1'");
  expect_filter_error(pod + R"(,"Nodes":[]})", "Nodes", "expected an object, got an array");
  expect_filter_error(pod + R"(,"Nodes":{"items":{}}})", "Nodes.items", "expected an array, got an object");
  expect_filter_error(pod + R"(,"Nodes":{"items":[)" + kNode1 + R"(,{"metadata":{}}]}})", "Nodes.items[1].metadata.name",
                      "required field is missing");
  expect_filter_error(pod + R"(,"Nodes":{"items":[)" + kNode1 + "," + kNode1 + R"(]}})", "Nodes.items[1].metadata.name",
                      "duplicate node 'n1'");
  expect_filter_error("[1]", "", "expected a JSON object, got an array");
}

TEST(ExtenderArgsErrors, Limits) {
  ObjectLimits small;
  small.max_nodes = 2;
  const std::string pod = R"({"Pod":)" + kPod;
  expect_error([&] { parse_extender_args(pod + R"(,"NodeNames":["a","b","c"]})", "filter", kJsonRequestLimits, small); },
               "NodeNames", "more than 2 node names (limit ObjectLimits::max_nodes");
  expect_error([&] { parse_extender_args(pod + R"(,"Nodes":{"items":[)" + kNode1 + "," + kNode2 + "," + kNode2 + "]}}", "filter",
                                         kJsonRequestLimits, small); },
               "Nodes.items", "more than 2 nodes (limit ObjectLimits::max_nodes");
  EXPECT_EQ(parse_extender_args(pod + R"(,"NodeNames":["a","b"]})", "filter", kJsonRequestLimits, small).node_names.size(), 2u);
  JsonRequestLimits tiny;
  tiny.max_body_bytes = 10;
  expect_error([&] { parse_extender_args(pod + "}", "filter", tiny); }, "", "more than 10 bytes in the body");
  // A syntax error has the line and column of the offending byte.
  testing::expect_input_error([] { parse_extender_args("{\n  \"Pod\": tru!}", "filter"); }, "filter", 2, 13, "",
                              "JSON syntax error");
}

// The fast path (a pod whose text was read before; the names straight from the text) reads a body as
// the full path does, and refuses what the full path refuses, with the same error.
TEST(ExtenderArgs, FastPathReadsAsTheFullPath) {
  const std::string pod = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"fast","namespace":"ml","uid":"u-fast",
    "annotations":{"gpufleet.io/gpu-index":"6,7"}},
    "spec":{"nodeName":"n9","containers":[{"name":"c","resources":{"requests":{"cpu":"3","nvidia.com/gpu":"2"},"limits":{"nvidia.com/gpu":"2"}}}]}})";
  const std::string body = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":["n1","n2","n3"]})";
  const ExtenderArgs first = parse_extender_args(body, "filter");  // the full path; the pod's text is kept
  for (const std::string& again : {body, " {\n \"Pod\" : " + pod + " ,\t\"NodeNames\" : [ \"n1\" , \"n2\",\"n3\" ] , \"Nodes\" : null }\n"}) {
    const ExtenderArgs a = parse_extender_args(again, "filter");
    EXPECT_EQ(a.pod.name, "fast");
    EXPECT_EQ(a.pod.namespace_name, "ml");
    EXPECT_EQ(a.pod.uid, "u-fast");
    EXPECT_EQ(a.pod.cpu_milli, 3000);
    EXPECT_EQ(a.pod.num_gpu, 2);
    EXPECT_EQ(a.pod.node_name, "n9");
    ASSERT_TRUE(a.pod.assigned_devices.has_value());
    EXPECT_EQ(a.pod.assigned_devices->gpus, (std::vector<int32_t>{6, 7}));
    EXPECT_EQ(a.node_names, (std::vector<std::string>{"n1", "n2", "n3"}));
    EXPECT_EQ(a.node_names, first.node_names);
    EXPECT_TRUE(a.node_cache_capable);
    EXPECT_TRUE(a.node_items.is_null());
    EXPECT_EQ(a.warnings, first.warnings);
  }
  // An escaped name goes to the full path, which decodes it.
  EXPECT_EQ(parse_extender_args(R"({"Pod":)" + pod + R"(,"NodeNames":["n\u0031","a\"b"]})", "filter").node_names,
            (std::vector<std::string>{"n1", "a\"b"}));
  // Refused as before, with the pod known: a duplicate, an empty name, a wrong type, trailing bytes.
  const std::string known = R"({"Pod":)" + pod;
  expect_filter_error(known + R"(,"NodeNames":["n1","n2","n1"]})", "NodeNames[2]", "duplicate node 'n1'");
  expect_filter_error(known + R"(,"NodeNames":["n1",""]})", "NodeNames[1]", "must not be empty");
  expect_filter_error(known + R"(,"NodeNames":["n1",7]})", "NodeNames[1]", "expected a string, got a number");
  try {
    parse_extender_args(known + R"(,"NodeNames":["n1"]} x)", "filter");
    ADD_FAILURE() << "trailing bytes read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);  // the pod's text has two line breaks
    EXPECT_NE(std::string(e.what()).find("JSON syntax error"), std::string::npos) << e.what();
  }
  // Each limit of the whole body, counted as the full path counts it. Values: the root, the pod's
  // (pod 1, kind 1, apiVersion 1, metadata 1 + 5, spec 1, nodeName 1, containers 1, container 1,
  // name 1, resources 1, requests 1 + 2, limits 1 + 1 = 20), Nodes 1, NodeNames 1 + 3 = 26.
  JsonRequestLimits values;
  values.max_values = 25;
  expect_error([&] { parse_extender_args(body, "filter", values); }, "", "more than 25 values");
  values.max_values = 26;
  EXPECT_EQ(parse_extender_args(body, "filter", values).node_names.size(), 3u);
  // Depth: root 1, Pod 2, spec 3, containers 4, container 5, resources 6, requests 7.
  JsonRequestLimits depth;
  depth.max_depth = 6;
  expect_error([&] { parse_extender_args(body, "filter", depth); }, "", "more than 6 levels of nesting");
  depth.max_depth = 7;
  EXPECT_EQ(parse_extender_args(body, "filter", depth).node_names.size(), 3u);
  // String bytes: the longest is "gpufleet.io/gpu-index" (21 bytes).
  JsonRequestLimits strings;
  strings.max_string_bytes = 20;
  expect_error([&] { parse_extender_args(body, "filter", strings); }, "", "more than 20 bytes in a string");
  strings.max_string_bytes = 21;
  EXPECT_EQ(parse_extender_args(body, "filter", strings).node_names.size(), 3u);
  expect_error([&] { parse_extender_args(known + R"(,"NodeNames":["a-name-of-22-bytes-xyz"]})", "filter", strings); }, "",
               "more than 21 bytes in a string");
  ObjectLimits two;
  two.max_nodes = 2;
  expect_error([&] { parse_extender_args(body, "filter", kJsonRequestLimits, two); }, "NodeNames",
               "more than 2 node names (limit ObjectLimits::max_nodes");
}

// ----------------------------------------------------------------------------------------- preempt

TEST(ExtenderPreemptionArgs, MetaVictims) {
  const ExtenderPreemptionArgs a = parse_extender_preemption_args(
      R"({"Pod":)" + kPod + R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{
        "n2":{"Pods":[{"UID":"v-3"}],"NumPDBViolations":1},
        "n1":{"Pods":[{"UID":"v-1"},{"UID":"v-2"}],"NumPDBViolations":0},
        "n3":{"Pods":null}}})",
      "filter");
  EXPECT_TRUE(a.meta_victims);
  EXPECT_EQ(a.pod.uid, "0b9f-01");
  ASSERT_EQ(a.node_victims.size(), 3u);
  auto it = a.node_victims.begin();
  EXPECT_EQ(it->first, "n1");
  EXPECT_EQ(it->second.pod_uids, (std::vector<std::string>{"v-1", "v-2"}));
  EXPECT_EQ(it->second.num_pdb_violations, 0);
  ++it;
  EXPECT_EQ(it->first, "n2");
  EXPECT_EQ(it->second.pod_uids, (std::vector<std::string>{"v-3"}));
  EXPECT_EQ(it->second.num_pdb_violations, 1);
  ++it;
  EXPECT_EQ(it->first, "n3");
  EXPECT_TRUE(it->second.pod_uids.empty());
}

TEST(ExtenderPreemptionArgs, FullVictimsAndNone) {
  const ExtenderPreemptionArgs a = parse_extender_preemption_args(
      R"({"Pod":)" + kPod + R"(,"NodeNameToVictims":{"n1":{"Pods":[
        {"metadata":{"name":"low-0","namespace":"ml","uid":"v-9"},"spec":{"nodeName":"n1","containers":[{"name":"c"}]}}],
        "NumPDBViolations":2}},"NodeNameToMetaVictims":null})",
      "filter");
  EXPECT_FALSE(a.meta_victims);
  ASSERT_EQ(a.node_victims.size(), 1u);
  EXPECT_EQ(a.node_victims.at("n1").pod_uids, (std::vector<std::string>{"v-9"}));
  EXPECT_EQ(a.node_victims.at("n1").num_pdb_violations, 2);

  const ExtenderPreemptionArgs none = parse_extender_preemption_args(R"({"Pod":)" + kPod + "}", "filter");
  EXPECT_FALSE(none.meta_victims);
  EXPECT_TRUE(none.node_victims.empty());
  EXPECT_EQ(none.pod.num_gpu, 2);
}

TEST(ExtenderPreemptionArgsErrors, EachFieldNamed) {
  const std::string pod = R"({"Pod":)" + kPod;
  expect_preempt_error(R"({"NodeNameToMetaVictims":{}})", "Pod", "required field is missing");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":[]})", "NodeNameToMetaVictims", "expected an object, got an array");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":{"n1":null}})", "NodeNameToMetaVictims.n1",
                       "expected an object, got null");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"a"},{}]}}})",
                       "NodeNameToMetaVictims.n1.Pods[1].UID", "required field is missing");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"a"}],"NumPDBViolations":-1}}})",
                       "NodeNameToMetaVictims.n1.NumPDBViolations", "-1 is negative");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":1.5}}})",
                       "NodeNameToMetaVictims.n1.NumPDBViolations", "expected an integer, got 1.5");
  expect_preempt_error(pod + R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"name":"x"}}]}}})",
                       "NodeNameToVictims.n1.Pods[0].metadata.uid", "required field is missing");
  expect_preempt_error(pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"a"},{"UID":"b"},{"UID":"a"}]}}})",
                       "NodeNameToMetaVictims.n1.Pods[2].UID", "pod UID 'a' is listed twice on this node (also NodeNameToMetaVictims.n1.Pods[0])");
  expect_preempt_error(pod + R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":"a"}},{"metadata":{"uid":"a"}}]}}})",
                       "NodeNameToVictims.n1.Pods[1].metadata.uid", "listed twice");
  expect_preempt_error(pod + R"(,"NodeNameToVictims":{"":{"Pods":[]}}})", "NodeNameToVictims.", "must not be empty");
  ObjectLimits small;
  small.max_pods = 2;
  expect_error([&] {
    parse_extender_preemption_args(pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"a"},{"UID":"b"}]},
      "n2":{"Pods":[{"UID":"c"}]}}})", "filter", kJsonRequestLimits, small);
  }, "NodeNameToMetaVictims.n2.Pods", "more than 2 victim pods (limit ObjectLimits::max_pods");
}

// -------------------------------------------------------------------------------------------- bind

TEST(ExtenderBindingArgs, AllFields) {
  const ExtenderBindingArgs a =
      parse_extender_binding_args(R"({"PodName":"train-0","PodNamespace":"ml","PodUID":"0b9f-01","Node":"n1"})", "filter");
  EXPECT_EQ(a.pod_name, "train-0");
  EXPECT_EQ(a.pod_namespace, "ml");
  EXPECT_EQ(a.pod_uid, "0b9f-01");
  EXPECT_EQ(a.node, "n1");
  const ExtenderBindingArgs d = parse_extender_binding_args(R"({"PodName":"w","PodNamespace":"","PodUID":"u","Node":"n2"})", "filter");
  EXPECT_EQ(d.pod_namespace, "default");
}

TEST(ExtenderBindingArgsErrors, EachFieldNamed) {
  expect_bind_error(R"({"PodName":"p","PodNamespace":"ml","PodUID":"u"})", "Node", "required field is missing");
  expect_bind_error(R"({"PodName":"p","PodNamespace":"ml","PodUID":42,"Node":"n1"})", "PodUID", "expected a string, got a number");
  expect_bind_error(R"({"PodName":"","PodNamespace":"ml","PodUID":"u","Node":"n1"})", "PodName", "must not be empty");
  expect_bind_error(R"({"PodName":"p","PodUID":"u","Node":"n1"})", "PodNamespace", "required field is missing");
  expect_bind_error(R"({"PodName":"p","PodNamespace":true,"PodUID":"u","Node":"n1"})", "PodNamespace",
                    "expected a string, got a boolean");
  expect_bind_error(R"("p")", "", "expected a JSON object, got a string");
}

// ------------------------------------------------------------------------------ fuzz seed corpora

// Each target's seeds: valid-* are read, bad-* are refused with an InputError. Returns {valid, bad}.
template <class Read>
std::pair<int, int> replay(const std::string& target, Read read) {
  const auto dir = std::filesystem::path(GPUFLEET_SOURCE_DIR) / "fuzz" / "corpus" / target;
  int valid = 0, bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (name.rfind("valid-", 0) == 0) {
      EXPECT_NO_THROW(read(text, name)) << name;
      ++valid;
    } else {
      EXPECT_THROW(read(text, name), InputError) << name;
      ++bad;
    }
  }
  return {valid, bad};
}

TEST(ExtenderArgs, FuzzSeeds) {
  // Each seed read twice: the second reading may take the fast path and must give the same names.
  EXPECT_EQ(replay("extender_args_fuzz",
                   [](const std::string& t, const std::string& n) {
                     const ExtenderArgs first = parse_extender_args(t, n);
                     EXPECT_EQ(parse_extender_args(t, n).node_names, first.node_names) << n;
                   }),
            std::make_pair(5, 6));
  EXPECT_EQ(replay("extender_preemption_fuzz",
                   [](const std::string& t, const std::string& n) { parse_extender_preemption_args(t, n); }),
            std::make_pair(3, 3));
  EXPECT_EQ(replay("extender_binding_fuzz",
                   [](const std::string& t, const std::string& n) { parse_extender_binding_args(t, n); }),
            std::make_pair(2, 3));
}

}  // namespace
}  // namespace gpufleet::io
