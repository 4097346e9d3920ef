// The syntax tree Program::compile builds from ANTLR's parse tree (src/cel/parse.cpp) and
// Program::evaluate walks (src/cel/eval.cpp). Internal to the cel layer: callers use cel.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"

namespace gpufleet::cel {

/// The functions and methods gpufleet evaluates, resolved at compile time (parse.cpp kFunctions).
enum class Function {
  kSize, kStartsWith, kEndsWith, kContains, kLowerAscii, kUpperAscii,
  kInt, kUint, kDouble, kString, kBool, kBytes,
  kQuantity, kIsQuantity, kSemver, kIsSemver,
  kSign, kIsGreaterThan, kIsLessThan, kCompareTo, kAdd, kSub, kAsInteger, kAsApproximateFloat, kIsInteger,
  kMajor, kMinor, kPatch,
};

enum class NodeKind {
  kLiteral,      // value
  kIdent,        // name
  kSelect,       // children[0].name; has_test: has() macro
  kIndex,        // children[0][children[1]]
  kCall,         // function; children: receiver first when member
  kList,         // children: elements
  kMap,          // children: key, value, key, value, ...
  kAnd, kOr,     // children[0], children[1]
  kNot, kNeg,    // children[0]
  kConditional,  // children[0] ? children[1] : children[2]
  kBinary,       // binary_op; children[0], children[1]
  kComprehension,  // macro over children[0] with iteration variable `name`; children[1] predicate or
                   // transform; children[2] transform of map's 3-argument form
  kBind,         // cel.bind(name, children[0], children[1])
};

enum class BinaryOp { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kAdd, kSub, kMul, kDiv, kMod };
/// The operator's function name in CEL's standard declarations, as cel-go's messages spell it
/// ("_==_", "_<_", "@in", "_+_"; google/cel-spec doc/langdef.md "Functions"); "?" for none.
const char* binary_op_name(BinaryOp op);
/// True for ==, !=, <, <=, >, >=.
inline bool is_comparison(BinaryOp op) { return op <= BinaryOp::kGe; }
enum class Macro { kAll, kExists, kExistsOne, kMap, kFilter };

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  int column = 0;  ///< 1-based, of the token that names the node (operator, identifier, literal)
  Value value;
  std::string name;
  Function function = Function::kSize;
  bool member = false;    ///< kCall: a method (receiver in children[0])
  bool has_test = false;  ///< kSelect inside has()
  BinaryOp binary_op = BinaryOp::kEq;
  Macro macro = Macro::kAll;
  std::vector<std::unique_ptr<Node>> children;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Frees the subtree without recursion: a left-deep chain ("a.b.c...", "1+1+...") may be thousands
  /// of nodes deep before Program::compile rejects it (Limits::max_depth).
  ~Node();
};

/// Index of the first byte of `s` that is not valid UTF-8 (overlong forms, surrogates and code points
/// above U+10FFFF refused, as Go's utf8.ValidString), or npos when all of it is valid. Source text and
/// string(bytes) conversions both check with it (parse.cpp).
size_t invalid_utf8_at(std::string_view s);

struct Program::Impl {
  std::string source;
  Limits limits;
  std::unique_ptr<Node> root;
  std::vector<std::string> variables;
};

}  // namespace gpufleet::cel
