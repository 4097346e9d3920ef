#include "util/edit_distance.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpufleet {
namespace {

TEST(EditDistance, HandComputed) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("--seed", "--seeds"), 1u);    // one insertion
  EXPECT_EQ(edit_distance("simlate", "simulate"), 1u);  // one insertion
  EXPECT_EQ(edit_distance("sreve", "serve"), 1u);       // one swap of adjacent letters
  EXPECT_EQ(edit_distance("Resources", "resources"), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);    // the textbook case
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);            // optimal string alignment, not Damerau's 2
}

TEST(EditDistance, ClosestWordIsATypoOrNothing) {
  const std::vector<std::string> commands{"pack", "place", "simulate", "compare", "bench-serve", "serve"};
  EXPECT_EQ(closest_word("simlate", commands), "simulate");
  EXPECT_EQ(closest_word("plce", commands), "place");
  EXPECT_EQ(closest_word("pace", commands), "pack");  // pack and place are both 1 away: the first listed
  EXPECT_EQ(closest_word("xyzzy", commands), "");
  EXPECT_EQ(closest_word("--zzzzzzzzzz", {"--policy", "--cluster"}), "");
  // The bound grows with the word: 3 edits are a typo of a 12-letter option, not of a 5-letter one.
  EXPECT_EQ(closest_word("--clustr-cnfg", {"--cluster-config"}), "--cluster-config");
  EXPECT_EQ(closest_word("sxrvx", {"serve"}), "serve");
  EXPECT_EQ(closest_word("sxxvx", {"serve"}), "");
}

}  // namespace
}  // namespace gpufleet
