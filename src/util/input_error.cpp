#include "util/input_error.h"

#include <fmt/format.h>

namespace gpufleet {

namespace {

// Control bytes from the input (NUL, escape sequences, newlines) are shown as \xNN so an error stays
// one readable line and cannot drive the terminal. A text longer than `max_bytes` (input echoed in a
// message: a 50 MB line, a header of 80,000 names) keeps its head and tail around a note of how much
// was left out, so the line stays short and still says what is wrong.
std::string printable(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    const auto boundary = [&](size_t i) {  // back to the start of a UTF-8 character (at most 3 bytes)
      for (int k = 0; k < 3 && i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; ++k) --i;
      return i;
    };
    const size_t head = boundary(max_bytes * 2 / 3), tail = boundary(text.size() - max_bytes / 3);
    return fmt::format("{}...[{} bytes left out]...{}", printable(text.substr(0, head), max_bytes),
                       tail - head, printable(text.substr(tail), max_bytes));
  }
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
  const std::string file = printable(file_raw, kMaxEchoBytes), field = printable(field_raw, kMaxEchoBytes),
                    message = printable(message_raw, kMaxMessageBytes);
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  if (column > 0) where += fmt::format(":{}", column);
  if (field.empty()) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: field '{}': {}", where, field, message);
}

}  // namespace gpufleet
