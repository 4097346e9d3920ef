#include "sim/rules/checkpointing.h"

#include <algorithm>
#include <cmath>

namespace gpufleet::sim {

double checkpoint_work_done_s(double interval_s, double cost_s, double ran_s) {
  if (interval_s <= 0 || cost_s <= 0) return ran_s;
  const double cycle = interval_s + cost_s;
  const double k = std::floor(ran_s / cycle);
  return k * interval_s + std::min(ran_s - k * cycle, interval_s);
}

double checkpoint_work_kept_s(double interval_s, double cost_s, double ran_s) {
  if (interval_s <= 0) return 0.0;
  if (cost_s <= 0) return std::floor(ran_s / interval_s) * interval_s;  // the cost-free model, bit for bit
  return std::floor(ran_s / (interval_s + cost_s)) * interval_s;
}

double checkpoint_time_s(double interval_s, double cost_s, double ran_s) {
  if (interval_s <= 0 || cost_s <= 0) return 0.0;
  const double cycle = interval_s + cost_s;
  const double k = std::floor(ran_s / cycle);
  return k * cost_s + std::max(0.0, ran_s - k * cycle - interval_s);
}

double checkpoints_before_s(double interval_s, double work_s) {
  if (interval_s <= 0 || work_s <= 0) return 0.0;
  return std::max(0.0, std::ceil(work_s / interval_s - 1e-9) - 1);
}

double checkpoint_run_time_s(double interval_s, double cost_s, double work_s) {
  if (cost_s <= 0) return work_s;
  return work_s + cost_s * checkpoints_before_s(interval_s, work_s);
}

double young_interval_s(double cost_s, double mtbi_s) {
  if (!(cost_s > 0) || !(mtbi_s > 0)) return 0.0;
  return std::sqrt(2 * cost_s * mtbi_s);
}

double daly_interval_s(double cost_s, double mtbi_s) {
  if (!(cost_s > 0) || !(mtbi_s > 0)) return 0.0;
  if (cost_s >= 2 * mtbi_s) return mtbi_s;
  const double x = cost_s / (2 * mtbi_s);
  return std::sqrt(2 * cost_s * mtbi_s) * (1 + std::sqrt(x) / 3 + x / 9) - cost_s;
}

}  // namespace gpufleet::sim
