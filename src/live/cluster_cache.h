// The live server's view of the cluster: the Nodes and Pods the API server holds (by list and watch,
// server/kube_watch.h) or a posted `kubectl get -o json` snapshot, plus the pods this server bound
// and the API has not yet shown bound.
//
// Objects are kept as the API's JSON (one per Node name, one per Pod namespace/name) with their
// resourceVersion, and as one live Snapshot: the nodes and pods as `gpufleet place` reads them, the
// ClusterState with the bound pods on their devices and the policy's scheduler. It is built whole
// once, from all objects exactly as `place` reads its input (the same reader, readers/k8s/k8s_yaml.h,
// and the same set-up, place/prepared_cluster.h), together with the static objects given at start
// (device-plugin and mig-parted configs, PriorityClasses, quotas, PodDisruptionBudgets, node pools).
//
// Incremental state. After that, each watch event (and each object a relist adds, changes or drops;
// objects a relist gives unchanged are not read again) is read alone by the same reader, with the
// static objects, and changes the live snapshot in place, under its decide_mutex:
//  - a Pod: its entry in the pod list is replaced, added or removed (a pod whose status.phase turns
//    Succeeded or Failed is removed: kube-scheduler's informer leaves terminal pods out); when it
//    named a node before or names one now (a bind, a finish, a delete), that node's pods are
//    re-admitted: all taken off, then bound again in key order, each when the kubelet admits it
//    (place::kubelet_rejection) on the devices its bind recorded or the lowest free ones, which is
//    what a full build does on that node. A pending pod costs no state change.
//  - a Node: added to the lowest empty slot of the ClusterState (ClusterState::add_node) and its pods
//    admitted; removed (remove_node) with its pods left naming a node that is not found; a change of
//    labels or taints takes the node out of its slot and puts the new one in the same slot, its pods
//    re-admitted; spec.unschedulable alone is ClusterState::set_unschedulable; a MODIFIED Node that
//    reads as the same Node (a status heartbeat) changes nothing.
//  - BOOKMARK: only the resourceVersion moves.
// The scheduler (its memos follow ClusterState::version() and node_set_version(), sched/scheduler.h)
// is kept across events, and told of each pod as it gets bound (Scheduler::observe, once per pod),
// as kube-scheduler's informer tells a running scheduler. When a node is added or removed or changes
// anything besides labels, taints and spec.unschedulable, it is told the node set changed
// (Scheduler::nodes_changed: an added node ranks among the others by name for score ties, and
// gpufleet re-reads its node classes); it is set up again (place::make_scheduler, then told of every
// bound pod in key order) by a node of a GPU model it was not made with (profiles read the models
// when set up) and by a list's Node changes (a relist), once at the list's end. A posted snapshot
// (replace_all) is the whole truth: it is read all at once (a full build), so the server then
// answers as one started with it would. fgd's typical pod mix is that of the pods at the last set-up. So the
// ClusterState equals, field by field, the one a full build of the same objects makes
// (tests/live/incremental_state_test.cpp), and the decisions of policies whose scores do not learn
// from the pods they are told of (all but gpufleet, fgd-online and fgd, whose typical mix comes from
// the pods) are the same; gpufleet and fgd-online have learnt from the pods in the order they were
// bound, not in key order. Slots (NodeIds) and the order of the pod list differ from a full build's;
// names and keys do not.
// A full build (at the next snapshot()) happens for the first snapshot, while no node is cached (the
// first node sets the cluster up), and after a change the model refuses (a Node ClusterState
// refuses, e.g. a bad MIG layout), and after a posted snapshot (replace_all): then the objects are
// read all together again. Static objects
// are given at construction only, so they never change.
//
// An object the reader refuses is left out of the snapshot and counted (Snapshot::refused), never
// fatal: the API server is not a file to fix. So is a Pod whose metadata.uid another cached Pod
// already has (binds name pods by uid; the first keeps it).
//
// Threads: every member is safe to call from any thread. snapshot() returns the live snapshot (after
// a full build when one is due). Writers change it under its decide_mutex, so every reader of a
// Snapshot's fields takes decide_mutex for as long as it reads them (the extender's decisions do, and
// so do the metrics); a snapshot a full build replaced is no longer changed.
#pragma once

#include <array>
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
#include "live/request_stats.h"

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

/// The live view (see the top of this file). Every field is read and changed under decide_mutex.
struct Snapshot {
  uint64_t generation = 0;                   ///< the cache's count of full builds and changes applied when last changed
  /// Nodes and pods as `place` reads them. After a full build pods are in key order and nodes as
  /// `place` orders them; changes append new ones and move the last into a removed one's place.
  io::PlaceInputs inputs;
  /// Bound pods on their devices and the policy's scheduler (see the top of this file).
  /// cluster.prebound and cluster.refused are those of the last full build (indices into the pod list
  /// as it was then); changes leave them as they are: the state's pods_on() tells which pods run.
  mutable place::PreparedCluster cluster;
  /// PlaceOptions::seed: each decision draws from a generator seeded with it afresh, so an answer
  /// depends on the state and the request only, not on the requests before it.
  uint64_t seed = 42;
  std::unordered_map<std::string, size_t> pod_by_uid;  ///< metadata.uid -> index in inputs.input.pods
  std::unordered_map<std::string, size_t> pod_by_key;  ///< "namespace/name" -> index in inputs.input.pods
  std::vector<std::string> refused;          ///< one line per object left out: kind, key and the reader's error
  std::map<std::string, std::string> resource_versions;  ///< "Node"/"Pod" -> resourceVersion it reflects
  mutable std::mutex decide_mutex;           ///< held while any field is read or changed
  /// Pods the scheduler's Score plugins were told of (Scheduler::observe), once each, by
  /// observed_id(): the bound pods when the scheduler was set up or as they got bound, and the pods
  /// the extender scored, as `place` tells them of each pod it schedules. A pod leaves it when it
  /// leaves the cache (deleted, finished), so a pod made again under its name is told of again.
  mutable std::unordered_set<std::string> observed;
};

/// A pod's entry in Snapshot::observed: its metadata.uid (a pod deleted and made again under its
/// name, as a StatefulSet's, is another pod), else its "namespace/name".
std::string observed_id(const Pod& pod);

/// What the cache did since it started (for /metrics, live/cluster_metrics.h render_cache_metrics).
struct CacheCounters {
  uint64_t events[2][4] = {};      ///< watch events applied, by kind (Node, Pod) and WatchEventType
  uint64_t relists[2] = {};        ///< lists after the first one, by kind
  uint64_t full_builds = 0;        ///< snapshots built from every object at once
  uint64_t scheduler_setups = 0;   ///< schedulers set up again on the live state (a new GPU model, a relist's Node changes)
  /// Event-to-state lag: seconds from an event's (or a list's) arrival in apply() (replace()) to the
  /// live state holding it, the wait for the locks included (a decision in progress delays it).
  /// Buckets as kDurationBucketsSeconds (non-cumulative), then their sum and count.
  std::array<uint64_t, kDurationBucketsSeconds.size()> lag_buckets{};
  double lag_seconds_sum = 0;
  uint64_t lag_count = 0;
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
  /// v1 List / NodeList / PodList). This server's own binds (assume_bound) end with it: the snapshot
  /// says which pods are bound. Returns the items of other kinds, left out, counted by kind ("" for an
  /// item without one): the caller reports them. Throws InputError (`source` names the body) for a
  /// body that is not such a list.
  std::map<std::string, size_t> replace_all(const nlohmann::json& list, const std::string& source);

  /// Records that this server bound pod `key` ("namespace/name") to `node` with `devices` (the
  /// extender's bind): the pod reads as if its JSON had spec.nodeName and the device annotations
  /// (and is bound so in the live state) until the API shows it bound. False when no such pod is known.
  bool assume_bound(const std::string& key, const std::string& node, const DeviceAssignment& devices);

  /// The live snapshot (see the top of this file). Never null: before any object, an empty one.
  std::shared_ptr<const Snapshot> snapshot();

  /// True once both kinds were listed (replace) or a snapshot was posted (replace_all): /readyz.
  bool synced() const;

  /// Objects held now, per kind.
  size_t object_count(ResourceKind kind) const;

  CacheCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::live
