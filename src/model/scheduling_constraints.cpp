#include "model/scheduling_constraints.h"
#include "model/dns_name.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace gpufleet {

const std::string* find_label(const Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

namespace {

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// validation.qualifiedNameFmt / labelValueFmt body: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool label_name_chars_ok(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

// validation.IsDNS1123Subdomain: at most 253 characters, lower-case alphanumerics, '-' and '.',
// starting and ending with an alphanumeric.
bool dns1123_subdomain_ok(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  const auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_alnum(c) || c == '-' || c == '.'; });
}

std::optional<int64_t> parse_go_int64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  // Accumulate the magnitude as uint64 so that -9223372036854775808 parses.
  const uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t magnitude = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - digit) / 10) return std::nullopt;  // out of range
    magnitude = magnitude * 10 + digit;
  }
  if (!negative) return static_cast<int64_t>(magnitude);
  return magnitude == uint64_t{1} << 63 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
}


std::optional<std::string> label_key_error(std::string_view key) {
  std::string_view name = key;
  if (const size_t slash = key.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (!dns1123_subdomain_ok(prefix))
      return fmt::format("'{}' is not a valid label key: its prefix must be a DNS-1123 subdomain (lower-case "
                         "alphanumerics, '-' and '.', at most 253 characters)",
                         key);
  }
  if (name.size() > 63 || !label_name_chars_ok(name))
    return fmt::format("'{}' is not a valid label key: a name of at most 63 characters, alphanumerics, '-', '_' or '.', "
                       "starting and ending with an alphanumeric, after an optional DNS prefix and '/'",
                       key);
  return std::nullopt;
}

std::optional<std::string> label_value_error(std::string_view value) {
  if (value.empty()) return std::nullopt;
  if (value.size() > 63 || !label_name_chars_ok(value))
    return fmt::format("'{}' is not a valid label value: at most 63 characters, alphanumerics, '-', '_' or '.', "
                       "starting and ending with an alphanumeric",
                       value);
  return std::nullopt;
}

std::optional<std::string> node_selector_requirement_error(const SelectorRequirement& r) {
  if (auto e = label_key_error(r.key)) return e;
  const std::string& op = r.operator_;
  if (op == "In" || op == "NotIn") {
    if (r.values.empty()) return "for 'In', 'NotIn' operators, values set can't be empty";
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!r.values.empty()) return "values set must be empty for exists and does not exist";
  } else if (op == "Gt" || op == "Lt") {
    if (r.values.size() != 1) return "for 'Gt', 'Lt' operators, exactly one value is required";
    if (!parse_go_int64(r.values[0])) return fmt::format("for 'Gt', 'Lt' operators, the value must be an integer, not '{}'", r.values[0]);
  } else {
    return fmt::format("'{}' is not a valid node selector operator", op);
  }
  for (const std::string& v : r.values)
    if (auto e = label_value_error(v)) return e;
  return std::nullopt;
}

// labels.NewRequirement's validity checks and labels.Requirement.Matches for the four operators of
// a LabelSelectorRequirement (k8s.io/apimachinery/pkg/labels/selector.go).
bool label_selector_matches(const LabelSelector& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    const std::string* v = find_label(labels, key);
    if (!v || *v != value) return false;
  }
  for (const SelectorRequirement& r : selector.match_expressions) {
    const std::string* v = find_label(labels, r.key);
    const bool listed = v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
    if (r.operator_ == "In" || r.operator_ == "NotIn") {
      if (r.values.empty()) return false;
      if (listed != (r.operator_ == "In")) return false;
    } else if (r.operator_ == "Exists" || r.operator_ == "DoesNotExist") {
      if (!r.values.empty()) return false;
      if ((v != nullptr) != (r.operator_ == "Exists")) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace gpufleet
