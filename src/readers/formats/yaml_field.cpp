#include "readers/formats/yaml_field.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <exception>
#include <unordered_map>

#include <fmt/format.h>

#include "model/pod_disruption_budget.h"
#include "util/input_error.h"

namespace gpufleet::io::detail {

std::string_view strip_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  return text;
}

namespace {

// Fails at the second occurrence of a key repeated in one mapping. A lookup returns the first, so a
// later value would be dropped without a word; kubectl's strict decoding rejects it too ("mapping
// key ... already defined"). Recursion depth is bounded by YamlLimits::max_depth.
void reject_duplicate_keys(const YamlNode& node, const std::string& path, const Source& src) {
  if (node.type == YamlType::kSequence) {
    for (size_t i = 0; i < node.items.size(); ++i) reject_duplicate_keys(node.items[i], fmt::format("{}[{}]", path, i), src);
    return;
  }
  if (node.type != YamlType::kMapping) return;
  std::unordered_map<std::string_view, YamlMark> seen;
  for (const auto& [k, v] : node.entries) {
    if (k.type != YamlType::kScalar) continue;
    const std::string child = path.empty() ? k.scalar : path + "." + k.scalar;
    const auto [it, fresh] = seen.try_emplace(k.scalar, k.mark);
    if (!fresh)
      src.fail(k.mark, child, fmt::format("duplicate key '{}' (first at line {})", k.scalar, src.position(it->second).first));
    reject_duplicate_keys(v, child, src);
  }
}

}  // namespace

std::vector<YamlNode> load_documents(std::string_view text, const Source& src, const std::string& path) {
  std::vector<YamlNode> docs = parse_yaml_stream(text, src, path);
  for (const YamlNode& doc : docs) reject_duplicate_keys(doc, path, src);
  return docs;
}

const char* type_name(const YamlNode& n) {
  switch (n.type) {
    case YamlType::kNull: return "null";
    case YamlType::kScalar: return "a scalar";
    case YamlType::kSequence: return "a list";
    case YamlType::kMapping: return "a mapping";
  }
  return "nothing";
}

Field::Field(const YamlNode& node, std::string path, const Source& src)
    : node_(&node), mark_(node.mark), path_(std::move(path)), src_(&src) {}

void Field::fail(const std::string& message) const { src_->fail(mark_, path_, message); }

void Field::fail_in_text(int line, int column, const std::string& message) const {
  if (node_ == nullptr || node_->content.is_null() || line < 1 || column < 1) fail(message);
  src_->fail(YamlMark{node_->content.line + line - 1, node_->content.column + column - 1}, path_, message);
}

void fail_referenced(const Field& f, const InputError& error) { f.fail(error.what()); }

void Field::require_map() const {
  if (!present()) fail("required field is missing");
  if (!is_map()) fail(fmt::format("expected a mapping, got {}", type_name(*node_)));
}

void Field::only_keys(std::initializer_list<const char*> allowed) const {
  if (!present()) return;
  require_map();
  for (const auto& [k, v] : node_->entries) {
    if (k.type != YamlType::kScalar) Field(k, path_, *src_).fail(fmt_key_error(k));
    bool ok = false;
    std::string list;
    for (const char* a : allowed) {
      ok = ok || k.scalar == a;
      list += list.empty() ? a : fmt::format(", {}", a);
    }
    if (!ok) Field(k, child_path(k.scalar), *src_).fail(fmt::format("unknown key '{}' (expected {})", k.scalar, list));
  }
}

void Field::fail_key(std::string_view key, const std::string& message) const {
  if (!is_map()) return;
  for (const auto& [k, v] : node_->entries)
    if (k.type == YamlType::kScalar && k.scalar == key) Field(k, child_path(key), *src_).fail(message);
}

Field Field::operator[](std::string_view key) const {
  std::string p = child_path(key);
  if (!present()) return missing(std::move(p));
  require_map();
  const YamlNode* child = node_->find(key);
  if (child == nullptr) return missing(std::move(p));
  return Field(*child, std::move(p), *src_);
}

size_t Field::size() const {
  if (!present()) return 0;
  if (!is_seq()) fail(fmt::format("expected a list, got {}", type_name(*node_)));
  return node_->items.size();
}

Field Field::at(size_t i) const {
  return Field(node_->items.at(i), fmt::format("{}[{}]", path_, i), *src_);
}

const std::string& Field::scalar() const {
  if (!present()) fail("required field is missing");
  if (!is_scalar()) fail(fmt::format("expected a scalar, got {}", type_name(*node_)));
  return node_->scalar;
}

std::string Field::required_str() const {
  std::string s = scalar();  // "required field is missing" when absent
  if (s.empty()) fail("must not be empty");
  return s;
}

int64_t Field::integer(int64_t min, int64_t max) const {
  const std::string& s = scalar();
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) fail(fmt::format("'{}' is not an integer", s));
  if (v < 0 && min >= 0) fail(fmt::format("{} is negative", v));
  if (v < min || v > max) fail(fmt::format("{} is out of range [{}, {}]", v, min, max));
  return v;
}

double Field::number() const {
  const std::string& s = scalar();
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
    fail(fmt::format("'{}' is not a number", s));
  return v;
}

bool Field::boolean(bool def) const {
  if (!present()) return def;
  std::string s = scalar();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "true" || s == "yes" || s == "on" || s == "y") return true;
  if (s == "false" || s == "no" || s == "off" || s == "n") return false;
  fail(fmt::format("'{}' is not a boolean", scalar()));
}

Quantity Field::quantity() const {
  const std::string& s = scalar();
  Quantity q;
  try {
    q = Quantity::parse(s);
  } catch (const std::exception& e) {
    fail(fmt::format("'{}' is not a valid quantity: {}", s, e.what()));
  }
  if (q.is_negative()) fail(fmt::format("'{}' is negative", s));
  return q;
}

std::string Field::fmt_key_error(const YamlNode& k) {
  return fmt::format("expected a string key, got {}", type_name(k));
}

std::string Field::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

Field Field::missing(std::string p) const {
  Field f = *this;  // at this node's position
  f.node_ = nullptr;
  f.path_ = std::move(p);
  return f;
}

double seconds(const Field& f) {
  const double v = f.number();
  if (v < 0) f.fail(fmt::format("{} is negative", f.scalar()));
  if (v > kMaxSeconds) f.fail(fmt::format("{} is absurdly large", f.scalar()));
  return v;
}

IntOrPercent int_or_percent(const Field& f, int64_t max_count) {
  const std::string& s = f.scalar();
  if (!s.empty() && s.back() == '%') {
    const std::string digits = s.substr(0, s.size() - 1);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      f.fail(fmt::format("'{}' is not a valid percent: a percent is digits followed by '%', e.g. '50%'", s));
    int32_t value = 0;
    for (const char c : digits) value = std::min(value * 10 + (c - '0'), 1000);  // saturates: only "> 100" matters
    if (value > 100) f.fail(fmt::format("'{}' is more than 100%", s));
    return IntOrPercent{value, true};
  }
  return IntOrPercent{static_cast<int32_t>(f.integer(0, max_count)), false};
}

}  // namespace gpufleet::io::detail
