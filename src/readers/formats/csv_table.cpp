#include "readers/formats/csv_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/input_error.h"

namespace gpufleet::io::detail {
namespace {

// Splits one line on commas, at most `max_fields` (one more tells the caller it has too many).
// Strips a trailing '\r'.
void split_line(std::string_view line, size_t max_fields, std::vector<std::string_view>& out) {
  out.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t start = 0;
  while (out.size() <= max_fields) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

CsvTable::CsvTable(std::string_view text, std::string source, const CsvLimits& limits)
    : text_(text), source_(std::move(source)), limits_(limits) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // UTF-8 BOM
  std::string_view header_line;
  if (!next_line(header_line)) throw InputError(source_, 1, "", "empty file: expected a CSV header");
  split_line(header_line, limits_.max_columns, header_);
  if (header_.size() > limits_.max_columns)
    throw InputError(source_, 1, "", limit_message(limits_.max_columns, "columns", "CsvLimits::max_columns"));
  std::unordered_map<std::string_view, size_t> seen;
  for (auto& h : header_) {
    h = trim(h);
    if (!h.empty() && !seen.emplace(h, seen.size()).second)
      throw InputError(source_, 1, std::string(h), "column appears twice in the header");
  }
}

size_t CsvTable::require(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  throw InputError(source_, 1, std::string(name), fmt::format("missing column (header has: {})", fmt::join(header_, ",")));
}

bool CsvTable::has(std::string_view name) const {
  for (const auto h : header_)
    if (h == name) return true;
  return false;
}

bool CsvTable::next_row() {
  std::string_view line;
  while (next_line(line)) {
    if (trim(line).empty() || trim(line) == "\r") continue;
    if (++rows_ > limits_.max_rows)
      throw InputError(source_, line_no_, "", limit_message(limits_.max_rows, "data rows", "CsvLimits::max_rows"));
    row_start_ = line.data();
    split_line(line, header_.size(), fields_);
    if (fields_.size() < header_.size())
      throw InputError(source_, line_no_, std::string(header_[fields_.size()]),
                       fmt::format("truncated row: {} of {} fields", fields_.size(), header_.size()));
    if (fields_.size() > header_.size())
      throw InputError(source_, line_no_, "",
                       fmt::format("row has {} fields, header has {}", std::count(line.begin(), line.end(), ',') + 1, header_.size()));
    return true;
  }
  return false;
}

std::string_view CsvTable::text(size_t col) const { return trim(fields_[col]); }

int64_t CsvTable::integer(size_t col, int64_t min, int64_t max) const { return integer_impl(col, min, max, false); }

int64_t CsvTable::integer_at(size_t col, int64_t min, int64_t max) const { return integer_impl(col, min, max, true); }

int64_t CsvTable::integer_impl(size_t col, int64_t min, int64_t max, bool at) const {
  const auto fail = [&](const std::string& message) {
    if (at) fail_at(col, message);
    this->fail(col, message);
  };
  const std::string_view s = text(col);
  const char* end = s.data() + s.size();
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc::result_out_of_range && ptr == end) fail(fmt::format("{} is out of range [{}, {}]", s, min, max));
  if (s.empty() || ec != std::errc() || ptr != end) {
    // Accept integral decimals such as "1000.0" (some exports write them); reject anything else. The
    // range is checked on the double, before the cast that would be undefined outside int64_t.
    double d = 0;
    const auto [dptr, dec] = std::from_chars(s.data(), end, d);
    if (s.empty() || dec != std::errc() || dptr != end || !std::isfinite(d) || std::trunc(d) != d)
      fail(fmt::format("'{}' is not an integer", s));
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      if (d < 0 && min >= 0) fail(fmt::format("{} is negative", s));
      fail(fmt::format("{} is out of range [{}, {}]", s, min, max));
    }
    v = static_cast<int64_t>(d);
  }
  if (v < min || v > max) {
    if (v < 0 && min >= 0) fail(fmt::format("{} is negative", v));
    fail(fmt::format("{} is out of range [{}, {}]", v, min, max));
  }
  return v;
}

double CsvTable::number_or_nan(size_t col) const {
  const std::string_view s = text(col);
  if (s.empty()) return std::nan("");
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) fail(col, fmt::format("'{}' is not a number", s));
  return v;
}

void CsvTable::fail(size_t col, const std::string& message) const {
  throw InputError(source_, line_no_, std::string(header_[col]), message);
}

void CsvTable::fail_at(size_t col, const std::string& message) const {
  throw InputError(source_, line_no_, std::string(header_[col]), message, column_of(col));
}

int CsvTable::column_of(size_t col) const {
  return static_cast<int>(text(col).data() - row_start_) + 1;
}

void CsvTable::fail(std::string_view field, const std::string& message) const {
  throw InputError(source_, line_no_, std::string(field), message);
}

bool CsvTable::next_line(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  const size_t nl = text_.find('\n', pos_);
  const size_t end = nl == std::string_view::npos ? text_.size() : nl;
  ++line_no_;
  if (end - pos_ > limits_.max_line_bytes)
    throw InputError(source_, line_no_, "", limit_message(limits_.max_line_bytes, "bytes in a line", "CsvLimits::max_line_bytes"));
  line = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return true;
}

}  // namespace gpufleet::io::detail
