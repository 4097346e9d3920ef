#include "readers/formats/json_request.h"

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
  // The DOM parser, checking each limit at the event that would cross it (a SAX handler: faster than
  // the parser callback, which re-checks every value it builds). Throwing stops the parse.
  struct Checked : nlohmann::detail::json_sax_dom_parser<json> {
    using Base = nlohmann::detail::json_sax_dom_parser<json>;
    Checked(json& root, const JsonRequestLimits& l, const std::string& s, int n) : Base(root), limits(l), source(s), line_no(n) {}
    const JsonRequestLimits& limits;
    const std::string& source;
    int line_no;
    size_t values = 0, depth = 0;
    void value() {
      if (++values > limits.max_values)
        throw InputError(source, line_no, "", limit_message(limits.max_values, "values", "JsonRequestLimits::max_values"));
    }
    void string_size(size_t n) const {
      if (n > limits.max_string_bytes)
        throw InputError(source, line_no, "", limit_message(limits.max_string_bytes, "bytes in a string", "JsonRequestLimits::max_string_bytes"));
    }
    void open() {
      if (depth++ >= limits.max_depth)
        throw InputError(source, line_no, "", limit_message(limits.max_depth, "levels of nesting", "JsonRequestLimits::max_depth"));
      value();
    }
    bool null() { return value(), Base::null(); }
    bool boolean(bool v) { return value(), Base::boolean(v); }
    bool number_integer(json::number_integer_t v) { return value(), Base::number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return value(), Base::number_unsigned(v); }
    bool number_float(json::number_float_t v, const std::string& text) { return value(), Base::number_float(v, text); }
    bool string(std::string& v) { return value(), string_size(v.size()), Base::string(v); }
    bool binary(json::binary_t& v) { return value(), Base::binary(v); }
    bool key(std::string& v) { return string_size(v.size()), Base::key(v); }
    bool start_object(std::size_t n) { return open(), Base::start_object(n); }
    bool start_array(std::size_t n) { return open(), Base::start_array(n); }
    bool end_object() { return --depth, Base::end_object(); }
    bool end_array() { return --depth, Base::end_array(); }
  };
  try {
    json root;
    Checked handler(root, limits, source, line_no);
    json::sax_parse(body.begin(), body.end(), &handler);
    return root;
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

const char* json_type_name(const nlohmann::json& value) {
  using nlohmann::json;
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

nlohmann::json parse_json_request(std::string_view body, const std::string& source, const JsonRequestLimits& limits) {
  return parse_json(body, source, limits, 0);
}

nlohmann::json parse_json_line(std::string_view line, const std::string& source, int line_no,
                               const JsonRequestLimits& limits) {
  return parse_json(line, source, limits, line_no > 0 ? line_no : 1);
}

}  // namespace gpufleet::io
