// The live server's view of the cluster: the Nodes and Pods the API server holds (by list and watch,
// server/kube_watch.h) or a posted `kubectl get -o json` snapshot, plus the pods this server bound
// and the API has not yet shown bound. Readers take an immutable Snapshot; writers replace it.
//
// Objects are kept as the API's JSON (one per Node name, one per Pod namespace/name) with their
// resourceVersion. A Snapshot is built from all of them exactly as `gpufleet place` reads its input
// (the same reader, readers/k8s/k8s_yaml.h, and the same set-up, place/prepared_cluster.h), together with the
// static objects given at start (device-plugin and mig-parted configs, PriorityClasses, quotas,
// PodDisruptionBudgets, node pools): two caches fed the same objects give the same answers, and a
// restarted server rebuilds the same state by listing again. An object the reader refuses is left out of the
// snapshot and counted (Snapshot::refused), never fatal: the API server is not a file to fix. So is
// a Pod whose metadata.uid another cached Pod already has (binds name pods by uid; the first keeps it).
//
// Threads: every member is safe to call from any thread. snapshot() returns the latest snapshot,
// rebuilding it first when objects changed since (the first caller after a change pays for the
// rebuild; others wait for it). Decisions on a snapshot take its `decide_mutex` (the scheduler keeps
// per-node memos and is not thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/k8s/place_inputs.h"
#include "model/device_assignment.h"
#include "place/place_workload.h"
#include "place/prepared_cluster.h"

namespace gpufleet::live {

/// The two kinds the cache watches.
enum class ResourceKind { kNode, kPod };

/// "Node" / "Pod"; the API path's resource: "nodes" / "pods".
const char* kind_name(ResourceKind kind);
const char* resource_path_name(ResourceKind kind);

/// The cache's key of an API object: metadata.name for a Node, "namespace/name" for a Pod, the
/// namespace "default" when absent or empty (as every gpufleet reader and sched::pod_key spell it);
/// "" when the object has no name. Built on io::kube_object_key (client-go's MetaNamespaceKeyFunc).
std::string object_key(ResourceKind kind, const nlohmann::json& object);

/// A watch event's type (k8s.io/apimachinery pkg/watch: ADDED, MODIFIED, DELETED, BOOKMARK).
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };

/// What a list/watch client feeds. Objects are the API's JSON (a v1.Node or v1.Pod).
class ObjectSink {
 public:
  virtual ~ObjectSink() = default;
  /// A full list of `kind` (the first list or a relist, e.g. after 410 Gone): replaces every object
  /// of that kind; `resource_version` is the list's metadata.resourceVersion.
  virtual void replace(ResourceKind kind, std::vector<nlohmann::json> items, const std::string& resource_version) = 0;
  /// One watch event. ADDED and MODIFIED insert or replace the object (by name, or namespace/name),
  /// DELETED removes it; BOOKMARK carries only metadata.resourceVersion. Every event moves the
  /// kind's resourceVersion to the object's.
  virtual void apply(ResourceKind kind, WatchEventType type, const nlohmann::json& object) = 0;
  /// The kind's last resourceVersion ("" before the first list): where a watch resumes.
  virtual std::string resource_version(ResourceKind kind) const = 0;
};

struct CacheOptions {
  place::PlaceOptions place;                 ///< policy and seed, as `gpufleet place --policy --seed`
  /// Kubernetes files read once at start and added to every snapshot (configs, PriorityClasses,
  /// ResourceQuotas, PodDisruptionBudgets; readers/k8s/k8s_yaml.h). Nodes, Pods and node pools among
  /// them are refused (UsageError).
  std::vector<std::string> static_paths;
  /// More static objects, as the API's JSON, added to every snapshot after those of static_paths
  /// (`serve --replay` gives the ConfigMaps, PriorityClasses, quotas, ... among `place`'s inputs).
  /// Objects the reader makes Nodes or Pods of (Node, Pod, workload controllers) are refused.
  std::vector<nlohmann::json> static_objects;
  /// gpufleet node-pool files (readers/k8s/pool_file.h): their nodes join every snapshot before the
  /// Node objects, expanded as `place` expands them (`serve --replay` of a cluster given as pools).
  std::vector<std::string> pool_paths;
};

/// One consistent view. Immutable except through decide_mutex.
struct Snapshot {
  uint64_t generation = 0;                   ///< 1 for the first snapshot, +1 per rebuild
  io::PlaceInputs inputs;                    ///< nodes and pods as `place` reads them (pods in key order)
  /// Bound pods on their devices and the policy's scheduler: used under decide_mutex only.
  mutable place::PreparedCluster cluster;
  /// PlaceOptions::seed: each decision draws from a generator seeded with it afresh, so an answer
  /// depends on the snapshot and the request only, not on the requests before it.
  uint64_t seed = 42;
  std::unordered_map<std::string, size_t> pod_by_uid;  ///< metadata.uid -> index in inputs.input.pods
  std::unordered_map<std::string, size_t> pod_by_key;  ///< "namespace/name" -> index in inputs.input.pods
  std::vector<std::string> refused;          ///< one line per object left out: kind, key and the reader's error
  std::map<std::string, std::string> resource_versions;  ///< "Node"/"Pod" -> resourceVersion it reflects
  mutable std::mutex decide_mutex;           ///< held while cluster.scheduler or cluster.state is used
  /// Pods ("namespace/name") the scheduler's Score plugins were told of (Scheduler::observe), once
  /// each, as `place` tells them of each pod it schedules; under decide_mutex.
  mutable std::unordered_set<std::string> observed;
};

class ClusterCache final : public ObjectSink {
 public:
  /// Reads options.static_paths (throws InputError / UsageError as the readers do).
  explicit ClusterCache(CacheOptions options);
  ~ClusterCache() override;

  void replace(ResourceKind kind, std::vector<nlohmann::json> items, const std::string& resource_version) override;
  void apply(ResourceKind kind, WatchEventType type, const nlohmann::json& object) override;
  std::string resource_version(ResourceKind kind) const override;

  /// Replaces every Node and Pod with the items of a `kubectl get nodes,pods -o json` List (or any
  /// v1 List / NodeList / PodList; kinds other than Node and Pod are ignored). Throws InputError
  /// (`source` names the body) for a body that is not such a list.
  void replace_all(const nlohmann::json& list, const std::string& source);

  /// Records that this server bound pod `key` ("namespace/name") to `node` with `devices` (the
  /// extender's bind): the pod's JSON gets spec.nodeName and the device annotations until the API
  /// shows it bound. False when no such pod is known.
  bool assume_bound(const std::string& key, const std::string& node, const DeviceAssignment& devices);

  /// The latest snapshot (see the top of this file). Never null: before any object, an empty one.
  std::shared_ptr<const Snapshot> snapshot();

  /// True once both kinds were listed (replace) or a snapshot was posted (replace_all): /readyz.
  bool synced() const;

  /// Objects held now, per kind.
  size_t object_count(ResourceKind kind) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::live
