// A deployment of replicas behind a router: what one inference service is at any moment. Replicas
// join when they are ready (their pod bound and cold start done) and leave when their pod stops;
// the router sends each request to a ready replica. Used by `gpufleet bench-serve` (a fixed set of
// replicas) and by `simulate`'s inference services (replicas that come and go).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "inference/endpoint_picker.h"
#include "inference/replica_engine.h"
#include "inference/request.h"
#include "inference/step_time.h"

namespace gpufleet::inference {

enum class RoutingPolicy {
  kLeastOutstanding,  ///< fewest running + waiting requests; ties: lowest replica id (default)
  kRoundRobin,        ///< ready replicas in turn
  /// The replica that served the longest chain of the request's leading prefix hashes (ties: least
  /// outstanding, then lowest id), when that chain covers more than prefix_affinity_min_match of
  /// the request's hashes and the replicas are not out of balance; else least outstanding. The
  /// thresholds are those of SGLang's model gateway cache-aware policy (docs: lightseekorg/smg
  /// docs/getting-started/load-balancing.md: --cache-threshold 0.3, --balance-abs-threshold 64,
  /// --balance-rel-threshold 1.5); its "smallest tree" fallback is least outstanding here.
  /// The router remembers, per prefix hash, the replicas it sent a request carrying it to; it does
  /// not see the replicas' evictions.
  kPrefixAffinity,
  /// The Gateway API Inference Extension's endpoint picker (inference/endpoint_picker.h) run with
  /// RouterConfig::endpoint_picker (null: the EPP's default configuration): filters, weighted
  /// scorers and picker over the ready replicas with room, reading their vllm:num_requests_waiting
  /// and vllm:kv_cache_usage_perc and its own approximate prefix index.
  kEndpointPicker,
};
/// "least-outstanding", "round-robin", "prefix-affinity", "endpoint-picker" (the names the workload
/// file and `bench-serve --routing` use).
const char* routing_policy_name(RoutingPolicy p);

struct RouterConfig {
  RoutingPolicy policy = RoutingPolicy::kLeastOutstanding;
  /// Most requests in flight per replica (running + waiting); more wait at the router, FIFO, until a
  /// replica has room (a gateway's flow control). 0 = no limit: requests wait only when no replica is
  /// ready (KEDA HTTP add-on's interceptor and Knative's activator hold them likewise).
  int32_t max_outstanding_per_replica = 0;
  /// Seconds from arrival after which an unfinished request times out (the client gives up, the
  /// engine aborts it). 0 = never.
  double request_timeout_s = 0;
  /// kPrefixAffinity: the matched fraction of the request's prefix hashes above which it follows
  /// the match.
  double prefix_affinity_min_match = 0.3;
  /// kPrefixAffinity: out of balance when the most and least loaded ready replicas with room differ
  /// by more than prefix_affinity_balance_abs requests and by a factor above prefix_affinity_balance_rel.
  int32_t prefix_affinity_balance_abs = 64;
  double prefix_affinity_balance_rel = 1.5;
  /// kEndpointPicker: the resolved EndpointPickerConfig (null = default_endpoint_picker_config());
  /// each Deployment runs its own picker (prefix index, generator seeded with endpoint_picker_seed).
  std::shared_ptr<const ResolvedEndpointPicker> endpoint_picker;
  int64_t endpoint_picker_seed = 0;
  /// kEndpointPicker: the InferenceObjective priority of the requests (unset = 0). < 0 (sheddable):
  /// a request that arrives while the pool is saturated ends at once as kDropped (the EPP's 429).
  int32_t objective_priority = 0;
};

class Deployment {
 public:
  struct Observer {
    std::function<void(const RequestOutcome&)> on_outcome;          ///< every request, once
    std::function<void(int32_t replica, const StepRecord&)> on_step;
  };

  Deployment(RouterConfig router, Observer observer);
  ~Deployment();

  /// A replica becomes ready at t and takes requests (from the router queue first). `step_time`
  /// must outlive the deployment. `gpu_share_group` >= 0 puts replicas that time-slice one GPU in one
  /// group: while n > 1 replicas of the group have work, a step of one takes step_seconds x (1 +
  /// switch fraction) x n (n counted when the step starts; alone, step_seconds). Returns its id (0,
  /// 1, ... in order of addition, never reused).
  int32_t add_replica(double t, const StepTimeModel& step_time, const EngineLimits& limits,
                      int32_t gpu_share_group = -1, double time_slice_switch_fraction = 0);
  /// The replica leaves at t; its unfinished requests go back to the router (front of its queue, in
  /// arrival order) and start over elsewhere (their TTFT then runs to the first token of the replica
  /// that finishes them; tokens streamed before are lost). Throws std::invalid_argument if
  /// `replica` is not ready.
  void remove_replica(int32_t replica, double t);
  /// The replica's pod is terminating at t (vLLM's `--shutdown-timeout`, vllm-project/vllm#34730):
  /// it leaves the router at once (no new request), finishes the requests it has until it is empty
  /// or until t + timeout_s, when the ones left go back to the router as remove_replica does.
  /// timeout_s <= 0 (vLLM's default 0: in-flight requests are aborted) is remove_replica. Throws
  /// std::invalid_argument for a replica that is not ready.
  void drain_replica(int32_t replica, double t, double timeout_s);
  /// A request arrives at t (= request.arrival_s).
  void submit(const Request& request, double t);
  /// Runs replicas, router dispatch and timeouts up to t (non-decreasing). A replica that frees room
  /// takes the router queue's head at that instant; a timeout ends a request at arrival +
  /// request_timeout_s exactly (replica = the replica it was on, -1 at the router).
  void advance_to(double t);
  /// Starts the steps due now on the replicas that are idle with work: every request of this instant
  /// has been submitted (else they start when time moves on). Call it before next_event_s.
  void start_due_steps();
  /// The time of the next event inside the deployment after the last time given: the earliest end
  /// of a replica's step in progress (a step due now and not started does not count:
  /// start_due_steps), the time an idle replica's front end hands it a request (replica_engine.h), a draining replica's deadline or the next request timeout; +infinity when
  /// nothing is pending. advance_to(next_event_s()) then reports that event's outcomes at that time
  /// exactly, which lets a closed-loop client (a concurrency limit) react at each finish. Changes
  /// nothing. (Added beside the interface for `bench-serve`.)
  double next_event_s() const;
  /// Ends every request still in flight, at the router or on a replica, as kTimedOut at t (the run is
  /// over; they count as unfinished), in arrival order.
  void finish(double t);

  // Gauges at the last time given.
  int32_t ready_replicas() const;
  int64_t router_queue_length() const;     ///< requests held at the router
  int64_t num_requests_waiting() const;    ///< sum over replicas (vllm:num_requests_waiting)
  int64_t num_requests_running() const;
  double kv_cache_usage_mean() const;      ///< mean over ready replicas (0 with none)
  /// Busy seconds of all replicas that ever existed, up to t (for DCGM utilisation: the difference
  /// over an interval / (interval x replicas)).
  double busy_seconds(double t) const;
  /// Per ready replica: (replica id, outstanding requests, kv usage, busy seconds up to t).
  struct ReplicaGauge { int32_t replica; int32_t running; int32_t waiting; double kv_cache_usage; double busy_s; };
  std::vector<ReplicaGauge> replica_gauges(double t) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpufleet::inference
