// The inference services of a simulation (inputs/sim/inference_service.h): for each, a deployment of vLLM
// replicas behind a router (inference/deployment.h), fed by the service's request stream, whose
// replicas follow the service's pods, plus its replica autoscaler and the Prometheus scrapes it reads.
//
// A replica's life: its pod is created (the replica count rises, or it is requeued after an
// eviction), waits for a node (the pool autoscaler provisions one when none has room), is bound,
// then cold-starts (inference/cold_start.h: the image pull, once per node; the weight load; the
// engine start) and serves from then until its pod is unbound (scale-down, spot notice, a move by
// consolidation or scale-down: a move is a new cold start). It then leaves the router; with vLLM's
// --shutdown-timeout (EngineArgs::shutdown_timeout_s) it finishes its in-flight requests for up to
// that long, else (vLLM's default 0) at once; what is unfinished goes back to the router and starts
// over on another replica. The pod's GPU is released at the unbind; a drain overlapping a new pod on
// that GPU is not modelled (a new replica's cold start outlasts a drain of tens of seconds).
//
// Hardware: the replica's GPU is its node's pool's model; a MIG device gives it compute slices / 7
// of the compute and memory slices / 8 of the bandwidth and memory; a time-sliced GPU with R
// replicas gives it memory / R and shares the GPU's steps with the replicas on the same GPU. A pool
// on which the engine cannot start (the model does not fit: KvCacheBudget::error) leaves its
// replicas bound but never ready (as a pod in CrashLoopBackOff); the simulation refuses to start
// when no pool the service may use can hold it.
//
// Metrics (scraped every scrape_interval_s from 0, as Prometheus does): per ready replica the vLLM
// gauges; per bound replica DCGM_FI_DEV_GPU_UTIL = busy time of its engine in the last interval /
// interval x 100 (DCGM reports the fraction of time a kernel ran, so a nearly idle batch reads high;
// a replica still starting reads 0); the router's held requests and the arrival rate over the
// interval. The autoscaler reads the last scrape at its own evaluation times and sets the replica
// count (ServiceScaler::scale).
//
// Time: one clock, the loop's. A clock observer (on_clock) runs every service's deployment up to t
// when the clock moves to t, before the events at t; the handlers then act at t and move no time.
// A replica step due at t starts only once time moves past t (inference/replica_engine.h), so the
// requests and replicas of every event at t take part in it, as when each handler ran its own
// deployment up to its event's time.
//
// Disaggregated prefill/decode (InferenceServiceSpec::disaggregation): the service's requests go to
// an inference::DisaggregatedDeployment, whose prefill and decode pools take the replicas of the
// role items (<service>-prefill, -decode): each role's pods are placed, cold-started, drained and
// billed as above on the node pools its item may use (its GPU), and each role has its own scrapes
// (the metrics of its pods; the router queue of its pool; the service's arrival rate) and its own
// autoscaler, whose answer is clamped to the role's [minReplicas, maxReplicas]. The service's
// figures (latency, cost, replicas over time) cover both roles; SimResult adds each role's.
//
// Events registered: "request" (a request arrives; not traced), "replica-ready", "scrape" and
// "replica-autoscale" (not traced), "serving-sample" (a time-series row; not traced).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "inference/catalog.h"
#include "inputs/sim/cluster_config.h"
#include "sim/controllers/controller.h"
#include "sim/engine/billing.h"
#include "inputs/sim/workload.h"

namespace gpufleet::sim {

class InferenceServices final : public Controller, public ReplicaListener {
 public:
  /// Checks every service (validate_inference_service, a model the catalog has, some pool it may use
  /// that can hold it) and throws std::invalid_argument naming the problem otherwise. Registers its
  /// events on `loop` and listens to `workloads`' replicas. The arguments must outlive it.
  InferenceServices(const Workload& workload, const ClusterConfig& cluster, const inference::ServingCatalog& catalog,
                    uint64_t seed, double sample_interval_s, const SimulationModules& modules);
  ~InferenceServices() override;

  /// The first request, scrape, autoscaler evaluation and sample of each service, and the end.
  void start() override;
  /// SimResult::inference, one entry per service (costs from the billing, which has closed its books).
  void report(SimResult& result) const override;

  void on_replica_bound(uint32_t item, uint32_t unit, uint32_t pod, NodeId n, double t) override;
  void on_replica_unbound(uint32_t item, uint32_t unit, uint32_t pod, double t) override;

 private:
  struct Service;
  struct Pool;
  struct Replica;
  void on_clock(double t);
  void on_request(uint32_t s, double t);
  void on_ready(uint32_t r, uint32_t generation, double t);
  void on_scrape(uint32_t pool_ref, double t);
  void on_autoscale(uint32_t pool_ref, double t);
  void on_sample(double t);
  void on_end(double t);
  void record_sample(Service& s, double t);

  const Workload& workload_;
  const ClusterConfig& cluster_;
  const inference::ServingCatalog& catalog_;
  double sample_interval_s_;
  EventLoop& loop_;
  Units& units_;
  const Fleet& fleet_;
  const Billing& billing_;
  EventKind request_ = 0, ready_ = 0, scrape_ = 0, autoscale_ = 0, sample_ = 0, end_ = 0;
  std::vector<std::unique_ptr<Service>> services_;
  std::vector<int32_t> service_of_item_;           // item -> service index, -1 for other items
  std::vector<uint32_t> pool_of_item_;             // item -> index in its service's pools
  std::vector<std::pair<uint32_t, uint32_t>> pool_refs_;  // (service, pool) of each pool: scrape and autoscale subjects
  std::vector<Replica> replicas_;                  // every replica pod ever seen
  std::unordered_map<uint32_t, uint32_t> replica_of_unit_;
  std::unordered_map<uint64_t, double> image_ready_s_;     // (node, incarnation) -> image pulled at
  std::unordered_map<uint64_t, int32_t> share_groups_;     // (node, incarnation, GPU) -> time-slice group
  bool ended_ = false;
};

}  // namespace gpufleet::sim
