// One vLLM engine replica in time (vLLM V1's EngineCore step loop, vllm/v1/engine/core.py): a
// Scheduler plans each step (scheduler.h: the scheduling rules and where they differ from vLLM), a
// KvCacheManager holds the KV blocks (kv_cache_manager.h: blocks, prefix caching), a StepTimeModel
// says how long each step takes (once per step); this class runs the steps in time and reports.
//
// Time: a step starts when the previous one ends or, when the engine was idle, when a request
// arrives; requests added during a step join the next one. A step due to start at t is started only
// once time moves past t (run_until(t' > t)) or start_due_step() is called, so every request added
// at t joins it. The queries (next_step_end_s, the gauges) change nothing.
//
// Front end (StepTimeModel::frontend, FrontendCosts; all 0 = none): vLLM's OpenAI API server, one
// asyncio process per replica (vllm/entrypoints/openai/api_server.py; its output handler in
// vllm/v1/engine/async_llm.py detokenises and streams every output), as one FIFO server. A request
// added at t reaches the scheduler when its arrival work (request_s, + chat_request_s for a chat
// request) is done, after all work queued before it; a step's outputs are work too (output_token_s
// x the step's requests), queued at the step's end, and the client sees the step's tokens (first
// tokens, finishes) when it is done, latency_s later (RequestOutcome::first_token_frontend_s,
// frontend_s). The engine never waits for the front end. A request still in the front end counts
// as waiting (num_requests_waiting, outstanding: the queue a router sees); it may be aborted or
// evicted there.
//
// Requests: a request whose prompt + output exceeds max_model_len, or that could not fit in the whole
// KV cache, is refused at add_request (kDropped; vLLM refuses to start when max_model_len does not
// fit the cache, and rejects longer prompts). Outcomes reported here carry this engine's id in
// `replica` (finished, timed out, dropped).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "inference/request.h"
#include "inference/scheduler.h"
#include "inference/step_time.h"

namespace gpufleet::inference {

/// How the engine computes, not what: no option changes a result.
struct EngineOptions {
  /// Plan and apply pure-decode steps in O(1) (Scheduler, "Speed"); false: every step through the
  /// general path (the test that both agree).
  bool decode_fast_path = true;
};

/// One step, as it ran (for metrics and tests).
struct StepRecord {
  double start_s = 0, end_s = 0;
  StepBatch batch;
  int32_t num_running = 0;           ///< requests in the running set after scheduling
  int32_t num_waiting = 0;           ///< requests left waiting
  int64_t blocks_used = 0;           ///< KV blocks held by requests after scheduling
  int32_t preempted = 0;             ///< requests preempted while scheduling this step
};

class ReplicaEngine {
 public:
  /// Callbacks, any may be empty: a request finished or was aborted (outcome.replica = replica id
  /// given here), and every step.
  struct Observer {
    std::function<void(const RequestOutcome&)> on_outcome;
    std::function<void(const StepRecord&)> on_step;
  };

  /// `step_time` must outlive the engine. Throws std::invalid_argument for non-positive limits.
  ReplicaEngine(int32_t replica_id, const StepTimeModel& step_time, const EngineLimits& limits, Observer observer,
                EngineOptions options = {});

  /// Queues a request at t (>= the time of the last call; the engine first runs to t). A request
  /// that can never run (see the top of this file) is reported kDropped at once.
  void add_request(const Request& request, double t);
  /// Runs every step that ends at or before t, starting the next step at each end while there is work
  /// (a step due at t itself waits: see Time at the top of this file). Seconds.
  void run_until(double t);
  /// Starts the step that is due (the engine is idle and has work) at its due time: every request of
  /// that instant has been added. Nothing otherwise.
  void start_due_step();
  /// End of the step in progress; +infinity when none is (idle, or a step due and not started).
  double next_step_end_s() const;
  /// The earliest t at which run_until(t) may do anything: the end of the step in progress, else
  /// when the due step may start (it starts for t past this), +infinity when idle without work.
  /// A caller may skip run_until(t) for t below this (nothing would change).
  double next_wake_s() const;
  /// Aborts a request (client timeout) at t: reported with `status`, blocks freed. False if unknown.
  bool abort(uint64_t request_id, RequestStatus status, double t);
  /// Takes every unfinished request out at t (the replica is going away), in arrival order; their
  /// progress is lost. The engine is empty afterwards.
  std::vector<Request> evict_all(double t);

  // Gauges, as vLLM exports them (vllm/v1/metrics/loggers.py), at the last time given.
  int32_t num_requests_running() const;
  int32_t num_requests_waiting() const;
  double kv_cache_usage() const;      ///< blocks held / num_blocks, 0..1 (vllm:kv_cache_usage_perc)
  int32_t outstanding() const;        ///< running + waiting (the router's load)
  /// Seconds spent in steps since construction (busy time; DCGM_FI_DEV_GPU_UTIL integrates it).
  double busy_seconds(double t) const;
  int64_t prefix_cache_queries() const;  ///< prompt tokens looked up (vllm:prefix_cache_queries)
  int64_t prefix_cache_hits() const;     ///< of which found cached

  int32_t id() const { return replica_id_; }

 private:
  struct Impl;
  int32_t replica_id_;
  std::unique_ptr<Impl> impl_;
 public:
  ~ReplicaEngine();
  ReplicaEngine(ReplicaEngine&&) noexcept;
  ReplicaEngine& operator=(ReplicaEngine&&) noexcept;
};

}  // namespace gpufleet::inference
