// libFuzzer target: Kubernetes quantities (gpufleet::Quantity::parse) and what the readers do with a
// parsed one. Build and run: scripts/fuzz (fuzz/CMakeLists.txt).
//
// std::invalid_argument is Quantity's documented rejection: from parse() on bad text, from milli()
// when the value does not fit int64 milli-units and from whole() on a fraction (model/quantity.h).
// Anything else is a finding, and so is a broken invariant checked below:
//  - to_string() is exact: parsing it gives the same quantity;
//  - zero is never negative; a quantity equals itself and compares equal to its round trip;
//  - value() is milli() rounded up to whole units (both round away from zero);
//  - whole() is value() when there is no fraction;
//  - mebibytes() has the sign of the quantity and is 0 only for zero.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "model/quantity.h"
#include "fuzz_support.h"

using gpufleet::Quantity;
using gpufleet::fuzz::accepts;
using gpufleet::fuzz::invariant_failed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  Quantity q;
  if (!accepts<std::invalid_argument>([&] { q = Quantity::parse(text); })) return 0;

  if (q.is_zero() && q.is_negative()) invariant_failed("a zero quantity is negative");
  if (q.magnitude_units() < 0) invariant_failed("negative magnitude_units()");
  if (q.magnitude_nanos() < 0 || q.magnitude_nanos() > 999'999'999) invariant_failed("magnitude_nanos() out of range");
  if (!(q == q) || (q <=> q) != 0) invariant_failed("a quantity differs from itself");

  const std::string plain = q.to_string();
  Quantity back;
  if (!accepts<std::invalid_argument>([&] { back = Quantity::parse(plain); }))
    invariant_failed("to_string() does not parse");
  if (back != q || (back <=> q) != 0) invariant_failed("to_string() does not round-trip");

  const int64_t value = q.value();
  const bool has_fraction = q.magnitude_nanos() != 0;
  int64_t milli = 0;
  if (accepts<std::invalid_argument>([&] { milli = q.milli(); })) {
    const int64_t abs_milli = milli < 0 ? -milli : milli;
    const int64_t up = abs_milli / 1000 + (abs_milli % 1000 != 0 ? 1 : 0);
    if ((q.is_negative() ? -up : up) != value) invariant_failed("value() is not milli() rounded up");
  }
  int64_t whole = 0;
  if (accepts<std::invalid_argument>([&] { whole = q.whole(); })) {
    if (has_fraction) invariant_failed("whole() accepted a fraction");
    if (whole != value) invariant_failed("whole() differs from value()");
  } else if (!has_fraction) {
    invariant_failed("whole() refused a whole number");
  }
  const int64_t mib = q.mebibytes();
  if (q.is_zero() != (mib == 0)) invariant_failed("mebibytes() is zero for a non-zero quantity or the reverse");
  if (!q.is_zero() && (mib < 0) != q.is_negative()) invariant_failed("mebibytes() has the wrong sign");
  return 0;
}
