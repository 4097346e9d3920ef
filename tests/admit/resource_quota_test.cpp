// ResourceQuota admission: kube-apiserver's exact rejection texts (hand-checked against
// plugin/pkg/admission/resourcequota/controller.go CheckRequest/prettyPrint and
// pkg/quota/v1/evaluator/core/pods.go), charging, release, scopes, and the canonical quantity text.
#include "admit/resource_quota.h"

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "readers/k8s/k8s_yaml.h"

namespace gpufleet::admit {
namespace {

Pod make_pod(std::string name, std::string ns, int64_t cpu_milli, int64_t memory_mib, int32_t num_gpu = 0,
             int32_t gpu_milli = 1000) {
  Pod p;
  p.name = std::move(name);
  p.namespace_name = std::move(ns);
  p.cpu_milli = cpu_milli;
  p.memory_bytes = memory_mib * kBytesPerMib;
  p.num_gpu = num_gpu;
  p.gpu_milli = num_gpu > 0 ? gpu_milli : 0;
  p.qos = (cpu_milli == 0 && memory_mib == 0) ? QosClass::kBE : QosClass::kBurstable;
  return p;
}

Pod mig_pod(std::string name, std::string profile, int32_t count) {
  Pod p = make_pod(std::move(name), "ml", 100, 64);
  p.mig_requests = {{std::move(profile), count}};
  return p;
}

Pod shared_pod(std::string name, int32_t replicas) {
  Pod p = make_pod(std::move(name), "ml", 100, 64);
  p.shared_replicas = replicas;
  return p;
}

Pod with_class(Pod p, std::string priority_class) {
  p.priority_class_name = std::move(priority_class);
  return p;
}

ResourceQuota quota(std::string ns, std::string name, std::map<std::string, std::string> hard) {
  ResourceQuota q;
  q.namespace_name = std::move(ns);
  q.name = std::move(name);
  q.hard = std::move(hard);
  return q;
}

// One action on the tracker and its expected outcome. Admit: `reason` is the expected upstream
// error text, empty = admitted. Release: `released` is release()'s expected result.
struct Step {
  enum Op { kAdmit, kRelease } op;
  Pod pod;
  std::string reason;
  ExtendedRequests extended = {};
  bool released = true;
};

Step admit_ok(Pod p, ExtendedRequests ext = {}) { return Step{Step::kAdmit, std::move(p), "", std::move(ext)}; }
Step reject(Pod p, std::string reason, ExtendedRequests ext = {}) {
  return Step{Step::kAdmit, std::move(p), std::move(reason), std::move(ext)};
}
Step release(Pod p, bool released = true) { return Step{Step::kRelease, std::move(p), "", {}, released}; }

struct Case {
  std::string name;
  std::vector<ResourceQuota> quotas;
  std::vector<Step> steps;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class QuotaAdmission : public ::testing::TestWithParam<Case> {};

TEST_P(QuotaAdmission, MatchesKubeApiserver) {
  const Case& c = GetParam();
  QuotaTracker tracker(c.quotas);
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    SCOPED_TRACE(::testing::Message() << "step " << i << " (" << (s.op == Step::kAdmit ? "admit " : "release ")
                                      << s.pod.name << ")");
    if (s.op == Step::kRelease) {
      EXPECT_EQ(tracker.release(s.pod), s.released);
      continue;
    }
    const AdmitResult r = tracker.admit(s.pod, s.extended);
    EXPECT_EQ(r.admitted, s.reason.empty());
    EXPECT_EQ(static_cast<bool>(r), r.admitted);
    EXPECT_EQ(r.reason, s.reason);
    if (s.reason.empty()) {
      EXPECT_TRUE(r.quota.empty());
      EXPECT_TRUE(r.message.empty());
    } else {
      EXPECT_EQ(r.message, "pods \"" + s.pod.name + "\" is forbidden: " + s.reason);
      const bool names_quota = s.reason.starts_with("exceeded quota: " + r.quota + ", ") ||
                               s.reason.starts_with("failed quota: " + r.quota + ": ");
      EXPECT_TRUE(names_quota) << "quota " << r.quota;
    }
  }
}

const std::string kGpu4 =
    "exceeded quota: team-a-gpus, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, "
    "limited: requests.nvidia.com/gpu=4";

INSTANTIATE_TEST_SUITE_P(
    Cases, QuotaAdmission,
    ::testing::Values(
        // The 4-GPU team quota: 2 + 2 fit exactly (used == hard is allowed), the third pod does not;
        // a CPU-only pod requests no nvidia.com/gpu and is not limited by it.
        Case{"GpuTeamQuota",
             {quota("team-a", "team-a-gpus", {{"requests.nvidia.com/gpu", "4"}})},
             {admit_ok(make_pod("a", "team-a", 8000, 65536, 2)), admit_ok(make_pod("b", "team-a", 8000, 65536, 2)),
              reject(make_pod("c", "team-a", 4000, 16384, 1), kGpu4),
              admit_ok(make_pod("d", "team-a", 1000, 1024))}},
        // requests.cpu: 1.5 + 1 > 2 (printed 1500m and 1); 1.5 + 0.5 == 2 fits.
        Case{"RequestsCpu",
             {quota("ml", "compute", {{"requests.cpu", "2"}})},
             {admit_ok(make_pod("p1", "ml", 1500, 1024)),
              reject(make_pod("p2", "ml", 1000, 1024),
                     "exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=1500m, "
                     "limited: requests.cpu=2"),
              admit_ok(make_pod("p3", "ml", 500, 1024))}},
        // `cpu` means requests.cpu and prints under its own name.
        Case{"CpuAlias",
             {quota("ml", "q", {{"cpu", "1"}})},
             {reject(make_pod("p", "ml", 1500, 1024),
                     "exceeded quota: q, requested: cpu=1500m, used: cpu=0, limited: cpu=1")}},
        // requests.memory: 16Gi + 16Gi == 32Gi fits; 1.5Gi more prints as 1536Mi.
        Case{"RequestsMemory",
             {quota("ml", "mem", {{"requests.memory", "32Gi"}})},
             {admit_ok(make_pod("p1", "ml", 1000, 16384)), admit_ok(make_pod("p2", "ml", 1000, 16384)),
              reject(make_pod("p3", "ml", 1000, 1536),
                     "exceeded quota: mem, requested: requests.memory=1536Mi, used: requests.memory=32Gi, "
                     "limited: requests.memory=32Gi")}},
        Case{"MemoryAlias",
             {quota("ml", "mem", {{"memory", "1Gi"}})},
             {reject(make_pod("p", "ml", 1000, 2048),
                     "exceeded quota: mem, requested: memory=2Gi, used: memory=0, limited: memory=1Gi")}},
        Case{"Pods",
             {quota("ml", "count", {{"pods", "2"}})},
             {admit_ok(make_pod("p1", "ml", 100, 64)), admit_ok(make_pod("p2", "ml", 0, 0)),
              reject(make_pod("p3", "ml", 100, 64),
                     "exceeded quota: count, requested: pods=1, used: pods=2, limited: pods=2")}},
        Case{"CountPods",
             {quota("ml", "count", {{"count/pods", "1"}})},
             {admit_ok(make_pod("p1", "ml", 100, 64)),
              reject(make_pod("p2", "ml", 100, 64),
                     "exceeded quota: count, requested: count/pods=1, used: count/pods=1, limited: count/pods=1")}},
        // Limits are taken equal to requests: cpu 2+2 == 4 and memory 4Gi+4Gi == 8Gi fit, GPUs 2+1 > 2.
        Case{"LimitsEqualRequests",
             {quota("ml", "limits",
                    {{"limits.cpu", "4"}, {"limits.memory", "8Gi"}, {"limits.nvidia.com/gpu", "2"}})},
             {admit_ok(make_pod("p1", "ml", 2000, 4096, 2)),
              reject(make_pod("p2", "ml", 2000, 4096, 1),
                     "exceeded quota: limits, requested: limits.nvidia.com/gpu=1, used: limits.nvidia.com/gpu=2, "
                     "limited: limits.nvidia.com/gpu=2")}},
        // Every exceeded resource of the quota is listed, sorted by name; pods (not exceeded) is not.
        Case{"AllExceededSorted",
             {quota("ml", "compute",
                    {{"requests.cpu", "4"}, {"pods", "10"}, {"limits.memory", "8Gi"}, {"cpu", "4"}})},
             {reject(make_pod("big", "ml", 6000, 10240),
                     "exceeded quota: compute, requested: cpu=6,limits.memory=10Gi,requests.cpu=6, "
                     "used: cpu=0,limits.memory=0,requests.cpu=0, limited: cpu=4,limits.memory=8Gi,requests.cpu=4")}},
        // Several quotas: all must admit; only the first failing one (in the given order) is reported,
        // and a rejection charges none of them (p2 sees compute's used still 0).
        Case{"SeveralQuotasFirstFailingReported",
             {quota("ml", "compute", {{"requests.cpu", "8"}}), quota("ml", "gpus", {{"requests.nvidia.com/gpu", "1"}})},
             {reject(make_pod("p1", "ml", 1000, 1024, 2),
                     "exceeded quota: gpus, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, "
                     "limited: requests.nvidia.com/gpu=1"),
              reject(make_pod("p2", "ml", 10000, 1024, 2),
                     "exceeded quota: compute, requested: requests.cpu=10, used: requests.cpu=0, "
                     "limited: requests.cpu=8"),
              admit_ok(make_pod("p3", "ml", 8000, 1024, 1)),
              reject(make_pod("p4", "ml", 1, 1),
                     "exceeded quota: compute, requested: requests.cpu=1m, used: requests.cpu=8, "
                     "limited: requests.cpu=8")}},
        Case{"SeveralQuotasOrderMatters",
             {quota("ml", "gpus", {{"requests.nvidia.com/gpu", "1"}}), quota("ml", "compute", {{"requests.cpu", "8"}})},
             {reject(make_pod("p2", "ml", 10000, 1024, 2),
                     "exceeded quota: gpus, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, "
                     "limited: requests.nvidia.com/gpu=1")}},
        // Constraints are checked on every quota before any usage: compute's "must specify" wins over
        // gpus being exceeded although gpus comes first.
        Case{"ConstraintsBeforeUsage",
             {quota("ml", "gpus", {{"requests.nvidia.com/gpu", "0"}}), quota("ml", "compute", {{"requests.cpu", "4"}})},
             {reject(make_pod("p", "ml", 0, 128, 1), "failed quota: compute: must specify requests.cpu")}},
        Case{"MustSpecifyCpuMemory",
             {quota("ml", "compute", {{"requests.cpu", "4"}, {"requests.memory", "8Gi"}, {"requests.nvidia.com/gpu", "4"}})},
             {reject(make_pod("be", "ml", 0, 0), "failed quota: compute: must specify requests.cpu,requests.memory"),
              reject(make_pod("nomem", "ml", 1000, 0), "failed quota: compute: must specify requests.memory"),
              admit_ok(make_pod("ok", "ml", 1000, 1024, 4))}},
        // Release un-charges; releasing twice (or a pod never charged) is a no-op returning false.
        Case{"ReleaseThenAdmit",
             {quota("team-a", "team-a-gpus", {{"requests.nvidia.com/gpu", "4"}})},
             {admit_ok(make_pod("a", "team-a", 1000, 1024, 4)),
              reject(make_pod("c", "team-a", 1000, 1024, 1), kGpu4),
              release(make_pod("a", "team-a", 1000, 1024, 4)),
              admit_ok(make_pod("c", "team-a", 1000, 1024, 1)),
              admit_ok(make_pod("b", "team-a", 1000, 1024, 3)),
              release(make_pod("a", "team-a", 1000, 1024, 4), false),
              release(make_pod("never", "team-a", 1000, 1024, 1), false),
              release(make_pod("c", "team-a", 1000, 1024, 1)),
              admit_ok(make_pod("a", "team-a", 1000, 1024, 1))}},
        // A quota binds only its namespace; a pod without namespace is in "default".
        Case{"OtherNamespaceUnaffected",
             {quota("team-a", "none", {{"requests.nvidia.com/gpu", "0"}})},
             {reject(make_pod("a", "team-a", 1000, 1024, 1),
                     "exceeded quota: none, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=0, "
                     "limited: requests.nvidia.com/gpu=0"),
              admit_ok(make_pod("b", "team-b", 1000, 1024, 8)), admit_ok(make_pod("c", "", 1000, 1024, 8))}},
        Case{"EmptyNamespaceIsDefault",
             {quota("default", "one", {{"pods", "1"}})},
             {admit_ok(make_pod("a", "", 100, 64)),
              reject(make_pod("b", "default", 100, 64),
                     "exceeded quota: one, requested: pods=1, used: pods=1, limited: pods=1")}},
        // A fractional-GPU pod counts as one device, whatever its share.
        Case{"FractionalGpuCountsOneDevice",
             {quota("ml", "gpus", {{"requests.nvidia.com/gpu", "2"}})},
             {admit_ok(make_pod("s1", "ml", 1000, 1024, 1, 500)), admit_ok(make_pod("s2", "ml", 1000, 1024, 1, 250)),
              reject(make_pod("s3", "ml", 1000, 1024, 1, 100),
                     "exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, "
                     "limited: requests.nvidia.com/gpu=2"),
              release(make_pod("s1", "ml", 1000, 1024, 1, 500)),
              admit_ok(make_pod("w", "ml", 1000, 1024, 1))}},
        // Extended resources from K8sPodExtras are charged to requests.<name>.
        Case{"ExtendedResource",
             {quota("ml", "shared", {{"requests.nvidia.com/gpu.shared", "2"}})},
             {admit_ok(make_pod("t1", "ml", 100, 64), {{"nvidia.com/gpu.shared", 1}}),
              admit_ok(make_pod("t2", "ml", 100, 64), {{"nvidia.com/gpu.shared", 1}}),
              reject(make_pod("t3", "ml", 100, 64),
                     "exceeded quota: shared, requested: requests.nvidia.com/gpu.shared=1, "
                     "used: requests.nvidia.com/gpu.shared=2, limited: requests.nvidia.com/gpu.shared=2",
                     {{"nvidia.com/gpu.shared", 1}}),
              admit_ok(make_pod("plain", "ml", 100, 64))}},
        // MIG and renamed time-slicing requests are Pod fields, charged like extended resources.
        Case{"DeviceRequestsFromThePod",
             {quota("ml", "devices", {{"requests.nvidia.com/mig-1g.10gb", "3"}, {"requests.nvidia.com/gpu.shared", "1"}})},
             {admit_ok(mig_pod("m1", "1g.10gb", 2)), admit_ok(shared_pod("s1", 1)),
              reject(mig_pod("m2", "1g.10gb", 2),
                     "exceeded quota: devices, requested: requests.nvidia.com/mig-1g.10gb=2, "
                     "used: requests.nvidia.com/mig-1g.10gb=2, limited: requests.nvidia.com/mig-1g.10gb=3"),
              reject(shared_pod("s2", 1),
                     "exceeded quota: devices, requested: requests.nvidia.com/gpu.shared=1, "
                     "used: requests.nvidia.com/gpu.shared=1, limited: requests.nvidia.com/gpu.shared=1"),
              admit_ok(mig_pod("m3", "3g.40gb", 1)), admit_ok(mig_pod("m4", "1g.10gb", 1))}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(QuotaScopes, BestEffortAndPriorityClass) {
  ResourceQuota be = quota("ml", "be", {{"pods", "1"}});
  be.scopes = {"BestEffort"};
  ResourceQuota high = quota("ml", "high", {{"requests.nvidia.com/gpu", "1"}});
  high.scope_selector = {SelectorRequirement{"PriorityClass", "In", {"high"}}};
  ResourceQuota unclassed = quota("ml", "unclassed", {{"pods", "1"}});
  unclassed.scope_selector = {SelectorRequirement{"PriorityClass", "DoesNotExist", {}}};
  QuotaTracker t({be, high, unclassed});

  EXPECT_TRUE(t.admit(with_class(make_pod("be1", "ml", 0, 0), "low")).admitted);
  EXPECT_EQ(t.admit(with_class(make_pod("be2", "ml", 0, 0), "low")).reason,
            "exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1");
  EXPECT_EQ(t.admit(with_class(make_pod("h", "ml", 1000, 1024, 2), "high")).reason,
            "exceeded quota: high, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=0, "
            "limited: requests.nvidia.com/gpu=1");
  EXPECT_TRUE(t.admit(with_class(make_pod("l", "ml", 1000, 1024, 2), "low")).admitted);
  EXPECT_TRUE(t.admit(make_pod("n1", "ml", 1000, 1024, 2)).admitted);  // no class: only `unclassed`
  EXPECT_EQ(t.admit(make_pod("n2", "ml", 1000, 1024)).reason,
            "exceeded quota: unclassed, requested: pods=1, used: pods=1, limited: pods=1");
}

TEST(QuotaUsageReport, SortedWithCanonicalText) {
  QuotaTracker t({quota("ml", "team",
                        {{"requests.nvidia.com/gpu", "4"}, {"services", "10"}, {"requests.memory", "32Gi"},
                         {"requests.cpu", "8"}})});
  ASSERT_TRUE(t.admit(make_pod("p", "ml", 2500, 1536, 1, 300)).admitted);
  const auto u = t.usage("ml");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].name, "team");
  ASSERT_EQ(u[0].resources.size(), 3u);
  const std::vector<std::vector<std::string>> want = {
      {"requests.cpu", "2500m", "8"}, {"requests.memory", "1536Mi", "32Gi"}, {"requests.nvidia.com/gpu", "1", "4"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(u[0].resources[i].resource, want[i][0]);
    EXPECT_EQ(u[0].resources[i].used_text(), want[i][1]);
    EXPECT_EQ(u[0].resources[i].hard_text(), want[i][2]);
  }
  EXPECT_EQ(u[0].resources[0].used, 2500);
  EXPECT_EQ(u[0].resources[1].used, 1536 * kBytesPerMib);
  EXPECT_EQ(u[0].resources[2].used, 1000);  // devices in milli-units
  EXPECT_EQ(u[0].untracked, std::vector<std::string>{"services"});
  EXPECT_TRUE(t.has_quota("ml"));
  EXPECT_FALSE(t.has_quota("other"));
  EXPECT_TRUE(t.usage("other").empty());
  ASSERT_TRUE(t.release(make_pod("p", "ml", 2500, 1536, 1, 300)));
  const auto usage = t.usage("ml");  // kept: the loop below reads a member of one element
  for (const auto& r : usage[0].resources) EXPECT_EQ(r.used_text(), "0") << r.resource;
}

TEST(QuotaFromReader, SpecRoundTripsThroughTheReader) {
  const io::K8sObjects objs = io::parse_k8s_text(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: team-a-quota, namespace: team-a}
spec:
  hard:
    requests.nvidia.com/gpu: 4
    requests.cpu: "16"
    requests.memory: 64Gi
    limits.cpu: 1500m
    pods: "10"
    services: "5"
)",
                                                 "quota.yaml");
  ASSERT_EQ(objs.quotas.size(), 1u);
  const ResourceQuota q = from_spec(objs.quotas[0]);
  EXPECT_EQ(q.namespace_name, "team-a");
  EXPECT_EQ(q.name, "team-a-quota");
  const std::map<std::string, std::string> want = {{"limits.cpu", "1500m"}, {"pods", "10"},
                                                   {"requests.cpu", "16"},  {"requests.memory", "64Gi"},
                                                   {"requests.nvidia.com/gpu", "4"}, {"services", "5"}};
  EXPECT_EQ(q.hard, want);

  QuotaTracker t(objs.quotas);
  EXPECT_TRUE(t.admit(make_pod("a", "team-a", 500, 32768, 4)).admitted);
  EXPECT_EQ(t.admit(make_pod("b", "team-a", 1500, 1024, 1)).reason,
            "exceeded quota: team-a-quota, requested: limits.cpu=1500m,requests.nvidia.com/gpu=1, "
            "used: limits.cpu=500m,requests.nvidia.com/gpu=4, limited: limits.cpu=1500m,requests.nvidia.com/gpu=4");
}

TEST(QuotaTrackerErrors, RejectsBadInputAndDoubleAdmission) {
  EXPECT_THROW(QuotaTracker({quota("ml", "q", {{"requests.cpu", "lots"}})}), std::invalid_argument);
  EXPECT_THROW(QuotaTracker({quota("ml", "q", {{"pods", "-1"}})}), std::invalid_argument);
  EXPECT_THROW(QuotaTracker({quota("ml", "q", {{"pods", "1"}}), quota("ml", "q", {{"pods", "2"}})}),
               std::invalid_argument);
  EXPECT_NO_THROW(QuotaTracker({quota("ml", "q", {{"pods", "1"}}), quota("other", "q", {{"pods", "2"}})}));

  QuotaTracker t({quota("ml", "q", {{"pods", "5"}})});
  const Pod p = make_pod("p", "ml", 100, 64);
  ASSERT_TRUE(t.admit(p).admitted);
  EXPECT_THROW(t.admit(p), std::invalid_argument);
  ASSERT_TRUE(t.release(p));
  EXPECT_TRUE(t.admit(p).admitted);
}

}  // namespace
}  // namespace gpufleet::admit
