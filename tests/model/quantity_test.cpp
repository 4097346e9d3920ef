// Quantity: every accepted form (k8s.io/apimachinery resource.Quantity grammar), exact rounding of
// milli()/mebibytes()/value()/whole(), every rejection with a message naming the problem, and the
// canonical text of format_quantity.
#include "model/quantity.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/resources.h"

namespace gpufleet {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// std::nullopt in `whole` = whole() must throw (the value has a fractional part).
struct ParseCase {
  std::string text;
  int64_t milli;
  int64_t mebibytes;
  int64_t value;
  std::optional<int64_t> whole;
  std::string exact;  // to_string()
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class QuantityParse : public ::testing::TestWithParam<ParseCase> {};

TEST_P(QuantityParse, ConvertsExactly) {
  const ParseCase& c = GetParam();
  const Quantity q = Quantity::parse(c.text);
  EXPECT_EQ(q.to_string(), c.exact);
  EXPECT_EQ(q.milli(), c.milli);
  EXPECT_EQ(q.mebibytes(), c.mebibytes);
  EXPECT_EQ(q.value(), c.value);
  if (c.whole) {
    EXPECT_EQ(q.whole(), *c.whole);
  } else {
    EXPECT_THROW(q.whole(), std::invalid_argument);
  }
}

constexpr int64_t kMi = int64_t{1} << 20;

INSTANTIATE_TEST_SUITE_P(
    Forms, QuantityParse,
    ::testing::Values(
        // Plain integers and decimals.
        ParseCase{"0", 0, 0, 0, 0, "0"},                          //
        ParseCase{"1", 1000, 1, 1, 1, "1"},                       // 1 byte -> 1 MiB (rounded up)
        ParseCase{"007", 7000, 1, 7, 7, "7"},                     // leading zeros
        ParseCase{"1.5", 1500, 1, 2, std::nullopt, "1.5"},        //
        ParseCase{".5", 500, 1, 1, std::nullopt, "0.5"},          //
        ParseCase{"1.", 1000, 1, 1, 1, "1"},                      // "<digits>." is in the grammar
        ParseCase{"0.25", 250, 1, 1, std::nullopt, "0.25"},       //
        ParseCase{"1.000", 1000, 1, 1, 1, "1"},                   //
        ParseCase{"1048576", 1000 * kMi, 1, kMi, kMi, "1048576"}, // exactly 1 MiB
        ParseCase{"1048577", 1000 * (kMi + 1), 2, kMi + 1, kMi + 1, "1048577"},
        // Signs: negative values parse (callers reject them); rounding is away from zero.
        ParseCase{"+2", 2000, 1, 2, 2, "2"},                      //
        ParseCase{"-1", -1000, -1, -1, -1, "-1"},                 //
        ParseCase{"-0", 0, 0, 0, 0, "0"},                         // negative zero is zero
        ParseCase{"-1.5m", -2, -1, -1, std::nullopt, "-0.0015"},  //
        ParseCase{"-.5", -500, -1, -1, std::nullopt, "-0.5"},     //
        // Decimal SI suffixes.
        ParseCase{"500m", 500, 1, 1, std::nullopt, "0.5"},        //
        ParseCase{"1m", 1, 1, 1, std::nullopt, "0.001"},          //
        ParseCase{"0.1m", 1, 1, 1, std::nullopt, "0.0001"},       // MilliValue rounds up
        ParseCase{"1.5m", 2, 1, 1, std::nullopt, "0.0015"},       //
        ParseCase{"2000m", 2000, 1, 2, 2, "2"},                   //
        ParseCase{"1n", 1, 1, 1, std::nullopt, "0.000000001"},    // nano: accepted by quantity.go's suffixer
        ParseCase{"1u", 1, 1, 1, std::nullopt, "0.000001"},       // micro
        ParseCase{"1000000n", 1, 1, 1, std::nullopt, "0.001"},    //
        ParseCase{"1k", 1'000'000, 1, 1000, 1000, "1000"},        //
        ParseCase{"1.5k", 1'500'000, 1, 1500, 1500, "1500"},      //
        ParseCase{"1M", 1'000'000'000, 1, 1'000'000, 1'000'000, "1000000"},
        ParseCase{"1G", 1'000'000'000'000, 954, 1'000'000'000, 1'000'000'000, "1000000000"},  // 953.67 MiB
        ParseCase{"1T", 1'000'000'000'000'000, 953'675, 1'000'000'000'000, 1'000'000'000'000, "1000000000000"},
        ParseCase{"1P", 1'000'000'000'000'000'000, 953'674'317, 1'000'000'000'000'000, 1'000'000'000'000'000,
                  "1000000000000000"},
        // Binary SI suffixes.
        ParseCase{"1Ki", 1'024'000, 1, 1024, 1024, "1024"},        //
        ParseCase{"1Mi", 1000 * kMi, 1, kMi, kMi, "1048576"},      //
        ParseCase{"1.5Mi", 1500 * kMi, 2, 1572864, 1572864, "1572864"},  // 1.5 MiB -> 2
        ParseCase{"0.5Gi", 512'000 * kMi, 512, 512 * kMi, 512 * kMi, "536870912"},
        ParseCase{"16Gi", 16'384'000 * kMi, 16384, 16384 * kMi, 16384 * kMi, "17179869184"},
        ParseCase{"1Ti", 1000 * (int64_t{1} << 40), 1 << 20, int64_t{1} << 40, int64_t{1} << 40, "1099511627776"},
        ParseCase{"0.0000000001Ki", 1, 1, 1, std::nullopt, "0.000000103"},  // 102.4n rounds up to 103n
        // Decimal exponents.
        ParseCase{"2e3", 2'000'000, 1, 2000, 2000, "2000"},       //
        ParseCase{"1E-3", 1, 1, 1, std::nullopt, "0.001"},        //
        ParseCase{"1e-10", 1, 1, 1, std::nullopt, "0.000000001"}, // below 1n: rounds up to 1n
        ParseCase{"1.5e3", 1'500'000, 1, 1500, 1500, "1500"},     //
        ParseCase{"1E+3", 1'000'000, 1, 1000, 1000, "1000"},      //
        ParseCase{"5e0", 5000, 1, 5, 5, "5"},                     //
        ParseCase{"1e03", 1'000'000, 1, 1000, 1000, "1000"},      //
        ParseCase{"0e99999999999999", 0, 0, 0, 0, "0"},          // zero whatever the exponent
        ParseCase{"1e-99999999999999", 1, 1, 1, std::nullopt, "0.000000001"},
        ParseCase{"123456789012345678901234567890e-20", 1'234'567'890'124, 1178, 1'234'567'891, std::nullopt,
                  "1234567890.12345679"},  // 1234567890.123456789|0123..., rounded up at 1n
        // Sub-nano digits round the magnitude up to the next nano.
        ParseCase{"0.000000001", 1, 1, 1, std::nullopt, "0.000000001"},
        ParseCase{"0.0000000001", 1, 1, 1, std::nullopt, "0.000000001"},
        ParseCase{"1.0000000001", 1001, 1, 2, std::nullopt, "1.000000001"},
        ParseCase{"1.0000000000", 1000, 1, 1, 1, "1"}));

// The largest magnitude, 2^63-1 base units: milli() cannot express it (it throws).
TEST(QuantityLimits, LargestMagnitude) {
  const Quantity q = Quantity::parse("9223372036854775807");
  EXPECT_EQ(q.whole(), kMax);
  EXPECT_EQ(q.value(), kMax);
  EXPECT_EQ(q.mebibytes(), int64_t{1} << 43);  // (2^63-1) / 2^20 rounded up = 2^43
  EXPECT_THROW(q.milli(), std::invalid_argument);
  EXPECT_EQ(Quantity::parse("-9223372036854775807").whole(), -kMax);
  EXPECT_EQ(Quantity::parse("7Ei").whole(), int64_t{7} << 60);
  EXPECT_EQ(Quantity::parse("9E").whole(), 9'000'000'000'000'000'000);
  EXPECT_EQ(Quantity::parse("1E").whole(), 1'000'000'000'000'000'000);  // "E" alone is exa
  EXPECT_EQ(Quantity::parse("1Pi").whole(), int64_t{1} << 50);
  EXPECT_EQ(Quantity::parse("1Ei").whole(), int64_t{1} << 60);
  // milli() fits up to about 9.2e15 units; beyond it throws rather than wrapping.
  EXPECT_EQ(Quantity::parse("9P").milli(), 9'000'000'000'000'000'000);
  EXPECT_THROW(Quantity::parse("10P").milli(), std::invalid_argument);
  EXPECT_THROW(Quantity::parse("1E").milli(), std::invalid_argument);
}

TEST(QuantityCompare, NumericOrder) {
  EXPECT_EQ(Quantity::parse("1k"), Quantity::parse("1000"));
  EXPECT_EQ(Quantity::parse("2e3"), Quantity::parse("2k"));
  EXPECT_EQ(Quantity::parse("0.5"), Quantity::parse("500m"));
  EXPECT_EQ(Quantity::parse("1Ki"), Quantity::parse("1024"));
  EXPECT_EQ(Quantity::parse("-0"), Quantity::parse("0"));
  EXPECT_LT(Quantity::parse("1k"), Quantity::parse("1Ki"));
  EXPECT_LT(Quantity::parse("-1"), Quantity::parse("0"));
  EXPECT_LT(Quantity::parse("-2"), Quantity::parse("-1"));
  EXPECT_LT(Quantity::parse("999m"), Quantity::parse("1"));
  EXPECT_GT(Quantity::parse("1.000000001"), Quantity::parse("1"));
  EXPECT_TRUE(Quantity::parse("-1").is_negative());
  EXPECT_FALSE(Quantity::parse("-0").is_negative());
  EXPECT_TRUE(Quantity::parse("-0.0").is_zero());
  EXPECT_EQ(Quantity{}, Quantity::parse("0"));
  const Quantity q = Quantity::parse("1.5Gi");
  EXPECT_EQ(q.magnitude_units(), 1610612736);
  EXPECT_EQ(q.magnitude_nanos(), 0);
  EXPECT_EQ(Quantity::parse("2.25").magnitude_nanos(), 250'000'000);
}

struct RejectCase {
  std::string text;
  std::string message;  // a substring the error message must contain
};

void PrintTo(const RejectCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class QuantityReject : public ::testing::TestWithParam<RejectCase> {};

TEST_P(QuantityReject, ThrowsNamingTheProblem) {
  const RejectCase& c = GetParam();
  try {
    Quantity::parse(c.text);
    FAIL() << "accepted \"" << c.text << '"';
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("quantity \"" + c.text + "\""), std::string::npos) << what;
    EXPECT_NE(what.find(c.message), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bad, QuantityReject,
    ::testing::Values(
        RejectCase{"", "empty"},
        // Whitespace anywhere (trimming is the reader's job).
        RejectCase{" 1", "whitespace"}, RejectCase{"1 ", "whitespace"}, RejectCase{"1 Gi", "whitespace"},
        RejectCase{"1\tGi", "whitespace"},
        // Unknown suffixes (suffixes are case-sensitive).
        RejectCase{"5gb", "unknown suffix \"gb\""}, RejectCase{"1Kb", "unknown suffix \"Kb\""},
        RejectCase{"1K", "unknown suffix \"K\""}, RejectCase{"1ki", "unknown suffix \"ki\""},
        RejectCase{"1mi", "unknown suffix \"mi\""}, RejectCase{"1GiB", "unknown suffix \"GiB\""},
        RejectCase{"1mm", "unknown suffix \"mm\""}, RejectCase{"1Gi1", "unknown suffix \"Gi1\""},
        RejectCase{"1e", "unknown suffix \"e\""}, RejectCase{"1e+", "unknown suffix \"e+\""},
        RejectCase{"1e3.5", "unknown suffix \"e3.5\""}, RejectCase{"0x10", "unknown suffix \"x10\""},
        RejectCase{"1,5", "unknown suffix \",5\""}, RejectCase{"1%", "unknown suffix \"%\""},
        // Numbers.
        RejectCase{"1.2.3", "more than one decimal point"}, RejectCase{"1..2", "more than one decimal point"},
        RejectCase{"--1", "more than one sign"}, RejectCase{"+-1", "more than one sign"},
        RejectCase{"1-", "sign"}, RejectCase{"1e3-", "unknown suffix"},
        RejectCase{"-", "no digits"}, RejectCase{"+", "no digits"}, RejectCase{".", "no digits"},
        RejectCase{"Gi", "no digits"}, RejectCase{"m", "no digits"}, RejectCase{"abc", "no digits"},
        RejectCase{"-.Ki", "no digits"},
        // An exponent combined with another suffix.
        RejectCase{"1e3Ki", "cannot be combined"}, RejectCase{"1Kie3", "cannot be combined"},
        RejectCase{"2E1Mi", "cannot be combined"}, RejectCase{"1ke3", "cannot be combined"},
        RejectCase{"1e3m", "cannot be combined"},
        // Overflow: magnitude above 2^63-1 base units.
        RejectCase{"9223372036854775808", "out of range"}, RejectCase{"-9223372036854775808", "out of range"},
        RejectCase{"8Ei", "out of range"}, RejectCase{"9.3E", "out of range"},
        RejectCase{"1e19", "out of range"}, RejectCase{"1e30", "out of range"},
        RejectCase{"1e99999999999999999999", "out of range"},
        RejectCase{"100000000000000000000000000000000", "out of range"}));

TEST(QuantityWhole, NamesTheValue) {
  try {
    Quantity::parse("1500m").whole();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1.5"), std::string::npos) << e.what();
  }
}

// Kubernetes canonical form (apimachinery quantity.go CanonicalizeBytes), hand-checked.
struct FormatCase {
  int64_t amount;
  QuantityUnit unit;
  std::string text;
};

TEST(QuantityFormat, KubernetesCanonicalForm) {
  constexpr int64_t kMi = kBytesPerMib;
  const std::vector<FormatCase> cases = {
      {0, QuantityUnit::kMilli, "0"},          {500, QuantityUnit::kMilli, "500m"},
      {1, QuantityUnit::kMilli, "1m"},         {1000, QuantityUnit::kMilli, "1"},
      {2000, QuantityUnit::kMilli, "2"},       {1500, QuantityUnit::kMilli, "1500m"},
      {10000, QuantityUnit::kMilli, "10"},     {1'000'000, QuantityUnit::kMilli, "1k"},
      {4'000'000, QuantityUnit::kMilli, "4k"}, {1'500'000, QuantityUnit::kMilli, "1500"},
      {-500, QuantityUnit::kMilli, "-500m"},   {0, QuantityUnit::kBytes, "0"},
      {kMi, QuantityUnit::kBytes, "1Mi"},      {1536 * kMi, QuantityUnit::kBytes, "1536Mi"},
      {1024 * kMi, QuantityUnit::kBytes, "1Gi"}, {16384 * kMi, QuantityUnit::kBytes, "16Gi"},
      {1024 * 1024 * kMi, QuantityUnit::kBytes, "1Ti"}, {(3 * 1024 * 1024 + 512 * 1024) * kMi, QuantityUnit::kBytes, "3584Gi"},
      // Bytes kube keeps exactly: 1000000Ki stays Ki; 100M = 100000000 is no whole Ki; below 1024 no suffix.
      {1'024'000'000, QuantityUnit::kBytes, "1000000Ki"}, {100'000'000, QuantityUnit::kBytes, "100000000"},
      {1000, QuantityUnit::kBytes, "1000"}, {-2048, QuantityUnit::kBytes, "-2Ki"},
  };
  for (const auto& c : cases) EXPECT_EQ(format_quantity(c.amount, c.unit), c.text) << c.amount;
}

}  // namespace
}  // namespace gpufleet
