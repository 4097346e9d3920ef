// The shard file of a sharded `gpufleet plan` (readers/plan/plan_shard.h, written by
// report/plan_output.h plan_shard_json): a written file reads back to the same results (doubles
// bit-equal), and each broken file is an InputError naming the field.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "readers/plan/plan_shard.h"
#include "report/plan_output.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using plan::CandidateResult;

// A result whose doubles need all 17 digits (1/3, 0.1 + 0.2, a denormal-free tiny value).
CandidateResult result(size_t index) {
  CandidateResult r;
  r.index = index;
  r.label = "g6.xlarge us-east-1a, 2 reserved1y, spot, scale-down 60 s, consolidation 0.5, gpufleet \"q\" \\ é";
  r.horizon_s = 14400;
  r.cost_usd = 1.0 / 3 + static_cast<double>(index);
  r.on_demand_usd = 0.1 + 0.2;
  r.spot_usd = 1e-300;
  r.reserved_usd = 123456789.123456789;
  r.gpu_allocated_hours = 2.0 / 7;
  r.gpu_billed_hours = 5.5;
  r.spot_billed_gpu_hours = 0;
  r.lost_gpu_hours = 0.015625;
  r.kept_allocation_pct = 99.99999999999999;
  r.pending_p99_s = index % 2 == 0 ? std::optional<double>(61.25) : std::nullopt;
  r.production_pending_p99_s = index % 2 == 0 ? std::nullopt : std::optional<double>(std::numeric_limits<double>::min());
  r.pods_completed = 9000000000000000;  // the largest count accepted (9e15)
  r.pods_failed = 1;
  r.pods_pending = 0;
  r.restarts = 42;
  return r;
}

uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }

void expect_same(const CandidateResult& a, const CandidateResult& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.label, b.label);
  for (auto field : {&CandidateResult::horizon_s, &CandidateResult::cost_usd, &CandidateResult::on_demand_usd, &CandidateResult::spot_usd,
                     &CandidateResult::reserved_usd, &CandidateResult::gpu_allocated_hours, &CandidateResult::gpu_billed_hours,
                     &CandidateResult::spot_billed_gpu_hours, &CandidateResult::lost_gpu_hours, &CandidateResult::kept_allocation_pct})
    EXPECT_EQ(bits(a.*field), bits(b.*field)) << a.*field << " vs " << b.*field;
  for (auto field : {&CandidateResult::pending_p99_s, &CandidateResult::production_pending_p99_s}) {
    ASSERT_EQ((a.*field).has_value(), (b.*field).has_value());
    if ((a.*field).has_value()) {
      EXPECT_EQ(bits(*(a.*field)), bits(*(b.*field)));
    }
  }
  EXPECT_EQ(a.pods_completed, b.pods_completed);
  EXPECT_EQ(a.pods_failed, b.pods_failed);
  EXPECT_EQ(a.pods_pending, b.pods_pending);
  EXPECT_EQ(a.restarts, b.restarts);
}

// Shard 1 of 3 of 7 candidates: candidates 1 and 4.
std::string valid_text() { return plan_shard_json("00c0ffee00c0ffee", 1, 3, 7, {result(1), result(4)}); }

TEST(PlanShard, RoundTripsExactly) {
  const PlanShard s = parse_plan_shard(valid_text(), "shard-1.json");
  EXPECT_EQ(s.fingerprint, "00c0ffee00c0ffee");
  EXPECT_EQ(s.shard, 1u);
  EXPECT_EQ(s.shards, 3u);
  EXPECT_EQ(s.candidates, 7u);
  ASSERT_EQ(s.results.size(), 2u);
  expect_same(s.results[0], result(1));
  expect_same(s.results[1], result(4));
  // Written again, the same bytes.
  EXPECT_EQ(plan_shard_json(s.fingerprint, s.shard, s.shards, s.candidates, s.results), valid_text());
}

TEST(PlanShard, EmptyShardOfFewCandidates) {
  // Shard 3 of 4 with 2 candidates has none.
  const PlanShard s = parse_plan_shard(plan_shard_json("ab", 3, 4, 2, {}), "s.json");
  EXPECT_TRUE(s.results.empty());
}

// `text` must throw an InputError naming shard.json and `field`, with `fragment` in its message.
void expect_error(const std::string& text, const std::string& field, const std::string& fragment) {
  try {
    parse_plan_shard(text, "shard.json");
    ADD_FAILURE() << "no InputError for " << field << " in " << text.substr(0, 200);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "shard.json") << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// valid_text() with the first occurrence of `from` replaced by `to` (which must be there).
std::string edit(const std::string& from, const std::string& to) {
  std::string t = valid_text();
  const size_t at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) t.replace(at, from.size(), to);
  return t;
}

TEST(PlanShard, WrongIndexOrder) {
  // The results of candidates 4 then 1.
  expect_error(plan_shard_json("f", 1, 3, 7, {result(4), result(1)}), "results[0].index", "not the shard's next candidate");
  // A candidate of another shard.
  expect_error(plan_shard_json("f", 1, 3, 7, {result(1), result(2)}), "results[1].index", "not the shard's next candidate");
  // An index at or above candidates.
  expect_error(plan_shard_json("f", 1, 3, 4, {result(1), result(4)}), "results[1].index", "not below candidates");
  // A result missing at the end.
  expect_error(plan_shard_json("f", 1, 3, 7, {result(1)}), "results", "1 results, the shard has 2 candidates");
}

TEST(PlanShard, UnknownKey) {
  expect_error(edit("\"fingerprint\"", "\"colour\": 1, \"fingerprint\""), "colour", "unknown key");
  expect_error(edit("\"restarts\"", "\"cost\": 1, \"restarts\""), "results[0].cost", "unknown key");
}

TEST(PlanShard, MissingKey) {
  nlohmann::json doc = nlohmann::json::parse(valid_text());
  for (const char* key : {"apiVersion", "kind", "fingerprint", "shard", "shards", "candidates", "results"}) {
    nlohmann::json d = doc;
    d.erase(key);
    expect_error(d.dump(), key, "missing");
  }
  for (const char* key : {"index", "label", "horizon_s", "cost_usd", "on_demand_usd", "spot_usd", "reserved_usd", "gpu_allocated_hours",
                          "gpu_billed_hours", "spot_billed_gpu_hours", "lost_gpu_hours", "kept_allocation_pct", "pending_p99_s",
                          "production_pending_p99_s", "pods_completed", "pods_failed", "pods_pending", "restarts"}) {
    nlohmann::json d = doc;
    d["results"][1].erase(key);
    expect_error(d.dump(), std::string("results[1].") + key, "missing");
  }
}

TEST(PlanShard, NegativeNumber) {
  nlohmann::json doc = nlohmann::json::parse(valid_text());
  for (const char* key : {"cost_usd", "horizon_s", "kept_allocation_pct", "pending_p99_s"}) {
    nlohmann::json d = doc;
    d["results"][0][key] = -0.5;
    expect_error(d.dump(), std::string("results[0].") + key, "expected a finite number >= 0");
  }
  for (const char* key : {"pods_failed", "restarts"}) {
    nlohmann::json d = doc;
    d["results"][0][key] = -1;
    expect_error(d.dump(), std::string("results[0].") + key, "outside 0..");
  }
  nlohmann::json d = doc;
  d["candidates"] = -7;
  expect_error(d.dump(), "candidates", "outside 0..");
}

TEST(PlanShard, ShardNotBelowShards) {
  expect_error(plan_shard_json("f", 3, 3, 7, {}), "shard", "3 is not below shards (3)");
  expect_error(plan_shard_json("f", 5, 3, 7, {}), "shard", "not below shards");
  expect_error(plan_shard_json("f", 0, 0, 7, {}), "shards", "expected at least 1");
}

TEST(PlanShard, OtherKindsAndTypes) {
  expect_error(edit("\"PlanShard\"", "\"PlanShards\""), "kind", "expected PlanShard");
  expect_error(edit("plan.gpufleet.io/v1", "plan.gpufleet.io/v2"), "apiVersion", "expected plan.gpufleet.io/v1");
  expect_error(edit("\"shards\": 3", "\"shards\": 3.5"), "shards", "expected an integer");
  expect_error("[]", "", "expected an object");
}

}  // namespace
}  // namespace gpufleet::io
