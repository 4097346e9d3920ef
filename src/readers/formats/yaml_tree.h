// YAML (and JSON, a subset of it) documents as plain trees, for the YAML readers (readers/formats/yaml_field.h
// wraps them with field paths). Not a public API: used only by the readers.
//
// Parser: libyaml (Debian's libyaml-dev), the YAML reference parser in C, fuzzed continuously by
// OSS-Fuzz; go-yaml, which kubectl uses, is a port of it, so what it accepts is what kubectl accepts.
// The tree is built here from its event stream. yaml-cpp 0.7 (Debian 12) is not used: it loops
// allocating without end on inputs as small as `,` or `&t:a,` (jbeder/yaml-cpp#1040, fixed only
// after 0.8.0), and no guard in front of it can know every such input.
//
// What the tree keeps, as yaml-cpp's YAML::Node did for the readers:
//  - scalars as their text (no type resolution: `1`, `true`, `1.0` are strings); a plain scalar
//    that is empty, `~`, `null`, `Null` or `NULL` is a null node (YAML 1.2 core schema), a quoted
//    one is a string;
//  - mappings as their entries in document order (keys are nodes; the readers accept only scalar
//    keys), sequences as their items; tags are ignored;
//  - marks: the 0-based line and column where each node starts (at its anchor or tag if it has one).
// What it refuses (parse_yaml_stream throws InputError at the position, with the given field path):
//  - a syntax error, invalid UTF-8 or a control character: "YAML syntax error: <libyaml's problem>
//    (<its context>)";
//  - an alias (`*name`): each alias can multiply the work of walking the tree ("billion laughs");
//    anchors alone are harmless and allowed;
//  - more documents, deeper nesting, more nodes or a longer scalar than YamlLimits
//    (readers/formats/input_limits.h) allows: an error naming the limit, at the node that crosses it.
// Memory: the tree of a text is at most YamlLimits::max_nodes nodes.
#pragma once

#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "readers/formats/input_limits.h"

namespace gpufleet::io::detail {

/// A 0-based position in a text; line < 0 is "no position".
struct YamlMark {
  int line = -1;
  int column = -1;
  bool is_null() const { return line < 0; }
};

enum class YamlType { kNull, kScalar, kSequence, kMapping };

struct YamlEntry;  // a mapping's (key, value), below

/// One node of a document.
struct YamlNode {
  YamlType type = YamlType::kNull;
  YamlMark mark;
  std::string scalar;                                  ///< kScalar: its text; empty otherwise
  /// kScalar written as a literal block (`|`): where its text's first line starts (line k of the
  /// text is line content.line + k of the source, at column content.column), when every line of the
  /// text was found there; null otherwise (other styles, or lines not found as written).
  YamlMark content;
  std::vector<YamlNode> items;                         ///< kSequence: its items
  std::vector<YamlEntry> entries;                      ///< kMapping: (key, value) in document order

  /// The value of the first entry whose key is a scalar equal to `key`; nullptr if none (or not a
  /// mapping).
  const YamlNode* find(std::string_view key) const;
};

struct YamlEntry {
  YamlNode key;
  YamlNode value;
};

/// Where a YAML tree came from and how its marks map to 1-based (line, column) in the file.
struct Source {
  std::string file;
  bool embedded = false;
  bool exact = false;
  int line_offset = 0;  // 0-based file line of the embedded text's line 0
  int col_offset = 0;   // indentation of the literal block
  YamlMark fallback;

  /// (line, column), 1-based; (0, 0) for a null mark.
  std::pair<int, int> position(const YamlMark& m) const;

  /// Throws InputError(file, line, field, message, column) at mark `m`.
  [[noreturn]] void fail(const YamlMark& m, const std::string& field, const std::string& message) const;
};


/// Every document of `text` (UTF-8; a byte-order mark stripped before), in order; an empty document
/// is a null node. Throws InputError as described above, at `src` positions with field path `path`.
std::vector<YamlNode> parse_yaml_stream(std::string_view text, const Source& src, const std::string& path,
                                        const YamlLimits& limits = kYamlLimits);

}  // namespace gpufleet::io::detail
