// QuotaTree: Kueue's resource node tree for ClusterQueues and Cohorts (kubernetes-sigs/kueue
// pkg/cache/resource_node.go). ClusterQueues are leaves, Cohorts inner nodes; every node has, per
// (flavor, resource), a nominalQuota, optional borrowingLimit and lendingLimit, and a usage that is
// passed up to the parent for the part above what the node keeps for itself (its guaranteed quota,
// nominal minus lendingLimit). Internal to the queue layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "queue/kueue_objects.h"

namespace gpufleet::queue {

class QuotaTree {
 public:
  /// Builds the tree from validated objects: one node per Cohort (declared or named by a
  /// ClusterQueue) and per ClusterQueue.
  explicit QuotaTree(const KueueObjects& objects);

  int node_count() const { return static_cast<int>(nodes_.size()); }
  /// Node of a ClusterQueue / Cohort by name; -1 when unknown.
  int cluster_queue_node(const std::string& name) const;
  int cohort_node(const std::string& name) const;
  /// Index of a (flavor, resource) pair that some node has quota for; -1 when none does.
  int flavor_resource(const std::string& flavor, const std::string& resource) const;
  int flavor_resource_count() const { return static_cast<int>(fr_names_.size()); }
  const std::pair<std::string, std::string>& flavor_resource_name(int fr) const { return fr_names_[fr]; }

  int parent(int node) const { return nodes_[node].parent; }
  int root(int node) const;
  const std::string& name(int node) const { return nodes_[node].name; }
  bool is_cluster_queue(int node) const { return nodes_[node].cluster_queue; }
  int64_t fair_sharing_weight_milli(int node) const { return nodes_[node].weight_milli; }

  ResourceAmount nominal(int node, int fr) const { return nodes_[node].nominal[fr]; }
  /// Nominal quota of the node plus what its children lend it (SubtreeQuota).
  ResourceAmount subtree_quota(int node, int fr) const { return nodes_[node].subtree[fr]; }
  /// What the node keeps from its parent: subtree quota minus lendingLimit (0 without one).
  ResourceAmount guaranteed(int node, int fr) const;
  /// Usage of the whole subtree.
  ResourceAmount usage(int node, int fr) const { return nodes_[node].usage[fr]; }
  /// Usage above the subtree quota (borrowed from above).
  ResourceAmount borrowed(int node, int fr) const;
  /// Capacity the node can still use now: its own unused guaranteed quota plus what the ancestors
  /// have unused, capped by borrowingLimit on the way (resource_node.go available()).
  ResourceAmount available(int node, int fr) const;
  /// The same with no usage anywhere (potentialAvailable()).
  ResourceAmount potential_available(int node, int fr) const;
  void add_usage(int node, int fr, ResourceAmount amount);
  void remove_usage(int node, int fr, ResourceAmount amount);

  /// Lowest common ancestor of two nodes; -1 when they are in different trees.
  int lowest_common_ancestor(int a, int b) const;
  /// The child of `ancestor` on the path to `node` (node itself when its parent is `ancestor`).
  int child_toward(int ancestor, int node) const;
  /// Kueue's weighted share of a node (fair_sharing.md, DominantResourceShare): max over resource
  /// names of borrowed usage (plus `extra` per fr) * 1000 / what the parent could lend, then
  /// * 1000 / fairSharing.weight (milli). 0 for a root; INT64_MAX with weight 0 and borrowing.
  int64_t weighted_share(int node, const std::vector<std::pair<int, ResourceAmount>>& extra = {},
                         bool remove_extra = false) const;

 private:
  struct Node {
    std::string name;
    int parent = -1;
    bool cluster_queue = false;
    int64_t weight_milli = 1000;
    std::vector<ResourceAmount> nominal, subtree, usage;
    std::vector<std::optional<ResourceAmount>> borrowing_limit, lending_limit;
  };
  int node_for_cohort(const std::string& name);
  void set_quotas(Node& node, const std::vector<ResourceGroup>& groups);

  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> cq_index_, cohort_index_, fr_index_;
  std::vector<std::pair<std::string, std::string>> fr_names_;
};

}  // namespace gpufleet::queue
