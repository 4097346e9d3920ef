// Prometheus text exposition format 0.0.4 (prometheus.io/docs/instrumenting/exposition_formats/,
// "Text-based format"), as the live server's /metrics writes it. No I/O.
//
// What the writer guarantees (the format's rules):
//  - one `# HELP` and one `# TYPE` line per metric family, before its first sample; HELP text escapes
//    `\` as `\\` and a newline as `\n`;
//  - a family's samples are contiguous (a family is written whole before the next one starts);
//  - label values escape `\`, `"` and a newline as `\\`, `\"`, `\n`;
//  - values are the shortest decimal that reads back as the same double (std::to_chars), written
//    without exponent from 1e-6 to 1e15 (0.0001, 4000), `NaN`, `+Inf` or `-Inf`;
//  - every line ends with `\n`, the last one included.
// Names are the caller's: metric names must match [a-zA-Z_:][a-zA-Z0-9_:]* and label names
// [a-zA-Z_][a-zA-Z0-9_]* (not starting with `__`); the writer throws std::invalid_argument otherwise,
// and std::logic_error for a family started twice or a sample whose name and labels repeat one of the
// same family (a duplicate label set).
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gpufleet::live {

/// Content-Type of the text format (the /metrics response header).
inline constexpr const char* kPrometheusTextContentType = "text/plain; version=0.0.4; charset=utf-8";

/// A sample's labels, in the order written.
using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

/// The sample value as the format spells it (see the top of this file).
std::string format_metric_value(double value);

/// `value` with `\`, `"` and newline escaped for a label value.
std::string escape_label_value(std::string_view value);

class PrometheusTextWriter {
 public:
  /// Starts a family: writes `# HELP name help` and `# TYPE name type`. `type` is counter, gauge,
  /// histogram, summary or untyped.
  void family(std::string_view name, std::string_view type, std::string_view help);
  /// One sample of the current family: `name` is the family's name, or for a histogram its
  /// `_bucket`, `_sum` or `_count` series (a summary: `_sum`, `_count`).
  void sample(std::string_view name, const MetricLabels& labels, double value);
  /// The text written so far (ends with a newline unless nothing was written).
  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  std::string family_;
  std::string family_type_;
  std::unordered_set<std::string> families_;
  std::unordered_set<std::string> series_;  // name{labels} of the current family
};

}  // namespace gpufleet::live
