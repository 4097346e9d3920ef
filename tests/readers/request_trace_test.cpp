// The LLM request-trace readers (readers/traces/request_trace.h): hand-written Azure CSV and Mooncake JSONL files
// with the requests they must give, every error with its exact message, and, when the public traces
// are present (../shared/traces or $GPUFLEET_TRACES), their statistics against the figures their
// READMEs and the serving reference state.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inference/request_sources.h"
#include "readers/traces/request_trace.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using inference::Request;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

std::string azure_error(const std::string& text) { return error_of([&] { parse_azure_llm_trace(text, "t.csv"); }); }
std::string mooncake_error(const std::string& text) { return error_of([&] { parse_mooncake_trace(text, "t.jsonl"); }); }

constexpr const char* kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

// ---- Azure CSV ----------------------------------------------------------------------------------

TEST(AzureLlmTrace, ReadsRequestsWithSecondsFromTheFirstRow) {
  const std::string text = std::string(kAzureHeader) +
                           "2023-11-16 18:17:03.9799600,4808,10\n"
                           "2023-11-16 18:17:04.0319600,3180,8\n"
                           "\n"
                           "2023-11-16 18:17:04.0319600, 1 ,1\r\n"
                           "2023-11-16T18:18:00,20,5\n";
  const std::vector<Request> r = parse_azure_llm_trace(text, "t.csv");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].id, 0u);
  EXPECT_EQ(r[3].id, 3u);
  EXPECT_DOUBLE_EQ(r[0].arrival_s, 0);
  EXPECT_NEAR(r[1].arrival_s, 0.052, 1e-12);
  EXPECT_NEAR(r[2].arrival_s, 0.052, 1e-12);
  EXPECT_NEAR(r[3].arrival_s, 56.02004, 1e-12);  // 18:18:00 - 18:17:03.97996
  EXPECT_EQ(r[0].prompt_tokens, 4808);
  EXPECT_EQ(r[0].output_tokens, 10);
  EXPECT_EQ(r[2].prompt_tokens, 1);
  EXPECT_EQ(r[2].output_tokens, 1);
  EXPECT_EQ(r[3].prompt_tokens, 20);
  EXPECT_TRUE(r[3].prefix_hashes.empty());
}

TEST(AzureLlmTrace, CountsTimeAcrossDaysMonthsAndLeapDays) {
  const std::string text = "GeneratedTokens,extra,TIMESTAMP,ContextTokens\n"  // any column order, extras ignored
                           "1,x,2024-02-28 23:00:00,7\n"
                           "2,y,2024-02-29 23:59:59.5,8\n"
                           "3,z,2024-03-01 00:00:00.25,9\n"
                           "4,w,2025-03-01 00:00:00,10\n";
  const std::vector<Request> r = parse_azure_llm_trace(text, "t.csv");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_DOUBLE_EQ(r[1].arrival_s, 86400 + 3599.5);
  EXPECT_DOUBLE_EQ(r[2].arrival_s, 25 * 3600 + 0.25);  // 1 h to 29 Feb, 24 h of 29 Feb, a quarter second
  EXPECT_DOUBLE_EQ(r[3].arrival_s, 25 * 3600 + 365 * 86400.0);  // 1 Mar 2024 to 1 Mar 2025: 365 days
  EXPECT_EQ(r[3].prompt_tokens, 10);
  EXPECT_EQ(r[3].output_tokens, 4);
}

TEST(AzureLlmTrace, Errors) {
  EXPECT_EQ(azure_error("TIMESTAMP,ContextTokens,Generated\n2023-11-16 18:17:04,1,1\n"),
            "t.csv:1: field 'GeneratedTokens': missing column (header has: TIMESTAMP,ContextTokens,Generated)");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04.5,1,1\n2023-11-16 18:17:04.0,1,1\n"),
            "t.csv:3:1: field 'TIMESTAMP': 2023-11-16 18:17:04.0 is before the previous row's 2023-11-16 18:17:04.5 (line 2): rows "
            "must be in time order");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,-3,10\n"),
            "t.csv:2:21: field 'ContextTokens': -3 is negative: a request has at least 1 prompt token");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,5,0\n"),
            "t.csv:2:23: field 'GeneratedTokens': 0 output tokens: a request has at least 1");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,20000000,1\n"),
            "t.csv:2:21: field 'ContextTokens': 20000000 is more than 10000000 prompt tokens (limit "
            "RequestTraceLimits::max_prompt_tokens, docs/input-limits.md)");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,1,1e30\n"),
            "t.csv:2:23: field 'GeneratedTokens': 1e30 is more than 10000000 output tokens (limit "
            "RequestTraceLimits::max_output_tokens, docs/input-limits.md)");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,-2e20,1\n"),
            "t.csv:2:21: field 'ContextTokens': -2e20 is negative: a request has at least 1 prompt token");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,1000.0,nan\n"),
            "t.csv:2:28: field 'GeneratedTokens': 'nan' is not an integer");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,1,12.5\n"),
            "t.csv:2:23: field 'GeneratedTokens': '12.5' is not an integer");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16T25:00:00,1,1\n"),
            "t.csv:2:1: field 'TIMESTAMP': '2023-11-16T25:00:00' is not a timestamp: hour 25 is not in 0..23");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,1,1\n2023-02-29 00:00:00,1,1\n"),
            "t.csv:3:1: field 'TIMESTAMP': '2023-02-29 00:00:00' is not a timestamp: day 29 is not in 1..28 for 2023-02");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "11/16/2023 18:17,1,1\n"),
            "t.csv:2:1: field 'TIMESTAMP': '11/16/2023 18:17' is not a timestamp: expected YYYY-MM-DD HH:MM:SS[.fraction], e.g. "
            "2023-11-16 18:17:03.9799600");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04.1234567890,1,1\n"),
            "t.csv:2:1: field 'TIMESTAMP': '2023-11-16 18:17:04.1234567890' is not a timestamp: expected at most 9 digits of fraction "
            "after HH:MM:SS. and nothing else");
  EXPECT_EQ(azure_error(std::string(kAzureHeader) + "2023-11-16 18:17:04,1\n"),
            "t.csv:2: field 'GeneratedTokens': truncated row: 2 of 3 fields");
  EXPECT_EQ(azure_error(kAzureHeader), "t.csv:2: no request rows");
  EXPECT_EQ(azure_error(""), "t.csv:1: empty file: expected a CSV header");
}

TEST(AzureLlmTrace, Limits) {
  RequestTraceLimits limits;
  limits.max_rows = 2;
  const std::string three = std::string(kAzureHeader) + "2023-11-16 18:17:04,1,1\n2023-11-16 18:17:05,1,1\n2023-11-16 18:17:06,1,1\n";
  EXPECT_EQ(parse_azure_llm_trace(three.substr(0, three.size() - 24), "t.csv", limits).size(), 2u);
  EXPECT_EQ(error_of([&] { parse_azure_llm_trace(three, "t.csv", limits); }),
            "t.csv:4: more than 2 request rows (limit RequestTraceLimits::max_rows, docs/input-limits.md)");
  limits = {};
  limits.max_file_bytes = 10;
  EXPECT_EQ(error_of([&] { parse_azure_llm_trace(three, "t.csv", limits); }),
            "t.csv: more than 10 bytes in the file (limit RequestTraceLimits::max_file_bytes, docs/input-limits.md)");
  limits = {};
  limits.max_arrival_s = 3600;
  EXPECT_EQ(error_of([&] { parse_azure_llm_trace(std::string(kAzureHeader) + "2023-11-16 18:00:00,1,1\n2023-11-16 19:00:00.5,1,1\n", "t.csv", limits); }),
            "t.csv:3:1: field 'TIMESTAMP': 2023-11-16 19:00:00.5 is more than 3600 seconds after the first row (limit "
            "RequestTraceLimits::max_arrival_s, docs/input-limits.md)");
}

// ---- Mooncake JSONL -----------------------------------------------------------------------------

TEST(MooncakeTrace, ReadsRequestsWithPrefixHashes) {
  const std::string text =
      "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [4294967295]}\n"
      "\n"
      "{\"timestamp\": 3000, \"input_length\": 7, \"output_length\": 2, \"hash_ids\": [], \"extra\": {\"a\": 1}}\r\n"
      "{\"output_length\": 2, \"input_length\": 1030, \"timestamp\": 3001.5}";
  const std::vector<Request> r = parse_mooncake_trace(text, "t.jsonl");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[3].id, 3u);
  EXPECT_DOUBLE_EQ(r[0].arrival_s, 0);
  EXPECT_DOUBLE_EQ(r[1].arrival_s, 0);
  EXPECT_DOUBLE_EQ(r[2].arrival_s, 3.0);
  EXPECT_DOUBLE_EQ(r[3].arrival_s, 3.0015);
  EXPECT_EQ(r[0].prompt_tokens, 600);
  EXPECT_EQ(r[0].output_tokens, 5);
  EXPECT_EQ(r[0].prefix_hashes, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(r[0].prefix_block_tokens, 512);
  EXPECT_EQ(r[1].prefix_hashes, (std::vector<uint32_t>{4294967295u}));
  EXPECT_TRUE(r[2].prefix_hashes.empty());
  EXPECT_EQ(r[3].prompt_tokens, 1030);
  EXPECT_TRUE(r[3].prefix_hashes.empty());
}

TEST(MooncakeTrace, Errors) {
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"output_length\": 5}\n"),
            "t.jsonl:1:1: field 'input_length': missing key (a Mooncake row has timestamp, input_length, output_length and hash_ids)");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 3000, \"input_length\": 1, \"output_length\": 1}\n"
                           "{\"timestamp\": 2000, \"input_length\": 1, \"output_length\": 1}\n"),
            "t.jsonl:2:15: field 'timestamp': 2000 is before the previous row's 3000 (line 1): rows must be in time order");
  EXPECT_EQ(mooncake_error("{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}\n"),
            "t.jsonl:1:15: field 'timestamp': -1 is negative: timestamps are milliseconds from the trace start");
  EXPECT_EQ(mooncake_error("{\"timestamp\": \"0\", \"input_length\": 1, \"output_length\": 1}\n"),
            "t.jsonl:1:15: field 'timestamp': expected a number of milliseconds, got string");
  // {"timestamp": 0, "input_length": -5, ...: the value starts at byte 34.
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": -5, \"output_length\": 1}\n"),
            "t.jsonl:1:34: field 'input_length': -5 is negative: a request has at least 1 prompt token");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 5, \"output_length\":0}\n"),
            "t.jsonl:1:53: field 'output_length': 0 output tokens: a request has at least 1");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 10000001, \"output_length\": 1}\n"),
            "t.jsonl:1:34: field 'input_length': 10000001 is more than 10000000 prompt tokens (limit "
            "RequestTraceLimits::max_prompt_tokens, docs/input-limits.md)");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 18446744073709551615, \"output_length\": 1}\n"),
            "t.jsonl:1:34: field 'input_length': 18446744073709551615 is more than 10000000 prompt tokens (limit "
            "RequestTraceLimits::max_prompt_tokens, docs/input-limits.md)");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1}\n"),
            "t.jsonl:1:34: field 'input_length': 1.5 is not an integer");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": \"5\", \"output_length\": 1}\n"),
            "t.jsonl:1:34: field 'input_length': expected an integer, got string");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"),
            "t.jsonl:1:71: field 'hash_ids': 2 hash ids for input_length 512: at most ceil(512 / 512) = 1, one per block of 512 tokens");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, -1]}\n"),
            "t.jsonl:1:72: field 'hash_ids': element 1 (-1) is not an integer in [0, 4294967295]");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [4294967296]}\n"),
            "t.jsonl:1:72: field 'hash_ids': element 0 (4294967296) is not an integer in [0, 4294967295]");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": 3}\n"),
            "t.jsonl:1:72: field 'hash_ids': expected an array of integers, got a number");
  EXPECT_EQ(mooncake_error("[1, 2]\n"), "t.jsonl:1: expected a JSON object per line, got array");
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 1,\n"),
            "t.jsonl:2:17: JSON syntax error: syntax error while parsing object key - unexpected end of input; expected string literal");
  EXPECT_EQ(mooncake_error("\n \n"), "t.jsonl:3: no request rows");
}

TEST(MooncakeTrace, Limits) {
  RequestTraceLimits limits;
  limits.max_line_bytes = 40;
  EXPECT_EQ(error_of([&] { parse_mooncake_trace("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n", "t.jsonl", limits); }),
            "t.jsonl:1: more than 40 bytes in a line (limit RequestTraceLimits::max_line_bytes, docs/input-limits.md)");
  limits = {};
  limits.max_hash_ids_per_row = 2;
  EXPECT_EQ(error_of([&] {
              parse_mooncake_trace("{\"timestamp\": 0, \"input_length\": 5000, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}", "t.jsonl",
                                   limits);
            }),
            "t.jsonl:1:72: field 'hash_ids': more than 2 hash ids in a row (limit RequestTraceLimits::max_hash_ids_per_row, "
            "docs/input-limits.md)");
  limits = {};
  limits.max_hash_ids = 3;
  EXPECT_EQ(error_of([&] {
              parse_mooncake_trace("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
                                   "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 3]}\n",
                                   "t.jsonl", limits);
            }),
            "t.jsonl:2:72: field 'hash_ids': more than 3 hash ids in the file (limit RequestTraceLimits::max_hash_ids, "
            "docs/input-limits.md)");
  limits = {};
  limits.max_rows = 1;
  EXPECT_EQ(error_of([&] {
              parse_mooncake_trace("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n\n"
                                   "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n",
                                   "t.jsonl", limits);
            }),
            "t.jsonl:3: more than 1 request rows (limit RequestTraceLimits::max_rows, docs/input-limits.md)");
  // Deep nesting in an ignored key is refused by the JSON parser's depth limit, at its line.
  EXPECT_EQ(mooncake_error("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"x\": [[[[[[[[[[1]]]]]]]]]]}"),
            "t.jsonl:1: more than 8 levels of nesting (limit JsonRequestLimits::max_depth, docs/input-limits.md)");
}

// ---- Formats ------------------------------------------------------------------------------------

TEST(RequestTraceFormat, DetectedByExtensionThenContent) {
  EXPECT_EQ(detect_request_trace_format("a/AzureLLMInferenceTrace_conv.csv", "{"), RequestTraceFormat::kAzureCsv);
  EXPECT_EQ(detect_request_trace_format("trace.JSONL", "TIMESTAMP"), RequestTraceFormat::kMooncakeJsonl);
  EXPECT_EQ(detect_request_trace_format("trace.ndjson", ""), RequestTraceFormat::kMooncakeJsonl);
  EXPECT_EQ(detect_request_trace_format("trace.json", ""), RequestTraceFormat::kMooncakeJsonl);
  EXPECT_EQ(detect_request_trace_format("-", "\xEF\xBB\xBF \n{\"timestamp\": 0}"), RequestTraceFormat::kMooncakeJsonl);
  EXPECT_EQ(detect_request_trace_format("trace.txt", "TIMESTAMP,ContextTokens"), RequestTraceFormat::kAzureCsv);
  EXPECT_EQ(parse_request_trace_format("mooncake"), RequestTraceFormat::kMooncakeJsonl);
  EXPECT_EQ(parse_request_trace_format("azure"), RequestTraceFormat::kAzureCsv);
  EXPECT_EQ(parse_request_trace_format("auto"), RequestTraceFormat::kAuto);
  try {
    parse_request_trace_format("burstgpt");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unknown trace format 'burstgpt' (expected auto, azure or mooncake)");
  }
  // An explicit format wins over the extension.
  const std::string jsonl = "{\"timestamp\": 1500, \"input_length\": 3, \"output_length\": 4}\n";
  const auto r = parse_request_trace(jsonl, "weird.csv", RequestTraceFormat::kMooncakeJsonl);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].arrival_s, 1.5);
  EXPECT_EQ(parse_request_trace(jsonl, "stdin").size(), 1u);
  EXPECT_EQ(error_of([&] { read_request_trace("/nonexistent/trace.csv"); }).rfind("/nonexistent/trace.csv: ", 0), 0u);
}

// ---- The public traces --------------------------------------------------------------------------

// The traces folder, or empty when absent.
std::string traces_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GPUFLEET_TRACES"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back(fs::path(GPUFLEET_SOURCE_DIR) / ".." / "shared" / "traces");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "azure-llm-inference-2023" / "AzureLLMInferenceTrace_conv.csv", ec)) return c.string();
  }
  return {};
}

#define REQUIRE_TRACES(dir)                                                                                       \
  const std::string dir = traces_dir();                                                                           \
  if (dir.empty()) GTEST_SKIP() << "LLM request traces not found (set GPUFLEET_TRACES or provide ../shared/traces); skipping"

// Figures: the traces' READMEs (rows, span, mean rate, token means and medians) and the serving
// reference's table (duration, peak 1-minute count in a sliding 60 s window, p99).
TEST(RealRequestTraces, AzureConversation) {
  REQUIRE_TRACES(dir);
  const auto r = read_request_trace(dir + "/azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const inference::TraceStats s = inference::trace_stats(r);
  EXPECT_EQ(s.count, 19'366u);
  EXPECT_NEAR(s.duration_s, 3501.72, 0.01);  // 58.4 min
  EXPECT_NEAR(s.mean_rate_per_s, 5.53, 0.005);
  EXPECT_EQ(s.peak_1min_count, 522u);
  EXPECT_NEAR(s.prompt_mean, 1155, 0.5);
  EXPECT_DOUBLE_EQ(s.prompt_p50, 1020);
  EXPECT_DOUBLE_EQ(s.prompt_p99, 4142);
  EXPECT_NEAR(s.output_mean, 211, 0.5);
  EXPECT_DOUBLE_EQ(s.output_p50, 129);
  EXPECT_DOUBLE_EQ(s.output_p99, 601);
  EXPECT_EQ(r.back().id, 19'365u);

  // Replayed twice as fast and three times as dense: 58,098 requests over 1,750.86 s, 33.2 /s.
  inference::TraceReplayOptions o;
  o.time_scale = 0.5;
  o.rate_multiplier = 3;
  inference::TraceSource source(r, o);
  const inference::TraceStats fast = inference::trace_stats(inference::drain(source));
  EXPECT_EQ(fast.count, 58'098u);
  EXPECT_LE(fast.duration_s, (3501.722 + 1) / 2);  // the last copies fall within one mean gap (0.18 s) of the end
  EXPECT_GE(fast.duration_s, 3501.721 / 2);
  EXPECT_NEAR(fast.mean_rate_per_s, 3 * 2 * 5.5304, 0.02);
  EXPECT_NEAR(fast.prompt_mean, s.prompt_mean, 1e-9);  // every request exactly three times
}

TEST(RealRequestTraces, AzureCode) {
  REQUIRE_TRACES(dir);
  const auto r = read_request_trace(dir + "/azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv");
  const inference::TraceStats s = inference::trace_stats(r);
  EXPECT_EQ(s.count, 8'819u);
  EXPECT_NEAR(s.duration_s, 3435.95, 0.01);  // 57.3 min
  EXPECT_NEAR(s.mean_rate_per_s, 2.57, 0.005);
  EXPECT_EQ(s.peak_1min_count, 723u);
  EXPECT_NEAR(s.prompt_mean, 2048, 0.5);
  EXPECT_DOUBLE_EQ(s.prompt_p50, 1469);
  EXPECT_DOUBLE_EQ(s.prompt_p99, 7436);
  EXPECT_NEAR(s.output_mean, 27.9, 0.05);
  EXPECT_DOUBLE_EQ(s.output_p50, 13);
  EXPECT_NEAR(s.output_p99, 251, 0.5);
  // The reference's peak 1-second bin (whole seconds) holds 67 requests; a sliding 1 s window, 72.
  std::map<int64_t, int> per_second;
  for (const Request& q : r) ++per_second[static_cast<int64_t>(std::floor(q.arrival_s))];
  int peak_bin = 0;
  for (const auto& [second, n] : per_second) peak_bin = std::max(peak_bin, n);
  EXPECT_EQ(peak_bin, 67);
  EXPECT_EQ(inference::peak_arrivals_in_window(r, 1), 72u);
}

TEST(RealRequestTraces, MooncakeConversation) {
  REQUIRE_TRACES(dir);
  const auto r = read_request_trace(dir + "/mooncake-fast25/conversation_trace.jsonl");
  const inference::TraceStats s = inference::trace_stats(r);
  EXPECT_EQ(s.count, 12'031u);
  EXPECT_DOUBLE_EQ(s.duration_s, 3536.999);
  EXPECT_NEAR(s.mean_rate_per_s, 3.40, 0.005);
  EXPECT_EQ(s.peak_1min_count, 260u);
  EXPECT_NEAR(s.prompt_mean, 12035, 0.5);
  EXPECT_DOUBLE_EQ(s.prompt_p50, 6909);
  EXPECT_NEAR(s.prompt_p99, 85400, 0.5);
  EXPECT_NEAR(s.output_mean, 343, 0.5);
  EXPECT_DOUBLE_EQ(s.output_p50, 350);
  EXPECT_NEAR(s.output_p99, 1119, 0.5);
  size_t mismatched = 0, hashes = 0;
  for (const Request& q : r) {
    hashes += q.prefix_hashes.size();
    if (q.prefix_hashes.size() != static_cast<size_t>((q.prompt_tokens + 511) / 512)) ++mismatched;
  }
  EXPECT_EQ(mismatched, 0u);  // len(hash_ids) = ceil(input / 512) on every row
  EXPECT_EQ(hashes, 288'500u);
}

TEST(RealRequestTraces, MooncakeSynthetic) {
  REQUIRE_TRACES(dir);
  const auto r = read_request_trace(dir + "/mooncake-fast25/synthetic_trace.jsonl");
  const inference::TraceStats s = inference::trace_stats(r);
  EXPECT_EQ(s.count, 3'993u);
  EXPECT_DOUBLE_EQ(s.duration_s, 1022.025);
  EXPECT_EQ(s.peak_1min_count, 280u);
  EXPECT_NEAR(s.prompt_mean, 15325, 0.5);
  EXPECT_NEAR(s.output_mean, 149, 0.5);
}

}  // namespace
}  // namespace gpufleet::io
