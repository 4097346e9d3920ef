// validate(): the domain's own guard on Kueue objects (kueue_objects.h states the rules).
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "queue/kueue_objects.h"

namespace gpufleet::queue {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void check_groups(const std::string& owner, const std::vector<ResourceGroup>& groups,
                  const std::set<std::string>& flavors) {
  std::set<std::string> seen_flavors;
  for (size_t g = 0; g < groups.size(); ++g) {
    const ResourceGroup& group = groups[g];
    std::set<std::string> covered(group.covered_resources.begin(), group.covered_resources.end());
    for (const FlavorQuotas& f : group.flavors) {
      std::string where = owner + " resourceGroups[" + std::to_string(g) + "] flavor " + f.name;
      if (!flavors.count(f.name)) fail(where + ": unknown ResourceFlavor");
      if (!seen_flavors.insert(f.name).second) fail(where + ": flavor in two resource groups");
      std::set<std::string> quoted;
      for (const ResourceQuotaLimits& r : f.resources) {
        std::string rw = where + " resource " + r.name;
        if (!covered.count(r.name)) fail(rw + ": not in coveredResources");
        if (!quoted.insert(r.name).second) fail(rw + ": duplicate resource");
        if (r.nominal_quota < 0) fail(rw + ": negative nominalQuota");
        if (r.borrowing_limit && *r.borrowing_limit < 0) fail(rw + ": negative borrowingLimit");
        if (r.lending_limit && *r.lending_limit < 0) fail(rw + ": negative lendingLimit");
        if (r.lending_limit && *r.lending_limit > r.nominal_quota) fail(rw + ": lendingLimit above nominalQuota");
      }
      for (const std::string& c : covered)
        if (!quoted.count(c)) fail(where + ": covered resource " + c + " without quota");
    }
  }
}

}  // namespace

void validate(const KueueObjects& objects) {
  std::set<std::string> topologies, flavors, cqs, cohorts, lqs, classes;
  for (const Topology& t : objects.topologies)
    if (!topologies.insert(t.name).second) fail("Topology " + t.name + ": duplicate name");
  for (const ResourceFlavor& f : objects.flavors) {
    if (!flavors.insert(f.name).second) fail("ResourceFlavor " + f.name + ": duplicate name");
    if (!f.topology_name.empty() && !topologies.count(f.topology_name))
      fail("ResourceFlavor " + f.name + " spec.topologyName: unknown Topology " + f.topology_name);
  }
  for (const ClusterQueue& cq : objects.cluster_queues) {
    if (!cqs.insert(cq.name).second) fail("ClusterQueue " + cq.name + ": duplicate name");
    if (cq.fair_sharing_weight_milli < 0) fail("ClusterQueue " + cq.name + " spec.fairSharing.weight: negative");
    check_groups("ClusterQueue " + cq.name, cq.resource_groups, flavors);
  }
  std::map<std::string, std::string> parent;
  for (const Cohort& c : objects.cohorts) {
    if (!cohorts.insert(c.name).second) fail("Cohort " + c.name + ": duplicate name");
    if (c.fair_sharing_weight_milli < 0) fail("Cohort " + c.name + " spec.fairSharing.weight: negative");
    check_groups("Cohort " + c.name, c.resource_groups, flavors);
    parent[c.name] = c.parent;
  }
  for (const Cohort& c : objects.cohorts) {
    std::set<std::string> path{c.name};
    for (std::string p = c.parent; !p.empty(); p = parent.count(p) ? parent[p] : std::string()) {
      if (!path.insert(p).second) fail("Cohort " + c.name + " spec.parentName: cohort loop through " + p);
    }
  }
  std::map<std::string, ResourceAmount> totals;  // flavor/resource -> nominal + borrowing limits so far
  auto add_totals = [&](const std::string& who, const std::vector<ResourceGroup>& groups) {
    for (const ResourceGroup& g : groups)
      for (const FlavorQuotas& f : g.flavors)
        for (const ResourceQuotaLimits& r : f.resources) {
          ResourceAmount& t = totals[f.name + " " + r.name];
          const bool each_ok = r.nominal_quota <= kMaxQuotaTotal && r.borrowing_limit.value_or(0) <= kMaxQuotaTotal;
          const ResourceAmount add = each_ok ? r.nominal_quota + r.borrowing_limit.value_or(0) : 0;
          if (!each_ok || add > kMaxQuotaTotal - t)
            fail(who + ": the quotas of " + r.name + " in flavor " + f.name + " sum above 2^62 units over all queues and cohorts");
          t += add;
        }
  };
  for (const ClusterQueue& cq : objects.cluster_queues) add_totals("ClusterQueue " + cq.name, cq.resource_groups);
  for (const Cohort& c : objects.cohorts) add_totals("Cohort " + c.name, c.resource_groups);
  for (const LocalQueue& lq : objects.local_queues) {
    std::string key = lq.namespace_name + "/" + lq.name;
    if (!lqs.insert(key).second) fail("LocalQueue " + key + ": duplicate name");
    if (!cqs.count(lq.cluster_queue))
      fail("LocalQueue " + key + " spec.clusterQueue: unknown ClusterQueue " + lq.cluster_queue);
  }
  for (const WorkloadPriorityClass& p : objects.priority_classes)
    if (!classes.insert(p.name).second) fail("WorkloadPriorityClass " + p.name + ": duplicate name");
}

}  // namespace gpufleet::queue
