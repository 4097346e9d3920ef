#include "report/json_values.h"

#include <cmath>
#include <optional>

namespace gpufleet::io {

double round_to(double v, double per_unit) { return std::round(v * per_unit) / per_unit; }

nlohmann::json pending_stats_json(const sim::PendingStats& s) {
  nlohmann::json j;
  auto q = [](const std::optional<double>& v) { return v ? nlohmann::json(round_to(*v, 1e3)) : nlohmann::json(nullptr); };
  j["p50"] = q(s.p50);
  j["p95"] = q(s.p95);
  j["p99"] = q(s.p99);
  j["samples"] = s.samples;
  return j;
}

}  // namespace gpufleet::io
