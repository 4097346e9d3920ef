// The parser of JSON request bodies for the live server (kube-scheduler extender verbs: ExtenderArgs,
// ExtenderPreemptionArgs, ExtenderBindingArgs of k8s.io/kube-scheduler/extender/v1). It turns a body
// into a JSON tree within stated limits; reading the tree into domain types is the verb's reader.
//
// Limits (readers/formats/input_limits.h, JsonRequestLimits): the body's size, nesting depth, number of values and
// string length, each checked while parsing, before the tree grows past it.
// Errors (InputError, `source` as the file): "JSON syntax error: <what>" at the 1-based line and
// column of the offending byte (nlohmann::json's message without its own prefix, e.g. "syntax error
// while parsing value - invalid literal; last read: 'tru!'"); a limit crossed, with no position.
// Invalid UTF-8 in a string is a syntax error (RFC 8259 section 8.1).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "readers/formats/input_limits.h"

namespace gpufleet::io {

/// Parses one JSON value (an object, for the extender verbs) from `body`. Throws InputError.
nlohmann::json parse_json_request(std::string_view body, const std::string& source,
                                  const JsonRequestLimits& limits = kJsonRequestLimits);

/// How messages name a value's type: "null", "an object", "an array" (JSON's word), "a string", "a boolean",
/// "a number" (as in "expected an object, got a number").
const char* json_type_name(const nlohmann::json& value);

/// parse_json_request for one line of a JSON Lines file (jsonlines.org), line `line_no` (1-based) of
/// `source`: the same checks and messages, every error at that line (a syntax error also at its
/// 1-based column within the line).
nlohmann::json parse_json_line(std::string_view line, const std::string& source, int line_no,
                               const JsonRequestLimits& limits);

}  // namespace gpufleet::io
