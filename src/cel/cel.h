// The Common Expression Language (CEL) as Kubernetes' Dynamic Resource Allocation evaluates it: the
// `selectors[].cel.expression` of ResourceClaims and DeviceClasses, e.g.
//   device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"
//   device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0
// No I/O. The subset gpufleet evaluates and its sources: docs/cel.md.
//
// Parsing uses the parser ANTLR 4 generates from CEL's published grammar (google/cel-go
// parser/gen/CEL.g4, checked in as src/cel/grammar/CEL.g4; cmake/CelGrammar.cmake). Program::compile
// then builds a small syntax tree and checks every identifier, function, method and macro against what
// gpufleet evaluates: anything else is a CompileError naming the construct and its column, never a
// silent false. Semantics follow the CEL language definition (google/cel-spec doc/langdef.md) as
// cel-go implements it, runtime error texts are cel-go's (common/types/err.go, overloads), and the
// Kubernetes libraries follow k8s.io/apiserver/pkg/cel/library/quantity.go and semverlib.go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/quantity.h"

namespace gpufleet::cel {

/// A semantic version as Kubernetes' CEL semver library parses it (k8s.io/apiserver/pkg/cel/library/
/// semverlib.go: semver(<string>) calls github.com/blang/semver/v4 Parse, i.e. semver 2.0.0 strictly:
/// MAJOR.MINOR.PATCH, no leading zeros, no "v" prefix, optional -pre.release and +build).
struct Semver {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::vector<std::string> pre_release;  ///< dot-separated identifiers after '-', in order
  std::vector<std::string> build;        ///< dot-separated identifiers after '+' (ignored by compare)

  /// Parses `text` (blang/semver v4 Parse). Throws std::invalid_argument with blang's wording, e.g.
  /// "No Major.Minor.Patch elements found", "Major number must not contain leading zeroes \"01\"".
  static Semver parse(std::string_view text);
  /// Semver 2.0.0 precedence (blang Version.Compare): -1, 0 or 1; build metadata ignored; a
  /// version with a pre-release is lower than the same one without; numeric identifiers compare
  /// numerically and below alphanumeric ones; a shorter pre-release list is lower when a prefix.
  int compare(const Semver& other) const;
  /// "1.2.3-rc.1+build.5".
  std::string to_string() const;
};

/// A CEL value: null, bool, int (int64), uint (uint64), double, string (UTF-8), bytes, list, map, and
/// the Kubernetes extension types quantity (gpufleet::Quantity) and semver (Semver). Lists and maps
/// are immutable and shared, so copying a Value is cheap.
class Value {
 public:
  enum class Kind { kNull, kBool, kInt, kUint, kDouble, kString, kBytes, kList, kMap, kQuantity, kSemver };
  using Entries = std::vector<std::pair<Value, Value>>;

  Value();  ///< null
  static Value null();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value uinteger(uint64_t u);
  static Value real(double d);
  static Value string(std::string s);
  static Value bytes(std::string b);
  static Value list(std::vector<Value> elements);
  /// A map. Keys must be string, int, uint or bool and distinct (CEL equality: 1 and 1u are the same
  /// key); throws std::invalid_argument otherwise. Order is kept (for printing); lookups by key.
  static Value map(Entries entries);
  /// A map that answers `missing_key_default` for a key it does not hold, in `m[k]` and `m.k`, as DRA's
  /// device.attributes and device.capacity answer an empty map for an unknown domain
  /// (k8s.io/dynamic-resource-allocation/cel/compile.go newStringInterfaceMapWithDefault). `in` and
  /// has() still see only the entries.
  static Value map_with_default(Entries entries, Value missing_key_default);
  static Value quantity(Quantity q);
  static Value semver(Semver v);

  Kind kind() const { return kind_; }
  /// CEL's type name: "null_type", "bool", "int", "uint", "double", "string", "bytes", "list", "map",
  /// "kubernetes.Quantity", "kubernetes.Semver".
  std::string_view type_name() const;
  // Accessors; each throws std::logic_error when kind() differs.
  bool as_bool() const;
  int64_t as_int() const;
  uint64_t as_uint() const;
  double as_double() const;
  const std::string& as_string() const;  ///< kString and kBytes
  const std::vector<Value>& as_list() const;
  const Entries& as_map() const;
  const Quantity& as_quantity() const;
  const Semver& as_semver() const;
  /// The map's value for `key` (CEL equality of keys) or nullptr; the missing-key default is not used.
  const Value* find(const Value& key) const;
  /// The missing-key default of a map_with_default, else nullptr.
  const Value* missing_key_default() const;

  /// CEL equality (langdef "Equality"; cel-go heterogeneous equality): numbers compare by value across
  /// int, uint and double (1 == 1u == 1.0; NaN equals nothing); lists element-wise; maps by key set
  /// and values; values of different, non-numeric types are unequal; quantities numerically,
  /// semvers by precedence.
  friend bool operator==(const Value& a, const Value& b);
  /// CEL-like text for messages and tests: 1, 2u, 1.5, "s", b"\x00", [1, 2], {"a": 1},
  /// quantity("1.5"), semver("1.2.3").
  std::string debug_string() const;

 private:
  struct Data;
  Kind kind_ = Kind::kNull;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
  } scalar_{};                        ///< bool, int, uint and double are held inline (no allocation)
  std::shared_ptr<const Data> data_;  ///< strings, bytes, lists, maps, quantities, semvers; else null
};

/// An expression that failed to compile: a syntax error, or a construct gpufleet does not evaluate
/// (an unknown function, method or macro, an undeclared identifier, a construct beyond the limits).
/// what() is "<line>:<column>: <construct>: <message>" without the expression; callers prefix the
/// file and the line where the expression starts.
class CompileError : public std::runtime_error {
 public:
  CompileError(int column, std::string construct, const std::string& message, int line = 1);
  /// 1-based column (in characters, i.e. Unicode code points) within line() of the expression;
  /// 0 = unknown (a limit on the whole expression).
  int column() const { return column_; }
  /// 1-based line within the expression (a selector written as a YAML block scalar spans lines;
  /// 1 for a one-line expression); 0 = unknown.
  int line() const { return line_; }
  /// What was refused: "syntax", "function matches", "method charAt", "macro exists_one",
  /// "identifier foo", "limit max_expression_bytes", "limit max_depth", "message construction", ...
  const std::string& construct() const { return construct_; }
  /// The message alone (what() without position and construct).
  const std::string& message() const { return message_; }

 private:
  int column_;
  int line_;
  std::string construct_;
  std::string message_;
};

/// Limits on one expression. Defaults follow Kubernetes' DRA validation and cel-go's parser.
struct Limits {
  /// Longest expression, bytes: resource.k8s.io CELSelectorExpressionMaxLength = 10 * 1024
  /// (k8s.io/api/resource/v1 types.go); the API server rejects longer selectors.
  size_t max_expression_bytes = 10 * 1024;
  /// Deepest nesting of the syntax tree (brackets, calls, operators, member selections): cel-go's parser
  /// default maxRecursionDepth = 250 (cel-go parser/options.go). Checked on the tokens before ANTLR
  /// parses (so a hostile nesting cannot exhaust the stack) and on the tree after.
  int max_depth = 250;
  /// Evaluation cost bound, in steps: one per node evaluated and per comprehension iteration, one
  /// per element a list operation builds or an equality or `in` visits (nested ones included), one
  /// per 10 bytes a string or bytes operation reads or builds. Kubernetes' resource.k8s.io
  /// CELSelectorExpressionMaxCost = 1,000,000 (k8s.io/api/resource/v1 types.go; cel-go runtime cost
  /// units, "roughly 0.1 second"). Exceeding it is the runtime error "operation cancelled: actual
  /// cost limit exceeded", as cel-go words it, which && and || never absorb.
  uint64_t max_cost = 1'000'000;
};

/// A compiled expression. Cheap to copy (shares its immutable tree); evaluate() is const and may run
/// on several threads at once; compile() may be called from several threads (ANTLR's shared
/// prediction caches are guarded: parses run one at a time). Parsing is the costly part: compile
/// each selector once and keep the Program.
class Program {
 public:
  /// Parses `expression` with the parser ANTLR generates from CEL's grammar, then checks every call,
  /// macro and operator is one gpufleet evaluates; throws CompileError otherwise. `variables` are the
  /// names the expression may use (DRA: {"device"}); any other identifier is a CompileError naming it
  /// (kube's type check rejects undeclared references). Known functions called with the wrong number
  /// of arguments are CompileErrors too. Supported (docs/cel.md): literals, lists, maps, ., [], in, ==
  /// != < <= > >=, + - * / %, unary - and !, && || ?:, has(), size(), startsWith, endsWith, contains,
  /// lowerAscii, upperAscii, int() uint() double() string() bool() bytes(), all, exists, exists_one,
  /// map (2 arguments), filter, cel.bind, quantity(), isQuantity(), semver(), isSemver() and the
  /// quantity and semver methods.
  static Program compile(std::string_view expression, const std::vector<std::string>& variables,
                         const Limits& limits = {});

  /// Evaluates with the given variable bindings (every variable given to compile() that the
  /// expression uses must be bound; an unbound one is the error "no such attribute(s): <name>", as cel-go words it).
  /// A runtime error (no such key, no such overload, integer overflow, division by zero, an invalid
  /// quantity or semver literal, the cost limit) is returned as `error` in cel-go's wording with
  /// `value` empty; otherwise `value` holds the result. Never throws for any input.
  struct Result {
    std::optional<Value> value;
    std::string error;
  };
  Result evaluate(const std::vector<std::pair<std::string, Value>>& bindings) const;

  /// The expression as given to compile().
  const std::string& source() const;

  /// The result's type when the expression alone decides it, whatever the variables hold: "bool",
  /// "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "kubernetes.Quantity",
  /// "kubernetes.Semver" (Value::type_name's words);
  /// "" when it depends on the variables (a field, an index, a conditional of mixed branches). The
  /// part of cel-go's type check (checker/checker.go) that lets a caller refuse, before evaluating,
  /// an expression that can never give the type it needs (e.g. a DRA selector that is not a bool).
  std::string result_type() const;

  /// Static types the caller declares for fields of its variables, by path: ("device.driver",
  /// "string"); a segment "*" matches any field name or index ("device.capacity.*.*" ->
  /// "kubernetes.Quantity"), each field selection or index being one segment. Types in
  /// Value::type_name's words.
  using FieldTypes = std::vector<std::pair<std::string, std::string>>;
  /// result_type with the fields' types known (a field otherwise gives "").
  std::string result_type(const FieldTypes& fields) const;
  /// Throws CompileError (construct "type", the comparison's line and column) for the first
  /// comparison (==, !=, <, <=, >, >=) whose two operands have static types (with `fields`) that
  /// differ, other than two numeric types: cel-go's checker finds no overload for it, e.g.
  /// "found no matching overload for '_==_' applied to '(string, int)'" (checker/checker.go). Inside
  /// a comprehension or cel.bind the fields are unknown (a name there may shadow a variable).
  void check_comparisons(const FieldTypes& fields) const;

  struct Impl;  ///< the syntax tree and limits (src/cel/ast.h)

 private:
  explicit Program(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace gpufleet::cel
