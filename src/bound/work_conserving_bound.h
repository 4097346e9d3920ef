// An upper bound on the GPU allocation of a *work-conserving* policy: one that places every arriving
// pod whose GPU request fits somewhere, and never leaves such a pod out to keep room for later ones.
// Every scheduler that binds whatever fits (kube-scheduler, FGD, gpufleet) is one. The per-node LP of
// allocation_bound.h bounds every placement, including ones that refuse pods; this bound shows how
// much of that room a scheduler that does not refuse pods can ever reach.
//
// Setting: the `pack` protocol. Pods arrive in order and are placed at once or fail; nothing departs;
// a fractional pod (num_gpu == 1, gpu_milli < 1000) fits on any GPU with enough milli free; CPU and
// memory never refuse a pod whose GPUs fit (they only make the real result lower, except that a pod
// refused for CPU is not placed: on traces where CPU binds, such as openb cpu250 and cpu300, the
// value is not a bound).
//
// Let X be the first arrival after which no GPU is wholly free (it stays so: nothing departs; X = the
// end if a GPU stays free). Then
//  (a) every fractional pod without a gpu_spec that arrived before X was placed (a free GPU took it);
//  (b) every whole-GPU pod arriving from X on fails;
//  (c) fractional pods placed from X on go onto GPUs that already held fractional pods, so the GPUs
//      holding fractional pods at the end are the B GPUs that held them at X, and
//      allocated <= 1000 G - (1000 B - fractional milli placed).
// For X within an interval [i1, i2] of arrivals, the LP below relaxes (a)-(c): the pods before i1 are
// placed, those of [i1, prefix) and all pods with a gpu_spec may be placed or not, whole-GPU pods from
// i2 on fail, and B GPUs are filled with patterns of fractional sizes (the cutting-stock LP of
// gpu_packing_bound.h):
//   maximize  V
//   subject to sum_q a[q,s] x[q] - t[s] >= before[s]                 (fractional pods on B = sum x GPUs)
//              V - sum_s s t[s] <= arrived - whole_failing - sum_s s optional[s]   (V <= arrived - failed)
//              V + 1000 sum_q x[q] - sum_s s t[s] <= 1000 G + sum_s s before[s]   (V <= capacity - gaps)
//              sum_q x[q] <= G,   0 <= t[s] <= optional[s],   0 <= V <= arrived
// Its optimum is >= the allocation of every work-conserving run whose X lies in the interval. The
// intervals cover all arrivals and are refined best-first (a sub-interval's optimum is never higher),
// so the largest optimum over the final cover bounds every work-conserving run.
//
// On the openb default trace at 100% arrived (seed 42) this gives 96.35%, where bound_pct (the
// per-node and packing LPs) gives 97.00%: the 810-milli pods' gaps, and the GPUs left free for
// whole-GPU pods, cannot both be small.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/pod.h"

namespace gpufleet::bound {

/// Upper bound, in gpu_milli, on the GPU milli that any work-conserving policy has allocated once
/// pods[0..prefix) have arrived in that order on a cluster of `gpu_count` GPUs (setting above).
/// Pods with a gpu_spec, and pods asking for several GPUs of less than 1000 milli each, are treated
/// as optional (placed or not). Throws std::invalid_argument for a negative gpu_count. An interval
/// whose LP GLPK cannot solve (gpu_patterns.h solve_packing_lp) counts as all arrived milli, which is always valid.
double work_conserving_bound_milli(int64_t gpu_count, const std::vector<Pod>& pods, size_t prefix);

}  // namespace gpufleet::bound
