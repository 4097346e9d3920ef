// ASCII case folding for names users may write in any case (GPU models, serving-catalog models,
// file extensions). Bytes outside A-Z are compared as they are, so UTF-8 text is never altered.
#pragma once

#include <string>
#include <string_view>

namespace gpufleet {

/// `c` with A-Z mapped to a-z.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// `s` with A-Z mapped to a-z.
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// Whether a and b are equal ignoring ASCII case.
constexpr bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

}  // namespace gpufleet
