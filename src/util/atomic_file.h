// Writes an output file all-or-nothing: the content goes to a temporary file in the same folder,
// which is then renamed over the target, so a reader never sees a half-written file and a failed
// run leaves the previous file (or none) in place.
#pragma once

#include <string>
#include <string_view>

namespace gpufleet {

/// Writes `content` to `path` atomically. Throws std::runtime_error naming the path on failure
/// (the temporary file is removed).
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace gpufleet
