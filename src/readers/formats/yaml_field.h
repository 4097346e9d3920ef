#pragma once

// Shared internals of the YAML readers (readers/k8s/k8s_yaml.cpp, readers/k8s/pool_file.cpp, readers/sim/sim_pools.cpp,
// readers/sim/workload_file.cpp): a node of a YAML tree (readers/formats/yaml_tree.h) wrapped with its field path and
// source, so that every validation error is reported as a gpufleet::InputError carrying the file, the 1-based line and
// column and the dotted field path.
//
// Not a public API: everything here lives in gpufleet::io::detail and is used only by the readers.
//
// Positions. Tree marks are 0-based; a Source maps a mark to the 1-based (line, column) of the
// file it came from (mark + 1), and a null mark to (0, 0), i.e. "no position". A config embedded in
// a string (a ConfigMap data entry) is parsed on its own; its Source is `embedded`: inside a literal
// block (`|`, `exact`) positions shift by the block's first line and indentation, in any other scalar
// style they all collapse to the position of the string itself (`fallback`).
//
// Field paths. The root has path "" (or the embedding field's path); a mapping child appends
// ".key" (just "key" under an empty path), a list element appends "[i]".
//
// Field. A node plus its path and Source. Access is const-only, so a lookup never inserts into the
// tree. A missing field (absent key, or any child of an absent/null node) is still a Field: it is not
// present(), has the child's path and reports errors at the position of the nearest enclosing node
// that exists. Helpers:
//   present / is_map / is_seq / is_scalar / type   -- what the node is ("nothing" when undefined)
//   operator[](key)   -- child of a mapping; "expected a mapping, got X" on a non-mapping
//   size() / at(i)    -- list iteration; size() is 0 when absent or null, "expected a list, got X"
//   each_entry(f)     -- f(key, value) per mapping entry, in document order; non-string keys fail
//                        with "expected a string key, got X"
//   only_keys({...})  -- rejects unknown keys at the key: "unknown key 'k' (expected a, b, c)"
//   fail_key(k, msg)  -- fails with msg at key k of a mapping (the key's position), when it is there
//   require_map()     -- "required field is missing" / "expected a mapping, got X"
//   scalar()          -- the text of a scalar; "required field is missing" / "expected a scalar, got X"
//   str(def)          -- scalar() or `def` when absent or null
//   required_str()    -- a non-empty scalar: "required field is missing" / "must not be empty"
//   integer(min, max) -- "'s' is not an integer", "v is negative" (when min >= 0),
//                        "v is out of range [min, max]"; opt_integer: nullopt when absent
//   number()          -- a finite double: "'s' is not a number"
//   boolean(def)      -- true/yes/on/y or false/no/off/n, any case: "'s' is not a boolean"
//   quantity()        -- a non-negative Kubernetes quantity: "'s' is not a valid quantity: why",
//                        "'s' is negative"
//   fail(message)     -- throws InputError(file, line, path, message, column) at the node.
//
// Typed readers on a Field (free functions, same error reporting):
//   seconds(f)        -- a duration in seconds, finite, in [0, kMaxSeconds]
//   int_or_percent(f, max) -- a policy/v1 int-or-percent: an integer in [0, max] or "N%", N <= 100
//
// Files named by a field (a workload's trace, step profile, Kubernetes objects):
//   read_referenced(f, read)    -- read(); an InputError from it (the file cannot be opened, is a
//                                  directory, or has a bad row) fails at f instead, its whole line as
//                                  the message: "w.yaml:12:14: field 'x.trace': t.csv:3:2: field 'c': ..."
//   fail_referenced(f, error)   -- the same failure, for an error already caught
//
// Loading. strip_bom() drops a leading UTF-8 byte-order mark; load_documents() parses every document
// of a multi-document stream with libyaml (readers/formats/yaml_tree.h: syntax, UTF-8, no aliases, YamlLimits);
// a syntax error becomes "YAML syntax error: <msg>" at its mark.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "readers/formats/yaml_tree.h"
#include "model/quantity.h"
#include "util/input_error.h"

namespace gpufleet {
struct IntOrPercent;  // model/pod_disruption_budget.h
}

namespace gpufleet::io::detail {

/// The apiVersion of gpufleet's own simulator documents (Workload and Autoscaling; docs/simulate.md).
inline constexpr const char* kSimApiVersion = "sim.gpufleet.io/v1";

/// The kind of the simulator's settings document in a pool file (readers/sim/sim_pools.h).
inline constexpr const char* kSimSettingsKind = "Autoscaling";

/// The largest duration seconds() accepts: 1e10 s (about 317 years), an absurdity guard.
inline constexpr double kMaxSeconds = 1e10;

/// `text` without a leading UTF-8 byte-order mark.
std::string_view strip_bom(std::string_view text);

/// All documents of `text` (readers/formats/yaml_tree.h); a syntax error, an alias, a limit of YamlLimits crossed,
/// or a key repeated in one mapping (whose later value would be dropped), throws InputError at its
/// position in `src`, with field path `path` (the root's; a repeated key's path extends it).
std::vector<YamlNode> load_documents(std::string_view text, const Source& src, const std::string& path = "");

/// "null", "a scalar", "a list", "a mapping", for error messages.
const char* type_name(const YamlNode& n);

/// A YAML node with its field path and source (see the top of this file). The tree and the Source must
/// outlive it.
class Field {
 public:
  Field(const YamlNode& node, std::string path, const Source& src);

  bool present() const { return node_ != nullptr && node_->type != YamlType::kNull; }
  /// Whether the key is written at all, even with a null value (`gpu:` or `gpu: ~`): for keys whose
  /// absence means something (a CPU-only node), so that a blank value is an error, not that meaning.
  bool given() const { return node_ != nullptr; }
  bool is_map() const { return present() && node_->type == YamlType::kMapping; }
  bool is_seq() const { return present() && node_->type == YamlType::kSequence; }
  bool is_scalar() const { return present() && node_->type == YamlType::kScalar; }
  const std::string& path() const { return path_; }
  const char* type() const { return node_ != nullptr ? type_name(*node_) : "nothing"; }
  const YamlMark& mark() const { return mark_; }
  const Source& source() const { return *src_; }
  std::pair<int, int> position() const { return src_->position(mark_); }

  [[noreturn]] void fail(const std::string& message) const;
  /// Fails at 1-based `line` and `column` (characters) of this scalar's text when the scalar is a
  /// literal block whose lines the YAML reader located (YamlNode::content), else as fail().
  [[noreturn]] void fail_in_text(int line, int column, const std::string& message) const;

  /// Fails unless a mapping is present.
  void require_map() const;
  /// Rejects keys outside `allowed` (typos), at the key's position; nothing when absent.
  void only_keys(std::initializer_list<const char*> allowed) const;
  /// Fails with `message` at key `key` (its position, the child's path) when this mapping has it;
  /// nothing otherwise.
  void fail_key(std::string_view key, const std::string& message) const;

  Field operator[](std::string_view key) const;

  /// Entries of a list; 0 when absent or null.
  size_t size() const;
  Field at(size_t i) const;

  /// Calls f(key, value) for each entry of a mapping, in document order; nothing when absent.
  template <class F>
  void each_entry(F&& f) const {
    if (!present()) return;
    require_map();
    for (const auto& [k, value] : node_->entries) {
      if (k.type != YamlType::kScalar) Field(k, path_, *src_).fail(fmt_key_error(k));
      Field v(value, child_path(k.scalar), *src_);
      if (v.mark_.is_null()) v.mark_ = k.mark;
      f(k.scalar, v);
    }
  }

  const std::string& scalar() const;
  std::string str(std::string def = {}) const { return present() ? scalar() : def; }
  std::string required_str() const;

  int64_t integer(int64_t min, int64_t max) const;
  std::optional<int64_t> opt_integer(int64_t min, int64_t max) const {
    if (!present()) return std::nullopt;
    return integer(min, max);
  }
  double number() const;
  bool boolean(bool def) const;
  Quantity quantity() const;

 private:
  static std::string fmt_key_error(const YamlNode& k);
  std::string child_path(std::string_view key) const;
  Field missing(std::string p) const;

  const YamlNode* node_ = nullptr;  ///< nullptr: absent
  YamlMark mark_;
  std::string path_;
  const Source* src_;
};

/// A duration in seconds: a finite number in [0, kMaxSeconds]. Errors: "'s' is not a number",
/// "s is negative", "s is absurdly large" (s: the field's text).
double seconds(const Field& f);

/// A policy/v1 int-or-percent (PodDisruptionBudget minAvailable / maxUnavailable), validated as
/// kube's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent: an integer in [0, max_count]
/// (integer()'s errors), or digits followed by '%' (any number of digits, as strconv.Atoi) whose
/// value is at most 100. Errors: "'s' is not a valid percent: a percent is digits followed by '%',
/// e.g. '50%'", "'s' is more than 100%".
IntOrPercent int_or_percent(const Field& f, int64_t max_count);

/// Fails at `f`, the field that names a file, with `error` (the file's own error: its file, line,
/// column and field) as the message, so the one line names both the referencing field and the place
/// in the referenced file.
[[noreturn]] void fail_referenced(const Field& f, const InputError& error);

/// Runs `read` (which reads the file `f` names, and may check what it read) and returns its result;
/// an InputError it throws fails at `f` (fail_referenced).
template <class Read>
decltype(auto) read_referenced(const Field& f, Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const InputError& e) {
    fail_referenced(f, e);
  }
}

}  // namespace gpufleet::io::detail
