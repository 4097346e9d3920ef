// Kubernetes scheduling constraints carried by pods and nodes: taints and tolerations, node
// selectors and node affinity, pod anti-affinity. Plain data in Kubernetes' own terms (core/v1
// types, k8s.io/api/core/v1/types.go); no I/O. The openb trace uses none of them (all empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

namespace gpufleet {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// Value of label `key`, or nullptr.
const std::string* find_label(const Labels& labels, std::string_view key);

/// A toleration (core/v1 Toleration). operator_ is "Equal" (default) or "Exists"; an empty key with
/// Exists tolerates every taint; an empty effect matches every effect.
struct Toleration {
  std::string key;
  std::string operator_ = "Equal";
  std::string value;
  std::string effect;  ///< "", "NoSchedule", "PreferNoSchedule", "NoExecute"
  std::optional<int64_t> toleration_seconds;
};

/// One requirement of a node selector term or label selector (core/v1 NodeSelectorRequirement,
/// meta/v1 LabelSelectorRequirement). operator_: In, NotIn, Exists, DoesNotExist, Gt, Lt (Gt/Lt
/// only for node selectors; they compare the label value and the single value as integers).
struct SelectorRequirement {
  std::string key;
  std::string operator_;
  std::vector<std::string> values;
};

/// A node selector term: every requirement must hold (AND). Terms of a NodeSelector are ORed.
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  ///< only metadata.name is supported
};

/// preferredDuringSchedulingIgnoredDuringExecution entry (weight 1..100).
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

/// A label selector (meta/v1 LabelSelector): matchLabels AND matchExpressions (In, NotIn, Exists,
/// DoesNotExist). An empty selector matches everything.
struct LabelSelector {
  Labels match_labels;
  std::vector<SelectorRequirement> match_expressions;
};

/// meta/v1 LabelSelectorAsSelector(selector).Matches(labels) for a present (non-nil) selector
/// (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go, pkg/labels/selector.go): every matchLabels pair
/// is a label with that value, and every matchExpressions requirement holds: In = label present with a
/// listed value; NotIn = label absent or value not listed; Exists; DoesNotExist. An empty selector
/// matches every label set. A requirement kube would reject (unknown operator, In/NotIn without values,
/// Exists/DoesNotExist with values) makes the selector match nothing; the YAML reader rejects them.
bool label_selector_matches(const LabelSelector& selector, const Labels& labels);

/// A pod (anti-)affinity term (core/v1 PodAffinityTerm). topology_key is a node label key, e.g.
/// kubernetes.io/hostname or topology.kubernetes.io/zone. Empty namespaces = the pod's namespace.
struct PodAffinityTerm {
  LabelSelector label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  /// False when the term has no labelSelector at all: kube then matches no pod
  /// (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()), while an empty selector `{}` matches
  /// every pod of the term's namespaces.
  bool has_label_selector = true;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

/// Everything in a pod spec that constrains where it may run.
struct PodConstraints {
  Labels node_selector;                                   ///< spec.nodeSelector: every pair must match
  std::vector<NodeSelectorTerm> required_node_affinity;   ///< ORed terms; empty = no constraint
  std::vector<PreferredSchedulingTerm> preferred_node_affinity;
  std::vector<Toleration> tolerations;
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_anti_affinity;
};

}  // namespace gpufleet
