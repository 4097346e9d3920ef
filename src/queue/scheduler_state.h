// The admission state KueueScheduler's modules share: the quota tree, each ClusterQueue's queue and
// admitted workloads, each workload's record. Internal to the queue layer.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "queue/kueue_objects.h"
#include "queue/admission.h"
#include "queue/quota_tree.h"
#include "queue/workload.h"

namespace gpufleet::queue {

inline constexpr double kNeverS = std::numeric_limits<double>::infinity();

/// One submitted workload.
struct WorkloadRecord {
  Workload wl;
  int cq = -1;  // index into cqs
  WorkloadState state = WorkloadState::kPending;
  std::optional<Admission> admission;
  std::vector<std::pair<int, ResourceAmount>> charged;
  std::string pending_message;
  int32_t admissions = 0, evictions = 0, backoff_evictions = 0;
  double admitted_s = 0;
  uint64_t admit_seq = 0;
  double ready_deadline_s = kNeverS;
  double requeue_at_s = kNeverS;
  bool queued = false;  // in its ClusterQueue's heap or inadmissible list
};

/// One ClusterQueue: its queue (a heap per ClusterQueue, Kueue pkg/queue/cluster_queue.go) and admitted workloads.
struct ClusterQueueRecord {
  const ClusterQueue* spec = nullptr;
  int node = -1;
  int root = -1;
  std::vector<WorkloadId> heap;          // ordered by priority, creation, id
  std::vector<WorkloadId> inadmissible;  // BestEffortFIFO heads that did not fit
  bool blocked = false;                  // StrictFIFO head did not fit
  WorkloadId blocked_by = 0;             // that head, while blocked
  std::set<WorkloadId> admitted;
};

/// What the modules share.
struct SchedulerState {
  /// Validates the objects (validate() throws std::invalid_argument) and builds the tree.
  explicit SchedulerState(KueueObjects o) : objects((validate(o), std::move(o))), tree(objects) {}
  KueueObjects objects;
  QuotaTree tree;
  std::vector<ClusterQueueRecord> cqs;
  std::unordered_map<int, std::vector<int>> cqs_of_root;  // root node -> ClusterQueue indices
  std::vector<WorkloadRecord> recs;
  /// Adds (add) or removes `usage` at a tree node.
  void charge(int node, const std::vector<std::pair<int, ResourceAmount>>& usage, bool add) {
    for (const auto& [fr, a] : usage) add ? tree.add_usage(node, fr, a) : tree.remove_usage(node, fr, a);
  }
};

}  // namespace gpufleet::queue
