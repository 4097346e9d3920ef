#include "live/cluster_cache.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <span>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "readers/kube_api/k8s_json.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/k8s_preloaded.h"
#include "readers/kube_api/kube_watch.h"
#include "sched/framework/interface.h"
#include "model/device_annotations.h"
#include "model/extended_resource_toleration.h"
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

bool same_taints(const std::vector<Taint>& a, const std::vector<Taint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Taint& x, const Taint& y) { return x.key == y.key && x.value == y.value && x.effect == y.effect; });
}

// Whether two Nodes agree on every field but labels, taints and spec.unschedulable: what the
// scheduler's set-up reads (capacity, GPU model and sharing, NUMA layout).
bool same_capacity(const Node& a, const Node& b) {
  return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_bytes == b.memory_bytes && a.gpu_count == b.gpu_count &&
         a.gpu_model == b.gpu_model && a.max_pods == b.max_pods && a.time_slicing == b.time_slicing && a.mig == b.mig &&
         a.gpu_memory_mib == b.gpu_memory_mib && a.hami == b.hami && a.gpu_numa_node == b.gpu_numa_node &&
         a.topology_manager_policy == b.topology_manager_policy && a.topology_manager_scope == b.topology_manager_scope;
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
  // static_text's YAML, loaded once (readers/k8s/k8s_preloaded.h); none without static objects.
  std::optional<io::PreloadedK8sText> preloaded;

  // The reader on `text` (the static objects first), with the node pools of options.pool_paths.
  io::K8sObjects parse(const std::string& text, const std::string& source) const {
    io::K8sObjects read = preloaded ? io::parse_k8s_text_after(*preloaded, text, source) : io::parse_k8s_text(text, source);
    read.pool_files = options.pool_paths;
    return read;
  }

  mutable std::mutex mutex;  // guards everything below; the live snapshot's contents also need its decide_mutex
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
  uint64_t generation = 0;
  CacheCounters counters;
  // Records one event-to-state lag (CacheCounters) since `since`.
  void record_lag(std::chrono::steady_clock::time_point since) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    size_t b = 0;
    while (b < kDurationBucketsSeconds.size() && seconds > kDurationBucketsSeconds[b]) ++b;
    if (b < kDurationBucketsSeconds.size()) ++counters.lag_buckets[b];
    counters.lag_seconds_sum += seconds;
    ++counters.lag_count;
  }

  // The live state (see the top of cluster_cache.h): null before the first snapshot(); `rebuild`
  // asks the next snapshot() for a full build.
  std::shared_ptr<Snapshot> live;
  bool rebuild = true;
  // During a list's (replace's) Node changes: the scheduler is set up once at its end, as after a
  // full build, instead of being told of each node (set_up_due records that a node changed).
  bool listing_nodes = false;
  bool set_up_due = false;
  std::vector<std::string> build_errors;  // the last full build's "snapshot: ..." lines
  // Node name -> keys of the live pods whose spec.nodeName names it (bound or refused by the kubelet).
  std::map<std::string, std::set<std::string>> naming;
  std::unordered_map<std::string, size_t> node_index;  // node name -> index in live->inputs.input.nodes

  // The reader's verdict on one object alone (with the static objects and node pools) and what it
  // reads: the Node (device set-up applied) or the Pod (ExtendedResourceToleration applied), as a
  // full build reads them.
  struct Parsed {
    std::string why;  // "" when it reads
    std::optional<Node> node;
    std::optional<Pod> pod;
  };
  Parsed parse_one(ResourceKind kind, const nlohmann::json& object) const {
    nlohmann::json copy = object;
    copy["kind"] = kind_name(kind);
    copy["apiVersion"] = "v1";
    Parsed out;
    try {
      io::K8sObjects read = parse(copy.dump(), "object");
      if (kind == ResourceKind::kNode) {
        io::PlaceInputs in = io::place_inputs_from_objects(std::move(read), "object");
        if (!in.objects.nodes.empty()) out.node = std::move(in.input.nodes.back());  // pool nodes come first
      } else if (!read.pods.empty()) {
        out.pod = std::move(read.pods.front());
        if (read.extended_resource_toleration) add_extended_resource_tolerations(*out.pod, out.pod->constraints.tolerations);
      }
    } catch (const std::exception& e) {
      out.why = e.what();
      out.node.reset();
      out.pod.reset();
    }
    return out;
  }

  // The object with this server's assumption applied (a Pod it bound that the API shows unbound).
  nlohmann::json effective(ResourceKind kind, const std::string& key, const nlohmann::json& object) const {
    nlohmann::json item = object;
    if (kind == ResourceKind::kPod)
      if (const auto a = assumed.find(key); a != assumed.end()) {
        item["spec"]["nodeName"] = a->second.node;
        for (const auto& [name, value] : device_annotation_values(a->second.devices)) item["metadata"]["annotations"][name] = value;
      }
    return item;
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

  // Inserts or replaces (under mutex), then brings the live state along.
  void put(ResourceKind kind, const std::string& key, nlohmann::json object) {
    const size_t k = index_of(kind);
    std::string uid;
    if (kind == ResourceKind::kPod) {
      if (terminal(object)) {
        erase(kind, key);
        return;
      }
      if (!string_at(object, "spec", "nodeName").empty()) assumed.erase(key);
      uid = string_at(object, "metadata", "uid");
    }
    Parsed parsed = parse_one(kind, effective(kind, key, object));
    std::string why = std::move(parsed.why);
    // The API server gives every object its own uid, and a bind names the pod by it: a second Pod
    // with one would be bound as the first, so it is refused (the first keeps it).
    if (const auto owner = uid.empty() ? pod_uids.end() : pod_uids.find(uid); why.empty() && owner != pod_uids.end() && owner->second != key)
      why = InputError("object", 0, "metadata.uid",
                       fmt::format("uid '{}' is already that of pod {} (the API server gives every object its own)", uid, owner->second))
                .what();
    drop(kind, key);
    if (!why.empty()) {
      refused[k][key] = std::move(why);
      sync(kind, key, Parsed{});
      return;
    }
    refused[k].erase(key);
    if (!uid.empty()) pod_uids[uid] = key;
    objects[k][key] = std::move(object);
    sync(kind, key, std::move(parsed));
  }

  void erase(ResourceKind kind, const std::string& key) {
    const size_t k = index_of(kind);
    drop(kind, key);
    refused[k].erase(key);
    if (kind == ResourceKind::kPod) assumed.erase(key);
    sync(kind, key, Parsed{});
  }

  // ---- the live state, in place (under mutex) ----

  // Applies the change of one object (`parsed`: what it reads as now; nothing when gone or refused)
  // to the live snapshot under its decide_mutex. Without a live state, or when a change fails (a
  // node the model refuses), the next snapshot() builds afresh.
  void sync(ResourceKind kind, const std::string& key, Parsed parsed) {
    if (!live || rebuild) {
      rebuild = true;
      return;
    }
    Snapshot& s = *live;
    std::lock_guard lock(s.decide_mutex);
    try {
      if (kind == ResourceKind::kNode) {
        if (!s.cluster.state) {  // no node yet: the first one sets the cluster up
          rebuild = true;
          return;
        }
        node_changed(s, key, std::move(parsed.node));
      } else {
        pod_changed(s, key, std::move(parsed.pod));
      }
    } catch (const std::exception&) {
      rebuild = true;
      return;
    }
    s.generation = ++generation;
    stamp(s);
  }

  // The snapshot's refused lines and resource versions, from the cache's.
  void stamp(Snapshot& s) const {
    s.refused.clear();
    for (size_t k = 0; k < kKinds; ++k)
      for (const auto& [key, why] : refused[k]) s.refused.push_back(fmt::format("{} {}: {}", k == 0 ? "Node" : "Pod", key, why));
    s.refused.insert(s.refused.end(), build_errors.begin(), build_errors.end());
    s.resource_versions = {{"Node", resource_version[0]}, {"Pod", resource_version[1]}};
  }

  // Takes every pod off node n (which stays).
  static void release_all(ClusterState& state, NodeId n) {
    const std::vector<BoundPod> on = state.pods_on(n);
    for (auto b = on.rbegin(); b != on.rend(); ++b) state.release(n, b->pod);
  }

  // Binds again the pods naming `node`, in key order, each when the kubelet admits it, on the
  // devices its bind recorded or the lowest free ones: prepare_cluster's set-up for one node.
  void readmit(Snapshot& s, const std::string& node) {
    const auto nb = s.cluster.node_by_name.find(node);
    if (nb == s.cluster.node_by_name.end()) return;
    const NodeId n = nb->second;
    ClusterState& state = *s.cluster.state;
    release_all(state, n);
    const auto names = naming.find(node);
    if (names == naming.end()) return;
    for (const std::string& key : names->second) {
      const Pod& pod = s.inputs.input.pods[s.pod_by_key.at(key)];
      if (!place::kubelet_rejection(pod, state, n).empty()) continue;
      if (s.observed.insert(observed_id(pod)).second) s.cluster.scheduler->observe(pod, state);
      s.cluster.scheduler->admit_bound(pod, state, n, s.cluster.rng);
    }
  }

  // A new scheduler for the state's nodes (place::make_scheduler), told of the bound pods in key order.
  void set_up_scheduler(Snapshot& s) {
    ClusterState& state = *s.cluster.state;
    s.cluster.scheduler = place::make_scheduler(state, s.inputs.input, options.place);
    ++counters.scheduler_setups;
    s.observed.clear();
    std::vector<std::string> keys;
    for (NodeId n = 0; n < state.node_count(); ++n)
      for (const BoundPod& b : state.pods_on(n)) keys.push_back(sched::pod_key(b.pod));
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) {
      const Pod& pod = s.inputs.input.pods[s.pod_by_key.at(key)];
      s.observed.insert(observed_id(pod));
      s.cluster.scheduler->observe(pod, state);
    }
  }

  // After nodes were added, removed or resized: a scheduler made with fewer GPU models than the state
  // has now is set up again (its profile reads the models when made); else it keeps what it learnt and
  // is told of the change (Scheduler::nodes_changed), with slot `added` (sched::kNoNode for none) ranked among
  // the live nodes by name: just before the first node whose name sorts after it. Ranks only compare,
  // so a removed node's rank is left as a gap.
  void nodes_changed(Snapshot& s, size_t models_before, NodeId added) {
    ClusterState& state = *s.cluster.state;
    sched::Scheduler& scheduler = *s.cluster.scheduler;
    if (listing_nodes) {  // set up at the list's end; meanwhile the new slot ranks last
      set_up_due = true;
      if (added != sched::kNoNode) scheduler.set_node_rank(added, UINT32_MAX - 1);
      return;
    }
    const std::span<const uint32_t> old = scheduler.node_rank();
    uint32_t top = 0;
    for (NodeId n = 0; n < old.size(); ++n)
      if (state.has_node(n)) top = std::max(top, old[n]);
    if (state.gpu_models().size() != models_before || old.empty() || top >= UINT32_MAX - 2) {
      set_up_scheduler(s);
      return;
    }
    std::vector<uint32_t> rank(old.begin(), old.end());
    rank.resize(std::max<size_t>(rank.size(), state.node_count()), UINT32_MAX);
    if (added != sched::kNoNode) {
      const std::string& name = state.node(added).name;
      uint32_t at = top + 1;
      for (NodeId n = 0; n < old.size(); ++n)
        if (n != added && state.has_node(n) && rank[n] < at && name < state.node(n).name) at = rank[n];
      for (NodeId n = 0; n < rank.size(); ++n)
        if (rank[n] >= at && rank[n] != UINT32_MAX) ++rank[n];
      rank[added] = at;
    }
    scheduler.nodes_changed(state, std::move(rank));
  }

  void node_changed(Snapshot& s, const std::string& name, std::optional<Node> node) {
    ClusterState& state = *s.cluster.state;
    std::vector<Node>& nodes = s.inputs.input.nodes;
    const auto nb = s.cluster.node_by_name.find(name);
    if (nb == s.cluster.node_by_name.end()) {
      if (!node) return;
      const size_t models = state.gpu_models().size();
      const NodeId n = state.add_node(*node);
      s.cluster.node_by_name.emplace(name, n);
      node_index[name] = nodes.size();
      nodes.push_back(std::move(*node));
      nodes_changed(s, models, n);
      readmit(s, name);
      return;
    }
    const NodeId n = nb->second;
    if (!node) {  // deleted (or refused now): its pods stay, bound to a node that is not found
      release_all(state, n);
      state.remove_node(n);
      s.cluster.node_by_name.erase(nb);
      const size_t i = node_index.at(name);
      node_index.erase(name);
      if (i + 1 != nodes.size()) {
        nodes[i] = std::move(nodes.back());
        node_index[nodes[i].name] = i;
      }
      nodes.pop_back();
      nodes_changed(s, state.gpu_models().size(), sched::kNoNode);
      return;
    }
    const Node& old = state.node(n);
    const bool capacity = same_capacity(old, *node);
    if (capacity && old.labels == node->labels && same_taints(old.taints, node->taints)) {
      // A status heartbeat (nothing the model reads changed) or a cordon: the kubelet admits as before.
      if (old.unschedulable != node->unschedulable) {
        state.set_unschedulable(n, node->unschedulable);
        nodes[node_index.at(name)].unschedulable = node->unschedulable;
      }
      return;
    }
    nodes[node_index.at(name)] = *node;
    release_all(state, n);
    state.remove_node(n);
    const size_t models = state.gpu_models().size();
    state.add_node(std::move(*node), n);
    if (!capacity) nodes_changed(s, models, sched::kNoNode);  // the same name: the same rank
    readmit(s, name);
  }

  // Takes the pod `key` out of the snapshot's pod list; returns the node it named ("" for none).
  std::string remove_pod(Snapshot& s, const std::string& key) {
    const auto it = s.pod_by_key.find(key);
    if (it == s.pod_by_key.end()) return {};
    std::vector<Pod>& pods = s.inputs.input.pods;
    const size_t i = it->second;
    std::string node = pods[i].node_name;
    if (!node.empty())
      if (const auto names = naming.find(node); names != naming.end()) {
        names->second.erase(key);
        if (names->second.empty()) naming.erase(names);
      }
    if (!pods[i].uid.empty()) s.pod_by_uid.erase(pods[i].uid);
    s.pod_by_key.erase(it);
    if (i + 1 != pods.size()) {  // the last pod takes its place
      pods[i] = std::move(pods.back());
      s.pod_by_key[sched::pod_key(pods[i])] = i;
      if (!pods[i].uid.empty()) s.pod_by_uid[pods[i].uid] = i;
    }
    pods.pop_back();
    return node;
  }

  void pod_changed(Snapshot& s, const std::string& key, std::optional<Pod> pod) {
    // The pod it was leaves `observed` unless the object is still that pod.
    if (const auto held = s.pod_by_key.find(key); held != s.pod_by_key.end()) {
      std::string was = observed_id(s.inputs.input.pods[held->second]);
      if (!pod || observed_id(*pod) != was) s.observed.erase(was);
    }
    const std::string was_on = remove_pod(s, key);
    std::string now_on;
    if (pod) {
      now_on = pod->node_name;
      std::vector<Pod>& pods = s.inputs.input.pods;
      s.pod_by_key[key] = pods.size();
      if (!pod->uid.empty()) s.pod_by_uid[pod->uid] = pods.size();
      if (!now_on.empty()) naming[now_on].insert(key);
      pods.push_back(std::move(*pod));
    }
    if (!s.cluster.state) return;
    if (!was_on.empty()) readmit(s, was_on);
    if (!now_on.empty() && now_on != was_on) readmit(s, now_on);
  }

  // The List text of every object, assumptions applied (under mutex).
  std::string list_text() const {
    nlohmann::json items = nlohmann::json::array();
    for (size_t k = 0; k < kKinds; ++k)
      for (const auto& [key, object] : objects[k]) {
        nlohmann::json item = effective(k == 0 ? ResourceKind::kNode : ResourceKind::kPod, key, object);
        item["kind"] = k == 0 ? "Node" : "Pod";
        item["apiVersion"] = "v1";
        items.push_back(std::move(item));
      }
    return nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}.dump();
  }

  // Every object through the reader and prepare_cluster at once (under mutex).
  void full_build() {
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->seed = options.place.seed;
    build_errors.clear();
    io::K8sObjects read;
    bool read_ok = true;
    try {
      read = parse(list_text(), "cluster cache");
    } catch (const std::exception& e) {
      build_errors.push_back(fmt::format("snapshot: {}", e.what()));
      read_ok = false;
    }
    if (read_ok && read.nodes.empty() && read.pool_files.empty()) {
      // No node yet: the pods alone, nothing bound.
      snapshot->inputs.objects = std::move(read);
      snapshot->inputs.input.pods = snapshot->inputs.objects.pods;
    } else if (read_ok) {
      try {
        snapshot->inputs = io::place_inputs_from_objects(std::move(read), "cluster cache");
        snapshot->cluster = place::prepare_cluster(snapshot->inputs.input, options.place);
      } catch (const std::exception& e) {
        build_errors.push_back(fmt::format("snapshot: {}", e.what()));
        snapshot->inputs = io::PlaceInputs{};
        snapshot->cluster = place::PreparedCluster{};
      }
    }
    const auto& pods = snapshot->inputs.input.pods;
    naming.clear();
    for (size_t i = 0; i < pods.size(); ++i) {
      const std::string key = sched::pod_key(pods[i]);
      snapshot->pod_by_key.emplace(key, i);
      if (!pods[i].uid.empty()) snapshot->pod_by_uid.emplace(pods[i].uid, i);
      if (!pods[i].node_name.empty()) naming[pods[i].node_name].insert(key);
    }
    for (const place::PreboundPod& p : snapshot->cluster.prebound) snapshot->observed.insert(observed_id(pods[p.pod]));
    node_index.clear();
    for (size_t i = 0; i < snapshot->inputs.input.nodes.size(); ++i) node_index[snapshot->inputs.input.nodes[i].name] = i;
    snapshot->generation = ++generation;
    stamp(*snapshot);
    ++counters.full_builds;
    live = std::move(snapshot);
    rebuild = false;
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
  if (!impl_->static_text.empty()) impl_->preloaded.emplace(impl_->static_text, "static objects");
}

ClusterCache::~ClusterCache() = default;

std::string observed_id(const Pod& pod) { return pod.uid.empty() ? sched::pod_key(pod) : pod.uid; }

void ClusterCache::replace(ResourceKind kind, std::vector<nlohmann::json> items, const std::string& resource_version) {
  const auto arrived = std::chrono::steady_clock::now();
  std::lock_guard lock(impl_->mutex);
  Impl& c = *impl_;
  const size_t k = index_of(kind);
  if (c.listed[k]) ++c.counters.relists[k];
  // The list against what is held: objects gone are deleted, new or changed ones put (parsed one by
  // one); objects the list gives unchanged stay as they are (and so do their assumptions).
  std::map<std::string, nlohmann::json> listed;
  for (nlohmann::json& item : items) {
    std::string key = object_key(kind, item);
    if (!key.empty()) listed[std::move(key)] = std::move(item);
  }
  std::vector<std::string> gone;
  for (const auto& entry : c.objects[k])
    if (listed.count(entry.first) == 0) gone.push_back(entry.first);
  for (const auto& entry : c.refused[k])
    if (listed.count(entry.first) == 0) gone.push_back(entry.first);
  c.listing_nodes = kind == ResourceKind::kNode;
  for (const std::string& key : gone) c.erase(kind, key);
  for (auto& [key, item] : listed) {
    const auto held = c.objects[k].find(key);
    if (held != c.objects[k].end() && held->second == item) continue;
    c.put(kind, key, std::move(item));
  }
  c.listing_nodes = false;
  if (std::exchange(c.set_up_due, false) && c.live && !c.rebuild && c.live->cluster.state) {
    std::lock_guard decide(c.live->decide_mutex);
    c.set_up_scheduler(*c.live);
  }
  c.resource_version[k] = resource_version;
  c.listed[k] = true;
  if (c.live && !c.rebuild) {
    std::lock_guard decide(c.live->decide_mutex);
    c.stamp(*c.live);
  }
  c.record_lag(arrived);
}

void ClusterCache::apply(ResourceKind kind, WatchEventType type, const nlohmann::json& object) {
  const auto arrived = std::chrono::steady_clock::now();
  std::lock_guard lock(impl_->mutex);
  Impl& c = *impl_;
  const size_t k = index_of(kind);
  ++c.counters.events[k][static_cast<size_t>(type)];
  if (const std::string rv = string_at(object, "metadata", "resourceVersion"); !rv.empty()) c.resource_version[k] = rv;
  const std::string key = type == WatchEventType::kBookmark ? std::string() : object_key(kind, object);
  if (!key.empty()) {
    if (type == WatchEventType::kDeleted)
      c.erase(kind, key);
    else
      c.put(kind, key, object);
  }
  if (c.live && !c.rebuild) {
    std::lock_guard decide(c.live->decide_mutex);
    c.stamp(*c.live);
  }
  c.record_lag(arrived);
}

std::string ClusterCache::resource_version(ResourceKind kind) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->resource_version[index_of(kind)];
}

std::map<std::string, size_t> ClusterCache::replace_all(const nlohmann::json& list, const std::string& source) {
  std::vector<nlohmann::json> nodes, pods;
  std::map<std::string, size_t> skipped;
  for (nlohmann::json& item : io::k8s_list_items(list, source, &skipped)) (item["kind"] == "Node" ? nodes : pods).push_back(std::move(item));
  const std::string rv = string_at(list, "metadata", "resourceVersion");
  {
    // A posted snapshot is the whole truth: this server's own binds (assume_bound) end with it, so a
    // pod it bound that the snapshot gives pending is pending again (re-read without the assumption).
    std::lock_guard lock(impl_->mutex);
    Impl& c = *impl_;
    std::vector<std::string> keys;
    for (const auto& entry : c.assumed) keys.push_back(entry.first);
    c.assumed.clear();
    for (const std::string& key : keys)
      if (const auto held = c.objects[index_of(ResourceKind::kPod)].find(key); held != c.objects[index_of(ResourceKind::kPod)].end())
        c.put(ResourceKind::kPod, key, nlohmann::json(held->second));
    // The snapshot is the whole state: it is read all at once at the next snapshot(), as at start,
    // so the scheduler learns nothing from earlier snapshots and answers as a server started with
    // this one would.
    c.rebuild = true;
  }
  replace(ResourceKind::kNode, std::move(nodes), rv);
  replace(ResourceKind::kPod, std::move(pods), rv);
  std::lock_guard lock(impl_->mutex);
  impl_->posted = true;
  return skipped;
}

bool ClusterCache::assume_bound(const std::string& key, const std::string& node, const DeviceAssignment& devices) {
  std::lock_guard lock(impl_->mutex);
  Impl& c = *impl_;
  const auto held = c.objects[1].find(key);
  if (held == c.objects[1].end()) return false;
  c.assumed[key] = Impl::Assumed{node, devices};
  c.put(ResourceKind::kPod, key, held->second);  // a copy: put replaces the held object
  return true;
}

std::shared_ptr<const Snapshot> ClusterCache::snapshot() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->rebuild || !impl_->live) impl_->full_build();
  return impl_->live;
}

CacheCounters ClusterCache::counters() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->counters;
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
