#include "readers/plan/plan_shard.h"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "readers/formats/json_request.h"
#include "readers/formats/text_file.h"
#include "util/input_error.h"

namespace gpufleet::io {

namespace {

using nlohmann::json;

struct Reader {
  const std::string& source;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const { throw InputError(source, 0, field, what); }

  const json& key(const json& obj, const char* name, const std::string& path) const {
    const auto it = obj.find(name);
    if (it == obj.end()) fail(path.empty() ? name : path + "." + name, "missing");
    return *it;
  }
  void only_keys(const json& obj, const std::set<std::string>& keys, const std::string& path) const {
    for (const auto& [k, v] : obj.items())
      if (keys.count(k) == 0) fail(path.empty() ? k : path + "." + k, "unknown key");
  }
  double number(const json& v, const std::string& field) const {
    if (!v.is_number()) fail(field, fmt::format("expected a number, got {}", json_type_name(v)));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) fail(field, "expected a finite number >= 0");
    return d;
  }
  int64_t count(const json& v, const std::string& field, double most) const {
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(field, fmt::format("expected an integer, got {}", json_type_name(v)));
    const double d = v.get<double>();
    if (d < 0 || d > most) fail(field, fmt::format("{} is outside 0..{:g}", v.dump(), most));
    return v.get<int64_t>();
  }
  std::string string(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(field, fmt::format("expected a string, got {}", json_type_name(v)));
    return v.get<std::string>();
  }
};

}  // namespace

PlanShard parse_plan_shard(std::string_view text, const std::string& source) {
  const json doc = parse_json_request(text, source);
  const Reader r{source};
  if (!doc.is_object()) r.fail("", fmt::format("expected an object, got {}", json_type_name(doc)));
  r.only_keys(doc, {"apiVersion", "kind", "fingerprint", "shard", "shards", "candidates", "results"}, "");
  if (r.string(r.key(doc, "apiVersion", ""), "apiVersion") != "plan.gpufleet.io/v1")
    r.fail("apiVersion", "expected plan.gpufleet.io/v1");
  if (r.string(r.key(doc, "kind", ""), "kind") != "PlanShard") r.fail("kind", "expected PlanShard");
  PlanShard s;
  s.fingerprint = r.string(r.key(doc, "fingerprint", ""), "fingerprint");
  s.shards = static_cast<size_t>(r.count(r.key(doc, "shards", ""), "shards", kMaxPlanShards));
  if (s.shards == 0) r.fail("shards", "expected at least 1");
  s.shard = static_cast<size_t>(r.count(r.key(doc, "shard", ""), "shard", kMaxPlanShards));
  if (s.shard >= s.shards) r.fail("shard", fmt::format("{} is not below shards ({})", s.shard, s.shards));
  s.candidates = static_cast<size_t>(r.count(r.key(doc, "candidates", ""), "candidates", kMaxPlanCandidates));
  const json& results = r.key(doc, "results", "");
  if (!results.is_array()) r.fail("results", fmt::format("expected an array, got {}", json_type_name(results)));
  size_t expected_index = s.shard;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = fmt::format("results[{}]", i);
    const json& o = results[i];
    if (!o.is_object()) r.fail(path, fmt::format("expected an object, got {}", json_type_name(o)));
    r.only_keys(o, {"index", "label", "horizon_s", "cost_usd", "on_demand_usd", "spot_usd", "reserved_usd", "gpu_allocated_hours",
                    "gpu_billed_hours", "spot_billed_gpu_hours", "lost_gpu_hours", "kept_allocation_pct", "pending_p99_s",
                    "production_pending_p99_s", "pods_completed", "pods_failed", "pods_pending", "restarts"},
                path);
    plan::CandidateResult c;
    auto num = [&](const char* k) { return r.number(r.key(o, k, path), path + "." + k); };
    auto cnt = [&](const char* k) { return r.count(r.key(o, k, path), path + "." + k, 9e15); };
    auto opt = [&](const char* k) -> std::optional<double> {
      const json& v = r.key(o, k, path);
      if (v.is_null()) return std::nullopt;
      return r.number(v, path + "." + k);
    };
    c.index = static_cast<size_t>(cnt("index"));
    if (c.index != expected_index)
      r.fail(path + ".index", fmt::format("{} is not the shard's next candidate ({}: shard {} of {}, in order)", c.index, expected_index,
                                          s.shard, s.shards));
    if (c.index >= s.candidates) r.fail(path + ".index", fmt::format("{} is not below candidates ({})", c.index, s.candidates));
    expected_index += s.shards;
    c.label = r.string(r.key(o, "label", path), path + ".label");
    c.horizon_s = num("horizon_s");
    c.cost_usd = num("cost_usd");
    c.on_demand_usd = num("on_demand_usd");
    c.spot_usd = num("spot_usd");
    c.reserved_usd = num("reserved_usd");
    c.gpu_allocated_hours = num("gpu_allocated_hours");
    c.gpu_billed_hours = num("gpu_billed_hours");
    c.spot_billed_gpu_hours = num("spot_billed_gpu_hours");
    c.lost_gpu_hours = num("lost_gpu_hours");
    c.kept_allocation_pct = num("kept_allocation_pct");
    c.pending_p99_s = opt("pending_p99_s");
    c.production_pending_p99_s = opt("production_pending_p99_s");
    c.pods_completed = cnt("pods_completed");
    c.pods_failed = cnt("pods_failed");
    c.pods_pending = cnt("pods_pending");
    c.restarts = cnt("restarts");
    s.results.push_back(std::move(c));
  }
  if (expected_index < s.candidates)
    r.fail("results", fmt::format("{} results, the shard has {} candidates (every {}th from {})", s.results.size(),
                                  (s.candidates - s.shard + s.shards - 1) / s.shards, s.shards, s.shard));
  return s;
}

PlanShard read_plan_shard(const std::string& path) { return parse_plan_shard(read_yaml_file(path), path); }

}  // namespace gpufleet::io
