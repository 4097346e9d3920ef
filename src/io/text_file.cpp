#include "io/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/input_error.h"

namespace gpufleet::io {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, "", "read error");
  return std::move(buf).str();
}

}  // namespace gpufleet::io
