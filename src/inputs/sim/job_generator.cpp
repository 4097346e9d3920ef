#include "inputs/sim/job_generator.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace gpufleet::sim {

void validate_generator(const GeneratorParams& p) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("generator: " + what); };
  if (!(p.jobs_per_hour > 0) || !std::isfinite(p.jobs_per_hour)) bad(fmt::format("jobs per hour {} must be positive", p.jobs_per_hour));
  if (!(p.diurnal_amplitude >= 0 && p.diurnal_amplitude <= 1)) bad(fmt::format("diurnal amplitude {} outside [0, 1]", p.diurnal_amplitude));
  if (!(p.peak_hour >= 0 && p.peak_hour < 24)) bad(fmt::format("peak hour {} outside [0, 24)", p.peak_hour));
  if (!(p.start_s >= 0) || !std::isfinite(p.end_s) || p.end_s < p.start_s) bad("needs 0 <= start <= end");
  if (!(p.duration_min_s > 0) || !(p.duration_max_s >= p.duration_min_s) || !std::isfinite(p.duration_max_s))
    bad(fmt::format("durations need 0 < min <= max, got [{}, {}]", p.duration_min_s, p.duration_max_s));
  if (!(p.pareto_shape > 0) || !std::isfinite(p.pareto_shape)) bad(fmt::format("Pareto shape {} must be positive", p.pareto_shape));
  if (p.max_jobs < 0) bad("max jobs is negative");
  if (p.templates.empty()) bad("no job template");
  for (const JobTemplate& t : p.templates)
    if (!(t.weight > 0) || !std::isfinite(t.weight)) bad(fmt::format("template weight {} must be positive", t.weight));
}

namespace {

// The stream's draws (see the header): calls job(arrival_s, template index, u) for each job kept, in
// order, until max_jobs or end_s.
template <class OnJob>
void draw_jobs(const GeneratorParams& p, double total_weight, GoRand& rng, OnJob&& job) {
  const double max_rate_per_s = p.jobs_per_hour * (1 + p.diurnal_amplitude) / 3600.0;
  double t = p.start_s;
  int64_t count = 0;
  while (count < p.max_jobs) {
    t += -std::log(1.0 - rng.float64()) / max_rate_per_s;
    if (t >= p.end_s) break;
    const double phase = 2 * std::numbers::pi * (t / 86400.0 - p.peak_hour / 24.0);
    const double keep = (1 + p.diurnal_amplitude * std::cos(phase)) / (1 + p.diurnal_amplitude);
    if (rng.float64() >= keep) continue;
    double pick = rng.float64() * total_weight;
    size_t k = 0;
    while (k + 1 < p.templates.size() && pick >= p.templates[k].weight) pick -= p.templates[k++].weight;
    job(t, k, rng.float64());
    ++count;
  }
}

}  // namespace

std::vector<WorkloadSpec> generate_jobs(const GeneratorParams& p, GoRand& rng) {
  validate_generator(p);
  double total_weight = 0;
  for (const JobTemplate& t : p.templates) total_weight += t.weight;
  const double ratio = std::pow(p.duration_min_s / p.duration_max_s, p.pareto_shape);
  // A first pass on a copy of the generator counts the jobs, so that the vector is allocated once:
  // grown by doubling, a million items (about 0.5 GB) would hold their old and new buffers at once.
  size_t count = 0;
  GoRand counting = rng;
  draw_jobs(p, total_weight, counting, [&count](double, size_t, double) { ++count; });
  std::vector<WorkloadSpec> jobs;
  jobs.reserve(count);
  draw_jobs(p, total_weight, rng, [&](double t, size_t k, double u) {
    WorkloadSpec job = p.templates[k].spec;
    job.kind = WorkloadKind::kJob;
    job.name = fmt::format("{}-{:06d}", p.name_prefix, jobs.size());
    job.arrival_s = t;
    job.duration_s = std::min(p.duration_max_s, p.duration_min_s / std::pow(1.0 - u * (1.0 - ratio), 1.0 / p.pareto_shape));
    jobs.push_back(std::move(job));
  });
  return jobs;
}

}  // namespace gpufleet::sim
