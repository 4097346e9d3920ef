// Go math/rand compatible pseudo-random generator.
//
// gpufleet draws every random choice from a seeded generator passed in by the caller (no global
// state). We use a faithful port of Go's math/rand "rngSource" (an additive lagged Fibonacci
// generator, length 607, tap 273, seeded through x[n+1] = 48271 x[n] mod (2^31-1) XOR the
// rngCooked table) together with the derivation rules of Go's *rand.Rand, because the FGD
// simulator (hkust-adsl/kubernetes-scheduler-simulator) shuffles and tunes its workload and ranks
// its nodes with Go's global math/rand. With the same seed we reproduce its workload exactly.
// Source of the rules: Go 1.19/1.20 src/math/rand/rng.go and rand.go (unchanged since Go 1.0); their
// use in the simulator's pkg/simulator/core.go (Simulate) and simulator.go.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gpufleet {

class GoRand {
 public:
  /// Seeds like Go's rand.New(rand.NewSource(seed)) / rand.Seed(seed).
  explicit GoRand(int64_t seed);

  /// Re-seeds; the same seed always gives the same stream.
  void seed(int64_t seed);

  /// Non-negative 63-bit value (Go: Int63).
  int64_t int63();
  /// Go: Uint32 = Int63 >> 31.
  uint32_t uint32();
  /// Go: Int31 = Int63 >> 32.
  int32_t int31();
  /// Go: Int, non-negative int on a 64-bit platform (one Int63 draw).
  int64_t int_();
  /// Go: Int63n, uniform in [0, n). Throws std::invalid_argument for n <= 0.
  int64_t int63n(int64_t n);
  /// Go: Int31n, uniform in [0, n) by rejection. Throws std::invalid_argument for n <= 0.
  int32_t int31n(int32_t n);
  /// Go: Intn, uniform in [0, n). Throws std::invalid_argument for n <= 0.
  int64_t intn(int64_t n);
  /// Go: Float64, uniform in [0, 1).
  double float64();
  /// Go: Perm(n), a permutation of 0..n-1.
  std::vector<int> perm(int n);
  /// Go: Shuffle(n, swap); calls swap(i, j) exactly as Go does (Lemire int31n).
  template <typename Swap>
  void shuffle(int64_t n, Swap&& swap) {
    int64_t i = n - 1;
    for (; i > (int64_t{1} << 31) - 2; --i) swap(i, int63n(i + 1));
    for (; i > 0; --i) swap(i, static_cast<int64_t>(lemire_int31n(static_cast<int32_t>(i + 1))));
  }

 private:
  static constexpr int kLen = 607;
  static constexpr int kTap = 273;
  uint64_t next_uint64();
  int32_t lemire_int31n(int32_t n);

  int tap_ = 0;
  int feed_ = 0;
  std::array<int64_t, kLen> vec_{};
};

}  // namespace gpufleet
