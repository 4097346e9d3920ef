// Reading an input file whole, for the readers at the edge (openb CSV, FGD reference, Kubernetes
// YAML, node-pool file, simulator files).
#pragma once

#include <cstddef>
#include <string>

namespace gpufleet::io {

/// Reads a whole file into a string, refusing one larger than `max_bytes` (the reader's limit,
/// io/input_limits.h) before reading it; a pipe or device is read up to max_bytes + 1 bytes.
/// `limit_name` names the limit in the error. Throws InputError (line 0) when the path is a
/// directory, cannot be opened or read, or is too large.
std::string read_text_file(const std::string& path, size_t max_bytes, const char* limit_name);

/// read_text_file with the CSV readers' file limit (CsvLimits::max_file_bytes, io/input_limits.h).
std::string read_csv_file(const std::string& path);
/// read_text_file with the YAML / JSON readers' file limit (YamlLimits::max_file_bytes).
std::string read_yaml_file(const std::string& path);

}  // namespace gpufleet::io
