#include "model/quantity.h"

#include <array>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufleet {
namespace {

__extension__ typedef unsigned __int128 U128;

constexpr int64_t kNanosPerUnit = 1'000'000'000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// Largest magnitude in nano-units: 2^63-1 base units (quantity.go maxAllowed), x 10^9.
constexpr U128 kMaxNanos = static_cast<U128>(kInt64Max) * static_cast<U128>(kNanosPerUnit);
// kMaxNanos has 28 decimal digits (9.22e27); any 29-digit number is above it.
constexpr int64_t kMaxNanosDigits = 28;

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  std::string msg = "quantity \"";
  msg.append(text);
  msg += "\": ";
  msg.append(why);
  throw std::invalid_argument(msg);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Suffix {
  std::string_view name;
  int decimal_exponent;  // value x 10^decimal_exponent
  int binary_exponent;   // value x 2^binary_exponent
};

// quantity.go suffix.go newSuffixer(): decimal SI n u m "" k M G T P E, binary SI Ki..Ei.
constexpr std::array<Suffix, 15> kSuffixes{{
    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10},
    {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
}};

const Suffix* find_suffix(std::string_view s) {
  for (const Suffix& x : kSuffixes)
    if (x.name == s) return &x;
  return nullptr;
}

// A signed decimal integer ("3", "-3", "+03"), saturated at +-10^12 (far beyond any value that does
// not over- or underflow). Returns false when `s` is not one.
bool parse_exponent(std::string_view s, int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    if (v < 1'000'000'000'000) v = v * 10 + (c - '0');
  }
  out = neg ? -v : v;
  return true;
}

constexpr std::string_view kExpected =
    " (expected one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3)";

// Resolves the suffix to (decimal exponent, binary exponent) or fails with a precise message.
void interpret_suffix(std::string_view text, std::string_view suffix, int64_t& dec, int& bin) {
  dec = 0;
  bin = 0;
  if (suffix.empty()) return;
  // Decimal exponent: "e"/"E" followed by a signed integer (quantity.go suffixer.interpret: a suffix
  // longer than one character starting with e or E is parsed with strconv.ParseInt). "E" alone is exa.
  if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    size_t end = 1;
    if (end < suffix.size() && (suffix[end] == '+' || suffix[end] == '-')) ++end;
    const size_t digits_begin = end;
    while (end < suffix.size() && is_digit(suffix[end])) ++end;
    if (end > digits_begin && end == suffix.size()) {
      parse_exponent(suffix.substr(1), dec);
      return;
    }
    if (end > digits_begin && find_suffix(suffix.substr(end)) != nullptr)
      fail(text, "an exponent (\"" + std::string(suffix.substr(0, end)) + "\") cannot be combined with the suffix \"" +
                     std::string(suffix.substr(end)) + "\"");
  }
  if (const Suffix* s = find_suffix(suffix)) {
    dec = s->decimal_exponent;
    bin = s->binary_exponent;
    return;
  }
  // A known suffix followed by an exponent, e.g. "1Kie3" or "1ke3".
  for (size_t p = 1; p + 1 < suffix.size(); ++p) {
    int64_t ignored = 0;
    if ((suffix[p] == 'e' || suffix[p] == 'E') && find_suffix(suffix.substr(0, p)) != nullptr &&
        parse_exponent(suffix.substr(p + 1), ignored))
      fail(text, "the suffix \"" + std::string(suffix.substr(0, p)) + "\" cannot be combined with an exponent (\"" +
                     std::string(suffix.substr(p)) + "\")");
  }
  fail(text, "unknown suffix \"" + std::string(suffix) + "\"" + std::string(kExpected));
}

}  // namespace

Quantity Quantity::parse(std::string_view text) {
  if (text.empty()) fail(text, "empty");
  for (char c : text)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') fail(text, "contains whitespace");

  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) fail(text, "more than one sign");

  const size_t int_begin = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t frac_begin = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
    if (pos < text.size() && text[pos] == '.') fail(text, "more than one decimal point");
  }
  if (int_digits.empty() && frac_digits.empty()) fail(text, "no digits before the suffix");
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
    fail(text, "a sign may only lead the quantity");

  int64_t suffix_dec = 0;
  int suffix_bin = 0;
  interpret_suffix(text, text.substr(pos), suffix_dec, suffix_bin);

  // value = D x 10^(suffix_dec - |frac|) x 2^suffix_bin, D = the digits without the point.
  // Little-endian decimal digits of D x 2^suffix_bin, computed exactly by repeated doubling.
  std::vector<uint8_t> digits;
  digits.reserve(int_digits.size() + frac_digits.size() + 20);
  for (size_t i = frac_digits.size(); i-- > 0;) digits.push_back(static_cast<uint8_t>(frac_digits[i] - '0'));
  for (size_t i = int_digits.size(); i-- > 0;) digits.push_back(static_cast<uint8_t>(int_digits[i] - '0'));
  for (int b = 0; b < suffix_bin; ++b) {
    int carry = 0;
    for (uint8_t& d : digits) {
      const int v = d * 2 + carry;
      d = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    if (carry) digits.push_back(static_cast<uint8_t>(carry));
  }
  while (!digits.empty() && digits.back() == 0) digits.pop_back();
  Quantity q;
  if (digits.empty()) return q;  // zero, whatever the exponent or sign

  // Scale to nano-units: N = digits x 10^k. A part below 1n rounds away from zero (quantity.go
  // ParseQuantity: amount.Round(amount, Nano, inf.RoundUp) on the magnitude).
  const int64_t n = static_cast<int64_t>(digits.size());
  const int64_t k = suffix_dec - static_cast<int64_t>(frac_digits.size()) + 9;
  const std::string_view overflow = "out of range (the magnitude is above 2^63-1 base units)";
  U128 nanos = 0;
  if (k >= 0) {
    if (n + k > kMaxNanosDigits) fail(text, overflow);
    for (int64_t i = n; i-- > 0;) nanos = nanos * 10 + digits[static_cast<size_t>(i)];
    for (int64_t i = 0; i < k; ++i) nanos *= 10;
  } else {
    const int64_t keep = n + k;  // digits at or above the nano position
    if (keep <= 0) {
      nanos = 1;
    } else {
      if (keep > kMaxNanosDigits) fail(text, overflow);
      for (int64_t i = n; i-- > n - keep;) nanos = nanos * 10 + digits[static_cast<size_t>(i)];
      bool remainder = false;
      for (int64_t i = 0; i < n - keep; ++i) remainder = remainder || digits[static_cast<size_t>(i)] != 0;
      if (remainder) nanos += 1;
    }
  }
  if (nanos > kMaxNanos) fail(text, overflow);
  q.negative_ = negative;
  q.units_ = static_cast<int64_t>(nanos / kNanosPerUnit);
  q.nanos_ = static_cast<int32_t>(nanos % kNanosPerUnit);
  return q;
}

int64_t Quantity::milli() const {
  // MilliValue = ScaledValue(Milli): rounds away from zero (int64Amount.AsScaledInt64 /
  // negativeScaleInt64 "rounded away from zero"; inf.RoundUp on the inf.Dec path).
  constexpr int64_t kNanosPerMilli = 1'000'000;
  if (units_ > (kInt64Max - 1000) / 1000)
    throw std::invalid_argument("quantity " + to_string() + " is too large to express in milli-units");
  const int64_t m = units_ * 1000 + (nanos_ + kNanosPerMilli - 1) / kNanosPerMilli;
  return negative_ ? -m : m;
}

int64_t Quantity::value() const {
  // Cannot overflow: a magnitude of exactly 2^63-1 has no fractional part.
  const int64_t v = units_ + (nanos_ > 0 ? 1 : 0);
  return negative_ ? -v : v;
}

int64_t Quantity::mebibytes() const {
  constexpr uint64_t kBytesPerMib = uint64_t{1} << 20;
  const uint64_t bytes = static_cast<uint64_t>(units_) + (nanos_ > 0 ? 1 : 0);
  const auto mib = static_cast<int64_t>((bytes + kBytesPerMib - 1) / kBytesPerMib);
  return negative_ ? -mib : mib;
}

int64_t Quantity::whole() const {
  if (nanos_ != 0) throw std::invalid_argument("quantity " + to_string() + " is not a whole number");
  return negative_ ? -units_ : units_;
}

std::string Quantity::to_string() const {
  std::string out = negative_ ? "-" : "";
  out += std::to_string(units_);
  if (nanos_ != 0) {
    std::string frac = std::to_string(nanos_);
    frac.insert(0, 9 - frac.size(), '0');
    while (frac.back() == '0') frac.pop_back();
    out += '.';
    out += frac;
  }
  return out;
}

std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
  if (a.negative_ != b.negative_) return a.negative_ ? std::strong_ordering::less : std::strong_ordering::greater;
  const auto magnitude = (a.units_ != b.units_) ? a.units_ <=> b.units_ : a.nanos_ <=> b.nanos_;
  return a.negative_ ? 0 <=> magnitude : magnitude;
}

std::string format_quantity(int64_t amount, QuantityUnit unit) {
  if (amount == 0) return "0";
  const bool negative = amount < 0;
  uint64_t m = negative ? uint64_t{0} - static_cast<uint64_t>(amount) : static_cast<uint64_t>(amount);
  std::string_view suffix;
  if (unit == QuantityUnit::kMilli) {
    // CanonicalizeBytes, DecimalSI: strip factors of 10, round the exponent down to a multiple of 3.
    static constexpr std::string_view kSuffix[] = {"m", "", "k", "M", "G", "T", "P", "E"};
    size_t e = 0;  // 10^(3e - 3)
    while (m % 1000 == 0 && e + 1 < std::size(kSuffix)) {
      m /= 1000;
      ++e;
    }
    suffix = kSuffix[e];
  } else {
    // BinarySI: strip factors of 1024 (a value below 1024 has no suffix, as kube's DecimalSI fallback).
    static constexpr std::string_view kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    size_t e = 0;
    while (m % 1024 == 0 && e + 1 < std::size(kSuffix)) {
      m /= 1024;
      ++e;
    }
    suffix = kSuffix[e];
  }
  std::string out = negative ? "-" : "";
  out += std::to_string(m);
  out.append(suffix);
  return out;
}

}  // namespace gpufleet
