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
// where w_* are the parts' shares of the node price. Amount is the request (the simulator has no
// usage). What no pod is charged is idle cost: idle = total - sum of chargeback (it includes unused
// reservations).
//
// GPU sharing: the GPU term charges the slice a pod holds, gpus_held / gpus_per_node instead of
// gpu_milli_req / gpu_milli_node (pod_gpus_held):
//   - a fraction of a plain GPU (openb gpu_milli): gpu_milli / 1000 of a GPU;
//   - a time-sliced or MPS replica (nvidia.com/gpu on a pool with timeSlicing or mps replicas R):
//     1 / R of a GPU (an MPS client is also limited to 1 / R of its memory and SMs).
//     This is OpenCost's rule: opencost/opencost pkg/costmodel/costmodel.go getGPUCount counts a
//     time-sliced node's GPUs (label nvidia.com/gpu.count) apart from its vGPUs (the advertised
//     nvidia.com/gpu, GPUs x R), and a request is priced per vGPU (github.com/opencost/opencost
//     pull requests 2447, "gpu slicing", and 2862, the nvidia.com/gpu.replicas label);
//   - a MIG device of profile <g>g.<mem>gb: g / 7 of a GPU, its compute slices over the 7 of a full
//     GPU (3g.40gb: 3/7). OpenCost has no MIG rule; this one is gpufleet's. It counts compute slices,
//     not memory slices (the NVIDIA MIG User Guide, "Supported MIG Profiles", gives both: 3g.40gb
//     has 3 of 7 compute and 4 of 8 memory slices). A layout's compute slices may sum to less than 7
//     (2x 3g.40gb: 6/7); the rest of the GPU is idle cost.
// ClusterState's allocation metrics count the same devices as floor(1000 / R) and
// floor(1000 x g / 7) gpu_milli (model/cluster_state.h); chargeback uses the exact fractions.
#pragma once

#include <cmath>
#include <cstdint>

#include "model/node_pool.h"
#include "model/pod.h"
#include "inputs/sim/cluster_config.h"

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

/// GPUs a pod with this request holds on a node of the pool (see GPU sharing above): the sum of
///  - nvidia.com/gpu: num_gpu / R on a time-sliced or MPS pool (time_slicing_replicas R, no MIG), else
///    num_gpu x gpu_milli / 1000;
///  - nvidia.com/gpu.shared: shared_replicas / R (0 on a pool that is not time-sliced);
///  - nvidia.com/mig-<profile>: count x compute_slices / 7, the slices of the profile on the pool's
///    GPU model (0 for a profile the model lacks: such a pod never runs there);
///  - a memory-share pod (Pod::gpu_memory_share): cards x its memory per card / the card's memory,
///    the card's memory being the model's on a HAMi pool (NodePool::hami_split_count: devmem), else
///    kai_gpu_memory_mib of it (L40S: 2000 MiB of 46000 is 1/23 of a GPU); chargeback by memory share.
double pod_gpus_held(const NodePool& pool, const Pod& pod);

/// Share of the node's price charged to a pod with this request on a node of the pool, in [0, 1]
/// for a request that fits the node. Its GPU term is pod_gpus_held / gpus_per_node, plus
/// dra_gpu_milli / (1000 x gpus_per_node): the DRA devices of the pod's own claims by their share of a
/// GPU (model/dra_gpu_share.h: a whole GPU 1000, a MIG device its memory counter over the GPU's), the
/// pool's `gpu` count being the GPUs its DRA driver publishes (docs/dra.md "simulate").
double pod_price_share(const NodePool& pool, const PriceSplit& split, const Pod& pod, int64_t dra_gpu_milli = 0);

/// USD per node-hour of a node of the pool: reserved price when covered by the reservation, else the
/// spot price (spot pool) or the on-demand price.
double node_price_usd_per_hour(const SimPool& pool, bool reserved_covered);

/// Capacity type a node is billed as: "reserved" when covered, else "spot" or "on-demand".
const char* billed_capacity_type(const SimPool& pool, bool reserved_covered);

}  // namespace gpufleet::sim
