// "Did you mean": how far a mistyped word is from a known one, and the known word it is most likely
// a typo of. Used for unknown keys in input files and unknown commands and options.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet {

/// The optimal string alignment distance of `a` and `b`, ignoring ASCII case: the fewest insertions,
/// deletions, substitutions of one character and swaps of two adjacent ones that turn one into the
/// other ("--seed" / "--seeds": 1, "sreve" / "serve": 1, "Resources" / "resources": 0). O(|a| x |b|).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` by edit_distance when it is close enough to be a typo: at most
/// max(2, word.size() / 4) edits. "" when none is; the first in `candidates` on a tie.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gpufleet
