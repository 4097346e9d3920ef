#include "io/json_request.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// The 1-based line and column of byte `offset` of `text`.
std::pair<int, int> position_of(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
  const size_t nl = before.rfind('\n');
  return {line, static_cast<int>(nl == std::string_view::npos ? offset + 1 : offset - nl)};
}

// The parser of both entry points. `line_no` > 0: `body` is that line of a JSON Lines file, and every
// error names it; 0: a whole body, limit errors have no position.
nlohmann::json parse_json(std::string_view body, const std::string& source, const JsonRequestLimits& limits, int line_no) {
  using nlohmann::json;
  if (body.size() > limits.max_body_bytes)
    throw InputError(source, line_no, "", limit_message(limits.max_body_bytes, "bytes in the body", "JsonRequestLimits::max_body_bytes"));
  size_t values = 0;
  // Called as the parser goes: `depth` is the nesting of the event (0 at the top). Throwing stops it.
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (static_cast<size_t>(depth) >= limits.max_depth)
          throw InputError(source, line_no, "", limit_message(limits.max_depth, "levels of nesting", "JsonRequestLimits::max_depth"));
        [[fallthrough]];
      case json::parse_event_t::value:
        if (++values > limits.max_values)
          throw InputError(source, line_no, "", limit_message(limits.max_values, "values", "JsonRequestLimits::max_values"));
        if (parsed.is_string() && parsed.get_ref<const std::string&>().size() > limits.max_string_bytes)
          throw InputError(source, line_no, "", limit_message(limits.max_string_bytes, "bytes in a string", "JsonRequestLimits::max_string_bytes"));
        break;
      case json::parse_event_t::key:
        if (parsed.get_ref<const std::string&>().size() > limits.max_string_bytes)
          throw InputError(source, line_no, "", limit_message(limits.max_string_bytes, "bytes in a string", "JsonRequestLimits::max_string_bytes"));
        break;
      default: break;
    }
    return true;
  };
  try {
    return json::parse(body.begin(), body.end(), check);
  } catch (const json::parse_error& e) {
    auto [line, column] = position_of(body, e.byte > 0 ? e.byte - 1 : 0);
    if (line_no > 0) line += line_no - 1;
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    if (const size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw InputError(source, line, "", fmt::format("JSON syntax error: {}", what), column);
  } catch (const json::exception& e) {  // e.g. out_of_range 406: a number such as 1e999 that overflows a double
    std::string what = e.what();         // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
    if (const size_t bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
    throw InputError(source, line_no, "", fmt::format("JSON syntax error: {}", what));
  }
}

}  // namespace

nlohmann::json parse_json_request(std::string_view body, const std::string& source, const JsonRequestLimits& limits) {
  return parse_json(body, source, limits, 0);
}

nlohmann::json parse_json_line(std::string_view line, const std::string& source, int line_no,
                               const JsonRequestLimits& limits) {
  return parse_json(line, source, limits, line_no > 0 ? line_no : 1);
}

}  // namespace gpufleet::io
