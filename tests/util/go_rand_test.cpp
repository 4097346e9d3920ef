// GoRand reproduces Go's math/rand (rand.New(rand.NewSource(seed))) bit for bit.
// Every expected value below was printed by Go 1.19 (math/rand), not derived from gpufleet.
#include "util/go_rand.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace gpufleet {
namespace {

TEST(GoRand, Int63SeedOne) {
  GoRand r(1);
  EXPECT_EQ(r.int63(), 5577006791947779410);
  EXPECT_EQ(r.int63(), 8674665223082153551);
  EXPECT_EQ(r.int63(), 6129484611666145821);
  EXPECT_EQ(r.int63(), 4037200794235010051);
}

TEST(GoRand, Int63PastOneFullLagTable) {
  // The 701st value: the feed/tap indices have wrapped around the 607-entry table.
  GoRand r(1);
  for (int i = 0; i < 700; ++i) r.int63();
  EXPECT_EQ(r.int63(), 666503982731773378);
}

TEST(GoRand, IntnSeedOne) {
  GoRand r(1);
  const std::vector<int64_t> want{81, 87, 47, 59, 81, 18, 25, 40, 56, 0};
  std::vector<int64_t> got;
  for (size_t i = 0; i < want.size(); ++i) got.push_back(r.intn(100));
  EXPECT_EQ(got, want);
}

TEST(GoRand, PermSeed42) {
  GoRand r(42);
  EXPECT_EQ(r.perm(10), (std::vector<int>{7, 5, 8, 9, 2, 1, 6, 0, 3, 4}));
}

TEST(GoRand, PermSmallSizes) {
  GoRand r(7);
  EXPECT_EQ(r.perm(5), (std::vector<int>{2, 0, 4, 3, 1}));
  EXPECT_EQ(r.perm(1), (std::vector<int>{0}));
  EXPECT_TRUE(r.perm(0).empty());
  GoRand r1(1);
  EXPECT_EQ(r1.perm(6), (std::vector<int>{5, 4, 2, 3, 1, 0}));
  GoRand r5(5);
  EXPECT_EQ(r5.perm(4), (std::vector<int>{3, 2, 0, 1}));
}

TEST(GoRand, ShuffleSeed42) {
  GoRand r(42);
  std::vector<int> s(10);
  std::iota(s.begin(), s.end(), 0);
  r.shuffle(static_cast<int64_t>(s.size()), [&s](int64_t i, int64_t j) {
    std::swap(s[static_cast<size_t>(i)], s[static_cast<size_t>(j)]);
  });
  EXPECT_EQ(s, (std::vector<int>{2, 5, 7, 9, 6, 8, 1, 4, 0, 3}));
}

TEST(GoRand, Int31nSeed42) {
  GoRand r(42);
  std::vector<int32_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(r.int31n(7));
  EXPECT_EQ(got, (std::vector<int32_t>{5, 2, 4, 1, 5}));
}

TEST(GoRand, Float64Seed42) {
  GoRand r(42);
  EXPECT_DOUBLE_EQ(r.float64(), 0.37302836104663262);
  EXPECT_DOUBLE_EQ(r.float64(), 0.06600049679351791);
}

TEST(GoRand, LargeBoundsUseInt63n) {
  GoRand a(42);
  EXPECT_EQ(a.intn(int64_t{1} << 40), 762734152787);
  EXPECT_EQ(a.intn(int64_t{1} << 40), 324802418459);
  GoRand b(42);
  EXPECT_EQ(b.int63n(1000000000007), 354207194622);
  EXPECT_EQ(b.int63n(1000000000007), 136539595182);
  GoRand c(42);  // above INT32_MAX but below 2^32
  EXPECT_EQ(c.intn(3000000000), 2231278675);
  EXPECT_EQ(c.intn(3000000000), 543856411);
}

TEST(GoRand, DerivedDraws) {
  GoRand r(42);
  EXPECT_EQ(r.uint32(), 1602144611u);
  EXPECT_EQ(r.int31(), 141734987);
  EXPECT_EQ(r.int_(), 5571782338101878760);
}

TEST(GoRand, SeedNormalisation) {
  // Go maps seed 0 to 89482311 and reduces seeds mod 2^31-1 (negative ones into range).
  GoRand zero(0);
  EXPECT_EQ(zero.int63(), 8717895732742165505);
  EXPECT_EQ(zero.int63(), 2259404117704393152);
  GoRand magic(89482311);
  EXPECT_EQ(magic.int63(), 8717895732742165505);
  GoRand neg(-5);
  EXPECT_EQ(neg.int63(), 1811683815564572222);
  EXPECT_EQ(neg.int63(), 4427849682616757295);
  GoRand big(int64_t{2147483647} + 3);
  EXPECT_EQ(big.int63(), 6640668014774057861);
  GoRand three(3);
  EXPECT_EQ(three.int63(), 6640668014774057861);
}

TEST(GoRand, NonPositiveBoundsThrow) {
  GoRand r(1);
  EXPECT_THROW(r.intn(0), std::invalid_argument);
  EXPECT_THROW(r.intn(-3), std::invalid_argument);
  EXPECT_THROW(r.int63n(0), std::invalid_argument);
  EXPECT_THROW(r.int31n(0), std::invalid_argument);
  EXPECT_THROW(r.int31n(-1), std::invalid_argument);
  // A refused call draws nothing: the stream continues at its first value.
  EXPECT_EQ(r.int63(), 5577006791947779410);
}

TEST(GoRand, SameSeedSameStreamAndReseed) {
  GoRand a(123), b(123), c(124);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t va = a.int63();
    EXPECT_EQ(va, b.int63());
    differs = differs || va != c.int63();
  }
  EXPECT_TRUE(differs);
  a.seed(1);
  EXPECT_EQ(a.int63(), 5577006791947779410);
  EXPECT_EQ(a.int63(), 8674665223082153551);
}

TEST(GoRand, PermIsAPermutation) {
  for (int64_t seed : {1, 2, 99, -7}) {
    GoRand r(seed);
    for (int n : {2, 3, 17, 100, 1000}) {
      std::vector<int> p = r.perm(n);
      ASSERT_EQ(static_cast<int>(p.size()), n);
      std::sort(p.begin(), p.end());
      for (int i = 0; i < n; ++i) ASSERT_EQ(p[static_cast<size_t>(i)], i) << "seed " << seed << " n " << n;
    }
  }
}

TEST(GoRand, BoundedDrawsStayInRange) {
  GoRand r(2024);
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = r.intn(13);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 13);
    const double f = r.float64();
    ASSERT_GE(f, 0.0);
    ASSERT_LT(f, 1.0);
  }
}

}  // namespace
}  // namespace gpufleet
