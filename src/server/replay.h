// `gpufleet serve --replay`: drives a live server over HTTP as kube-scheduler would, on a cluster and
// workload given as files, and checks that every decision equals `gpufleet place`'s on the same
// snapshot.
//
// Steps: the Node and Pod objects go to a ClusterCache as one posted snapshot would; `place` runs on
// that cache's first snapshot (the same inputs, reader and set-up). A server (server/http_server.h)
// starts on 127.0.0.1 at a free port. Then, for each pod without spec.nodeName, in place's queue
// order (PrioritySort: higher priority first, then input order), the client sends what
// kube-scheduler sends: POST /filter with every node (as NodeNames, or as a NodeList when
// node_cache_capable is false), POST /prioritize when two or more nodes pass (kube-scheduler skips
// scoring for one), takes the highest score (the first on a tie), and POST /bind. The server's bind
// records the pod bound, so the next filter sees it, as kube-scheduler's next cycle sees its assumed
// pod. The pod's node and devices (its gpufleet.io device annotations) are compared with place's.
//
// Not replayed: preemption (a pod place binds by preempting is reported, and later decisions may
// differ), Kueue workloads and pod groups (gangs are not extender business: refused with a
// UsageError), controllers (give Pods).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "place/place_workload.h"

namespace gpufleet::server {

struct ReplayOptions {
  place::PlaceOptions place;
  std::vector<std::string> cluster_config_paths;  ///< static objects (live::CacheOptions::static_paths)
  bool node_cache_capable = true;                  ///< NodeNames (true) or a NodeList (false) in the requests
};

/// One pod's decision, by the server and by place.
struct ReplayDecision {
  std::string pod;                  ///< "namespace/name"
  std::string live_node;            ///< "" = no node passed the filter (pending)
  std::vector<int32_t> live_gpus;   ///< distinct GPU indices from the bind's annotations
  std::string live_mig;             ///< MIG profiles, comma-joined
  std::string place_node;           ///< "" = pending in place
  std::vector<int32_t> place_gpus;
  std::string place_mig;
  bool place_preempted = false;     ///< place bound it by preempting others (not replayed)
  bool equal() const { return live_node == place_node && live_gpus == place_gpus && live_mig == place_mig; }
};

struct ReplayResult {
  std::vector<ReplayDecision> decisions;  ///< in queue order
  int64_t filter_calls = 0, prioritize_calls = 0, bind_calls = 0;
  size_t nodes = 0;
  size_t mismatches() const;
};

/// Runs the replay on `objects` (Nodes and Pods as JSON, readers/kube_api/k8s_json.h). Throws UsageError for other
/// kinds, Kueue workloads or pod groups, or no node; InputError as the readers do.
ReplayResult run_replay(const std::vector<nlohmann::json>& objects, const ReplayOptions& options);

/// A summary and one line per differing decision.
std::string replay_text(const ReplayResult& result);
/// Every decision and the counts.
nlohmann::json replay_json(const ReplayResult& result);

}  // namespace gpufleet::server
