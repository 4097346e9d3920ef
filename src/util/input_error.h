// The one error type for bad input. It names the file, line (1-based, 0 if unknown), column
// (1-based, 0 if unknown) and field, so the CLI can print one line and exit with status 2.
// what() is that line: "file:line:column: field 'f': message". Control bytes are shown as \xNN, and
// the file and the field are each cut to kMaxEchoBytes, the message to kMaxMessageBytes (head and tail kept, the middle
// replaced by "...[N bytes left out]..."), so input echoed in a message cannot make the line long.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpufleet {

class InputError : public std::runtime_error {
 public:
  /// Longest file name or field path kept whole in what(), bytes.
  static constexpr size_t kMaxEchoBytes = 300;
  /// Longest message kept whole in what(), bytes: room for gpufleet's longest explanations (a model
  /// that does not fit its GPUs: the memory split, what is missing, what would fit), ~400 bytes.
  static constexpr size_t kMaxMessageBytes = 500;

  InputError(std::string file, int line, std::string field, const std::string& message, int column = 0)
      : std::runtime_error(format(file, line, column, field, message)),
        file_(std::move(file)),
        line_(line),
        column_(column),
        field_(std::move(field)) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& field() const { return field_; }

 private:
  static std::string format(const std::string& file, int line, int column, const std::string& field,
                            const std::string& message);
  std::string file_;
  int line_;
  int column_;
  std::string field_;
};

/// A bad command-line argument (unknown policy, malformed seed range, ...). Exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpufleet
