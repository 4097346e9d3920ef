// A fault schedule (inputs/sim/faults.h) held against the pools of a cluster config: which node a
// fault names, what is wrong with a fault, how many events a rate fault may draw. Used by the fault
// schedule's reader (with a position) and by the simulation (as a backstop). No I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/node_pool.h"
#include "inputs/sim/cluster_config.h"
#include "inputs/sim/faults.h"

namespace gpufleet::sim {

/// The pool and index of the simulated node named `name` (<pool>-<index> as Fleet names it, the
/// index zero-padded for max_nodes), nullopt when no pool has such a node.
std::optional<std::pair<size_t, int32_t>> find_pool_node(const std::vector<SimPool>& pools, const std::string& name);

/// What is wrong with `fault` for these pools, nullopt when nothing: the target names no node, pool
/// or zone of them (or more than one of the three), an XID outside model/xid.h's catalog or a GPU
/// index outside the node's GPUs, an XID or plugin failure on a pool without GPUs, a spot
/// interruption on a pool that is not spot, a time or rate that is negative or not finite, a rate
/// window that ends before it starts. The message names the field at fault first ("xid.code: ...")
/// and lists what exists (pools, zones, known XIDs). The reader reports it with a position; the
/// simulation calls it as a backstop.
std::optional<std::string> fault_error(const Fault& fault, const std::vector<SimPool>& pools);

/// The most rate-fault events a run may expect (sum over rate faults of rate x the target's nodes up to
/// their pools' max x the window in hours, the window ending at the horizon at the latest): every
/// event is an entry of the event queue, a fault carried out and often an alert, so 60 per node-hour
/// over a 3-year horizon would fill memory (1.7 million events per node). The simulation refuses more
/// (std::invalid_argument naming the fault) before any work.
inline constexpr double kMaxExpectedRateFaults = 1'000'000;

/// The number of events rate fault `f` is expected to draw over [0, horizon_s] on `pools` (0 for a
/// timed fault): rate_per_node_hour x the nodes it can hit (pools' max_nodes) x its window in hours.
double expected_rate_faults(const Fault& f, const std::vector<SimPool>& pools, double horizon_s);

}  // namespace gpufleet::sim
