// The guard in front of every YAML / JSON parse (io/yaml_field.h load_documents, load_document).
// Not a public API: used only by the YAML readers.
//
// yaml-cpp 0.7 (Debian 12) builds a whole tree before anyone can look at it, and some inputs make it
// loop: a stream holding only `,` yields empty documents without end until memory runs out
// (jbeder/yaml-cpp issue 1040, fixed only after 0.8.0). So each text is first read as an event
// stream by libyaml (the YAML reference parser in C, Debian's libyaml-dev, fuzzed continuously by
// OSS-Fuzz; go-yaml, which kubectl uses, is a port of it), which builds nothing and stops at the
// first problem:
//   - a syntax error, invalid UTF-8 or a control character: "YAML syntax error: <problem>" at its
//     line and column (libyaml's wording);
//   - an alias (`*name`): refused, since each alias can multiply the work of walking the tree
//     ("billion laughs"); anchors alone are harmless and allowed;
//   - more documents, a deeper nesting, more nodes or a longer scalar than YamlLimits allows
//     (io/input_limits.h): an error naming the limit, at the node that crosses it.
// Only a text that libyaml accepts whole goes on to yaml-cpp, which is never given an input on which
// it is known to loop. The text must be UTF-8 (a UTF-8 byte-order mark stripped before).
#pragma once

#include <string>
#include <string_view>

#include "io/input_limits.h"
#include "io/yaml_field.h"

namespace gpufleet::io::detail {

/// Reads `text` as a YAML event stream and throws InputError at `src` positions, with field path
/// `path`, on the first problem above; returns the number of documents.
size_t check_yaml_stream(std::string_view text, const Source& src, const std::string& path,
                         const YamlLimits& limits = kYamlLimits);

}  // namespace gpufleet::io::detail
