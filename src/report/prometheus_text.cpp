#include "report/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gpufleet::live {
namespace {

bool valid_name(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool series_of_family(std::string_view name, std::string_view family, std::string_view type) {
  if (name == family) return type != "histogram";
  if (name.substr(0, family.size()) != family) return false;
  const std::string_view suffix = name.substr(family.size());
  if (type == "histogram") return suffix == "_bucket" || suffix == "_sum" || suffix == "_count";
  if (type == "summary") return suffix == "_sum" || suffix == "_count";
  return false;
}

}  // namespace

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";  // also -0.0
  // Shortest round-trip digits; plain decimals (0.0001, not 1e-04) for magnitudes 1e-6 .. 1e15.
  char buf[400];
  const double magnitude = std::abs(value);
  const auto r = magnitude >= 1e-6 && magnitude < 1e15 ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                                                       : std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void PrometheusTextWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  if (!valid_name(name, true)) throw std::invalid_argument("invalid metric name \"" + std::string(name) + "\"");
  if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped")
    throw std::invalid_argument("invalid metric type \"" + std::string(type) + "\"");
  if (!families_.insert(std::string(name)).second)
    throw std::logic_error("metric family \"" + std::string(name) + "\" written twice");
  family_ = name;
  family_type_ = type;
  series_.clear();
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  for (const char c : help) {
    if (c == '\\') out_ += "\\\\";
    else if (c == '\n') out_ += "\\n";
    else out_ += c;
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PrometheusTextWriter::sample(std::string_view name, const MetricLabels& labels, double value) {
  if (family_.empty() || !series_of_family(name, family_, family_type_))
    throw std::logic_error("sample \"" + std::string(name) + "\" outside its family (current: \"" + family_ + "\")");
  std::string line(name);
  if (!labels.empty()) {
    line += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      const std::string_view key = labels[i].first;
      if (!valid_name(key, false) || key.substr(0, 2) == "__")
        throw std::invalid_argument("invalid label name \"" + std::string(key) + "\"");
      if (i > 0) line += ',';
      line += key;
      line += "=\"";
      line += escape_label_value(labels[i].second);
      line += '"';
    }
    line += '}';
  }
  if (!series_.insert(line).second) throw std::logic_error("duplicate sample " + line);
  out_ += line;
  out_ += ' ';
  out_ += format_metric_value(value);
  out_ += '\n';
}

}  // namespace gpufleet::live
