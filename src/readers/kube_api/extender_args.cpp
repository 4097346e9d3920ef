#include "readers/kube_api/extender_args.h"

#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "readers/formats/json_request.h"
#include "readers/k8s/k8s_yaml.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using nlohmann::json;

bool equal_fold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The errors of one body: InputError at `source`, no position.
struct Body {
  const std::string& source;
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(source, 0, field, message);
  }
  // Member `key` of `obj` as Go's encoding/json finds it: the exact key, else the first key equal to
  // it ignoring ASCII case. nullptr when absent or null.
  const json* member(const json& obj, std::string_view key) const {
    if (const auto it = obj.find(key); it != obj.end()) return it->is_null() ? nullptr : &*it;
    for (const auto& [k, v] : obj.items())
      if (equal_fold(k, key)) return v.is_null() ? nullptr : &v;
    return nullptr;
  }
  const json& object(const json* v, const std::string& field) const {
    if (v == nullptr) fail(field, "required field is missing");
    if (!v->is_object()) fail(field, fmt::format("expected an object, got {}", json_type_name(*v)));
    return *v;
  }
  // A non-empty string. `v` nullptr: missing.
  std::string required_string(const json* v, const std::string& field) const {
    if (v == nullptr) fail(field, "required field is missing");
    if (!v->is_string()) fail(field, fmt::format("expected a string, got {}", json_type_name(*v)));
    const auto& s = v->get_ref<const std::string&>();
    if (s.empty()) fail(field, "must not be empty");
    return s;
  }
  // An array, or nullptr for an absent or null one.
  const json* array(const json* v, const std::string& field) const {
    if (v != nullptr && !v->is_array()) fail(field, fmt::format("expected an array, got {}", json_type_name(*v)));
    return v;
  }
};

json parse_body(std::string_view body, const Body& b, const JsonRequestLimits& limits) {
  json root = parse_json_request(body, b.source, limits);
  if (!root.is_object()) b.fail("", fmt::format("expected a JSON object, got {}", json_type_name(root)));
  return root;
}

// The message of `e` without its "file:line:column: field 'f': " prefix.
std::string message_of(const InputError& e) {
  const std::string prefix = InputError(e.file(), e.line(), e.field(), "", e.column()).what();
  const std::string what = e.what();
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

// The last kRecentPods pods read, by their JSON text: kube-scheduler sends the same pod to filter and
// to prioritize (and to every extender), and the Kubernetes reader costs more than the rest of a
// request. A reading is a pure function of the text, so this changes nothing but speed.
struct PodReading {
  Pod pod;
  std::vector<std::string> warnings;
};
class RecentPods {
 public:
  static constexpr size_t kRecentPods = 256;
  std::optional<PodReading> find(const std::string& text) {
    std::lock_guard lock(mutex_);
    const auto it = by_text_.find(text);
    if (it == by_text_.end()) return std::nullopt;
    return it->second;
  }
  void add(std::string text, PodReading reading) {
    std::lock_guard lock(mutex_);
    if (by_text_.count(text) != 0) return;
    if (order_.size() == kRecentPods) {  // the oldest goes
      by_text_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(text);
    by_text_.emplace(std::move(text), std::move(reading));
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, PodReading> by_text_;
  std::deque<std::string> order_;
};
RecentPods& recent_pods() {
  static RecentPods recent;
  return recent;
}

// "Pod": the embedded v1.Pod through the Kubernetes reader, as `gpufleet place` reads it.
Pod read_pod(const json& root, const Body& b, std::vector<std::string>& warnings) {
  json pod = b.object(b.member(root, "Pod"), "Pod");
  const auto kind = pod.find("kind");
  if (kind == pod.end() || kind->is_null() || (kind->is_string() && kind->get_ref<const std::string&>().empty())) {
    pod["kind"] = "Pod";
  } else if (!kind->is_string() || kind->get_ref<const std::string&>() != "Pod") {
    b.fail("Pod.kind", fmt::format("expected \"Pod\", got {}", kind->is_string() ? kind->get_ref<const std::string&>() : json_type_name(*kind)));
  }
  if (const auto api = pod.find("apiVersion"); api == pod.end() || api->is_null() ||
                                               (api->is_string() && api->get_ref<const std::string&>().empty()))
    pod["apiVersion"] = "v1";
  std::string text = pod.dump(-1, ' ', false, json::error_handler_t::replace);
  if (std::optional<PodReading> seen = recent_pods().find(text)) {
    warnings = std::move(seen->warnings);
    return std::move(seen->pod);
  }
  K8sObjects objects;
  try {
    objects = parse_k8s_text(text, b.source);
  } catch (const InputError& e) {
    // Positions in the re-serialized text are not positions in the body: the field path says where.
    b.fail(e.field().empty() ? "Pod" : "Pod." + e.field(), message_of(e));
  }
  if (objects.pods.size() != 1) b.fail("Pod", fmt::format("expected one pod, read {}", objects.pods.size()));
  warnings = std::move(objects.warnings);
  recent_pods().add(std::move(text), PodReading{objects.pods.front(), warnings});
  return std::move(objects.pods.front());
}

void add_node_name(std::vector<std::string>& names, std::unordered_set<std::string>& seen, std::string name, const Body& b,
                   const std::string& field) {
  if (!seen.insert(name).second) b.fail(field, fmt::format("duplicate node '{}'", name));
  names.push_back(std::move(name));
}

// The victims of one node: `Pods` of MetaPods ("UID") or of v1.Pods ("metadata"."uid").
ExtenderVictims read_victims(const json& v, bool meta, const Body& b, const std::string& field, size_t& total,
                             const ObjectLimits& limits) {
  ExtenderVictims out;
  const json& victims = b.object(&v, field);
  if (const json* pods = b.array(b.member(victims, "Pods"), field + ".Pods")) {
    if (total + pods->size() > limits.max_pods)
      b.fail(field + ".Pods", limit_message(limits.max_pods, "victim pods", "ObjectLimits::max_pods"));
    total += pods->size();
    std::unordered_map<std::string, size_t> seen;  // UID -> its first index
    for (size_t i = 0; i < pods->size(); ++i) {
      const std::string at = fmt::format("{}.Pods[{}]", field, i);
      const json& pod = b.object(&(*pods)[i], at);
      const std::string uid_at = meta ? at + ".UID" : at + ".metadata.uid";
      if (meta) {
        out.pod_uids.push_back(b.required_string(b.member(pod, "UID"), uid_at));
      } else {
        const json& metadata = b.object(b.member(pod, "metadata"), at + ".metadata");
        out.pod_uids.push_back(b.required_string(b.member(metadata, "uid"), uid_at));
      }
      // A pod is a victim once: kube-scheduler never lists one twice, and removing it twice is no state.
      if (const auto [it, added] = seen.emplace(out.pod_uids.back(), i); !added)
        b.fail(uid_at, fmt::format("pod UID '{}' is listed twice on this node (also {}.Pods[{}])", out.pod_uids.back(), field, it->second));
    }
  }
  if (const json* n = b.member(victims, "NumPDBViolations")) {
    const std::string at = field + ".NumPDBViolations";
    if (n->is_number_unsigned()) {
      if (n->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        b.fail(at, fmt::format("{} is out of range of an int64", n->get<uint64_t>()));
      out.num_pdb_violations = n->get<int64_t>();
    } else if (n->is_number_integer()) {
      out.num_pdb_violations = n->get<int64_t>();
      if (out.num_pdb_violations < 0) b.fail(at, fmt::format("{} is negative", out.num_pdb_violations));
    } else {
      b.fail(at, fmt::format("expected an integer, got {}", n->is_number_float() ? n->dump() : json_type_name(*n)));
    }
  }
  return out;
}

}  // namespace

ExtenderArgs parse_extender_args(std::string_view body, const std::string& source, const JsonRequestLimits& json_limits,
                                 const ObjectLimits& object_limits) {
  const Body b{source};
  json root = parse_body(body, b, json_limits);
  ExtenderArgs out;
  out.pod = read_pod(root, b, out.warnings);
  std::unordered_set<std::string> seen;
  if (const json* names = b.array(b.member(root, "NodeNames"), "NodeNames")) {
    out.node_cache_capable = true;
    if (names->size() > object_limits.max_nodes)
      b.fail("NodeNames", limit_message(object_limits.max_nodes, "node names", "ObjectLimits::max_nodes"));
    out.node_names.reserve(names->size());
    seen.reserve(names->size());
    for (size_t i = 0; i < names->size(); ++i) {
      const json& name = (*names)[i];
      if (name.is_string() && !name.get_ref<const std::string&>().empty() && seen.insert(name.get_ref<const std::string&>()).second) {
        out.node_names.push_back(name.get_ref<const std::string&>());  // the usual case, without a field path
        continue;
      }
      const std::string field = fmt::format("NodeNames[{}]", i);
      add_node_name(out.node_names, seen, b.required_string(name.is_null() ? nullptr : &name, field), b, field);
    }
  } else if (const json* nodes = b.member(root, "Nodes")) {
    b.object(nodes, "Nodes");
    const json* items = b.array(b.member(*nodes, "items"), "Nodes.items");
    // Moved out of the body, which this function owns (a NodeList of 5,000 Nodes is about 25 MB).
    out.node_items = items != nullptr ? std::move(const_cast<json&>(*items)) : json::array();
    if (out.node_items.size() > object_limits.max_nodes)
      b.fail("Nodes.items", limit_message(object_limits.max_nodes, "nodes", "ObjectLimits::max_nodes"));
    out.node_names.reserve(out.node_items.size());
    for (size_t i = 0; i < out.node_items.size(); ++i) {
      const std::string field = fmt::format("Nodes.items[{}]", i);
      const json& node = b.object(&out.node_items[i], field);
      const json& metadata = b.object(b.member(node, "metadata"), field + ".metadata");
      add_node_name(out.node_names, seen, b.required_string(b.member(metadata, "name"), field + ".metadata.name"), b,
                    field + ".metadata.name");
    }
  }
  return out;
}

ExtenderPreemptionArgs parse_extender_preemption_args(std::string_view body, const std::string& source,
                                                      const JsonRequestLimits& json_limits,
                                                      const ObjectLimits& object_limits) {
  const Body b{source};
  const json root = parse_body(body, b, json_limits);
  ExtenderPreemptionArgs out;
  out.pod = read_pod(root, b, out.warnings);
  const json* map = b.member(root, "NodeNameToMetaVictims");
  out.meta_victims = map != nullptr;
  const char* key = out.meta_victims ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  if (!out.meta_victims) map = b.member(root, key);
  if (map == nullptr) return out;
  b.object(map, key);
  if (map->size() > object_limits.max_nodes)
    b.fail(key, limit_message(object_limits.max_nodes, "nodes", "ObjectLimits::max_nodes"));
  size_t total = 0;
  for (const auto& [node, victims] : map->items()) {
    const std::string field = fmt::format("{}.{}", key, node);
    if (node.empty()) b.fail(field, "a node name must not be empty");
    out.node_victims.emplace(node, read_victims(victims, out.meta_victims, b, field, total, object_limits));
  }
  return out;
}

ExtenderBindingArgs parse_extender_binding_args(std::string_view body, const std::string& source,
                                                const JsonRequestLimits& json_limits) {
  const Body b{source};
  const json root = parse_body(body, b, json_limits);
  ExtenderBindingArgs out;
  out.pod_name = b.required_string(b.member(root, "PodName"), "PodName");
  const json* ns = b.member(root, "PodNamespace");
  if (ns == nullptr) b.fail("PodNamespace", "required field is missing");
  if (!ns->is_string()) b.fail("PodNamespace", fmt::format("expected a string, got {}", json_type_name(*ns)));
  out.pod_namespace = ns->get<std::string>();
  if (out.pod_namespace.empty()) out.pod_namespace = "default";  // as the API server defaults metadata.namespace
  out.pod_uid = b.required_string(b.member(root, "PodUID"), "PodUID");
  out.node = b.required_string(b.member(root, "Node"), "Node");
  return out;
}

}  // namespace gpufleet::io
