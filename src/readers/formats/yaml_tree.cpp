#include "readers/formats/yaml_tree.h"

#include <algorithm>
#include <memory>
#include <new>
#include <optional>

#include <fmt/format.h>
#include <yaml.h>  // libyaml

#include "util/input_error.h"


namespace gpufleet::io::detail {

std::pair<int, int> Source::position(const YamlMark& m) const {
  if (embedded && !exact) return {fallback.line + 1, fallback.column + 1};
  if (m.is_null()) return {0, 0};
  if (embedded) return {line_offset + m.line + 1, col_offset + m.column + 1};
  return {m.line + 1, m.column + 1};
}

void Source::fail(const YamlMark& m, const std::string& field, const std::string& message) const {
  const auto [line, column] = position(m);
  throw InputError(file, line, field, message, column);
}


const YamlNode* YamlNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.type == YamlType::kScalar && k.scalar == key) return &v;
  return nullptr;
}

namespace {

YamlMark mark_at(size_t line, size_t column) {
  return {static_cast<int>(std::min<size_t>(line, 1u << 30)), static_cast<int>(std::min<size_t>(column, 1u << 30))};
}

YamlMark mark_of(const yaml_mark_t& m) { return mark_at(m.line, m.column); }

// The 0-based line and column of byte `offset` of `text` (libyaml's reader errors give only an offset).
YamlMark mark_of_offset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t nl = before.rfind('\n');
  return mark_at(line, nl == std::string_view::npos ? offset : offset - nl - 1);
}

// A plain scalar that YAML's core schema resolves to null (yaml-cpp's IsNullString).
bool is_null_scalar(const yaml_event_t& e) {
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const std::string_view s(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

struct Parser {
  yaml_parser_t p;
  Parser() {
    if (!yaml_parser_initialize(&p)) throw std::bad_alloc();
  }
  ~Parser() { yaml_parser_delete(&p); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
};

struct Event {
  yaml_event_t e{};
  ~Event() { yaml_event_delete(&e); }
};

// A collection being built, and for a mapping the key waiting for its value.
struct Frame {
  YamlNode node;
  std::optional<YamlNode> key;
};

// YamlNode::content of a literal block scalar with `value` whose event is `e`, in `text`.
YamlMark literal_content(std::string_view text, const yaml_event_t& e, std::string_view value) {
  if (e.data.scalar.style != YAML_LITERAL_SCALAR_STYLE) return {};
  size_t at = text.find('\n', e.start_mark.index);  // the end of the header line (`key: |`)
  if (at == std::string_view::npos) return {};
  ++at;
  std::vector<std::string_view> lines;  // the value's lines, a final line break ending the last
  for (size_t from = 0; from < value.size();) {
    const size_t end = value.find('\n', from);
    lines.push_back(value.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from));
    if (end == std::string_view::npos) break;
    from = end + 1;
  }
  int indent = -1;
  for (const std::string_view line : lines) {
    if (at > text.size()) return {};
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view source = text.substr(at, end - at);
    if (!line.empty()) {
      if (indent < 0) indent = static_cast<int>(source.find_first_not_of(' '));
      if (indent < 0 || source.size() < static_cast<size_t>(indent) || source.substr(static_cast<size_t>(indent)) != line) return {};
    }
    at = end + 1;
  }
  if (indent < 0) return {};
  return mark_at(static_cast<int>(e.start_mark.line) + 1, indent);
}

}  // namespace

std::vector<YamlNode> parse_yaml_stream(std::string_view text, const Source& src, const std::string& path,
                                        const YamlLimits& limits) {
  Parser parser;
  // libyaml asserts a non-null input, and an empty std::string_view may have data() == nullptr.
  static const unsigned char kNoText[1] = {0};
  const unsigned char* input = text.empty() ? kNoText : reinterpret_cast<const unsigned char*>(text.data());
  yaml_parser_set_input_string(&parser.p, input, text.size());
  yaml_parser_set_encoding(&parser.p, YAML_UTF8_ENCODING);
  std::vector<YamlNode> documents;
  std::vector<Frame> stack;  // open collections, innermost last
  size_t nodes = 0;
  const auto fail_at = [&](const YamlMark& m, const std::string& message) { src.fail(m, path, message); };
  const auto over = [&](const yaml_event_t& e, uint64_t limit, std::string_view what, std::string_view name) {
    fail_at(mark_of(e.start_mark), limit_message(limit, what, name));
  };
  // Attaches a finished node to the innermost collection, or makes it the document's root.
  const auto attach = [&](YamlNode&& n) {
    if (stack.empty()) {
      documents.back() = std::move(n);
      return;
    }
    Frame& f = stack.back();
    if (f.node.type == YamlType::kSequence) {
      f.node.items.push_back(std::move(n));
    } else if (!f.key) {
      f.key = std::move(n);
    } else {
      f.node.entries.push_back({std::move(*f.key), std::move(n)});
      f.key.reset();
    }
  };
  while (true) {
    Event ev;
    if (!yaml_parser_parse(&parser.p, &ev.e)) {
      const yaml_parser_t& p = parser.p;
      // A reader error has only a byte offset; a bad trailing octet's is moved back to its character's lead.
      size_t offset = std::min(p.problem_offset, text.size());
      if (p.problem && std::string_view(p.problem) == "invalid trailing UTF-8 octet" && offset > 0) {
        --offset;  // the octet before the bad one: the lead, or a good trailing octet
        for (int back = 0; back < 2 && offset > 0 && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80; ++back) --offset;
      }
      std::string message = fmt::format("YAML syntax error: {}", p.problem ? p.problem : "malformed input");
      if (p.context) message += fmt::format(" ({})", p.context);
      fail_at(p.error == YAML_READER_ERROR ? mark_of_offset(text, offset) : mark_of(p.problem_mark), message);
    }
    const yaml_event_t& e = ev.e;
    switch (e.type) {
      case YAML_STREAM_END_EVENT: return documents;
      case YAML_DOCUMENT_START_EVENT:
        if (documents.size() >= limits.max_documents) over(e, limits.max_documents, "documents", "YamlLimits::max_documents");
        documents.emplace_back();
        break;
      case YAML_ALIAS_EVENT:
        fail_at(mark_of(e.start_mark),
                fmt::format("YAML alias '*{}' is not supported: write the value out (an alias can multiply the work "
                            "of reading a file)",
                            reinterpret_cast<const char*>(e.data.alias.anchor)));
        break;  // (not reached)
      case YAML_SCALAR_EVENT: {
        if (e.data.scalar.length > limits.max_scalar_bytes)
          over(e, limits.max_scalar_bytes, "bytes in a scalar", "YamlLimits::max_scalar_bytes");
        if (++nodes > limits.max_nodes) over(e, limits.max_nodes, "nodes", "YamlLimits::max_nodes");
        YamlNode n;
        n.mark = mark_of(e.start_mark);
        if (!is_null_scalar(e)) {
          n.type = YamlType::kScalar;
          n.scalar.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
          n.content = literal_content(text, e, n.scalar);
        }
        attach(std::move(n));
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (++nodes > limits.max_nodes) over(e, limits.max_nodes, "nodes", "YamlLimits::max_nodes");
        if (stack.size() >= limits.max_depth) over(e, limits.max_depth, "levels of nesting", "YamlLimits::max_depth");
        Frame& f = stack.emplace_back();
        f.node.type = e.type == YAML_SEQUENCE_START_EVENT ? YamlType::kSequence : YamlType::kMapping;
        f.node.mark = mark_of(e.start_mark);
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        YamlNode n = std::move(stack.back().node);
        stack.pop_back();
        attach(std::move(n));
        break;
      }
      default: break;  // stream start, document end
    }
  }
}

}  // namespace gpufleet::io::detail
