// A seeded synthetic job stream: diurnal arrivals and heavy-tailed durations. No I/O.
//
// Arrivals are a non-homogeneous Poisson process with rate, in jobs per hour,
//   rate(t) = jobs_per_hour x (1 + amplitude x cos(2 pi (t / 86400 - peak_hour / 24)))
// (highest at peak_hour every day, mean jobs_per_hour), drawn by thinning (Lewis and Shedler 1979):
// candidates at rate jobs_per_hour x (1 + amplitude), each kept with probability rate(t) / that.
// Durations follow a bounded Pareto law on [min_s, max_s] with shape alpha, drawn by inversion:
//   x = min_s / (1 - U (1 - (min_s / max_s)^alpha))^(1 / alpha),  U uniform in [0, 1)
// (heavy-tailed: most jobs are short, a few run very long; alpha near 1 is heavier). Each job copies
// a template picked with probability weight / total weight. All draws come from the GoRand passed
// in, in the order: inter-arrival, thinning, template, duration; same seed, same jobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inputs/sim/workload.h"
#include "util/go_rand.h"

namespace gpufleet::sim {

struct JobTemplate {
  double weight = 1;       ///< > 0
  WorkloadSpec spec;       ///< everything but name, kind (a job), arrival_s and duration_s
};

struct GeneratorParams {
  double jobs_per_hour = 10;       ///< mean arrival rate, > 0
  double diurnal_amplitude = 0.5;  ///< 0 (flat) .. 1 (no arrivals at the trough)
  double peak_hour = 14;           ///< hour of the day with the most arrivals, [0, 24)
  double start_s = 0;              ///< first possible arrival
  double end_s = 0;                ///< arrivals before this time only
  double duration_min_s = 60;      ///< bounded Pareto lower bound, > 0
  double duration_max_s = 86400;   ///< upper bound, >= min
  double pareto_shape = 1.2;       ///< alpha, > 0
  int64_t max_jobs = 1'000'000;    ///< stop after this many
  std::string name_prefix = "gen"; ///< jobs are named <prefix>-<6-digit index>
  std::vector<JobTemplate> templates;  ///< at least one
};

/// Throws std::invalid_argument for out-of-range parameters (see the fields) or no template.
void validate_generator(const GeneratorParams& params);

/// The generated jobs, in arrival order (validate_generator first; may throw).
std::vector<WorkloadSpec> generate_jobs(const GeneratorParams& params, GoRand& rng);

}  // namespace gpufleet::sim
