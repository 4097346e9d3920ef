// CEL values, equality and Semver (cel.h).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "cel/cel.h"

namespace gpufleet::cel {

struct Value::Data {
  std::string s;
  std::vector<Value> list;
  Entries map;
  std::optional<Value> missing_key_default;
  Quantity q;
  Semver semver;
};

namespace {

std::logic_error wrong_kind(const Value& v, const char* wanted) {
  return std::logic_error(std::string("cel::Value is ") + std::string(v.type_name()) + ", not " + wanted);
}

bool valid_key(const Value& k) {
  switch (k.kind()) {
    case Value::Kind::kString:
    case Value::Kind::kInt:
    case Value::Kind::kUint:
    case Value::Kind::kBool:
      return true;
    default:
      return false;
  }
}

// Numeric equality across int, uint and double (cel-go common/types: Int.Equal etc.).
bool numeric_equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  const K ka = a.kind(), kb = b.kind();
  if (ka == K::kDouble || kb == K::kDouble) {
    const double x = ka == K::kDouble ? a.as_double() : 0;
    const double y = kb == K::kDouble ? b.as_double() : 0;
    if (ka == K::kDouble && kb == K::kDouble) return x == y;
    const double d = ka == K::kDouble ? x : y;
    const Value& other = ka == K::kDouble ? b : a;
    if (std::isnan(d)) return false;
    if (other.kind() == K::kInt) {
      // Exact: compare as double only when d is integral and in range.
      if (d != std::floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
      return static_cast<int64_t>(d) == other.as_int();
    }
    if (d != std::floor(d) || d < 0 || d >= 18446744073709551616.0) return false;
    return static_cast<uint64_t>(d) == other.as_uint();
  }
  if (ka == K::kInt && kb == K::kInt) return a.as_int() == b.as_int();
  if (ka == K::kUint && kb == K::kUint) return a.as_uint() == b.as_uint();
  const int64_t i = ka == K::kInt ? a.as_int() : b.as_int();
  const uint64_t u = ka == K::kUint ? a.as_uint() : b.as_uint();
  return i >= 0 && static_cast<uint64_t>(i) == u;
}

bool is_number(Value::Kind k) { return k == Value::Kind::kInt || k == Value::Kind::kUint || k == Value::Kind::kDouble; }

void append_quoted(std::string& out, const std::string& s, bool bytes) {
  out += bytes ? "b\"" : "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

Value::Value() = default;
Value Value::null() { return Value(); }

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.scalar_.b = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.scalar_.i = i;
  return v;
}
Value Value::uinteger(uint64_t u) {
  Value v;
  v.kind_ = Kind::kUint;
  v.scalar_.u = u;
  return v;
}
Value Value::real(double x) {
  Value v;
  v.kind_ = Kind::kDouble;
  v.scalar_.d = x;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  auto d = std::make_shared<Data>();
  d->s = std::move(s);
  v.data_ = std::move(d);
  return v;
}
Value Value::bytes(std::string b) {
  Value v;
  v.kind_ = Kind::kBytes;
  auto d = std::make_shared<Data>();
  d->s = std::move(b);
  v.data_ = std::move(d);
  return v;
}
Value Value::list(std::vector<Value> elements) {
  Value v;
  v.kind_ = Kind::kList;
  auto d = std::make_shared<Data>();
  d->list = std::move(elements);
  v.data_ = std::move(d);
  return v;
}
Value Value::map(Entries entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!valid_key(entries[i].first))
      throw std::invalid_argument("unsupported map key type: " + std::string(entries[i].first.type_name()));
    for (size_t j = 0; j < i; ++j)
      if (entries[j].first == entries[i].first)
        throw std::invalid_argument("Failed with repeated key");  // cel-go interpreter/attributes.go
  }
  Value v;
  v.kind_ = Kind::kMap;
  auto d = std::make_shared<Data>();
  d->map = std::move(entries);
  v.data_ = std::move(d);
  return v;
}
Value Value::map_with_default(Entries entries, Value missing_key_default) {
  Value v = map(std::move(entries));
  auto d = std::make_shared<Data>(*v.data_);
  d->missing_key_default = std::move(missing_key_default);
  v.data_ = std::move(d);
  return v;
}
Value Value::quantity(Quantity q) {
  Value v;
  v.kind_ = Kind::kQuantity;
  auto d = std::make_shared<Data>();
  d->q = q;
  v.data_ = std::move(d);
  return v;
}
Value Value::semver(Semver s) {
  Value v;
  v.kind_ = Kind::kSemver;
  auto d = std::make_shared<Data>();
  d->semver = std::move(s);
  v.data_ = std::move(d);
  return v;
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::kNull: return "null_type";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kUint: return "uint";
    case Kind::kDouble: return "double";
    case Kind::kString: return "string";
    case Kind::kBytes: return "bytes";
    case Kind::kList: return "list";
    case Kind::kMap: return "map";
    case Kind::kQuantity: return "kubernetes.Quantity";
    case Kind::kSemver: return "kubernetes.Semver";
  }
  return "unknown";
}

bool Value::as_bool() const {
  if (kind_ != Kind::kBool) throw wrong_kind(*this, "bool");
  return scalar_.b;
}
int64_t Value::as_int() const {
  if (kind_ != Kind::kInt) throw wrong_kind(*this, "int");
  return scalar_.i;
}
uint64_t Value::as_uint() const {
  if (kind_ != Kind::kUint) throw wrong_kind(*this, "uint");
  return scalar_.u;
}
double Value::as_double() const {
  if (kind_ != Kind::kDouble) throw wrong_kind(*this, "double");
  return scalar_.d;
}
const std::string& Value::as_string() const {
  if (kind_ != Kind::kString && kind_ != Kind::kBytes) throw wrong_kind(*this, "string or bytes");
  return data_->s;
}
const std::vector<Value>& Value::as_list() const {
  if (kind_ != Kind::kList) throw wrong_kind(*this, "list");
  return data_->list;
}
const Value::Entries& Value::as_map() const {
  if (kind_ != Kind::kMap) throw wrong_kind(*this, "map");
  return data_->map;
}
const Quantity& Value::as_quantity() const {
  if (kind_ != Kind::kQuantity) throw wrong_kind(*this, "kubernetes.Quantity");
  return data_->q;
}
const Semver& Value::as_semver() const {
  if (kind_ != Kind::kSemver) throw wrong_kind(*this, "kubernetes.Semver");
  return data_->semver;
}

const Value* Value::find(const Value& key) const {
  for (const auto& [k, v] : as_map())
    if (k == key) return &v;
  return nullptr;
}

const Value* Value::missing_key_default() const {
  if (kind_ != Kind::kMap || !data_->missing_key_default) return nullptr;
  return &*data_->missing_key_default;
}

bool operator==(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (is_number(a.kind()) && is_number(b.kind())) return numeric_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kNull: return true;
    case K::kBool: return a.as_bool() == b.as_bool();
    case K::kString:
    case K::kBytes: return a.as_string() == b.as_string();
    case K::kList: {
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!(x[i] == y[i])) return false;
      return true;
    }
    case K::kMap: {
      const auto& x = a.as_map();
      if (x.size() != b.as_map().size()) return false;
      for (const auto& [k, v] : x) {
        const Value* w = b.find(k);
        if (w == nullptr || !(v == *w)) return false;
      }
      return true;
    }
    case K::kQuantity: return a.as_quantity() == b.as_quantity();
    case K::kSemver: return a.as_semver().compare(b.as_semver()) == 0;
    default: return false;
  }
}

std::string Value::debug_string() const {
  std::string out;
  switch (kind_) {
    case Kind::kNull: return "null";
    case Kind::kBool: return as_bool() ? "true" : "false";
    case Kind::kInt: return std::to_string(as_int());
    case Kind::kUint: return std::to_string(as_uint()) + "u";
    case Kind::kDouble: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, as_double());
      std::string s(buf, r.ptr);
      if (s.find_first_of(".eni") == std::string::npos) s += ".0";
      return s;
    }
    case Kind::kString: append_quoted(out, as_string(), false); return out;
    case Kind::kBytes: append_quoted(out, as_string(), true); return out;
    case Kind::kList: {
      out = "[";
      for (size_t i = 0; i < as_list().size(); ++i) out += (i ? ", " : "") + as_list()[i].debug_string();
      return out + "]";
    }
    case Kind::kMap: {
      out = "{";
      bool first = true;
      for (const auto& [k, v] : as_map()) {
        out += (first ? "" : ", ") + k.debug_string() + ": " + v.debug_string();
        first = false;
      }
      return out + "}";
    }
    case Kind::kQuantity: return "quantity(\"" + as_quantity().to_string() + "\")";
    case Kind::kSemver: return "semver(\"" + as_semver().to_string() + "\")";
  }
  return out;
}

// ---- Semver: github.com/blang/semver/v4 semver.go (Parse, Compare) ----

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool alnum_hyphen(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) return false;
  return true;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

uint64_t parse_number(std::string_view s, const char* what) {
  if (!all_digits(s)) throw std::invalid_argument(std::string("Invalid character(s) found in ") + what + " number " + quoted(s));
  if (s.size() > 1 && s[0] == '0')
    throw std::invalid_argument(std::string(what) + " number must not contain leading zeroes " + quoted(s));
  uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw std::invalid_argument("strconv.ParseUint: parsing " + quoted(s) + ": value out of range");
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

}  // namespace

Semver Semver::parse(std::string_view text) {
  if (text.empty()) throw std::invalid_argument("Version string empty");
  // blang: strings.SplitN(s, ".", 3); len != 3 -> "No Major.Minor.Patch elements found".
  const size_t d1 = text.find('.');
  const size_t d2 = d1 == std::string_view::npos ? d1 : text.find('.', d1 + 1);
  if (d2 == std::string_view::npos) throw std::invalid_argument("No Major.Minor.Patch elements found");
  Semver v;
  const std::string_view major = text.substr(0, d1);
  const std::string_view minor = text.substr(d1 + 1, d2 - d1 - 1);
  std::string_view rest = text.substr(d2 + 1);
  // Major: blang checks characters then leading zeroes.
  if (!all_digits(major)) throw std::invalid_argument("Invalid character(s) found in major number " + quoted(major));
  if (major.size() > 1 && major[0] == '0') throw std::invalid_argument("Major number must not contain leading zeroes " + quoted(major));
  v.major = parse_number(major, "major");
  if (!all_digits(minor)) throw std::invalid_argument("Invalid character(s) found in minor number " + quoted(minor));
  if (minor.size() > 1 && minor[0] == '0') throw std::invalid_argument("Minor number must not contain leading zeroes " + quoted(minor));
  v.minor = parse_number(minor, "minor");
  std::string_view build;
  std::string_view pre;
  bool has_build = false, has_pre = false;
  const size_t plus = rest.find('+');
  if (plus != std::string_view::npos) {
    build = rest.substr(plus + 1);
    rest = rest.substr(0, plus);
    has_build = true;
  }
  const size_t dash = rest.find('-');
  if (dash != std::string_view::npos) {
    pre = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
    has_pre = true;
  }
  if (!all_digits(rest)) throw std::invalid_argument("Invalid character(s) found in patch number " + quoted(rest));
  if (rest.size() > 1 && rest[0] == '0') throw std::invalid_argument("Patch number must not contain leading zeroes " + quoted(rest));
  v.patch = parse_number(rest, "patch");
  if (has_pre) {
    for (std::string_view part : split(pre, '.')) {
      if (part.empty()) throw std::invalid_argument("Prerelease is empty");
      if (!alnum_hyphen(part)) throw std::invalid_argument("Invalid character(s) found in prerelease " + quoted(part));
      if (all_digits(part) && part.size() > 1 && part[0] == '0')
        throw std::invalid_argument("Numeric PreRelease version must not contain leading zeroes " + quoted(part));
      if (all_digits(part)) parse_number(part, "prerelease");
      v.pre_release.emplace_back(part);
    }
  }
  if (has_build) {
    for (std::string_view part : split(build, '.')) {
      if (part.empty()) throw std::invalid_argument("Build meta data is empty");
      if (!alnum_hyphen(part)) throw std::invalid_argument("Invalid character(s) found in build meta data " + quoted(part));
      v.build.emplace_back(part);
    }
  }
  return v;
}

int Semver::compare(const Semver& o) const {
  auto cmp = [](uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = cmp(major, o.major)) return c;
  if (int c = cmp(minor, o.minor)) return c;
  if (int c = cmp(patch, o.patch)) return c;
  if (pre_release.empty() && o.pre_release.empty()) return 0;
  if (pre_release.empty()) return 1;
  if (o.pre_release.empty()) return -1;
  size_t i = 0;
  for (; i < pre_release.size() && i < o.pre_release.size(); ++i) {
    const std::string& a = pre_release[i];
    const std::string& b = o.pre_release[i];
    const bool an = all_digits(a), bn = all_digits(b);
    int c = 0;
    if (an && bn) {
      // No leading zeros, so a longer digit string is the larger number.
      c = a.size() != b.size() ? (a.size() < b.size() ? -1 : 1) : (a < b ? -1 : (a > b ? 1 : 0));
    } else if (an) {
      c = -1;
    } else if (bn) {
      c = 1;
    } else {
      c = a < b ? -1 : (a > b ? 1 : 0);
    }
    if (c != 0) return c;
  }
  if (i == pre_release.size() && i == o.pre_release.size()) return 0;
  return i == pre_release.size() ? -1 : 1;
}

std::string Semver::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (size_t i = 0; i < pre_release.size(); ++i) s += (i ? "." : "-") + pre_release[i];
  for (size_t i = 0; i < build.size(); ++i) s += (i ? "." : "+") + build[i];
  return s;
}

}  // namespace gpufleet::cel
