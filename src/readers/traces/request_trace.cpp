#include "readers/traces/request_trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "readers/formats/csv_table.h"
#include "readers/formats/json_request.h"
#include "readers/formats/text_file.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::CsvTable;
using inference::Request;

constexpr int32_t kMooncakeBlockTokens = 512;  // Mooncake FAST25-release traces: one hash per 512 tokens

// The error, if any, of a token count `v` (written `text` in the file): at least 1, at most `limit`.
std::optional<std::string> token_count_error(int64_t v, std::string_view text, std::string_view kind, int64_t limit,
                                             std::string_view limit_name) {
  if (v < 0) return fmt::format("{} is negative: a request has at least 1 {} token", text, kind);
  if (v == 0) return fmt::format("0 {} tokens: a request has at least 1", kind);
  if (v > limit) return fmt::format("{} is {}", text, limit_message(static_cast<uint64_t>(limit), fmt::format("{} tokens", kind), limit_name));
  return std::nullopt;
}

// ---- Azure CSV ---------------------------------------------------------------------------------

// A wall-clock time: whole seconds since 1970-01-01 00:00:00 of the same clock, and nanoseconds.
struct WallTime {
  int64_t s = 0;
  int32_t ns = 0;
  bool operator<(const WallTime& o) const { return s != o.s ? s < o.s : ns < o.ns; }
};

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", days_from_civil).
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Parses "YYYY-MM-DD HH:MM:SS[.fffffffff]" (or 'T' for the space). Returns the reason on error.
std::optional<WallTime> parse_wall_time(std::string_view s, std::string& why) {
  const auto digits = [&](size_t pos, size_t n, int& out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (s.size() < 19 || !digits(0, 4, year) || s[4] != '-' || !digits(5, 2, month) || s[7] != '-' || !digits(8, 2, day) ||
      (s[10] != ' ' && s[10] != 'T') || !digits(11, 2, hour) || s[13] != ':' || !digits(14, 2, minute) || s[16] != ':' ||
      !digits(17, 2, second)) {
    why = "expected YYYY-MM-DD HH:MM:SS[.fraction], e.g. 2023-11-16 18:17:03.9799600";
    return std::nullopt;
  }
  int32_t ns = 0;
  if (s.size() > 19) {
    const size_t n = s.size() - 20;
    if (s[19] != '.' || n < 1 || n > 9) {
      why = "expected at most 9 digits of fraction after HH:MM:SS. and nothing else";
      return std::nullopt;
    }
    for (size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') {
        why = "expected at most 9 digits of fraction after HH:MM:SS. and nothing else";
        return std::nullopt;
      }
      ns = ns * 10 + (s[i] - '0');
    }
    for (size_t i = n; i < 9; ++i) ns *= 10;
  }
  if (month < 1 || month > 12) why = fmt::format("month {} is not in 1..12", month);
  else if (day < 1 || day > days_in_month(year, month)) why = fmt::format("day {} is not in 1..{} for {:04d}-{:02d}", day, days_in_month(year, month), year, month);
  else if (hour > 23) why = fmt::format("hour {} is not in 0..23", hour);
  else if (minute > 59) why = fmt::format("minute {} is not in 0..59", minute);
  else if (second > 59) why = fmt::format("second {} is not in 0..59", second);
  if (!why.empty()) return std::nullopt;
  return WallTime{days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second, ns};
}

// A token count of an Azure row. An integral number too large for int64_t ("1e30") is still a token
// count, reported as above its limit; anything else that is not an integer is CsvTable's error.
int32_t azure_tokens(const CsvTable& t, size_t col, std::string_view kind, int64_t limit, std::string_view limit_name) {
  const std::string_view s = t.text(col);
  double d = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  int64_t v = 0;
  if (ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(d) && std::trunc(d) == d && std::abs(d) > 1e15)
    v = d > 0 ? std::numeric_limits<int64_t>::max() : -1;
  else
    v = t.integer_at(col, -std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max());
  if (auto e = token_count_error(v, s, kind, limit, limit_name)) t.fail_at(col, *e);
  return static_cast<int32_t>(v);
}

}  // namespace

std::vector<Request> parse_azure_llm_trace(std::string_view text, const std::string& source, const RequestTraceLimits& limits) {
  if (text.size() > limits.max_file_bytes)
    throw InputError(source, 0, "", limit_message(limits.max_file_bytes, "bytes in the file", "RequestTraceLimits::max_file_bytes"));
  CsvLimits csv = kCsvLimits;  // line and column limits as every CSV reader; rows counted below
  csv.max_file_bytes = limits.max_file_bytes;
  csv.max_rows = std::numeric_limits<size_t>::max();
  CsvTable t(text, source, csv);
  const size_t c_time = t.require("TIMESTAMP"), c_prompt = t.require("ContextTokens"), c_output = t.require("GeneratedTokens");
  std::vector<Request> requests;
  WallTime first, previous;
  std::string previous_text;
  int previous_line = 0;
  while (t.next_row()) {
    if (requests.size() >= limits.max_rows)
      throw InputError(source, t.line(), "", limit_message(limits.max_rows, "request rows", "RequestTraceLimits::max_rows"));
    Request r;
    r.id = requests.size();
    const std::string_view stamp = t.text(c_time);
    std::string why;
    const std::optional<WallTime> when = parse_wall_time(stamp, why);
    if (!when) t.fail_at(c_time, fmt::format("'{}' is not a timestamp: {}", stamp, why));
    if (requests.empty()) first = *when;
    else if (*when < previous)
      t.fail_at(c_time, fmt::format("{} is before the previous row's {} (line {}): rows must be in time order", stamp,
                                    previous_text, previous_line));
    const double arrival_s = static_cast<double>(when->s - first.s) + (when->ns - first.ns) * 1e-9;
    if (arrival_s > limits.max_arrival_s)
      t.fail_at(c_time, fmt::format("{} is {}", stamp, limit_message(static_cast<uint64_t>(limits.max_arrival_s),
                                                                    "seconds after the first row", "RequestTraceLimits::max_arrival_s")));
    r.arrival_s = arrival_s;
    previous = *when;
    previous_text.assign(stamp);
    previous_line = t.line();
    r.prompt_tokens = azure_tokens(t, c_prompt, "prompt", limits.max_prompt_tokens, "RequestTraceLimits::max_prompt_tokens");
    r.output_tokens = azure_tokens(t, c_output, "output", limits.max_output_tokens, "RequestTraceLimits::max_output_tokens");
    requests.push_back(std::move(r));
  }
  if (requests.empty()) throw InputError(source, t.line() + 1, "", "no request rows");
  return requests;
}

// ---- Mooncake JSON Lines -----------------------------------------------------------------------

namespace {

std::string_view trim_blank(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The 1-based column where the value of `"key":` starts in `line`, 0 when not found (an escaped key).
int value_column(std::string_view line, std::string_view key) {
  const std::string quoted = fmt::format("\"{}\"", key);
  for (size_t at = line.find(quoted); at != std::string_view::npos; at = line.find(quoted, at + 1)) {
    size_t p = at + quoted.size();
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    if (p >= line.size() || line[p] != ':') continue;
    ++p;
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    return static_cast<int>(p) + 1;
  }
  return 0;
}

const char* json_type(const nlohmann::json& v) {
  if (v.is_number()) return "a number";
  return v.type_name();  // "object", "array", "string", "boolean", "null"
}

// An integer JSON number: int64 as is, a larger unsigned or an out-of-range integral float clamped
// to int64's range (so that the caller reports it as absurd); nullopt for a non-integer.
std::optional<int64_t> json_integer(const nlohmann::json& v) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(kMax) ? kMax : static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) return std::nullopt;
    if (d >= 9.2e18) return kMax;
    if (d <= -9.2e18) return kMin;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// One Mooncake line, its position for errors.
struct MooncakeRow {
  const std::string& source;
  int line_no;
  std::string_view line;
  const nlohmann::json& object;

  // Where the row's object starts (its '{'), 1-based: the place of a key the row lacks.
  int object_column() const { return static_cast<int>(std::min(line.find('{'), line.size())) + 1; }
  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw InputError(source, line_no, std::string(key), message, value_column(line, key));
  }
  const nlohmann::json& require(std::string_view key) const {
    const auto it = object.find(key);
    if (it == object.end())
      throw InputError(source, line_no, std::string(key),
                       "missing key (a Mooncake row has timestamp, input_length, output_length and hash_ids)",
                       object_column());
    return *it;
  }
  int32_t tokens(std::string_view key, std::string_view kind, int64_t limit, std::string_view limit_name) const {
    const nlohmann::json& v = require(key);
    const std::optional<int64_t> n = json_integer(v);
    if (!n) fail(key, v.is_number() ? fmt::format("{} is not an integer", v.dump()) : fmt::format("expected an integer, got {}", json_type(v)));
    if (auto e = token_count_error(*n, v.dump(), kind, limit, limit_name)) fail(key, *e);
    return static_cast<int32_t>(*n);
  }
};

}  // namespace

std::vector<Request> parse_mooncake_trace(std::string_view text, const std::string& source, const RequestTraceLimits& limits) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  if (text.size() > limits.max_file_bytes)
    throw InputError(source, 0, "", limit_message(limits.max_file_bytes, "bytes in the file", "RequestTraceLimits::max_file_bytes"));
  JsonRequestLimits json;  // one line; the line and hash_ids limits are checked here, by their names
  json.max_body_bytes = limits.max_line_bytes;
  json.max_depth = 8;
  json.max_values = limits.max_line_bytes;
  json.max_string_bytes = limits.max_line_bytes;
  std::vector<Request> requests;
  size_t total_hashes = 0;
  double previous_ms = 0;
  std::string previous_text;
  int previous_line = 0;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.size() > limits.max_line_bytes)
      throw InputError(source, line_no, "", limit_message(limits.max_line_bytes, "bytes in a line", "RequestTraceLimits::max_line_bytes"));
    if (trim_blank(line).empty()) continue;
    if (requests.size() >= limits.max_rows)
      throw InputError(source, line_no, "", limit_message(limits.max_rows, "request rows", "RequestTraceLimits::max_rows"));
    const nlohmann::json object = parse_json_line(line, source, line_no, json);
    if (!object.is_object())
      throw InputError(source, line_no, "", fmt::format("expected a JSON object per line, got {}", json_type(object)));
    const MooncakeRow row{source, line_no, line, object};

    Request r;
    r.id = requests.size();
    const nlohmann::json& stamp = row.require("timestamp");
    if (!stamp.is_number()) row.fail("timestamp", fmt::format("expected a number of milliseconds, got {}", json_type(stamp)));
    const double ms = stamp.get<double>();
    if (ms < 0) row.fail("timestamp", fmt::format("{} is negative: timestamps are milliseconds from the trace start", stamp.dump()));
    if (!(ms / 1000 <= limits.max_arrival_s))
      row.fail("timestamp", fmt::format("{} is {}", stamp.dump(), limit_message(static_cast<uint64_t>(limits.max_arrival_s),
                                                                           "seconds after the trace start", "RequestTraceLimits::max_arrival_s")));
    if (!requests.empty() && ms < previous_ms)
      row.fail("timestamp", fmt::format("{} is before the previous row's {} (line {}): rows must be in time order", stamp.dump(),
                                        previous_text, previous_line));
    previous_ms = ms;
    previous_text = stamp.dump();
    previous_line = line_no;
    r.arrival_s = ms / 1000;
    r.prompt_tokens = row.tokens("input_length", "prompt", limits.max_prompt_tokens, "RequestTraceLimits::max_prompt_tokens");
    r.output_tokens = row.tokens("output_length", "output", limits.max_output_tokens, "RequestTraceLimits::max_output_tokens");
    r.prefix_block_tokens = kMooncakeBlockTokens;

    if (const auto it = object.find("hash_ids"); it != object.end()) {
      if (!it->is_array()) row.fail("hash_ids", fmt::format("expected an array of integers, got {}", json_type(*it)));
      const size_t n = it->size();
      if (n > limits.max_hash_ids_per_row)
        row.fail("hash_ids", limit_message(limits.max_hash_ids_per_row, "hash ids in a row", "RequestTraceLimits::max_hash_ids_per_row"));
      const int64_t blocks = (int64_t{r.prompt_tokens} + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
      if (static_cast<int64_t>(n) > blocks)
        row.fail("hash_ids", fmt::format("{} hash ids for input_length {}: at most ceil({} / {}) = {}, one per block of {} tokens", n,
                                         r.prompt_tokens, r.prompt_tokens, kMooncakeBlockTokens, blocks, kMooncakeBlockTokens));
      total_hashes += n;
      if (total_hashes > limits.max_hash_ids)
        row.fail("hash_ids", limit_message(limits.max_hash_ids, "hash ids in the file", "RequestTraceLimits::max_hash_ids"));
      r.prefix_hashes.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const nlohmann::json& h = (*it)[i];
        const std::optional<int64_t> v = json_integer(h);
        if (!v || *v < 0 || *v > int64_t{std::numeric_limits<uint32_t>::max()})
          row.fail("hash_ids", fmt::format("element {} ({}) is not an integer in [0, {}]", i, h.dump(), std::numeric_limits<uint32_t>::max()));
        r.prefix_hashes.push_back(static_cast<uint32_t>(*v));
      }
    }
    requests.push_back(std::move(r));
  }
  if (requests.empty()) throw InputError(source, line_no + 1, "", "no request rows");
  return requests;
}

// ---- Format and files --------------------------------------------------------------------------

const char* request_trace_format_name(RequestTraceFormat f) {
  switch (f) {
    case RequestTraceFormat::kAuto: return "auto";
    case RequestTraceFormat::kAzureCsv: return "azure";
    case RequestTraceFormat::kMooncakeJsonl: return "mooncake";
  }
  return "?";
}

RequestTraceFormat parse_request_trace_format(std::string_view name) {
  for (const auto f : {RequestTraceFormat::kAuto, RequestTraceFormat::kAzureCsv, RequestTraceFormat::kMooncakeJsonl})
    if (name == request_trace_format_name(f)) return f;
  throw UsageError(fmt::format("unknown trace format '{}' (expected auto, azure or mooncake)", name));
}

RequestTraceFormat detect_request_trace_format(std::string_view path, std::string_view text) {
  const auto ends_with = [&](std::string_view ext) {
    if (path.size() < ext.size()) return false;
    const std::string_view tail = path.substr(path.size() - ext.size());
    for (size_t i = 0; i < ext.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(tail[i])) != ext[i]) return false;
    return true;
  };
  if (ends_with(".csv")) return RequestTraceFormat::kAzureCsv;
  if (ends_with(".jsonl") || ends_with(".ndjson") || ends_with(".json")) return RequestTraceFormat::kMooncakeJsonl;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' ? RequestTraceFormat::kMooncakeJsonl : RequestTraceFormat::kAzureCsv;
  }
  return RequestTraceFormat::kAzureCsv;
}

std::vector<Request> parse_request_trace(std::string_view text, const std::string& source, RequestTraceFormat format,
                                         const RequestTraceLimits& limits) {
  if (format == RequestTraceFormat::kAuto) format = detect_request_trace_format(source, text);
  return format == RequestTraceFormat::kMooncakeJsonl ? parse_mooncake_trace(text, source, limits)
                                                      : parse_azure_llm_trace(text, source, limits);
}

std::vector<Request> read_request_trace(const std::string& path, RequestTraceFormat format, const RequestTraceLimits& limits) {
  return parse_request_trace(read_text_file(path, limits.max_file_bytes, "RequestTraceLimits::max_file_bytes"), path, format, limits);
}

}  // namespace gpufleet::io
