#include "util/input_error.h"

#include <fmt/format.h>

namespace gpufleet {

namespace {

// Control bytes from the input (NUL, escape sequences, newlines) are shown as \xNN so an error stays
// one readable line and cannot drive the terminal.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

}  // namespace

std::string InputError::format(const std::string& file_raw, int line, int column, const std::string& field_raw,
                               const std::string& message_raw) {
  const std::string file = printable(file_raw), field = printable(field_raw), message = printable(message_raw);
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  if (column > 0) where += fmt::format(":{}", column);
  if (field.empty()) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: field '{}': {}", where, field, message);
}

}  // namespace gpufleet
