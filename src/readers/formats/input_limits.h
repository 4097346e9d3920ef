// Limits on what gpufleet's readers and request parsers accept. Each is enforced as an InputError
// (exit status 2) that names the limit, before the work it guards: hostile or accidental input
// (a 50 MB one-line header, a YAML "billion laughs", a million-document stream) is refused, never
// slowed down to. docs/input-limits.md lists them for users, with the reasons.
//
// The figures are far above any real input (the Alibaba openb trace is 1 MB of CSV; a Kubernetes
// object is at most 1.5 MiB in etcd; `kubectl get pods -A -o yaml` of a 5,000-node cluster is tens of
// MiB) and far below what exhausts this machine. Raise one here and in docs/input-limits.md together.
//
// Limits inside one object live with their reader and are listed in docs/input-limits.md too: e.g.
// readers/k8s/pool_file.h kMaxPoolNodes / kMaxTotalPoolNodes (node pools, Karpenter offerings included),
// readers/karpenter/karpenter_nodepool.h kMaxOfferingSlots and kMaxDisruptionBudgets (Karpenter NodePools).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpufleet::io {

inline constexpr size_t kMiB = size_t{1} << 20;

/// Limits of the comma-separated readers (openb node / pod / trace lists, the FGD reference results).
struct CsvLimits {
  /// Largest file, bytes. The openb pod lists are about 1 MB.
  size_t max_file_bytes = 128 * kMiB;
  /// Longest line, bytes, header included. openb rows are under 200 bytes, FGD reference rows 2 KB.
  size_t max_line_bytes = 64 * 1024;
  /// Most columns in the header. The FGD reference has 135.
  size_t max_columns = 1024;
  /// Most data rows (blank lines not counted).
  size_t max_rows = 2'000'000;
};

/// Limits of the YAML / JSON readers (Kubernetes objects, node-pool files, simulator pools and
/// workloads), checked on the raw event stream before any tree is built (readers/formats/yaml_field.h).
struct YamlLimits {
  /// Largest file, bytes.
  size_t max_file_bytes = 64 * kMiB;
  /// Most documents (`---` separated) in one file or embedded config.
  size_t max_documents = 100'000;
  /// Deepest nesting of mappings and lists. Kubernetes objects nest about 12 deep (a pod template's
  /// affinity terms); JSON from the API server the same.
  size_t max_depth = 64;
  /// Most nodes (scalars, mappings, lists) in one file: the memory bound of the parsed tree.
  size_t max_nodes = 4'000'000;
  /// Longest scalar, bytes: a ConfigMap (all its data together) is at most 1 MiB in Kubernetes.
  size_t max_scalar_bytes = 1 * kMiB;
  // Aliases (`*name`) are not accepted at all: Kubernetes objects that users write do not need them,
  // and each alias can multiply the work of everything that walks the tree ("billion laughs").
};

/// Limits on the objects the readers build, across all the files of one command.
struct ObjectLimits {
  /// Most Nodes, counting those a node pool expands to (Kubernetes supports 5,000 per cluster; the
  /// rest is room for what-if pools).
  size_t max_nodes = 100'000;
  /// Most pods, counting the replicas of every controller (Deployment, Job, ...): Kubernetes'
  /// documented limit of 150,000 pods per cluster (kubernetes.io/docs/setup/best-practices/
  /// cluster-large). A pod costs about 1.6 KB through `place`, so 150,000 about 250 MB.
  size_t max_pods = 150'000;
  /// Most Kueue objects (ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, WorkloadPriorityClasses,
  /// Topologies together). Real clusters have tens to a few thousand (a LocalQueue per namespace).
  size_t max_kueue_objects = 100'000;
  /// Most jobs queued to Kueue (each at least one pod; their pods also count toward max_pods).
  size_t max_queued_workloads = 150'000;
  /// Most PodGroups (gangs of at least one pod each).
  size_t max_pod_groups = 150'000;
};

/// Limits of the request parsers of the live server (JSON bodies of scheduler-extender verbs).
struct JsonRequestLimits {
  /// Largest body, bytes. kube-scheduler sends the pod and, unless nodeCacheCapable, every candidate
  /// Node: 5,000 Nodes are about 25 MB of JSON.
  size_t max_body_bytes = 32 * kMiB;
  /// Deepest nesting of objects and arrays.
  size_t max_depth = 64;
  /// Most values (objects, arrays, strings, numbers, booleans, nulls) in one body.
  size_t max_values = 4'000'000;
  /// Longest string, bytes.
  size_t max_string_bytes = 1 * kMiB;
};

/// Limits of the API-server list/watch client (readers/kube_api/kube_watch.h, server/kube_watch.h): each watch line
/// and each list page is parsed with JsonRequestLimits' depth, value and string limits and these sizes.
struct KubeWatchLimits {
  /// Longest watch line, bytes: one event, i.e. one object and its envelope. etcd stores objects of
  /// at most 1.5 MiB (the API server's default --max-request-bytes is 3 MiB), so 4 MiB holds any.
  size_t max_event_bytes = 4 * kMiB;
  /// Largest list page, bytes: a page of 500 Pods (the list's limit) is typically 2-10 MB.
  size_t max_list_page_bytes = 256 * kMiB;
  /// Most pages of one list (continue tokens followed): 150,000 Pods are 300 pages of 500.
  size_t max_list_pages = 10'000;
};

/// Limits of the LLM request-trace readers (readers/traces/request_trace.h): the Azure LLM inference CSV and
/// Mooncake JSON Lines. The real traces are 0.3-3 MiB with 4,000-20,000 rows; a week of Azure 2024
/// traffic or BurstGPT's 3.8 million rows are still far below these.
struct RequestTraceLimits {
  /// Largest file, bytes. A row costs about 60 bytes once read, plus 4 bytes per hash id.
  size_t max_file_bytes = 1024 * kMiB;
  /// Longest line, bytes. Mooncake rows are under 3 KB (a 126,195-token prompt lists 247 hash ids).
  size_t max_line_bytes = 1 * kMiB;
  /// Most request rows (blank lines not counted).
  size_t max_rows = 20'000'000;
  /// Most prompt tokens of one request. The largest in the traces is 191,378 (Mooncake synthetic);
  /// models' context windows are at most a few million tokens.
  int64_t max_prompt_tokens = 10'000'000;
  /// Most output tokens of one request. The largest in the traces is 2,000.
  int64_t max_output_tokens = 10'000'000;
  /// Most hash_ids in one Mooncake row: one per 512-token block of the longest prompt allowed.
  size_t max_hash_ids_per_row = 20'000;
  /// Most hash_ids in one file (4 bytes each once read). The Mooncake conversation trace has 290,000.
  size_t max_hash_ids = 200'000'000;
  /// Latest arrival, seconds after the first (Azure) or after the trace start (Mooncake): 100 years.
  double max_arrival_s = 100.0 * 365 * 86400;
};

/// Limits of the measured step-time table (readers/serving/step_profile.h, `bench-serve --step-profile`). A CSV, so
/// CsvLimits' line and column limits apply too. A profile of every batch size up to 1,024 at 64 token
/// counts has 65,536 rows.
struct StepProfileLimits {
  /// Largest file, bytes.
  size_t max_file_bytes = 16 * kMiB;
  /// Most rows.
  size_t max_rows = 200'000;
  /// Largest num_seqs and tokens (vLLM's max_num_seqs and max_num_batched_tokens are far below).
  int64_t max_num_seqs = 1'048'576;
  int64_t max_tokens = 16'777'216;
  /// Longest step, seconds.
  double max_step_s = 3600;
};

/// Limits of a fault schedule (readers/sim/fault_schedule.h), per document. A week of rate faults is one
/// entry each; these bound hand-written or generated lists of timed events.
struct FaultScheduleLimits {
  size_t max_faults = 100'000;           ///< entries of faults (timed and rate faults)
  size_t max_capacity_outages = 10'000;  ///< entries of capacityOutages
  size_t max_limit_changes = 10'000;     ///< entries of limitChanges
  size_t max_driver_upgrades = 10'000;   ///< entries of driverUpgrades
};

/// The limits in force (the defaults above). One place, so that tests and the docs agree.
inline constexpr CsvLimits kCsvLimits{};
inline constexpr YamlLimits kYamlLimits{};
inline constexpr ObjectLimits kObjectLimits{};
inline constexpr JsonRequestLimits kJsonRequestLimits{};
/// The live server's POST /snapshot (a `kubectl get nodes,pods -o json` List): 10,000 Nodes and
/// 150,000 Pods are about 300 MB of JSON as kubectl prints it (indented); compact JSON about a third.
inline constexpr JsonRequestLimits kSnapshotRequestLimits{.max_body_bytes = 512 * kMiB, .max_depth = 64,
                                                          .max_values = 60'000'000, .max_string_bytes = 1 * kMiB};
inline constexpr KubeWatchLimits kKubeWatchLimits{};
inline constexpr RequestTraceLimits kRequestTraceLimits{};
inline constexpr StepProfileLimits kStepProfileLimits{};
inline constexpr FaultScheduleLimits kFaultScheduleLimits{};

/// The message of a limit error: "more than <limit> <what> (limit <name>, docs/input-limits.md)",
/// e.g. "more than 65536 bytes in a line (limit CsvLimits::max_line_bytes, docs/input-limits.md)".
std::string limit_message(uint64_t limit, std::string_view what, std::string_view name);

}  // namespace gpufleet::io
