// A comma-separated table with a header line, for the CSV readers (readers/traces/openb_csv.h,
// readers/traces/fgd_reference.h). Not a public API: used only by those readers.
//
// Format: the first line is the header; fields are separated by commas with no quoting
// (the openb and FGD artifact files have none); spaces and tabs around a field are trimmed; a
// trailing '\r' is dropped; blank lines are skipped; a leading UTF-8 byte-order mark is ignored.
//
// Limits (readers/formats/input_limits.h, CsvLimits), each an InputError naming the limit: the longest line,
// the most columns, the most data rows. A column name repeated in the header is an error (found
// with a hash set, in time linear in the header).
//
// Errors name the source, the 1-based line and the column's header name as the field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readers/formats/input_limits.h"

namespace gpufleet::io::detail {

class CsvTable {
 public:
  /// Reads the header. Throws InputError on an empty text, a header over the limits or a repeated
  /// column name.
  CsvTable(std::string_view text, std::string source, const CsvLimits& limits = kCsvLimits);

  /// Index of a required column; "missing column (header has: ...)" otherwise.
  size_t require(std::string_view name) const;
  bool has(std::string_view name) const;
  /// The header's column names, trimmed.
  const std::vector<std::string_view>& header() const { return header_; }

  /// Advances to the next non-empty data row; false at the end. Throws on a row with fewer fields
  /// than the header ("truncated row: k of n fields", at the first missing column) or more.
  bool next_row();

  /// The trimmed text of column `col` in the current row.
  std::string_view text(size_t col) const;
  /// An integer in [min, max]. Integral decimals such as "1000.0" or "1e3" are accepted (some exports
  /// write them). Errors: "'s' is not an integer", "v is negative" (when min >= 0), "v is out of
  /// range [min, max]"; the range is checked before any conversion, so "2e44", "nan" or "inf" are
  /// plain errors.
  int64_t integer(size_t col, int64_t min, int64_t max) const;
  /// integer() whose errors also carry the cell's column (column_of).
  int64_t integer_at(size_t col, int64_t min, int64_t max) const;
  /// A finite decimal number; NaN for an empty cell. Error: "'s' is not a number".
  double number_or_nan(size_t col) const;

  [[noreturn]] void fail(size_t col, const std::string& message) const;
  /// fail() with the 1-based byte column where the cell's trimmed text starts in its line.
  [[noreturn]] void fail_at(size_t col, const std::string& message) const;
  /// That column for `col` of the current row.
  int column_of(size_t col) const;
  [[noreturn]] void fail(std::string_view field, const std::string& message) const;
  /// The 1-based line of the current row (of the header before the first row).
  int line() const { return line_no_; }
  const std::string& source() const { return source_; }

 private:
  bool next_line(std::string_view& line);
  int64_t integer_impl(size_t col, int64_t min, int64_t max, bool at) const;

  std::string_view text_;
  std::string source_;
  CsvLimits limits_;
  size_t pos_ = 0;
  int line_no_ = 0;
  size_t rows_ = 0;
  std::vector<std::string_view> header_;
  std::vector<std::string_view> fields_;
  const char* row_start_ = nullptr;  // first byte of the current row's line
};

}  // namespace gpufleet::io::detail
