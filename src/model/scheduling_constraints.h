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

/// Go strconv.ParseInt(s, 10, 64): an optional '+' or '-', then one or more ASCII digits and nothing
/// else, within int64; nullopt otherwise. (Gt/Lt node selector values and label values.)
std::optional<int64_t> parse_go_int64(std::string_view s);

/// Why `key` is not a valid label key (k8s.io/apimachinery/pkg/util/validation IsQualifiedName: an
/// optional DNS-1123 subdomain prefix of at most 253 characters and '/', then a name of 1 to 63
/// characters, alphanumerics, '-', '_' and '.', starting and ending with an alphanumeric); nullopt
/// when it is valid.
std::optional<std::string> label_key_error(std::string_view key);

/// Why `value` is not a valid label value (validation.IsValidLabelValue: empty, or at most 63
/// characters, alphanumerics, '-', '_' and '.', starting and ending with an alphanumeric); nullopt
/// when it is valid.
std::optional<std::string> label_value_error(std::string_view value);

/// Why kube-scheduler cannot use a node selector requirement of a nodeSelectorTerm's
/// matchExpressions (labels.NewRequirement, as nodeaffinity's nodeSelectorRequirementsAsSelector
/// calls it): an unknown operator; In/NotIn without values; Exists/DoesNotExist with values; Gt/Lt
/// without exactly one value, or one that is not a base-10 int64 (strconv.ParseInt); an invalid key;
/// any value that is not a valid label value (so Gt ["-1"] is refused: "-1" starts with '-').
/// nullopt when it is usable. A term with an unusable requirement matches no node.
std::optional<std::string> node_selector_requirement_error(const SelectorRequirement& r);

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
  std::vector<PodAffinityTerm> required_affinity;                 ///< podAffinity required terms
  std::vector<WeightedPodAffinityTerm> preferred_affinity;        ///< scored by default-scheduler only
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_anti_affinity;   ///< scored by default-scheduler only
};

}  // namespace gpufleet
