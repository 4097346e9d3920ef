#include "readers/kube_api/extender_args.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <memory>
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
// The last kRecentPods distinct values read, by their text (the oldest goes first). Thread-safe.
template <typename Value>
class RecentByText {
 public:
  static constexpr size_t kRecentPods = 256;
  std::optional<Value> find(std::string_view text) {
    std::lock_guard lock(mutex_);
    const auto it = by_text_.find(text);  // no copy of the text: heterogeneous lookup
    if (it == by_text_.end()) return std::nullopt;
    return it->second;
  }
  void add(std::string text, Value value) {
    std::lock_guard lock(mutex_);
    if (by_text_.count(text) != 0) return;
    if (order_.size() == kRecentPods) {
      by_text_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(text);
    by_text_.emplace(std::move(text), std::move(value));
  }

 private:
  std::mutex mutex_;
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::unordered_map<std::string, Value, TextHash, std::equal_to<>> by_text_;
  std::deque<std::string> order_;
};
using RecentPods = RecentByText<PodReading>;
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

// ---- The fast path of parse_extender_args (see the top of extender_args.h) ----
//
// kube-scheduler's filter and prioritize bodies are {"Pod":{...},"Nodes":null,"NodeNames":[...]}
// with the same pod sent again and again (to filter, to prioritize, to every extender, on every
// retry). The fast path reads such a body without building its JSON tree: the node names straight
// from the text, the pod by its text from the pods read before. It takes only bodies whose reading
// it knows to equal the full path's: exactly those keys, each once; "Nodes" null; the names plain
// strings (no escape, control character or non-ASCII byte); a pod whose text the full path read
// before, with every limit of the whole body within bounds. Anything else (a new pod, any error, a
// key in another case, Nodes given as objects) goes to the full path, which gives the same answer
// or the same error as before, and remembers the pod's text for next time.

// What a pod's JSON text holds, as the limits count it: values (the object itself and every value
// inside), nesting depth (1 for a flat object) and the longest string or key in raw bytes (at least
// its decoded length, so a bound on it is a bound on the decoded one).
struct TextStats {
  size_t values = 0, depth = 0, max_string = 0;
};

// A scanner of JSON text that finds where values end. It does not validate: it is only trusted on
// text the full parser accepted before (a pod's text found among those read) and on the plain
// strings it checks itself.
class Scanner {
 public:
  Scanner(const char* begin, const char* end) : p_(begin), end_(end) {}
  const char* at() const { return p_; }
  bool done() {
    ws();
    return p_ == end_;
  }
  bool lit(char c) {
    ws();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool word(std::string_view w) {
    ws();
    if (static_cast<size_t>(end_ - p_) < w.size() || std::string_view(p_, w.size()) != w) return false;
    p_ += w.size();
    return true;
  }
  // A string of printable ASCII without escapes; false for anything else.
  bool plain_string(std::string_view& out) {
    ws();
    if (p_ == end_ || *p_ != '"') return false;
    const char* start = ++p_;
    while (p_ != end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++p_;
    }
    return false;
  }
  // Skips one value, counting it into `stats` (`depth`: the nesting level of its container).
  bool skip_value(TextStats& stats, size_t depth) {
    ws();
    if (p_ == end_) return false;
    ++stats.values;
    const char c = *p_;
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++p_;
      stats.depth = std::max(stats.depth, depth + 1);
      if (lit(close)) return true;
      for (;;) {
        if (c == '{') {
          ws();
          size_t length = 0;
          if (!skip_string(length) || !lit(':')) return false;
          stats.max_string = std::max(stats.max_string, length);
        }
        if (!skip_value(stats, depth + 1)) return false;
        if (lit(',')) continue;
        return lit(close);
      }
    }
    if (c == '"') {
      size_t length = 0;
      if (!skip_string(length)) return false;
      stats.max_string = std::max(stats.max_string, length);
      return true;
    }
    const char* start = p_;  // a number, true, false or null
    while (p_ != end_ && (std::isalnum(static_cast<unsigned char>(*p_)) || *p_ == '-' || *p_ == '+' || *p_ == '.')) ++p_;
    return p_ != start;
  }

 private:
  void ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  // At a '"': to past its closing quote; `length` the raw bytes between the quotes.
  bool skip_string(size_t& length) {
    if (p_ == end_ || *p_ != '"') return false;
    const char* start = ++p_;
    while (p_ != end_ && *p_ != '"') {
      if (*p_ == '\\' && end_ - p_ < 2) return false;
      p_ += *p_ == '\\' ? 2 : 1;
    }
    if (p_ >= end_) return false;
    length = static_cast<size_t>(p_ - start);
    ++p_;
    return true;
  }
  const char* p_;
  const char* end_;
};

// The pods the full path read, by their text as sent (the "Pod" value's bytes), with their TextStats:
// the last kRecentPods distinct ones.
struct RawPodReading {
  PodReading reading;
  TextStats stats;
};
using RecentRawPods = RecentByText<std::shared_ptr<const RawPodReading>>;
RecentRawPods& recent_raw_pods() {
  static RecentRawPods recent;
  return recent;
}

// Whether the node names hold a name twice: an open-addressing set of views (no allocation per name).
bool has_duplicate(const std::vector<std::string_view>& names) {
  size_t size = 16;
  while (size < names.size() * 2) size *= 2;
  std::vector<std::string_view> slots(size);
  std::vector<uint8_t> used(size, 0);
  const std::hash<std::string_view> hash;
  for (const std::string_view name : names) {
    for (size_t i = hash(name) & (size - 1);; i = (i + 1) & (size - 1)) {
      if (!used[i]) {
        used[i] = 1;
        slots[i] = name;
        break;
      }
      if (slots[i] == name) return true;
    }
  }
  return false;
}

// The body's layout as the fast path finds it: the pod's text and the names, or nothing.
struct FastLayout {
  std::string_view pod;
  TextStats pod_stats;  // of the pod's text as scanned (trusted only once the text is found among those read)
  std::vector<std::string_view> names;
  bool nodes_null = false;
  size_t max_key = 0;
};
std::optional<FastLayout> scan_fast_layout(std::string_view body) {
  Scanner s(body.data(), body.data() + body.size());
  FastLayout out;
  bool pod = false, nodes = false, names = false;
  if (!s.lit('{')) return std::nullopt;
  if (s.lit('}')) return std::nullopt;
  for (;;) {
    std::string_view key;
    if (!s.plain_string(key) || !s.lit(':')) return std::nullopt;
    out.max_key = std::max(out.max_key, key.size());
    if (key == "Pod" && !pod) {
      pod = true;
      if (!s.lit('{')) return std::nullopt;
      const char* start = s.at() - 1;
      Scanner inner(start, body.data() + body.size());
      if (!inner.skip_value(out.pod_stats, 0)) return std::nullopt;
      out.pod = std::string_view(start, static_cast<size_t>(inner.at() - start));
      s = Scanner(inner.at(), body.data() + body.size());
    } else if (key == "Nodes" && !nodes) {
      nodes = true;
      if (!s.word("null")) return std::nullopt;
      out.nodes_null = true;
    } else if (key == "NodeNames" && !names) {
      names = true;
      if (!s.lit('[')) return std::nullopt;
      if (!s.lit(']')) {
        for (;;) {
          std::string_view name;
          if (!s.plain_string(name) || name.empty()) return std::nullopt;
          out.names.push_back(name);
          if (s.lit(',')) continue;
          if (s.lit(']')) break;
          return std::nullopt;
        }
      }
    } else {
      return std::nullopt;
    }
    if (s.lit(',')) continue;
    if (s.lit('}')) break;
    return std::nullopt;
  }
  if (!s.done() || !pod || !names) return std::nullopt;
  return out;
}

// Whether the whole body is within the limits the full path checks (values, depth, string bytes,
// node names), given the pod's TextStats from when its text was read.
bool within_limits(const std::string_view body, const FastLayout& layout, const TextStats& pod, const JsonRequestLimits& json_limits,
                   const ObjectLimits& object_limits) {
  if (body.size() > json_limits.max_body_bytes || layout.names.size() > object_limits.max_nodes) return false;
  const size_t values = 1 + pod.values + (layout.nodes_null ? 1 : 0) + 1 + layout.names.size();
  if (values > json_limits.max_values || std::max<size_t>(1 + pod.depth, 2) > json_limits.max_depth) return false;
  size_t longest = std::max(layout.max_key, pod.max_string);
  for (const std::string_view name : layout.names) longest = std::max(longest, name.size());
  return longest <= json_limits.max_string_bytes;
}

}  // namespace

namespace {

// The full path: the body's JSON tree, every check with its message.
ExtenderArgs parse_extender_args_full(std::string_view body, const std::string& source, const JsonRequestLimits& json_limits,
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

}  // namespace

ExtenderArgs parse_extender_args(std::string_view body, const std::string& source, const JsonRequestLimits& json_limits,
                                 const ObjectLimits& object_limits) {
  std::optional<FastLayout> layout = scan_fast_layout(body);
  if (layout) {
    if (const std::shared_ptr<const RawPodReading> known = recent_raw_pods().find(layout->pod).value_or(nullptr);
        known && within_limits(body, *layout, known->stats, json_limits, object_limits) && !has_duplicate(layout->names)) {
      ExtenderArgs out;
      out.pod = known->reading.pod;
      out.warnings = known->reading.warnings;
      out.node_cache_capable = true;
      out.node_names.reserve(layout->names.size());
      for (const std::string_view name : layout->names) out.node_names.emplace_back(name);
      return out;
    }
  }
  ExtenderArgs out = parse_extender_args_full(body, source, json_limits, object_limits);
  if (layout)  // read without an error: its pod's text is known from now on
    recent_raw_pods().add(std::string(layout->pod), std::make_shared<const RawPodReading>(RawPodReading{{out.pod, out.warnings}, layout->pod_stats}));
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
