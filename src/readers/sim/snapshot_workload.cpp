#include "readers/sim/snapshot_workload.h"

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "model/node_pool.h"
#include "model/resources.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "readers/k8s/k8s_yaml.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;

// Where something of a pod was read: for errors and warnings.
struct At {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;
  std::string where() const { return fmt::format("{}:{}:{}", file, line, column); }
  [[noreturn]] void fail(const std::string& message) const { throw InputError(file, line, field, message, column); }
};

At at_of(const Field& f) {
  const auto [line, column] = f.position();
  return At{f.source().file, line, column, f.path()};
}

// What the snapshot says of a Pod beyond its spec.
struct PodStatus {
  std::string phase;       // "" when absent
  std::string owner_kind;  // the controller's; "" when none
  std::string owner_name;
  bool terminating = false;  // metadata.deletionTimestamp set
  At name_at;              // metadata.name
  At spec_at;              // spec
};

const char* const kPhases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};

// The Pods of the tree as the Kubernetes reader walks it (readers/k8s/k8s_yaml.cpp Reader::object:
// documents in order, List items in order, a List's kind giving its items' default kind).
void collect(const Field& v, const std::string& default_kind, std::map<std::string, PodStatus>& out) {
  if (!v.is_map()) return;  // the reader refused it already
  const std::string kind = v["kind"].str(default_kind);
  if (kind.size() >= 4 && kind.ends_with("List")) {
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    const Field items = v["items"];
    for (size_t i = 0, n = items.size(); i < n; ++i) collect(items.at(i), item_kind, out);
    return;
  }
  if (kind != "Pod") return;
  const Field meta = v["metadata"];
  std::string ns = meta["namespace"].str();
  if (ns.empty()) ns = "default";
  PodStatus s;
  s.name_at = at_of(meta["name"]);
  s.spec_at = at_of(v["spec"]);
  s.terminating = meta["deletionTimestamp"].present();
  const Field phase = v["status"]["phase"];
  s.phase = phase.str();
  if (phase.present()) {
    bool known = false;
    for (const char* p : kPhases) known = known || s.phase == p;
    if (!known) phase.fail(fmt::format("unknown phase '{}' (expected Pending, Running, Succeeded, Failed or Unknown)", s.phase));
  }
  const Field refs = meta["ownerReferences"];
  for (size_t i = 0, n = refs.size(); i < n; ++i) {
    const Field ref = refs.at(i);
    ref.require_map();
    const std::string kind_of = ref["kind"].required_str();
    const std::string name_of = ref["name"].required_str();
    if (!ref["controller"].boolean(false)) continue;
    if (!s.owner_kind.empty()) ref["controller"].fail("a second controller (an object has at most one ownerReference with controller: true)");
    s.owner_kind = kind_of;
    s.owner_name = name_of;
  }
  out[ns + "/" + meta["name"].str()] = std::move(s);
}

bool is_service_owner(const std::string& kind) {
  return kind == "ReplicaSet" || kind == "StatefulSet" || kind == "ReplicationController" || kind == "Deployment";
}

// Counted warnings: one line per `what`, at its first place.
class Notes {
 public:
  void add(const std::string& what, const At& at, const std::string& consequence) {
    const auto [it, fresh] = index_.try_emplace(what, notes_.size());
    if (fresh) notes_.push_back({what, at.where(), consequence, 0});
    ++notes_[it->second].count;
  }
  void flush(std::vector<std::string>& out) const {
    for (const Note& n : notes_)
      out.push_back(fmt::format("{}: {} ({} pod{}): {}", n.first, n.what, n.count, n.count == 1 ? "" : "s", n.consequence));
  }

 private:
  struct Note {
    std::string what, first, consequence;
    int count;
  };
  std::vector<Note> notes_;
  std::map<std::string, size_t> index_;
};

std::string requirement_text(const SelectorRequirement& r) {
  std::string values;
  for (const std::string& v : r.values) values += (values.empty() ? "" : ",") + v;
  return r.values.empty() ? fmt::format("{} {}", r.key, r.operator_) : fmt::format("{} {} [{}]", r.key, r.operator_, values);
}

// Required node affinity as the item's pools, capacity and nodeSelector, where exactly equivalent.
void express_affinity(const Pod& p, sim::WorkloadSpec& spec, const At& at, Notes& notes) {
  const std::vector<NodeSelectorTerm>& terms = p.constraints.required_node_affinity;
  if (terms.empty()) return;
  if (terms.size() > 1) {
    notes.add("required node affinity with more than one nodeSelectorTerm", at, "the pod is placed without its required node affinity");
    return;
  }
  const NodeSelectorTerm& term = terms[0];
  if (!term.match_fields.empty())
    notes.add("required node affinity matchFields", at, "the pod is placed without them");
  for (const SelectorRequirement& r : term.match_expressions) {
    const bool spot_only = r.values.size() == 1 && r.values[0] == "spot";
    if (r.key == kPoolLabel && r.operator_ == "In" && spec.pools.empty() && !r.values.empty()) {
      spec.pools = r.values;
    } else if (r.key == sim::kCapacityTypeLabel && spot_only && (r.operator_ == "In" || r.operator_ == "NotIn") &&
               spec.capacity == sim::CapacityPreference::kSpotOk) {
      spec.capacity = r.operator_ == "In" ? sim::CapacityPreference::kSpot : sim::CapacityPreference::kOnDemand;
    } else if (r.operator_ == "In" && r.values.size() == 1 &&
               (find_label(spec.node_selector, r.key) == nullptr || *find_label(spec.node_selector, r.key) == r.values[0])) {
      if (find_label(spec.node_selector, r.key) == nullptr) spec.node_selector.emplace_back(r.key, r.values[0]);
    } else {
      notes.add(fmt::format("required node affinity '{}'", requirement_text(r)), at, "the pod is placed without this requirement");
    }
  }
}

// The fields of an item but its name and pod count, for grouping: equal keys, equal items.
std::string spec_key(const sim::WorkloadSpec& s) {
  std::string k = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{:.17g}|", s.namespace_name, static_cast<int>(s.kind), s.cpu_milli, s.memory_bytes,
                              s.num_gpu, s.gpu_milli, s.priority, static_cast<int>(s.capacity), s.duration_s);
  for (const MigRequest& m : s.mig_requests) k += fmt::format("mig {} {}|", m.profile, m.count);
  for (const std::string& p : s.pools) k += fmt::format("pool {}|", p);
  for (const auto& [key, value] : s.node_selector) k += fmt::format("sel {}={}|", key, value);
  for (const Toleration& t : s.tolerations)
    k += fmt::format("tol {}|{}|{}|{}|{}|", t.key, t.operator_, t.value, t.effect, t.toleration_seconds ? *t.toleration_seconds : -1);
  return k;
}

}  // namespace

SnapshotWorkload parse_snapshot_workload_text(std::string_view text, const std::string& source_name,
                                              const SnapshotWorkloadOptions& options) {
  if (!std::isfinite(options.job_seconds) || !(options.job_seconds > 0))
    throw std::invalid_argument(fmt::format("snapshot job seconds {} must be finite and above 0", options.job_seconds));
  const K8sObjects objects = parse_k8s_text(text, source_name);
  SnapshotWorkload out;
  out.warnings = objects.warnings;

  // The same text again, as a tree with positions, for what a Pod's conversion leaves out.
  std::map<std::string, PodStatus> statuses;  // namespace/name
  {
    detail::Source src;
    src.file = source_name;
    const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
    for (const detail::YamlNode& doc : docs)
      if (doc.type != detail::YamlType::kNull) collect(Field(doc, "", src), "", statuses);
  }

  // Objects that are not load.
  std::map<std::string, int> templates;  // controller kind -> pods its templates would make
  for (const PodOwner& owner : objects.pod_owners)
    if (owner.kind != "Pod") ++templates[owner.kind];
  for (const auto& [kind, pods] : templates)
    out.warnings.push_back(fmt::format("{}: {} {} pod{} from {} templates not added: a snapshot's load is its Pods (the controller's "
                                       "running pods are among them)",
                                       source_name, pods, kind, pods == 1 ? "" : "s", kind));
  const auto not_load = [&](size_t count, const char* what, const char* consequence) {
    if (count > 0) out.warnings.push_back(fmt::format("{}: the file's {} ({}): {}", source_name, what, count, consequence));
  };
  not_load(objects.nodes.size(), "Nodes", "not load: the pools come from --pools (or the plan)");
  not_load(objects.daemon_sets.size(), "DaemonSets", "not read with --snapshot: the pools' DaemonSets model them");
  not_load(objects.quotas.size(), "ResourceQuotas", "not modelled with --snapshot");
  not_load(objects.pod_disruption_budgets.size(), "PodDisruptionBudgets", "not modelled with --snapshot");
  not_load(objects.time_slicing_configs.size() + objects.mig_parted_configs.size(), "device-plugin or mig-parted configs",
           "not read with --snapshot: the pools' GPU sharing and MIG come from --pools (or the plan)");
  not_load(objects.queued_workloads.size(), "jobs queued to Kueue", "not added: their running pods are among the snapshot's Pods");
  not_load(objects.pod_groups.size(), "PodGroups", "not modelled with --snapshot: their pods are placed one by one");

  Notes notes;
  // Groups of service pods: (namespace, controller kind, name, spec key) -> item index.
  std::map<std::string, size_t> groups;
  std::map<std::string, std::set<std::string>> owner_keys;  // namespace/kind/name -> spec keys seen
  std::vector<std::string> group_owner(0);                   // per item: namespace/kind/name, "" for single pods
  std::vector<At> item_at;                                   // per item: its first pod's metadata.name
  std::map<std::string, int> other_owners;                   // controller kind -> pods
  std::map<std::string, At> other_owner_at;
  int unknown_phase = 0, daemon_pods = 0, static_pods = 0;
  At first_finished, first_daemon, first_static, first_unknown;

  for (size_t i = 0; i < objects.pods.size(); ++i) {
    if (objects.pod_owners[i].kind != "Pod") continue;
    const Pod& p = objects.pods[i];
    const auto found = statuses.find(p.namespace_name + "/" + p.name);
    if (found == statuses.end()) throw InputError(source_name, 0, "", fmt::format("pod {}/{}: not found in the tree", p.namespace_name, p.name));
    const PodStatus& st = found->second;
    if (st.phase == "Succeeded" || st.phase == "Failed") {
      if (out.finished_pods++ == 0) first_finished = st.name_at;
      continue;
    }
    if (st.owner_kind == "DaemonSet") {
      if (daemon_pods++ == 0) first_daemon = st.name_at;
      continue;
    }
    if (st.owner_kind == "Node") {
      if (static_pods++ == 0) first_static = st.name_at;
      continue;
    }
    if (st.phase == "Unknown" && unknown_phase++ == 0) first_unknown = st.name_at;

    sim::WorkloadSpec spec;
    spec.namespace_name = p.namespace_name;
    spec.arrival_s = 0;
    spec.pods = 1;
    spec.cpu_milli = p.cpu_milli;
    spec.memory_bytes = p.memory_bytes;
    const At gpu_at{st.spec_at.file, st.spec_at.line, st.spec_at.column, st.spec_at.field + ".containers"};
    if (p.num_gpu > kMaxGpusPerPod)
      gpu_at.fail(fmt::format("the pod requests {} nvidia.com/gpu, more than the simulator's {} per pod", p.num_gpu, kMaxGpusPerPod));
    spec.num_gpu = p.num_gpu;
    spec.gpu_milli = p.num_gpu > 0 ? p.gpu_milli : 0;
    if (p.mig_requests.size() > 1) gpu_at.fail("MIG devices of more than one profile: a simulated pod asks for one profile");
    if (!p.mig_requests.empty() && p.num_gpu > 0) gpu_at.fail("MIG devices together with nvidia.com/gpu: a simulated pod asks for one or the other");
    spec.mig_requests = p.mig_requests;
    spec.priority = p.priority;
    // The value of the pod's PriorityClass when the file has it (the class decides, as at admission),
    // else the reader's (spec.priority, a built-in class, the global default, 0).
    for (const PriorityClassSpec& pc : objects.priority_classes)
      if (!p.priority_class_name.empty() && pc.name == p.priority_class_name) {
        if (pc.value != p.priority)
          notes.add(fmt::format("spec.priority other than the value of its PriorityClass '{}' ({})", pc.name, pc.value), st.name_at,
                    "the class's value is used");
        spec.priority = pc.value;
      }
    spec.capacity = sim::CapacityPreference::kSpotOk;
    spec.node_selector = p.constraints.node_selector;
    spec.tolerations = p.constraints.tolerations;
    express_affinity(p, spec, st.name_at, notes);
    const PodConstraints& c = p.constraints;
    if (!p.node_name.empty()) notes.add("spec.nodeName (bound to a node)", st.name_at, "placed anew on the simulated pools");
    if (p.shared_replicas > 0) notes.add("nvidia.com/gpu.shared request", st.name_at, "the pod is placed without it");
    spec.gpu_memory_share = p.gpu_memory_share;  // HAMi / KAI memory-based sharing (docs/simulate.md)
    if (!c.preferred_node_affinity.empty()) notes.add("preferred node affinity", st.name_at, "the pod is placed without it");
    if (!c.required_affinity.empty() || !c.preferred_affinity.empty()) notes.add("pod affinity", st.name_at, "the pod is placed without it");
    if (!c.required_anti_affinity.empty() || !c.preferred_anti_affinity.empty())
      notes.add("pod anti-affinity", st.name_at, "the pod is placed without it");
    if (!c.topology_spread_constraints.empty()) notes.add("topologySpreadConstraints", st.name_at, "the pod is placed without them");
    if (!p.preempt_lower_priority) notes.add("preemptionPolicy Never", st.name_at, "the simulated pod has the default, PreemptLowerPriority");
    if (st.terminating) notes.add("metadata.deletionTimestamp (terminating)", st.name_at, "counted as live");
    if (find_label(p.labels, "kueue.x-k8s.io/queue-name") != nullptr)
      notes.add("label kueue.x-k8s.io/queue-name", st.name_at, "the pod is not queued to Kueue: it goes straight to the scheduler");

    const bool service = !st.owner_kind.empty() && st.owner_kind != "Job";
    if (service && !is_service_owner(st.owner_kind) && other_owners[st.owner_kind]++ == 0) other_owner_at[st.owner_kind] = st.name_at;
    spec.kind = service ? sim::WorkloadKind::kService : sim::WorkloadKind::kJob;
    if (!service) spec.duration_s = options.job_seconds;
    out.live_pod_names.push_back(p.name);
    ++out.live_pods;

    if (service) {
      const std::string owner = fmt::format("{}/{}/{}", p.namespace_name, st.owner_kind, st.owner_name);
      const std::string key = spec_key(spec);
      owner_keys[owner].insert(key);
      const auto [g, fresh] = groups.try_emplace(owner + "\n" + key, out.items.size());
      if (!fresh) {
        if (out.items[g->second].pods >= sim::kMaxReplicasPerItem)
          st.name_at.fail(fmt::format("more than {} equal pods of {} {}: above the most replicas of one item (sim::kMaxReplicasPerItem)",
                                      sim::kMaxReplicasPerItem, st.owner_kind, st.owner_name));
        ++out.items[g->second].pods;
        continue;
      }
      spec.name = p.name;  // the controller's name once the groups are known
      group_owner.push_back(owner);
    } else {
      spec.name = p.name;
      group_owner.emplace_back();
    }
    out.items.push_back(std::move(spec));
    item_at.push_back(st.name_at);
  }

  // Names: a group of one controller's pods (the only group of that controller) is named after it.
  std::set<std::string> names;
  for (size_t i = 0; i < out.items.size(); ++i) {
    sim::WorkloadSpec& item = out.items[i];
    const std::string& owner = group_owner[i];
    if (!owner.empty() && owner_keys[owner].size() == 1 && item.pods > 1) item.name = owner.substr(owner.rfind('/') + 1);
    if (!names.insert(item.name).second) {
      item.name = item.namespace_name + "." + item.name;
      if (!names.insert(item.name).second)
        item_at[i].fail(fmt::format("the item name '{}' is taken by another pod or controller of the snapshot", item.name));
    }
  }

  if (out.finished_pods > 0)
    out.warnings.push_back(fmt::format("{}: {} pod{} Succeeded or Failed: history, not load (skipped; give the past pods with --history)",
                                       first_finished.where(), out.finished_pods, out.finished_pods == 1 ? "" : "s"));
  if (daemon_pods > 0)
    out.warnings.push_back(fmt::format("{}: {} DaemonSet pod{} left out: the pools' DaemonSets model them (docs/node-pools.md)",
                                       first_daemon.where(), daemon_pods, daemon_pods == 1 ? "" : "s"));
  if (static_pods > 0)
    out.warnings.push_back(fmt::format("{}: {} static pod{} (owned by a Node) left out: they run on their node outside the scheduler",
                                       first_static.where(), static_pods, static_pods == 1 ? "" : "s"));
  out.left_out_pods = daemon_pods + static_pods;
  if (unknown_phase > 0)
    out.warnings.push_back(fmt::format("{}: {} pod{} in phase Unknown (the node lost contact): counted as live", first_unknown.where(),
                                       unknown_phase, unknown_phase == 1 ? "" : "s"));
  for (const auto& [kind, pods] : other_owners)
    out.warnings.push_back(fmt::format("{}: {} pod{} controlled by a {}: modelled as services (run to the horizon); the controller "
                                       "itself is not modelled",
                                       other_owner_at[kind].where(), pods, pods == 1 ? "" : "s", kind));
  notes.flush(out.warnings);
  return out;
}

SnapshotWorkload read_snapshot_workload(const std::string& path, const SnapshotWorkloadOptions& options) {
  return parse_snapshot_workload_text(read_yaml_file(path), path, options);
}

}  // namespace gpufleet::io
