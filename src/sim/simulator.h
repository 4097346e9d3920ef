// `gpufleet simulate`'s engine: a discrete-event simulation of a workload on autoscaled node pools
// with on-demand, spot and reserved capacity, and its cost. No I/O.
//
// The parts that implement it (event loop, fleet, billing, pending queue, placement, workloads,
// metrics, and the controllers) and how they are wired: sim/simulation.h.
//
// Clock and events. Time is in seconds from 0 to the workload's horizon. Events (sim/engine/
// event_loop.h; each module registers its own kinds) run in (time, insertion sequence) order:
// arrivals, completions, node ready, spot notice and reclaim, autoscaler ticks, consolidation ticks,
// and retries of the pending pods. Checkpoints are not events: a job's
// last checkpoint is computed when it is interrupted (nothing else reacts to one), which keeps the
// queue small; a checkpoint cost (WorkloadSpec::checkpoint_cost_s) lengthens the run by the writes
// before its end (sim/rules/checkpointing.h). Same input and seed, same result, bit for bit.
//
// Scheduling. One sched::Scheduler with the policy's profile from sched::make_policy (sim/engine/placement.h).
// The fleet (sim/engine/fleet.h) keeps each node's lifecycle (absent -> provisioning -> ready ->
// [cordoned] -> absent); a node is in ClusterState from Ready to its removal, so only ready nodes
// take pods (a cordoned one is unschedulable). Node ids are slots, pools in file order, nodes by
// index, and rank ties: score ties go to the first.
// Pending units (a job's gang, or one service replica) are tried in queue order: higher priority
// first, then longer pending, then submission order. A retry pass runs at the time of any change
// that may free capacity (arrival, node ready, completion, eviction); in a pass, a shape that failed
// is not tried again (allocations in a pass only take capacity). A job's pods are placed one after
// another and rolled back if one does not fit.
//
// Autoscaler (every scan interval; sim/rules/cluster_autoscaler.h for the rules): scale-up considers the units
// pending for at least scale_up_delay_s; pods that fit the free room of ready nodes (a gang's pods
// wait for each other) or a node already being provisioned are not counted again; for each pool with room below max_nodes whose template node admits the pods, the
// binpacking estimate gives the nodes needed; the expander picks one pool, whose nodes are requested
// and become ready provision_s later. Scale-down: a ready node whose utilization stays below the
// threshold for scale_down_unneeded_s is removed if its pool stays at or above min_nodes and its
// pods fit elsewhere (empty nodes, any number per tick; at most one non-empty node per tick, whose
// service pods are moved, if their disruption budgets allow; job pods block removal, as
// `safe-to-evict: "false"`). No scale-down within scale_down_delay_after_add_s of a scale-up.
//
// Consolidation (Karpenter's WhenUnderutilized, ConsolidationSettings; off by default), every
// interval_s from 0, after a retry of the pending pods if one is due (pods waiting for room get it
// before nodes are taken away). Candidates: ready nodes of pools that no pending pod could use (its
// template node admits none of them) and that stay at or above min_nodes, with
// utilization strictly below the threshold, untouched by pod changes for consolidate_after_s, and whose
// removal lowers the bill (a node held by the reservation with no other live node to take the
// reservation over saves nothing). Empty candidates are removed, any number per tick (Karpenter's
// emptiness). Then the others, cheapest to disrupt first: Karpenter's disruption cost (the sum over
// the pods that must restart of clamp(1 + priority / 2^25, -10, 10)), then the GPU-seconds of job
// work the restart would lose, then node order. The first whose pods all fit on the other ready nodes
// (a dry run with the scheduler, gangs whole) and whose moves keep every item's disruption budget is
// emptied and removed; one such node per tick (Karpenter's single-node consolidation). A service
// replica restarts on its new node and loses nothing; a job restarts all its pods (also those on other
// nodes) from its last checkpoint, losing the work since it (lost_gpu_hours). Moved pods do not add
// pending samples: they never wait. The nodes of Karpenter NodePools are consolidated whenever the
// cluster has NodePools, by their spec.disruption (consolidateAfter, WhenEmpty, budgets;
// sim/controllers/consolidation.h). Nodes holding a do_not_disrupt pod are never scaled down or
// consolidated.
//
// Spot (pools with capacity type spot): each node's time to interruption from Ready is exponential
// with the pool's rate per node-hour, drawn from the simulator's spot generator. At the notice the
// node is cordoned and its pods are evicted (Karpenter drains on the warning); a job stops on every
// node, keeps the work up to its last checkpoint (all of it with checkpoint_on_notice when the write
// fits in the notice window) and is queued again; a service replica is queued
// again. The node is reclaimed (removed, billing stops) spot_notice_s later.
//
// Pod outcomes at the horizon: completed (its job finished), running, pending (waiting for capacity
// that its pools can provide), failed (no pool's node could ever admit it: the reason says why, as
// Cluster Autoscaler's "pod didn't trigger scale-up"), removed (a service replica taken away when a
// controller lowered the replica count: sim/engine/units.h ServiceScaler).
//
// Cost and chargeback: sim/rules/cost.h.
#pragma once

#include "inputs/sim/cluster_config.h"
#include "inputs/sim/sim_options.h"
#include "inputs/sim/workload.h"
#include "sim/results/sim_result.h"

namespace gpufleet::sim {

/// Runs the simulation. Throws UsageError for an unknown policy, std::invalid_argument for an
/// invalid pool, settings or workload item (validate_pool, validate_pool_settings,
/// validate_autoscaler_settings, validate_consolidation_settings, validate_spec), duplicate item
/// names, or a non-positive horizon.
SimResult simulate(const ClusterConfig& cluster, const Workload& workload, const SimOptions& options);

}  // namespace gpufleet::sim
