// "Did you mean": the known word closest to a mistyped one (a subcommand, an option), for usage
// errors. CLI only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::cli {

/// Levenshtein distance between `a` and `b`: the fewest insertions, deletions and substitutions of
/// one character that turn one into the other ("--seed" / "--seeds": 1, "simlate" / "simulate": 1).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` by edit_distance, if it is close enough to be a typo: at most
/// max(2, word.size() / 4) edits, as git and cargo suggest. "" when none is; the first in `candidates`
/// on a tie.
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gpufleet::cli
