// Per-percent bucketing of event logs and numpy-style round half to even.
#include "pack/bucketing.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace gpufleet::pack {
namespace {

struct RoundCase {
  double value;
  int decimals;
  double want;
};

TEST(Bucketing, RoundHalfEven) {
  // Ties (exact in binary after scaling) go to the even neighbour; non-ties round to nearest.
  const std::vector<RoundCase> cases = {
      {2.5, 0, 2.0},     {3.5, 0, 4.0},    {0.5, 0, 0.0},     {1.5, 0, 2.0},     {-2.5, 0, -2.0},
      {-3.5, 0, -4.0},   {-0.5, 0, -0.0},  {2.4, 0, 2.0},     {2.6, 0, 3.0},     {-2.6, 0, -3.0},
      {0.125, 2, 0.12},  {0.375, 2, 0.38}, {-0.125, 2, -0.12}, {-0.375, 2, -0.38}, {12.345678, 2, 12.35},
      {7.0, 2, 7.0},     {0.0625, 3, 0.062}, {0.1875, 3, 0.188},
      // 1.005 is 1.00499999999999989... in binary: x100 = 100.49999999999999, so 1.0 (as numpy gives).
      {1.005, 2, 1.0},
  };
  for (const RoundCase& c : cases) {
    EXPECT_DOUBLE_EQ(round_half_even(c.value, c.decimals), c.want) << c.value << " at " << c.decimals;
  }
  EXPECT_TRUE(std::signbit(round_half_even(-0.4, 0)));  // rint keeps the sign of a negative value
}

TEST(Bucketing, ExactMeanAndNeighbourFallback) {
  const std::vector<int32_t> arrive{0, 0, 2, 5, 5, 5};
  const std::vector<double> values{1, 3, 10, 4, 5, 6};
  const std::vector<double> out = bucket_by_percent(arrive, values, 8);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_DOUBLE_EQ(out[0], 2.0);             // mean of 1 and 3
  EXPECT_DOUBLE_EQ(out[1], 14.0 / 3.0);      // empty: events at 0..2 -> (1+3+10)/3
  EXPECT_DOUBLE_EQ(out[2], 10.0);            // exact events only, neighbours ignored
  EXPECT_DOUBLE_EQ(out[3], 10.0);            // empty: events at 2..4 -> 10
  EXPECT_DOUBLE_EQ(out[4], 5.0);             // empty: events at 3..5 -> (4+5+6)/3
  EXPECT_DOUBLE_EQ(out[5], 5.0);             // mean of 4, 5, 6
  EXPECT_DOUBLE_EQ(out[6], 5.0);             // empty: events at 5..7
  EXPECT_TRUE(std::isnan(out[7]));           // nothing at 6..8
}

TEST(Bucketing, NanWhenNothingNear) {
  const std::vector<int32_t> arrive{10, 10};
  const std::vector<double> values{1.5, 2.5};
  const std::vector<double> out = bucket_by_percent(arrive, values, 20);
  for (int x = 0; x < 20; ++x) {
    if (x >= 9 && x <= 11) {
      EXPECT_DOUBLE_EQ(out[static_cast<size_t>(x)], 2.0) << x;
    } else {
      EXPECT_TRUE(std::isnan(out[static_cast<size_t>(x)])) << x;
    }
  }
}

TEST(Bucketing, EventsPastTheLastBucketOnlyFeedTheFallback) {
  // arrive 8 is outside buckets 0..7 but is a neighbour of bucket 7; arrive 9 is not.
  const std::vector<int32_t> arrive{8, 9, 40};
  const std::vector<double> values{42, 1000, 7};
  const std::vector<double> out = bucket_by_percent(arrive, values, 8);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_DOUBLE_EQ(out[7], 42.0);
  for (int x = 0; x < 7; ++x) EXPECT_TRUE(std::isnan(out[static_cast<size_t>(x)])) << x;
}

TEST(Bucketing, DefaultBucketCountAndEmptyInput) {
  const std::vector<double> out = bucket_by_percent(std::vector<int32_t>{}, std::vector<double>{});
  ASSERT_EQ(out.size(), static_cast<size_t>(kCurveBuckets));
  EXPECT_EQ(kCurveBuckets, 131);
  for (double v : out) EXPECT_TRUE(std::isnan(v));
  const std::vector<int32_t> arrive{130};
  const std::vector<double> values{3.0};
  const std::vector<double> one = bucket_by_percent(arrive, values);
  EXPECT_DOUBLE_EQ(one[130], 3.0);
  EXPECT_DOUBLE_EQ(one[129], 3.0);
  EXPECT_TRUE(std::isnan(one[128]));
}

TEST(Bucketing, SizeMismatchThrows) {
  const std::vector<int32_t> arrive{1, 2, 3};
  const std::vector<double> values{1.0, 2.0};
  EXPECT_THROW(bucket_by_percent(arrive, values, 10), std::invalid_argument);
  EXPECT_THROW(bucket_by_percent(std::vector<int32_t>{}, values, 10), std::invalid_argument);
}

}  // namespace
}  // namespace gpufleet::pack
