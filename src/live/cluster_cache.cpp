#include "live/cluster_cache.h"

#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "readers/kube_api/k8s_json.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/kube_api/kube_watch.h"
#include "sched/framework/interface.h"
#include "model/device_annotations.h"
#include "util/input_error.h"

namespace gpufleet::live {

const char* kind_name(ResourceKind kind) { return kind == ResourceKind::kNode ? "Node" : "Pod"; }
const char* resource_path_name(ResourceKind kind) { return kind == ResourceKind::kNode ? "nodes" : "pods"; }

namespace {

constexpr size_t kKinds = 2;
size_t index_of(ResourceKind kind) { return kind == ResourceKind::kNode ? 0 : 1; }

std::string string_at(const nlohmann::json& object, const char* a, const char* b) {
  const auto x = object.find(a);
  if (x == object.end() || !x->is_object()) return {};
  const auto y = x->find(b);
  return y != x->end() && y->is_string() ? y->get<std::string>() : std::string();
}

// kube-scheduler's pod informer leaves out terminal pods (status.phase Succeeded or Failed): they
// hold nothing on their node (pkg/scheduler/eventhandlers.go, the assigned-pod informer's field
// selector).
bool terminal(const nlohmann::json& pod) {
  const std::string phase = string_at(pod, "status", "phase");
  return phase == "Succeeded" || phase == "Failed";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string object_key(ResourceKind kind, const nlohmann::json& object) {
  std::string key = io::kube_object_key(object);
  if (kind == ResourceKind::kPod && !key.empty() && key.find('/') == std::string::npos) key = "default/" + key;
  return key;
}

struct ClusterCache::Impl {
  CacheOptions options;
  std::string static_text;  // the static files' documents, then the static objects, "---"-joined

  // The reader on `text` (the static objects first), with the node pools of options.pool_paths.
  io::K8sObjects parse(const std::string& text, const std::string& source) const {
    io::K8sObjects read = io::parse_k8s_text(static_text + "\n---\n" + text, source);
    read.pool_files = options.pool_paths;
    return read;
  }

  mutable std::mutex mutex;  // guards everything below
  std::map<std::string, nlohmann::json> objects[kKinds];
  std::map<std::string, std::string> refused[kKinds];  // key -> why the reader refused it
  std::map<std::string, std::string> pod_uids;         // metadata.uid -> key of the cached Pod that has it
  std::string resource_version[kKinds];
  bool listed[kKinds] = {false, false};
  bool posted = false;
  struct Assumed {
    std::string node;
    DeviceAssignment devices;
  };
  std::map<std::string, Assumed> assumed;  // pod key -> this server's bind, until the API shows it bound
  bool dirty = true;
  uint64_t generation = 0;
  std::shared_ptr<const Snapshot> current;

  std::mutex build_mutex;  // one rebuild at a time

  // The reader's verdict on one object alone (with the static objects): "" when it reads.
  std::string check(ResourceKind kind, const nlohmann::json& object) const {
    nlohmann::json copy = object;
    copy["kind"] = kind_name(kind);
    copy["apiVersion"] = "v1";
    try {
      io::K8sObjects read = parse(copy.dump(), "object");
      if (kind == ResourceKind::kNode) io::place_inputs_from_objects(std::move(read), "object");
    } catch (const InputError& e) {
      return e.what();
    } catch (const std::exception& e) {
      return e.what();
    }
    return {};
  }

  // Drops a cached object (and its Pod's uid), under mutex.
  void drop(ResourceKind kind, const std::string& key) {
    const size_t k = index_of(kind);
    const auto it = objects[k].find(key);
    if (it == objects[k].end()) return;
    if (kind == ResourceKind::kPod)
      if (const auto u = pod_uids.find(string_at(it->second, "metadata", "uid")); u != pod_uids.end() && u->second == key) pod_uids.erase(u);
    objects[k].erase(it);
  }

  // Inserts or replaces (under mutex).
  void put(ResourceKind kind, const std::string& key, nlohmann::json object) {
    const size_t k = index_of(kind);
    std::string uid;
    if (kind == ResourceKind::kPod) {
      if (terminal(object)) {
        drop(kind, key);
        refused[k].erase(key);
        assumed.erase(key);
        return;
      }
      if (!string_at(object, "spec", "nodeName").empty()) assumed.erase(key);
      uid = string_at(object, "metadata", "uid");
    }
    std::string why = check(kind, object);
    // The API server gives every object its own uid, and a bind names the pod by it: a second Pod
    // with one would be bound as the first, so it is refused (the first keeps it).
    if (const auto owner = uid.empty() ? pod_uids.end() : pod_uids.find(uid); why.empty() && owner != pod_uids.end() && owner->second != key)
      why = InputError("object", 0, "metadata.uid",
                       fmt::format("uid '{}' is already that of pod {} (the API server gives every object its own)", uid, owner->second))
                .what();
    drop(kind, key);
    if (!why.empty()) {
      refused[k][key] = std::move(why);
      return;
    }
    refused[k].erase(key);
    if (!uid.empty()) pod_uids[uid] = key;
    objects[k][key] = std::move(object);
  }

  void erase(ResourceKind kind, const std::string& key) {
    const size_t k = index_of(kind);
    drop(kind, key);
    refused[k].erase(key);
    if (kind == ResourceKind::kPod) assumed.erase(key);
  }

  // The List text of every object, assumptions applied (under mutex).
  std::string list_text() const {
    nlohmann::json items = nlohmann::json::array();
    for (size_t k = 0; k < kKinds; ++k)
      for (const auto& [key, object] : objects[k]) {
        nlohmann::json item = object;
        item["kind"] = k == 0 ? "Node" : "Pod";
        item["apiVersion"] = "v1";
        if (k == 1) {
          if (const auto a = assumed.find(key); a != assumed.end()) {
            item["spec"]["nodeName"] = a->second.node;
            for (const auto& [name, value] : device_annotation_values(a->second.devices)) item["metadata"]["annotations"][name] = value;
          }
        }
        items.push_back(std::move(item));
      }
    return nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}.dump();
  }

  std::shared_ptr<Snapshot> build(const std::string& text, std::vector<std::string> refused_lines, uint64_t gen,
                                  std::map<std::string, std::string> versions) const {
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->generation = gen;
    snapshot->seed = options.place.seed;
    snapshot->resource_versions = std::move(versions);
    snapshot->refused = std::move(refused_lines);
    io::K8sObjects read;
    try {
      read = parse(text, "cluster cache");
    } catch (const std::exception& e) {
      snapshot->refused.push_back(fmt::format("snapshot: {}", e.what()));
      return snapshot;
    }
    if (read.nodes.empty() && read.pool_files.empty()) {
      // No node yet: the pods alone, nothing bound.
      snapshot->inputs.objects = std::move(read);
      snapshot->inputs.input.pods = snapshot->inputs.objects.pods;
    } else {
      try {
        snapshot->inputs = io::place_inputs_from_objects(std::move(read), "cluster cache");
      } catch (const std::exception& e) {
        snapshot->refused.push_back(fmt::format("snapshot: {}", e.what()));
        return snapshot;
      }
    }
    snapshot->cluster = place::prepare_cluster(snapshot->inputs.input, options.place);
    const auto& pods = snapshot->inputs.input.pods;
    for (size_t i = 0; i < pods.size(); ++i) {
      snapshot->pod_by_key.emplace(sched::pod_key(pods[i]), i);
      if (!pods[i].uid.empty()) snapshot->pod_by_uid.emplace(pods[i].uid, i);
    }
    return snapshot;
  }

};

ClusterCache::ClusterCache(CacheOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (!impl_->options.static_paths.empty()) {
    const io::K8sObjects read = io::read_k8s_inputs(impl_->options.static_paths);  // validates, with positions
    if (!read.nodes.empty() || !read.pods.empty())
      throw UsageError("--cluster-config: Nodes and Pods come from the API server or a posted snapshot, not from these files");
    if (!read.pool_files.empty())
      throw UsageError(fmt::format("--cluster-config: {}: a gpufleet NodePoolSet: nodes come from the API server or a posted snapshot",
                                   read.pool_files.front()));
    for (const std::string& file : io::k8s_input_files(impl_->options.static_paths))
      impl_->static_text += read_file(file) + "\n---\n";
  }
  if (!impl_->options.static_objects.empty()) {
    std::string text;
    for (const nlohmann::json& object : impl_->options.static_objects) text += object.dump() + "\n---\n";
    const io::K8sObjects read = io::parse_k8s_text(text, "static objects");
    if (!read.nodes.empty() || !read.pods.empty())
      throw UsageError("static objects: Nodes and Pods (and controllers' pods) come from the API server or a posted snapshot");
    impl_->static_text += text;
  }
}

ClusterCache::~ClusterCache() = default;

void ClusterCache::replace(ResourceKind kind, std::vector<nlohmann::json> items, const std::string& resource_version) {
  std::lock_guard lock(impl_->mutex);
  const size_t k = index_of(kind);
  impl_->objects[k].clear();
  impl_->refused[k].clear();
  if (kind == ResourceKind::kPod) impl_->pod_uids.clear();
  std::map<std::string, Impl::Assumed> assumed;
  for (nlohmann::json& item : items) {
    const std::string key = object_key(kind, item);
    if (key.empty()) continue;
    if (kind == ResourceKind::kPod)
      if (const auto a = impl_->assumed.find(key); a != impl_->assumed.end()) assumed.insert(*a);  // kept while the pod exists
    impl_->put(kind, key, std::move(item));
  }
  if (kind == ResourceKind::kPod) {
    for (auto it = assumed.begin(); it != assumed.end();)  // put() dropped those the API shows bound
      it = impl_->objects[k].count(it->first) != 0 && string_at(impl_->objects[k][it->first], "spec", "nodeName").empty() ? std::next(it)
                                                                                                                          : assumed.erase(it);
    impl_->assumed = std::move(assumed);
  }
  impl_->resource_version[k] = resource_version;
  impl_->listed[k] = true;
  impl_->dirty = true;
}

void ClusterCache::apply(ResourceKind kind, WatchEventType type, const nlohmann::json& object) {
  std::lock_guard lock(impl_->mutex);
  const size_t k = index_of(kind);
  if (const std::string rv = string_at(object, "metadata", "resourceVersion"); !rv.empty()) impl_->resource_version[k] = rv;
  if (type == WatchEventType::kBookmark) return;
  const std::string key = object_key(kind, object);
  if (key.empty()) return;
  if (type == WatchEventType::kDeleted)
    impl_->erase(kind, key);
  else
    impl_->put(kind, key, object);
  impl_->dirty = true;
}

std::string ClusterCache::resource_version(ResourceKind kind) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->resource_version[index_of(kind)];
}

void ClusterCache::replace_all(const nlohmann::json& list, const std::string& source) {
  std::vector<nlohmann::json> nodes, pods;
  for (nlohmann::json& item : io::k8s_list_items(list, source)) (item["kind"] == "Node" ? nodes : pods).push_back(std::move(item));
  const std::string rv = string_at(list, "metadata", "resourceVersion");
  replace(ResourceKind::kNode, std::move(nodes), rv);
  replace(ResourceKind::kPod, std::move(pods), rv);
  std::lock_guard lock(impl_->mutex);
  impl_->posted = true;
}

bool ClusterCache::assume_bound(const std::string& key, const std::string& node, const DeviceAssignment& devices) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->objects[1].count(key) == 0) return false;
  impl_->assumed[key] = Impl::Assumed{node, devices};
  impl_->dirty = true;
  return true;
}

std::shared_ptr<const Snapshot> ClusterCache::snapshot() {
  std::lock_guard build(impl_->build_mutex);
  std::string text;
  std::vector<std::string> refused;
  std::map<std::string, std::string> versions;
  uint64_t gen = 0;
  {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->dirty && impl_->current) return impl_->current;
    text = impl_->list_text();
    for (size_t k = 0; k < kKinds; ++k)
      for (const auto& [key, why] : impl_->refused[k]) refused.push_back(fmt::format("{} {}: {}", k == 0 ? "Node" : "Pod", key, why));
    versions = {{"Node", impl_->resource_version[0]}, {"Pod", impl_->resource_version[1]}};
    gen = ++impl_->generation;
    impl_->dirty = false;
  }
  std::shared_ptr<const Snapshot> built = impl_->build(text, std::move(refused), gen, std::move(versions));
  std::lock_guard lock(impl_->mutex);
  impl_->current = built;
  return built;
}

bool ClusterCache::synced() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->posted || (impl_->listed[0] && impl_->listed[1]);
}

size_t ClusterCache::object_count(ResourceKind kind) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->objects[index_of(kind)].size();
}

}  // namespace gpufleet::live
