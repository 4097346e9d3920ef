// Plain-text tables for the commands' stdout: columns padded to their widest cell, two spaces apart,
// the first columns left-aligned (names), the rest right-aligned (figures), no trailing spaces.
#pragma once

#include <string>
#include <vector>

namespace gpufleet::io {

/// The header line then one line per row, each ending in '\n'. Rows must have the header's number of
/// cells; columns [0, left_aligned) are left-aligned.
std::string aligned_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                          size_t left_aligned);

}  // namespace gpufleet::io
