// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource Quantity): "500m", "16Gi",
// "1.5", "2e3", "1k", "0.5Gi", parsed (Quantity::parse) and printed in canonical form
// (format_quantity). The one implementation of both: readers, admission and writers call these.
// No I/O.
//
// Grammar (quantity.go, the comment above `type Quantity`), all case-sensitive:
//   <quantity>  ::= <sign>? <number> <suffix>
//   <sign>      ::= "+" | "-"
//   <number>    ::= <digits> | <digits> "." <digits>? | "." <digits>
//   <suffix>    ::= "" | n | u | m | k | M | G | T | P | E           (decimal: 10^-9 .. 10^18)
//                 | Ki | Mi | Gi | Ti | Pi | Ei                     (binary: 2^10 .. 2^60)
//                 | ("e" | "E") <sign>? <digits>                    (decimal exponent: "2e3", "1E-3")
// "E" alone is exa (10^18); "E" followed by digits is an exponent. n (nano) and u (micro) are not in
// the grammar comment but quantity.go's suffixer accepts them, so they are accepted here too.
//
// The value is kept exactly, rounded like Kubernetes: a value with a part below 1n (10^-9) is rounded
// away from zero to the next nano (ParseQuantity rounds with inf.RoundUp at scale Nano).
//
// Where gpufleet is stricter than ParseQuantity (it accepts these quirks; we reject them as input
// errors): a number without any digit ("", "-", ".", "Gi" parse as 0 in Go), and values whose
// magnitude exceeds 2^63-1 base units (Go silently caps them at that maximum). Whitespace anywhere
// is rejected, as ParseQuantity does; trimming belongs to the reader (Quantity.UnmarshalJSON trims).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpufleet {

/// A parsed quantity, exact to 10^-9 base units (cores, bytes, devices).
/// Representation: sign + magnitude, magnitude = units_ + nanos_ / 10^9.
struct Quantity {
 public:
  /// Parses `text`. Throws std::invalid_argument whose message quotes the text and names the problem
  /// for anything that is not a valid quantity: empty, whitespace, no digits, two signs ("--1"),
  /// two decimal points ("1.2.3"), an unknown suffix ("5gb", "1Kb", "1K", "1e"), an exponent combined
  /// with another suffix ("1e3Ki"), or a magnitude above 2^63-1 base units (overflow).
  /// Negative values parse; callers that need non-negative requests reject them.
  static Quantity parse(std::string_view text);

  /// Rounded up to milli-units like Kubernetes MilliValue (ScaledValue(Milli) rounds away from
  /// zero): "0.5" -> 500, "1m" -> 1, "1n" -> 1, "-1n" -> -1. Throws std::invalid_argument when the
  /// result does not fit int64 (magnitude above about 9.2e15 units).
  int64_t milli() const;
  /// Bytes rounded up to whole MiB (2^20 bytes), away from zero: "16Gi" -> 16384, "1G" -> 954
  /// (10^9 / 2^20 = 953.67), "1" -> 1, "0" -> 0.
  int64_t mebibytes() const;
  /// Whole base units rounded up away from zero, like Kubernetes Value(): "1.5" -> 2, "500m" -> 1.
  int64_t value() const;
  /// An exact whole count ("2" -> 2, "2k" -> 2000, "-3" -> -3); throws std::invalid_argument when
  /// the value has a fractional part (e.g. "1.5", "500m").
  int64_t whole() const;

  bool is_negative() const { return negative_; }
  bool is_zero() const { return units_ == 0 && nanos_ == 0; }
  /// Integer part of the magnitude, in base units (0 .. 2^63-1).
  int64_t magnitude_units() const { return units_; }
  /// Fractional part of the magnitude, in 10^-9 base units (0 .. 999'999'999).
  int32_t magnitude_nanos() const { return nanos_; }
  /// Exact plain decimal without suffix or trailing zeros, for messages: "1.5", "-0.001", "1024".
  std::string to_string() const;

  /// Numeric comparison ("1k" == "1000", "-0" == "0").
  friend bool operator==(const Quantity& a, const Quantity& b) = default;
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b);

 private:
  bool negative_ = false;  ///< never true for zero
  int64_t units_ = 0;      ///< 0 .. 2^63-1
  int32_t nanos_ = 0;      ///< 0 .. 10^9-1
};

/// The unit an integer amount is kept in: milli-units (cpu, counts, devices) or bytes (memory).
enum class QuantityUnit { kMilli, kBytes };

/// Kubernetes canonical text of an amount, as resource.Quantity String() prints it
/// (apimachinery quantity.go CanonicalizeBytes): kMilli in decimal SI (500 -> "500m", 2000 -> "2",
/// 1500 -> "1500m", 4'000'000 -> "4k"), kBytes in binary SI (17179869184 -> "16Gi", 1610612736 ->
/// "1536Mi", 1024000000 -> "1000000Ki"; a value that is no whole Ki has no suffix: 1500 -> "1500");
/// 0 -> "0"; negative amounts get a leading "-". Never throws.
std::string format_quantity(int64_t amount, QuantityUnit unit);

}  // namespace gpufleet
