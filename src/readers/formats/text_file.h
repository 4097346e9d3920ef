// Reading an input file whole, for the readers at the edge (openb CSV, FGD reference, Kubernetes
// YAML, node-pool file, simulator files).
#pragma once

#include <cstddef>
#include <string>

namespace gpufleet::io {

/// Reads a whole regular file into a string, refusing one larger than `max_bytes` (the reader's
/// limit, readers/formats/input_limits.h) before reading it. Anything but a regular file (a directory, a device
/// such as /dev/zero, a FIFO, a socket) is refused before a byte is read, and the file is opened
/// non-blocking, so no input path can make a reader block or read without end; a file that says
/// size 0 but has more (/proc) is read up to max_bytes + 64 KiB, then refused. Symbolic links are
/// followed. Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (the fuzz targets' readers, the
/// libFuzzer convention), it reads no file at all: every path is refused.
/// `limit_name` names the limit in the error. Throws InputError (line 0) when the path is missing,
/// a directory or not a regular file, cannot be opened or read, or is too large (also when it grew
/// past max_bytes while being read).
std::string read_text_file(const std::string& path, size_t max_bytes, const char* limit_name);

/// read_text_file with the CSV readers' file limit (CsvLimits::max_file_bytes, readers/formats/input_limits.h).
std::string read_csv_file(const std::string& path);
/// read_text_file with the YAML / JSON readers' file limit (YamlLimits::max_file_bytes).
std::string read_yaml_file(const std::string& path);

}  // namespace gpufleet::io
