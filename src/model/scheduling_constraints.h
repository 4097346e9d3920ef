// Kubernetes scheduling constraints carried by pods and nodes: taints and tolerations, node
// selectors and node affinity, pod (anti-)affinity, topology spread constraints. Plain data in Kubernetes' own terms (core/v1
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
  bool operator==(const Toleration&) const = default;
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

/// whenUnsatisfiable of a topology spread constraint (core/v1 UnsatisfiableConstraintAction):
/// DoNotSchedule is a filter (PodTopologySpread's Filter), ScheduleAnyway only a preference (its Score).
enum class UnsatisfiableAction : uint8_t { kDoNotSchedule, kScheduleAnyway };

/// nodeAffinityPolicy / nodeTaintsPolicy of a topology spread constraint (core/v1
/// NodeInclusionPolicy): whether a node the pod could not run on (by its nodeSelector and required
/// node affinity, resp. by an untolerated NoSchedule/NoExecute taint) still counts in the spread.
enum class NodeInclusionPolicy : uint8_t { kHonor, kIgnore };

/// A topology spread constraint (core/v1 TopologySpreadConstraint), as the API server admitted it
/// (the YAML reader applies its validation, validateTopologySpreadConstraints). kube-scheduler's
/// PodTopologySpread reads it (sched/plugins/pod_topology_spread.h): the number of pods matching
/// `label_selector` (in the pod's namespace) per value of node label `topology_key` may differ by at
/// most `max_skew` between the domains.
struct TopologySpreadConstraint {
  int32_t max_skew = 1;      ///< >= 1
  std::string topology_key;  ///< a node label key, e.g. topology.kubernetes.io/zone; never empty
  UnsatisfiableAction when_unsatisfiable = UnsatisfiableAction::kDoNotSchedule;
  LabelSelector label_selector;
  /// False when the constraint has no labelSelector: kube then counts no pod
  /// (metav1.LabelSelectorAsSelector(nil) is labels.Nothing()); `{}` selects every pod.
  bool has_label_selector = false;
  /// minDomains (only with DoNotSchedule, >= 1): with fewer eligible domains than this, the global
  /// minimum counts as 0. nullopt: kube treats it as 1.
  std::optional<int32_t> min_domains;
  NodeInclusionPolicy node_affinity_policy = NodeInclusionPolicy::kHonor;  ///< kube's default when unset
  NodeInclusionPolicy node_taints_policy = NodeInclusionPolicy::kIgnore;   ///< kube's default when unset
  /// matchLabelKeys: the incoming pod's values of these labels are ANDed into the selector (keys the
  /// pod lacks are left out); never keys of label_selector (the API server refuses them).
  std::vector<std::string> match_label_keys;
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
  std::vector<TopologySpreadConstraint> topology_spread_constraints;  ///< spec.topologySpreadConstraints
  /// Not a pod field: kube-scheduler's helper.DefaultSelector for the pod, the label selector of the
  /// controller that owns it (its ReplicaSet, StatefulSet or ReplicationController), ANDed with the
  /// selectors of the Services selecting it. PodTopologySpread's default constraints (kube's system
  /// defaults: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway) apply to a pod without
  /// constraints of its own only when this is not empty. The YAML reader sets it to the spec.selector
  /// of the Deployment, ReplicaSet or StatefulSet a pod is made from (kube: the ReplicaSet's, which
  /// adds pod-template-hash); it reads no Service or ReplicationController, so those play no part.
  /// Empty for bare pods, Jobs' pods and the openb trace.
  LabelSelector default_spread_selector;
};

}  // namespace gpufleet
