#include "io/text_file.h"

#include <filesystem>
#include <fstream>

#include "io/input_limits.h"
#include "util/input_error.h"

namespace gpufleet::io {

std::string read_text_file(const std::string& path, size_t max_bytes, const char* limit_name) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  const auto too_large = [&] { throw InputError(path, 0, "", limit_message(max_bytes, "bytes in the file", limit_name)); };
  const auto size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  if (!ec && size > max_bytes) too_large();
  std::string text;
  text.reserve(ec ? 0 : size);
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) too_large();
  }
  if (in.bad()) throw InputError(path, 0, "", "read error");
  return text;
}

std::string read_csv_file(const std::string& path) {
  return read_text_file(path, kCsvLimits.max_file_bytes, "CsvLimits::max_file_bytes");
}

std::string read_yaml_file(const std::string& path) {
  return read_text_file(path, kYamlLimits.max_file_bytes, "YamlLimits::max_file_bytes");
}

}  // namespace gpufleet::io
