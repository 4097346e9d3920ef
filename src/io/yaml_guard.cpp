#include "io/yaml_guard.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <yaml.h>  // libyaml

namespace gpufleet::io::detail {
namespace {

YAML::Mark mark_at(size_t line, size_t column) {
  YAML::Mark m = YAML::Mark::null_mark();
  m.line = static_cast<int>(std::min<size_t>(line, 1u << 30));
  m.column = static_cast<int>(std::min<size_t>(column, 1u << 30));
  return m;
}

YAML::Mark mark_of(const yaml_mark_t& m) { return mark_at(m.line, m.column); }

// The 0-based line and column of byte `offset` of `text` (libyaml's reader errors give only an offset).
YAML::Mark mark_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t nl = before.rfind('\n');
  return mark_at(line, nl == std::string_view::npos ? offset : offset - nl - 1);
}

struct ParserDeleter {
  void operator()(yaml_parser_t* p) const {
    yaml_parser_delete(p);
    delete p;
  }
};

struct Event {
  yaml_event_t e{};
  ~Event() { yaml_event_delete(&e); }
};

}  // namespace

size_t check_yaml_stream(std::string_view text, const Source& src, const std::string& path, const YamlLimits& limits) {
  std::unique_ptr<yaml_parser_t, ParserDeleter> parser(new yaml_parser_t);
  if (!yaml_parser_initialize(parser.get())) {
    delete parser.release();
    throw std::bad_alloc();
  }
  yaml_parser_set_input_string(parser.get(), reinterpret_cast<const unsigned char*>(text.data()), text.size());
  yaml_parser_set_encoding(parser.get(), YAML_UTF8_ENCODING);
  size_t documents = 0, depth = 0, nodes = 0;
  const auto over = [&](const yaml_event_t& e, uint64_t limit, std::string_view what, std::string_view name) {
    src.fail(mark_of(e.start_mark), path, limit_message(limit, what, name));
  };
  while (true) {
    Event ev;
    if (!yaml_parser_parse(parser.get(), &ev.e)) {
      const yaml_parser_t& p = *parser;
      // A reader error has only a byte offset; a bad trailing octet's is moved back to its character's lead.
      size_t offset = std::min(p.problem_offset, text.size());
      if (p.problem && std::string_view(p.problem) == "invalid trailing UTF-8 octet")
        while (offset > 0 && (static_cast<unsigned char>(text[--offset]) & 0xC0) != 0xC0) {
        }
      const YAML::Mark at = p.error == YAML_READER_ERROR ? mark_of_offset(text, offset) : mark_of(p.problem_mark);
      std::string message = fmt::format("YAML syntax error: {}", p.problem ? p.problem : "malformed input");
      if (p.context) message += fmt::format(" ({})", p.context);
      src.fail(at, path, message);
    }
    const yaml_event_t& e = ev.e;
    switch (e.type) {
      case YAML_STREAM_END_EVENT: return documents;
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > limits.max_documents) over(e, limits.max_documents, "documents", "YamlLimits::max_documents");
        break;
      case YAML_ALIAS_EVENT:
        src.fail(mark_of(e.start_mark), path,
                 fmt::format("YAML alias '*{}' is not supported: write the value out (an alias can multiply the "
                             "work of reading a file)",
                             reinterpret_cast<const char*>(e.data.alias.anchor)));
      case YAML_SCALAR_EVENT:
        if (e.data.scalar.length > limits.max_scalar_bytes)
          over(e, limits.max_scalar_bytes, "bytes in a scalar", "YamlLimits::max_scalar_bytes");
        if (++nodes > limits.max_nodes) over(e, limits.max_nodes, "nodes", "YamlLimits::max_nodes");
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        if (++nodes > limits.max_nodes) over(e, limits.max_nodes, "nodes", "YamlLimits::max_nodes");
        if (++depth > limits.max_depth) over(e, limits.max_depth, "levels of nesting", "YamlLimits::max_depth");
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: --depth; break;
      default: break;
    }
  }
}

}  // namespace gpufleet::io::detail
