// gpufleet place: queue order, spec.nodeName pods, quota admission and kube's FitError messages, on
// clusters of 1-3 nodes with hand-computed answers.
#include "place/place_workload.h"

#include <gtest/gtest.h>

#include "report/place_output.h"
#include "sched/fit_error.h"
#include "support/test_support.h"

namespace gpufleet {
namespace {

using testing::make_node;
using testing::make_pod;

Pod k8s_pod(std::string name, int32_t gpus, int32_t priority = 0, std::string ns = "default") {
  Pod p = make_pod(std::move(name), 1000, 1024, gpus, gpus > 0 ? 1000 : 0);
  p.namespace_name = std::move(ns);
  p.priority = priority;
  return p;
}

// A pod that already names its node (spec.nodeName: bound by someone else, e.g. a running pod).
Pod bound_pod(std::string node, std::string name, int32_t gpus, int32_t priority = 0, std::string ns = "default") {
  Pod p = k8s_pod(std::move(name), gpus, priority, std::move(ns));
  p.node_name = std::move(node);
  return p;
}

const place::Placement* find(const place::PlaceResult& r, const std::string& pod) {
  for (const auto& p : r.placements)
    if (p.pod == pod) return &p;
  return nullptr;
}

TEST(FitError, SortsCountAndReasonStringsLikeGo) {
  const sched::ReasonHistogram h{{"Insufficient nvidia.com/gpu", 4}, {"node(s) had untolerated taint {workload-type: inference}", 12},
                                 {"Insufficient cpu", 1}};
  // Byte order of "<count> <reason>": "1 I" < "12 n" < "4 I".
  EXPECT_EQ(sched::fit_error_message(h, 17),
            "0/17 nodes are available: 1 Insufficient cpu, 12 node(s) had untolerated taint {workload-type: inference}, "
            "4 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(sched::fit_error_message({}, 0), "no nodes available to schedule pods");
  EXPECT_EQ(sched::fit_error_message({{"Too many pods", 1}}, 1, "preemption: not eligible due to preemptionPolicy=Never."),
            "0/1 nodes are available: 1 Too many pods. preemption: not eligible due to preemptionPolicy=Never.");
}

TEST(PlaceWorkload, HigherPriorityFirstThenCreationOrder) {
  place::PlaceInput in;
  in.nodes = {make_node("n0", 8000, 16384, 2, "L4")};
  in.pods = {k8s_pod("low", 1, 10), k8s_pod("high-a", 1, 100), k8s_pod("mid", 1, 50), k8s_pod("high-b", 1, 100)};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  ASSERT_EQ(r.placements.size(), 2u);
  EXPECT_EQ(r.placements[0].pod, "default/high-a");
  EXPECT_EQ(r.placements[0].gpus, std::vector<int32_t>{0});
  EXPECT_EQ(r.placements[1].pod, "default/high-b");
  EXPECT_EQ(r.placements[1].gpus, std::vector<int32_t>{1});
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].pod, "default/mid");  // queue order: priority 50 before 10
  EXPECT_EQ(r.pending[1].pod, "default/low");
  EXPECT_EQ(r.gpu_used_milli, 2000);
}

TEST(PlaceWorkload, PendingReasonNamesEachNodesTaint) {
  place::PlaceInput in;
  in.nodes = {make_node("inf-0", 8000, 16384, 1, "L4"), make_node("inf-1", 8000, 16384, 1, "L4"),
              make_node("train-0", 8000, 16384, 8, "H100-80GB"), make_node("cpu-0", 8000, 16384, 0)};
  in.nodes[0].taints = {{"workload-type", "inference", "NoSchedule"}};
  in.nodes[1].taints = {{"workload-type", "inference", "NoSchedule"}};
  in.nodes[2].taints = {{"workload-type", "training", "NoExecute"}};
  Pod p = k8s_pod("job", 2);
  p.preempt_lower_priority = false;
  in.pods = {p};
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].reason,
            "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {workload-type: training}, "
            "2 node(s) had untolerated taint {workload-type: inference}. preemption: not eligible due to preemptionPolicy=Never.");
}

TEST(PlaceWorkload, NodeNamePodsAreBoundFirstOrRefusedByTheKubelet) {
  place::PlaceInput in;
  in.nodes = {make_node("n0", 4000, 8192, 2, "L4"), make_node("n1", 4000, 8192, 1, "L4")};
  Pod running = bound_pod("n0", "running", 2);
  Pod too_big = bound_pod("n1", "too-big", 2);
  Pod lost = bound_pod("n9", "lost", 1);
  Pod fresh = k8s_pod("fresh", 1, 1000);
  in.pods = {fresh, running, too_big, lost};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  ASSERT_EQ(r.placements.size(), 2u);
  EXPECT_EQ(r.placements[0].pod, "default/running");
  EXPECT_TRUE(r.placements[0].prebound);
  EXPECT_EQ(r.placements[0].gpus, (std::vector<int32_t>{0, 1}));
  // The high-priority pod is scheduled after the bound one and so gets n1.
  EXPECT_EQ(r.placements[1].pod, "default/fresh");
  EXPECT_EQ(r.placements[1].node, "n1");
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].pod, "default/too-big");
  EXPECT_EQ(r.pending[0].reason, "OutOfnvidia.com/gpu");
  EXPECT_EQ(r.pending[1].reason, "node \"n9\" not found");
}

// The kubelet names the MIG resource the node is out of: the first profile it lacks, not the first
// profile the pod asks for.
TEST(PlaceWorkload, KubeletRefusalNamesTheMissingMigProfile) {
  place::PlaceInput in;
  Node h100 = make_node("h100", 64000, 524288, 1, "H100-80GB");
  h100.mig.push_back(GpuMig{true, {{"4g.40gb", 0}, {"3g.40gb", 4}}});
  in.nodes = {h100};
  Pod pod = bound_pod("h100", "two-profiles", 0);
  pod.mig_requests = {{"4g.40gb", 1}, {"1g.10gb", 1}};
  in.pods = {pod};
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].reason, "OutOfnvidia.com/mig-1g.10gb");
}

// The kubelet admits a spec.nodeName pod on resources, node affinity and NoExecute taints only
// (pkg/kubelet/lifecycle/predicate.go generalFilter): a NoSchedule taint or a required anti-affinity
// term, which only the scheduler checks, does not stop it.
TEST(PlaceWorkload, NodeNamePodsSkipTheSchedulersOwnFilters) {
  place::PlaceInput in;
  in.nodes = {make_node("tainted", 4000, 8192, 1, "L4"), make_node("evicting", 4000, 8192, 1, "L4"),
              make_node("labelled", 4000, 8192, 1, "L4")};
  in.nodes[0].taints = {{"workload-type", "inference", "NoSchedule"}};
  in.nodes[1].taints = {{"maintenance", "true", "NoExecute"}};
  Pod on_tainted = bound_pod("tainted", "on-tainted", 1);
  Pod on_evicting = bound_pod("evicting", "on-evicting", 1);
  Pod selector = bound_pod("labelled", "selector", 1);
  selector.constraints.node_selector = {{"pool", "training"}};
  in.pods = {on_tainted, on_evicting, selector};
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "default/on-tainted");
  EXPECT_EQ(r.placements[0].node, "tainted");
  EXPECT_TRUE(r.placements[0].prebound);
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].reason, "Predicate TaintToleration failed: node(s) had untolerated taint {maintenance: true}");
  EXPECT_EQ(r.pending[1].reason, "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
}

// A pod the kubelet refuses is Failed, a terminal phase the quota controller does not count; a pod
// whose node is missing stays Pending and counts.
TEST(PlaceWorkload, RefusedNodeNamePodsDoNotUseQuota) {
  place::PlaceInput in;
  in.nodes = {make_node("n0", 64000, 262144, 2, "A100-80GB")};
  in.quotas = {admit::ResourceQuota{"team-a", "gpus", {{"requests.nvidia.com/gpu", "4"}}, {}, {}}};
  Pod refused = bound_pod("n0", "refused", 3, 0, "team-a");  // 3 GPUs on a 2-GPU node: OutOfnvidia.com/gpu
  Pod lost = bound_pod("gone", "lost", 1, 0, "team-a");
  in.pods = {refused, lost, k8s_pod("new", 2, 0, "team-a")};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  // Used: lost (1) only, so new (2) is admitted (1 + 2 <= 4) and placed.
  EXPECT_TRUE(r.quota_rejected.empty());
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "team-a/new");
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].reason, "OutOfnvidia.com/gpu");
}

TEST(PlaceWorkload, QuotaAdmissionInCreationOrderBeforeScheduling) {
  place::PlaceInput in;
  in.nodes = {make_node("n0", 64000, 262144, 8, "A100-80GB")};
  in.quotas = {admit::ResourceQuota{"team-a", "gpus", {{"requests.nvidia.com/gpu", "4"}}, {}, {}}};
  in.pods = {k8s_pod("a", 2, 0, "team-a"), k8s_pod("b", 3, 1000, "team-a"), k8s_pod("c", 2, 0, "team-a"),
             k8s_pod("other", 3, 0, "team-b")};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  // a (2) and c (2) fill the quota of 4; b (3, created second) is refused although it has the
  // highest priority: admission happens at creation, before the scheduler sees priorities.
  ASSERT_EQ(r.quota_rejected.size(), 1u);
  EXPECT_EQ(r.quota_rejected[0].pod, "team-a/b");
  EXPECT_EQ(r.quota_rejected[0].reason,
            "pods \"b\" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=3, used: "
            "requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=4");
  EXPECT_EQ(r.placements.size(), 3u);
  EXPECT_TRUE(find(r, "team-a/a") && find(r, "team-a/c") && find(r, "team-b/other"));
  EXPECT_EQ(r.gpu_used_milli, 7000);
}

TEST(PlaceWorkload, RunningPodsCountAgainstQuotaEvenAboveItsLimit) {
  place::PlaceInput in;
  in.nodes = {make_node("n0", 64000, 262144, 8, "A100-80GB")};
  in.quotas = {admit::ResourceQuota{"team-a", "gpus", {{"requests.nvidia.com/gpu", "4"}}, {}, {}}};
  Pod running = bound_pod("n0", "running", 6, 0, "team-a");  // the quota was lowered after it started
  in.pods = {running, k8s_pod("new", 1, 0, "team-a")};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  ASSERT_EQ(r.placements.size(), 1u);
  EXPECT_EQ(r.placements[0].pod, "team-a/running");
  ASSERT_EQ(r.quota_rejected.size(), 1u);
  EXPECT_EQ(r.quota_rejected[0].reason,
            "pods \"new\" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, used: "
            "requests.nvidia.com/gpu=6, limited: requests.nvidia.com/gpu=4");
}

TEST(PlaceWorkload, EveryPodAccountedForAndNoNodeAboveCapacity) {
  place::PlaceInput in;
  for (int i = 0; i < 3; ++i) in.nodes.push_back(make_node("n" + std::to_string(i), 16000, 65536, 4, "L4"));
  in.quotas = {admit::ResourceQuota{"q", "gpus", {{"requests.nvidia.com/gpu", "6"}}, {}, {}}};
  for (int i = 0; i < 40; ++i) {
    Pod p = k8s_pod("p" + std::to_string(i), 1 + i % 3, i % 5, i % 4 == 0 ? "q" : "default");
    if (i % 7 == 0) p.gpu_milli = 300, p.num_gpu = 1;
    in.pods.push_back(p);
  }
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  EXPECT_EQ(r.placements.size() + r.pending.size() + r.quota_rejected.size(), in.pods.size());
  std::map<std::string, std::array<int32_t, 4>> used;
  for (const auto& p : r.placements) {
    const Pod* pod = nullptr;
    for (const Pod& q : in.pods)
      if (place::pod_key(q) == p.pod) pod = &q;
    ASSERT_TRUE(pod);
    EXPECT_EQ(p.gpus.size(), static_cast<size_t>(pod->num_gpu));
    for (int32_t g : p.gpus) used[p.node][static_cast<size_t>(g)] += pod->gpu_milli;
  }
  for (const auto& [node, gpus] : used)
    for (int32_t milli : gpus) EXPECT_LE(milli, 1000) << node;
}

TEST(PlaceWorkload, HigherPriorityPodPreemptsARunningOneWhichIsRequeued) {
  place::PlaceInput in;
  in.nodes = {make_node("a", 16000, 65536, 8, "H200-141GB"), make_node("b", 16000, 65536, 2, "H200-141GB")};
  Pod low = bound_pod("a", "ablation", 8, 100, "research");
  Pod other = bound_pod("b", "small", 2, 100, "research");
  Pod eval = k8s_pod("eval", 4, 10000, "ml");
  in.pods = {low, other, eval};
  const place::PlaceResult r = place::place_workload(in, {"gpufleet", 42});
  // eval fits nowhere: a holds 8/8, b 2/2. Evicting "small" (2 GPUs) would not make room on b (only 2
  // GPUs), so the victim is the ablation on a; eval takes GPUs 0-3 there; the re-created ablation
  // (8 GPUs) fits nowhere any more and cannot preempt (equal or higher priority everywhere).
  const place::Placement* p = find(r, "ml/eval");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->node, "a");
  EXPECT_EQ(p->gpus, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p->preempted, std::vector<std::string>{"research/ablation"});
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_FALSE(find(r, "research/ablation"));
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].pod, "research/ablation");
  EXPECT_EQ(r.pending[0].reason,
            "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: "
            "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.");
  EXPECT_EQ(r.gpu_used_milli, 6000);
}

TEST(PlaceWorkload, NeverPreemptsEqualPriorityOrWithPolicyNever) {
  place::PlaceInput in;
  in.nodes = {make_node("a", 16000, 65536, 1, "L4")};
  Pod running = bound_pod("a", "running", 1, 500);
  Pod same = k8s_pod("same", 1, 500);
  Pod never = k8s_pod("never", 1, 900);
  never.preempt_lower_priority = false;
  in.pods = {running, same, never};
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  EXPECT_EQ(r.preemptions, 0);
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].pod, "default/never");
  EXPECT_EQ(r.pending[0].reason, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: not eligible due to preemptionPolicy=Never.");
  EXPECT_EQ(r.pending[1].pod, "default/same");
  EXPECT_EQ(r.pending[1].reason,
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
}

TEST(PlaceWorkload, SelfAntiAffinitySpreadsReplicasOverHosts) {
  place::PlaceInput in;
  in.nodes = {make_node("a", 16000, 65536, 4, "L4"), make_node("b", 16000, 65536, 4, "L4")};
  for (int i = 0; i < 3; ++i) {
    Pod p = k8s_pod("web-" + std::to_string(i), 1);
    p.labels = {{"app", "web"}};
    PodAffinityTerm term;
    term.label_selector.match_labels = {{"app", "web"}};
    term.topology_key = "kubernetes.io/hostname";
    p.constraints.required_anti_affinity = {term};
    in.pods.push_back(p);
  }
  const place::PlaceResult r = place::place_workload(in, {"bestfit", 42});
  ASSERT_EQ(r.placements.size(), 2u);
  EXPECT_NE(r.placements[0].node, r.placements[1].node);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].reason,
            "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available: "
            "2 No preemption victims found for incoming pod.");
}

TEST(PlaceOutput, JsonHasTheDocumentedShape) {
  place::PlaceResult r;
  r.policy = "gpufleet";
  r.node_count = 2;
  r.placements = {{"ml/a", "n0", {0, 1}, std::nullopt, {"dev/x"}, 100, false, std::nullopt}, {"ml/b", "n1", {2}, "3g.40gb", {}, 0, false, std::nullopt}};
  r.pending = {{"ml/c", "0/2 nodes are available: 2 Insufficient cpu.", 0}};
  r.quota_rejected = {{"ml/d", "pods \"d\" is forbidden: ...", 0}};
  r.gpu_capacity_milli = 16000;
  r.gpu_used_milli = 3000;
  const std::string json = io::place_result_json(r);
  EXPECT_NE(json.find("\"pod\": \"ml/a\",\n      \"node\": \"n0\",\n      \"gpus\": [\n        0,\n        1\n      ],\n      \"mig\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"mig\": \"3g.40gb\""), std::string::npos);
  EXPECT_NE(json.find("\"preempted\": [\n        \"dev/x\"\n      ]"), std::string::npos);
  EXPECT_NE(json.find("\"reason\": \"0/2 nodes are available: 2 Insufficient cpu.\""), std::string::npos);
  EXPECT_NE(json.find("\"gpu_allocation_pct\": 18.75"), std::string::npos);
  const std::string text = io::place_result_text(r);
  EXPECT_NE(text.find("ml/a  -> n0  gpus 0,1  preempted dev/x"), std::string::npos) << text;
  EXPECT_NE(text.find("ml/b  -> n1  mig 3g.40gb on gpu 2"), std::string::npos) << text;
  EXPECT_NE(text.find("2 placed, 1 pending, 1 rejected by quota, 0 preempted; GPU allocation 18.75% of 16 GPUs on 2 nodes"), std::string::npos);
}

}  // namespace
}  // namespace gpufleet
