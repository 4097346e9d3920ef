// Checkpoint arithmetic of a job's run, and the optimum checkpoint interval. Plain functions, no
// state: sim/engine/units.cpp uses them for every run, the report for its advice.
//
// The model (docs/checkpoints-and-upgrades.md). A run alternates `interval_s` seconds of work and
// `cost_s` seconds writing a checkpoint (no progress while writing; the GPUs stay held), starting
// with work: cycles of interval_s + cost_s. A checkpoint counts once it is written; one being written
// when the run stops is lost. No checkpoint is written when the work is done (the job ends). With
// interval_s == 0 the job never checkpoints; with cost_s == 0 the results are exactly those of the
// cost-free model (floor(r / interval) x interval kept, r done).
//
// All times are in seconds of the run at slowdown 1 (inputs/sim/workload.h TopologySettings: the caller
// divides wall time by the run's slowdown and multiplies the results back).
#pragma once

namespace gpufleet::sim {

/// Work done after `ran_s` seconds of running (the time spent writing checkpoints excluded).
double checkpoint_work_done_s(double interval_s, double cost_s, double ran_s);
/// Work kept by the checkpoints written within `ran_s` seconds of running: floor(ran / (interval +
/// cost)) x interval; 0 without checkpoints.
double checkpoint_work_kept_s(double interval_s, double cost_s, double ran_s);
/// Seconds spent writing checkpoints within `ran_s` seconds of running (a write in progress counts
/// up to ran_s).
double checkpoint_time_s(double interval_s, double cost_s, double ran_s);
/// Checkpoints written before `work_s` seconds of work are done: ceil(work / interval) - 1 (none at
/// the very end; a relative tolerance of 1e-9 keeps a whole number of intervals whole); 0 without
/// checkpoints or work.
double checkpoints_before_s(double interval_s, double work_s);
/// Running time to do `work_s` seconds of work: work + cost x checkpoints_before_s(interval, work).
double checkpoint_run_time_s(double interval_s, double cost_s, double work_s);

/// Young's optimum checkpoint interval sqrt(2 x cost x mtbi), seconds of work between checkpoints,
/// for a checkpoint cost `cost_s` and a mean time between interruptions `mtbi_s` (both > 0, else 0).
/// J. W. Young, "A first order approximation to the optimum checkpoint interval", Communications of
/// the ACM 17(9):530-531, 1974.
double young_interval_s(double cost_s, double mtbi_s);
/// Daly's higher-order estimate: sqrt(2CM) x (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C for C < 2M,
/// M otherwise (C = cost_s, M = mtbi_s, both > 0, else 0). J. T. Daly, "A higher order estimate of
/// the optimum checkpoint interval for restart dumps", Future Generation Computer Systems 22(3):
/// 303-312, 2006, eq. (37). Daly's model (Poisson interruptions, also while writing; the work since
/// the last written checkpoint lost; a restart time that does not move the optimum) is the model
/// above, so this is the interval `simulate` recommends.
double daly_interval_s(double cost_s, double mtbi_s);

}  // namespace gpufleet::sim
