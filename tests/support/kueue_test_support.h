// Builders for Kueue objects and workloads shared by the queue tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "queue/kueue_objects.h"
#include "queue/kueue_scheduler.h"
#include "queue/workload.h"

namespace gpufleet::queue::testing {

/// One resource group covering `resource` with one flavor.
inline std::vector<ResourceGroup> quota(const std::string& flavor, std::string_view resource, ResourceAmount nominal,
                                        std::optional<ResourceAmount> borrowing_limit = std::nullopt,
                                        std::optional<ResourceAmount> lending_limit = std::nullopt) {
  ResourceGroup g;
  g.covered_resources = {std::string(resource)};
  g.flavors.push_back({flavor, {{std::string(resource), nominal, borrowing_limit, lending_limit}}});
  return {g};
}

/// A ClusterQueue with a LocalQueue of the same name in namespace default.
inline ClusterQueue& add_cq(KueueObjects& o, const std::string& name, const std::string& cohort,
                            std::vector<ResourceGroup> groups) {
  ClusterQueue cq;
  cq.name = name;
  cq.cohort = cohort;
  cq.resource_groups = std::move(groups);
  o.cluster_queues.push_back(std::move(cq));
  o.local_queues.push_back({"default", name, name});
  return o.cluster_queues.back();
}

inline void add_flavor(KueueObjects& o, const std::string& name) { o.flavors.push_back({name, {}, {}, {}, {}}); }

inline Pod gpu_pod(int32_t num_gpu, int32_t gpu_milli = 1000) {
  Pod p;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  return p;
}

inline Pod cpu_pod(int64_t cpu_milli) {
  Pod p;
  p.cpu_milli = cpu_milli;
  return p;
}

inline Workload make_workload(const std::string& name, const std::string& lq, Pod pod, int32_t count = 1,
                              double creation_s = 0, int32_t priority = 0,
                              std::optional<int32_t> min_count = std::nullopt) {
  Workload w;
  w.name = name;
  w.local_queue = lq;
  w.priority = priority;
  w.creation_s = creation_s;
  PodSet ps;
  ps.name = "main";
  ps.count = count;
  ps.min_count = min_count;
  ps.pod_template = std::move(pod);
  w.pod_sets.push_back(std::move(ps));
  return w;
}

inline int count_events(const std::vector<WorkloadEvent>& events, WorkloadEvent::Type type) {
  int n = 0;
  for (const WorkloadEvent& e : events) n += e.type == type;
  return n;
}

/// Admitted pods of a workload (sum over its pod set assignments); 0 when not admitted.
inline int32_t admitted_pods(const KueueScheduler& s, WorkloadId id) {
  if (!s.admission(id)) return 0;
  int32_t n = 0;
  for (const PodSetAssignment& p : s.admission(id)->pod_sets) n += p.count;
  return n;
}

}  // namespace gpufleet::queue::testing
