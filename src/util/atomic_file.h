// Writes an output file all-or-nothing: the content goes to a temporary file in the same folder,
// which is then renamed over the target, so a reader never sees a half-written file and a failed
// run leaves the previous file (or none) in place.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpufleet {

/// Writes `content` to `path` atomically. Throws std::runtime_error naming the path on failure
/// (the temporary file is removed).
void write_file_atomically(const std::string& path, std::string_view content);

/// Writes several files all-or-nothing as far as the file system allows: every content goes to its
/// temporary file first; only when all are written are they renamed over their targets. On a
/// failure before the renames, every temporary file is removed and no target is touched.
/// Throws std::runtime_error naming the path.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

/// Checks, before any work, that `path` can be written as an output: not a directory, not a symbolic
/// link, device, FIFO or socket (the rename would replace them), in an existing directory where a
/// file can be created (tried: a temporary file is made and removed). Returns an empty string if so,
/// else the reason.
std::string output_path_problem(const std::string& path);

}  // namespace gpufleet
