// Prices and OpenCost-style attribution for the simulator. No I/O.
//
// Node prices (USD per node-hour, from the node-pool file): a node covered by its pool's
// reservation costs the reserved price; any other node costs the pool's capacity type price (spot
// or on-demand). A node is billed from its request (launch; the cloud bills boot time) until it is
// removed or the horizon ends. A reservation covers up to reserved_nodes running nodes of its pool,
// whichever they are (AWS applies reserved instances and savings plans to any matching running
// instance): a launched node is covered if a slot is free, and when a covered node goes, the
// lowest live uncovered node of the pool takes the slot (its billing switches to the reserved
// price). A pool's reservation is paid for every hour of the horizon:
//   total cost = sum over billing segments of duration_h x price + unused reservation
//   unused reservation = (reserved_nodes x horizon_h - covered node-hours) x reserved price.
//
// Chargeback follows the OpenCost allocation model (opencost.io/docs/specification):
// allocation cost = amount x hours x rate. A whole-node price is split into CPU, memory and GPU
// parts in proportion to OpenCost's default custom-pricing rates (opencost configs/default.json:
// CPU 0.031611 USD per vCPU-hour, RAM 0.004237 USD per GiB-hour, GPU 0.95 USD per GPU-hour),
// "rescaled so CPU+RAM+GPU sum to the node price with ratios preserved". A pod is charged, per hour,
//   price x (cpu_req/cpu_node x w_cpu + mem_req/mem_node x w_mem + gpu_milli_req/gpu_milli_node x w_gpu)
// where w_* are the parts' shares of the node price. A GPU share (time-sliced, fractional) is thus
// charged as its share of the GPU. Amount is the request (the simulator has no usage). What no pod
// is charged is idle cost: idle = total - sum of chargeback (it includes unused reservations).
#pragma once

#include <cmath>
#include <cstdint>

#include "model/node_pool.h"
#include "model/pod.h"
#include "sim/config.h"

namespace gpufleet::sim {

/// OpenCost default.json rates used to split a node price (see above).
inline constexpr double kOpenCostCpuUsdPerVcpuHour = 0.031611;
inline constexpr double kOpenCostRamUsdPerGibHour = 0.004237;
inline constexpr double kOpenCostGpuUsdPerGpuHour = 0.95;

/// Shares of a node's price per resource; they sum to 1 (all 0 for a node with no resources).
struct PriceSplit {
  double cpu = 0;
  double memory = 0;
  double gpu = 0;
};

/// Money amounts smaller than this in magnitude (USD, or USD per hour) are the rounding residue of
/// long chains of += and -= over the run, not money: no price or bill is a nanodollar.
inline constexpr double kUsdResidue = 1e-9;

/// `usd`, or 0 when |usd| < kUsdResidue. The simulator stores its running price, idle cost and unused
/// reservation cost through it, so that a residue (e.g. -8e-17 once every node's price has been added
/// and taken away again) neither drifts on nor prints as "-0.00"; -0.0 becomes 0.0 too.
inline double zero_if_residue(double usd) { return std::abs(usd) < kUsdResidue ? 0.0 : usd; }

/// The split of a pool's node price by OpenCost's default rates.
PriceSplit price_split(const NodePool& pool);

/// Share of the node's price charged to a pod with this request on a node of the pool, in [0, 1]
/// for a request that fits the node.
double pod_price_share(const NodePool& pool, const PriceSplit& split, const Pod& pod);

/// USD per node-hour of a node of the pool: reserved price when covered by the reservation, else the
/// spot price (spot pool) or the on-demand price.
double node_price_usd_per_hour(const SimPool& pool, bool reserved_covered);

/// Capacity type a node is billed as: "reserved" when covered, else "spot" or "on-demand".
const char* billed_capacity_type(const SimPool& pool, bool reserved_covered);

}  // namespace gpufleet::sim
