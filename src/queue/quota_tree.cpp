#include "queue/quota_tree.h"

#include <algorithm>
#include <limits>
#include <map>

namespace gpufleet::queue {

QuotaTree::QuotaTree(const KueueObjects& objects) {
  // Flavor-resource pairs in the order they first appear (ClusterQueues, then Cohorts).
  auto collect = [this](const std::vector<ResourceGroup>& groups) {
    for (const ResourceGroup& g : groups)
      for (const FlavorQuotas& f : g.flavors)
        for (const ResourceQuotaLimits& r : f.resources) {
          std::string key = f.name + '\x1f' + r.name;
          if (fr_index_.emplace(key, static_cast<int>(fr_names_.size())).second) fr_names_.emplace_back(f.name, r.name);
        }
  };
  for (const ClusterQueue& cq : objects.cluster_queues) collect(cq.resource_groups);
  for (const Cohort& c : objects.cohorts) collect(c.resource_groups);

  for (const Cohort& c : objects.cohorts) {
    int n = node_for_cohort(c.name);
    nodes_[n].weight_milli = c.fair_sharing_weight_milli;
    set_quotas(nodes_[n], c.resource_groups);
  }
  for (const Cohort& c : objects.cohorts)
    if (!c.parent.empty()) {
      int p = node_for_cohort(c.parent);
      nodes_[cohort_index_.at(c.name)].parent = p;
    }
  for (const ClusterQueue& cq : objects.cluster_queues) {
    Node node;
    node.name = cq.name;
    node.cluster_queue = true;
    node.weight_milli = cq.fair_sharing_weight_milli;
    set_quotas(node, cq.resource_groups);
    if (!cq.cohort.empty()) node.parent = node_for_cohort(cq.cohort);
    cq_index_[cq.name] = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(node));
  }
  // Subtree quotas bottom-up: a node's nominal plus what each child lends (subtree - guaranteed).
  std::vector<int> depth(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (int p = nodes_[i].parent; p >= 0; p = nodes_[p].parent) ++depth[i];
  std::vector<int> order(nodes_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] > depth[b]; });
  for (Node& n : nodes_) n.subtree = n.nominal;
  for (int i : order) {
    int p = nodes_[i].parent;
    if (p < 0) continue;
    for (int fr = 0; fr < flavor_resource_count(); ++fr)
      nodes_[p].subtree[fr] += nodes_[i].subtree[fr] - guaranteed(i, fr);
  }
}

int QuotaTree::node_for_cohort(const std::string& name) {
  auto it = cohort_index_.find(name);
  if (it != cohort_index_.end()) return it->second;
  Node node;
  node.name = name;
  size_t n = fr_names_.size();
  node.nominal.assign(n, 0);
  node.usage.assign(n, 0);
  node.borrowing_limit.assign(n, std::nullopt);
  node.lending_limit.assign(n, std::nullopt);
  int idx = static_cast<int>(nodes_.size());
  cohort_index_[name] = idx;
  nodes_.push_back(std::move(node));
  return idx;
}

void QuotaTree::set_quotas(Node& node, const std::vector<ResourceGroup>& groups) {
  size_t n = fr_names_.size();
  node.nominal.assign(n, 0);
  node.usage.assign(n, 0);
  node.borrowing_limit.assign(n, std::nullopt);
  node.lending_limit.assign(n, std::nullopt);
  for (const ResourceGroup& g : groups)
    for (const FlavorQuotas& f : g.flavors)
      for (const ResourceQuotaLimits& r : f.resources) {
        int fr = fr_index_.at(f.name + '\x1f' + r.name);
        node.nominal[fr] = r.nominal_quota;
        node.borrowing_limit[fr] = r.borrowing_limit;
        node.lending_limit[fr] = r.lending_limit;
      }
}

int QuotaTree::cluster_queue_node(const std::string& name) const {
  auto it = cq_index_.find(name);
  return it == cq_index_.end() ? -1 : it->second;
}

int QuotaTree::cohort_node(const std::string& name) const {
  auto it = cohort_index_.find(name);
  return it == cohort_index_.end() ? -1 : it->second;
}

int QuotaTree::flavor_resource(const std::string& flavor, const std::string& resource) const {
  auto it = fr_index_.find(flavor + '\x1f' + resource);
  return it == fr_index_.end() ? -1 : it->second;
}

int QuotaTree::root(int node) const {
  while (nodes_[node].parent >= 0) node = nodes_[node].parent;
  return node;
}

ResourceAmount QuotaTree::guaranteed(int node, int fr) const {
  const Node& n = nodes_[node];
  if (!n.lending_limit[fr]) return 0;
  return std::max<ResourceAmount>(0, n.subtree[fr] - *n.lending_limit[fr]);
}

ResourceAmount QuotaTree::borrowed(int node, int fr) const {
  return std::max<ResourceAmount>(0, nodes_[node].usage[fr] - nodes_[node].subtree[fr]);
}

ResourceAmount QuotaTree::available(int node, int fr) const {
  const Node& n = nodes_[node];
  if (n.parent < 0) return n.subtree[fr] - n.usage[fr];
  ResourceAmount local = std::max<ResourceAmount>(0, guaranteed(node, fr) - n.usage[fr]);
  ResourceAmount from_parent = available(n.parent, fr);
  if (n.borrowing_limit[fr]) {
    ResourceAmount stored_in_parent = n.subtree[fr] - guaranteed(node, fr);
    ResourceAmount used_in_parent = std::max<ResourceAmount>(0, n.usage[fr] - guaranteed(node, fr));
    from_parent = std::min(from_parent, stored_in_parent - used_in_parent + *n.borrowing_limit[fr]);
  }
  return local + from_parent;
}

ResourceAmount QuotaTree::potential_available(int node, int fr) const {
  const Node& n = nodes_[node];
  if (n.parent < 0) return n.subtree[fr];
  ResourceAmount a = guaranteed(node, fr) + potential_available(n.parent, fr);
  if (n.borrowing_limit[fr]) a = std::min(a, n.subtree[fr] + *n.borrowing_limit[fr]);
  return a;
}

void QuotaTree::add_usage(int node, int fr, ResourceAmount amount) {
  while (node >= 0 && amount > 0) {
    Node& n = nodes_[node];
    ResourceAmount local = std::max<ResourceAmount>(0, guaranteed(node, fr) - n.usage[fr]);
    n.usage[fr] += amount;
    amount -= local;
    node = n.parent;
  }
}

void QuotaTree::remove_usage(int node, int fr, ResourceAmount amount) {
  while (node >= 0 && amount > 0) {
    Node& n = nodes_[node];
    ResourceAmount stored_in_parent = n.usage[fr] - guaranteed(node, fr);
    n.usage[fr] -= amount;
    if (stored_in_parent <= 0) return;
    amount = std::min(amount, stored_in_parent);
    node = n.parent;
  }
}

int QuotaTree::lowest_common_ancestor(int a, int b) const {
  std::vector<int> path;
  for (int x = a; x >= 0; x = nodes_[x].parent) path.push_back(x);
  for (int y = b; y >= 0; y = nodes_[y].parent)
    if (std::find(path.begin(), path.end(), y) != path.end()) return y;
  return -1;
}

int QuotaTree::child_toward(int ancestor, int node) const {
  while (node >= 0 && nodes_[node].parent != ancestor) node = nodes_[node].parent;
  return node;
}

int64_t QuotaTree::weighted_share(int node, const std::vector<std::pair<int, ResourceAmount>>& extra,
                                  bool remove_extra) const {
  const Node& n = nodes_[node];
  if (n.parent < 0) return 0;
  std::map<std::string, std::pair<ResourceAmount, ResourceAmount>> by_resource;  // borrowed, lendable
  for (int fr = 0; fr < flavor_resource_count(); ++fr) {
    ResourceAmount use = n.usage[fr];
    for (const auto& [efr, amount] : extra)
      if (efr == fr) use += remove_extra ? -amount : amount;
    auto& [b, l] = by_resource[fr_names_[fr].second];
    b += std::max<ResourceAmount>(0, use - n.subtree[fr]);
    l += potential_available(n.parent, fr);
  }
  int64_t share = 0;
  for (const auto& [name, bl] : by_resource) {
    if (bl.first <= 0) continue;
    if (bl.second <= 0) return std::numeric_limits<int64_t>::max();
    share = std::max<int64_t>(share, bl.first * 1000 / bl.second);
  }
  if (share == 0) return 0;
  if (n.weight_milli <= 0) return std::numeric_limits<int64_t>::max();
  return share * 1000 / n.weight_milli;
}

}  // namespace gpufleet::queue
