// Reading an input file whole, for the readers at the edge (openb CSV, FGD reference, Kubernetes
// YAML, node-pool file).
#pragma once

#include <string>

namespace gpufleet::io {

/// Reads a whole file into a string. Throws InputError (line 0) when it is a directory, cannot be
/// opened or cannot be read.
std::string read_text_file(const std::string& path);

}  // namespace gpufleet::io
