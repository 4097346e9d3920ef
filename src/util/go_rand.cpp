#include "util/go_rand.h"

#include <climits>
#include <stdexcept>

namespace gpufleet {
namespace {

// Go src/math/rand/rng.go rngCooked, extracted at configure time (cmake/GoRandTable.cmake).
constexpr int64_t kRngCooked[607] = {
#include "go_rng_cooked.inc"
};

constexpr int32_t kInt32Max = 2147483647;

// x[n+1] = 48271 * x[n] mod (2^31 - 1), Schrage's method as in Go's seedrand.
int32_t seedrand(int32_t x) {
  constexpr int32_t A = 48271, Q = 44488, R = 3399;
  const int32_t hi = x / Q;
  const int32_t lo = x % Q;
  x = A * lo - R * hi;
  if (x < 0) x += kInt32Max;
  return x;
}

}  // namespace

GoRand::GoRand(int64_t s) { seed(s); }

void GoRand::seed(int64_t s) {
  tap_ = 0;
  feed_ = kLen - kTap;
  s %= kInt32Max;
  if (s < 0) s += kInt32Max;
  if (s == 0) s = 89482311;
  auto x = static_cast<int32_t>(s);
  for (int i = -20; i < kLen; ++i) {
    x = seedrand(x);
    if (i >= 0) {
      uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x)) << 40;
      x = seedrand(x);
      u ^= static_cast<uint64_t>(static_cast<int64_t>(x)) << 20;
      x = seedrand(x);
      u ^= static_cast<uint64_t>(static_cast<int64_t>(x));
      u ^= static_cast<uint64_t>(kRngCooked[i]);
      vec_[i] = static_cast<int64_t>(u);
    }
  }
}

uint64_t GoRand::next_uint64() {
  if (--tap_ < 0) tap_ += kLen;
  if (--feed_ < 0) feed_ += kLen;
  // Wrapping addition, as Go's int64 addition.
  const uint64_t x = static_cast<uint64_t>(vec_[feed_]) + static_cast<uint64_t>(vec_[tap_]);
  vec_[feed_] = static_cast<int64_t>(x);
  return x;
}

int64_t GoRand::int63() { return static_cast<int64_t>(next_uint64() & ((uint64_t{1} << 63) - 1)); }
uint32_t GoRand::uint32() { return static_cast<uint32_t>(int63() >> 31); }
int32_t GoRand::int31() { return static_cast<int32_t>(int63() >> 32); }
int64_t GoRand::int_() { return int63(); }

int64_t GoRand::int63n(int64_t n) {
  if (n <= 0) throw std::invalid_argument("GoRand::int63n: n must be positive");
  if ((n & (n - 1)) == 0) return int63() & (n - 1);
  const auto max = static_cast<int64_t>((uint64_t{1} << 63) - 1 - (uint64_t{1} << 63) % static_cast<uint64_t>(n));
  int64_t v = int63();
  while (v > max) v = int63();
  return v % n;
}

int32_t GoRand::int31n(int32_t n) {
  if (n <= 0) throw std::invalid_argument("GoRand::int31n: n must be positive");
  if ((n & (n - 1)) == 0) return int31() & (n - 1);
  const auto max = static_cast<int32_t>((uint32_t{1} << 31) - 1 - (uint32_t{1} << 31) % static_cast<uint32_t>(n));
  int32_t v = int31();
  while (v > max) v = int31();
  return v % n;
}

int32_t GoRand::lemire_int31n(int32_t n) {
  uint32_t v = uint32();
  uint64_t prod = static_cast<uint64_t>(v) * static_cast<uint64_t>(n);
  auto low = static_cast<uint32_t>(prod);
  if (low < static_cast<uint32_t>(n)) {
    const uint32_t thresh = static_cast<uint32_t>(-static_cast<uint32_t>(n)) % static_cast<uint32_t>(n);
    while (low < thresh) {
      v = uint32();
      prod = static_cast<uint64_t>(v) * static_cast<uint64_t>(n);
      low = static_cast<uint32_t>(prod);
    }
  }
  return static_cast<int32_t>(prod >> 32);
}

int64_t GoRand::intn(int64_t n) {
  if (n <= 0) throw std::invalid_argument("GoRand::intn: n must be positive");
  if (n <= INT32_MAX) return int31n(static_cast<int32_t>(n));
  return int63n(n);
}

double GoRand::float64() {
  for (;;) {
    const double f = static_cast<double>(int63()) / 9223372036854775808.0;
    if (f != 1.0) return f;
  }
}

std::vector<int> GoRand::perm(int n) {
  std::vector<int> m(static_cast<size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) {
    const auto j = static_cast<size_t>(intn(i + 1));
    m[static_cast<size_t>(i)] = m[j];
    m[j] = i;
  }
  return m;
}

}  // namespace gpufleet
