// Program::compile: CEL text -> ANTLR parse tree (the parser generated from src/cel/grammar/CEL.g4)
// -> the syntax tree of ast.h, checked. The parse-tree walk follows cel-go parser/parser.go (macros,
// literals, unescaping: parser/unescape.go, reserved identifiers), so that what compiles here
// compiles in Kubernetes, and what gpufleet does not evaluate is a CompileError naming it.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "CELLexer.h"
#include "CELParser.h"
#include "antlr4-runtime.h"
#include "cel/ast.h"

namespace gpufleet::cel {

using gpufleet_celgen::CELLexer;
using gpufleet_celgen::CELParser;

CompileError::CompileError(int column, std::string construct, const std::string& message, int line)
    : std::runtime_error(std::to_string(line) + ":" + std::to_string(column) + ": " + construct + ": " + message),
      column_(column),
      line_(line),
      construct_(std::move(construct)),
      message_(message) {}

Node::~Node() {
  std::vector<std::unique_ptr<Node>> stack = std::move(children);
  while (!stack.empty()) {
    std::unique_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    for (auto& c : n->children) stack.push_back(std::move(c));
    n->children.clear();
  }
}

namespace {

struct FunctionSpec {
  Function function;
  int global_arity;  ///< -1: not callable as f(...)
  int member_arity;  ///< -1: not callable as x.f(...) (arguments besides the receiver)
};

// Functions of CEL's standard library (cel-spec langdef.md "List of Standard Definitions"), of the
// strings extension Kubernetes enables (lowerAscii, upperAscii: cel-go ext/strings.go) and of
// Kubernetes' quantity and semver libraries (k8s.io/apiserver/pkg/cel/library).
const std::unordered_map<std::string, FunctionSpec>& functions() {
  static const std::unordered_map<std::string, FunctionSpec> table = {
      {"size", {Function::kSize, 1, 0}},
      {"startsWith", {Function::kStartsWith, -1, 1}},
      {"endsWith", {Function::kEndsWith, -1, 1}},
      {"contains", {Function::kContains, -1, 1}},
      {"lowerAscii", {Function::kLowerAscii, -1, 0}},
      {"upperAscii", {Function::kUpperAscii, -1, 0}},
      {"int", {Function::kInt, 1, -1}},
      {"uint", {Function::kUint, 1, -1}},
      {"double", {Function::kDouble, 1, -1}},
      {"string", {Function::kString, 1, -1}},
      {"bool", {Function::kBool, 1, -1}},
      {"bytes", {Function::kBytes, 1, -1}},
      {"quantity", {Function::kQuantity, 1, -1}},
      {"isQuantity", {Function::kIsQuantity, 1, -1}},
      {"semver", {Function::kSemver, 1, -1}},
      {"isSemver", {Function::kIsSemver, 1, -1}},
      {"sign", {Function::kSign, 1, 0}},
      {"isGreaterThan", {Function::kIsGreaterThan, -1, 1}},
      {"isLessThan", {Function::kIsLessThan, -1, 1}},
      {"compareTo", {Function::kCompareTo, -1, 1}},
      {"add", {Function::kAdd, -1, 1}},
      {"sub", {Function::kSub, -1, 1}},
      {"asInteger", {Function::kAsInteger, -1, 0}},
      {"asApproximateFloat", {Function::kAsApproximateFloat, -1, 0}},
      {"isInteger", {Function::kIsInteger, -1, 0}},
      {"major", {Function::kMajor, -1, 0}},
      {"minor", {Function::kMinor, -1, 0}},
      {"patch", {Function::kPatch, -1, 0}},
  };
  return table;
}

// cel-go parser/parser.go reservedIds: identifiers the parser refuses.
bool reserved(const std::string& id) {
  static const std::unordered_set<std::string> ids = {
      "as", "break", "const", "continue", "else", "false", "for", "function", "if", "import", "in", "let",
      "loop", "package", "namespace", "null", "return", "true", "var", "void", "while"};
  return ids.count(id) != 0;
}

// Positions inside the builder are absolute: the 1-based index of the token's first character (code
// point) in the whole expression; compile() turns them into line and column (locate()).
int column_of(const antlr4::Token* t) { return t == nullptr ? 0 : static_cast<int>(t->getStartIndex()) + 1; }

// A CompileError at absolute position `pos` (line -1 marks it for compile() to locate).
[[noreturn]] void fail(int pos, std::string construct, const std::string& message) {
  throw CompileError(pos, std::move(construct), message, -1);
}
[[noreturn]] void syntax(int pos, const std::string& message) { fail(pos, "syntax", message); }


void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool valid_rune(uint32_t v) { return v <= 0x10FFFF && !(v >= 0xD800 && v <= 0xDFFF); }

// cel-go parser/unescape.go unescape(): the literal's text (with quotes and an r/R prefix) to its value.
std::string unescape(std::string text, bool is_bytes, int column) {
  // Newlines normalised: "\r\n" and "\r" become "\n".
  std::string norm;
  norm.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      norm += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      norm += text[i];
    }
  }
  std::string_view v = norm;
  bool raw = false;
  if (!v.empty() && (v[0] == 'r' || v[0] == 'R')) {
    v.remove_prefix(1);
    raw = true;
  }
  if (v.size() < 2 || v.front() != v.back() || (v.front() != '"' && v.front() != '\''))
    syntax(column, "unable to unescape string");
  if (v.size() >= 6 && (v.substr(0, 3) == "'''" || v.substr(0, 3) == "\"\"\"")) {
    v = v.substr(3, v.size() - 6);
  } else {
    v = v.substr(1, v.size() - 2);
  }
  if (raw || v.find('\\') == std::string_view::npos) return std::string(v);
  std::string out;
  out.reserve(v.size());
  size_t i = 0;
  while (i < v.size()) {
    const char c = v[i];
    if (c != '\\') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 >= v.size()) syntax(column, "unable to unescape string, found '\\' as last character");
    const char e = v[i + 1];
    i += 2;
    switch (e) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '`': out += '`'; break;
      case '?': out += '?'; break;
      case 'x': case 'X': case 'u': case 'U': {
        size_t n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
        if ((e == 'u' || e == 'U') && is_bytes) syntax(column, "unable to unescape string");
        if (i + n > v.size()) syntax(column, "unable to unescape string");
        uint32_t value = 0;
        for (size_t j = 0; j < n; ++j) {
          const int h = hex_value(v[i + j]);
          if (h < 0) syntax(column, "unable to unescape string");
          value = (value << 4) | static_cast<uint32_t>(h);
        }
        i += n;
        if (!is_bytes && !valid_rune(value)) syntax(column, "invalid unicode code point");
        if (is_bytes) out += static_cast<char>(value);
        else append_utf8(out, value);
        break;
      }
      case '0': case '1': case '2': case '3': {
        if (i + 2 > v.size()) syntax(column, "unable to unescape octal sequence in string");
        uint32_t value = static_cast<uint32_t>(e - '0');
        for (size_t j = 0; j < 2; ++j) {
          const char x = v[i + j];
          if (x < '0' || x > '7') syntax(column, "unable to unescape octal sequence in string");
          value = value * 8 + static_cast<uint32_t>(x - '0');
        }
        i += 2;
        if (is_bytes) out += static_cast<char>(value);
        else append_utf8(out, value);
        break;
      }
      default:
        syntax(column, "unable to unescape string");
    }
  }
  return out;
}

// The first syntax error, ANTLR's message as cel-go reports it ("Syntax error: <msg>").
class FirstError : public antlr4::BaseErrorListener {
 public:
  void syntaxError(antlr4::Recognizer*, antlr4::Token*, size_t line, size_t column, const std::string& msg,
                   std::exception_ptr) override {
    if (!seen) {
      seen = true;
      line_ = static_cast<int>(line);
      column_ = static_cast<int>(column) + 1;
      message = msg;
    }
  }
  bool seen = false;
  int line_ = 1;
  int column_ = 0;
  std::string message;
};

class Builder {
 public:
  Builder(const std::vector<std::string>& variables, const Limits& limits) : limits_(limits) {
    for (const auto& v : variables) scopes_.push_back(v);
  }

  std::unique_ptr<Node> expr(CELParser::ExprContext* ctx) {
    auto cond = conditional_or(ctx->e);
    if (ctx->op == nullptr) return cond;
    auto n = make(NodeKind::kConditional, ctx->op);
    n->children.push_back(std::move(cond));
    n->children.push_back(conditional_or(ctx->e1));
    n->children.push_back(expr(ctx->e2));
    return n;
  }

 private:
  std::unique_ptr<Node> make(NodeKind kind, const antlr4::Token* at) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->column = column_of(at);
    return n;
  }

  static void need(void* p, const antlr4::Token* at) {
    if (p == nullptr) syntax(column_of(at), "incomplete expression");
  }

  // cel-go balances chains of && and || (parser/helper.go balancer) so their depth is logarithmic.
  std::unique_ptr<Node> balance(NodeKind kind, std::vector<std::unique_ptr<Node>>& terms,
                                const std::vector<antlr4::Token*>& ops, size_t lo, size_t hi) {
    if (lo == hi) return std::move(terms[lo]);
    const size_t mid = (lo + hi + 1) / 2;
    auto n = make(kind, ops[mid - 1]);
    n->children.push_back(balance(kind, terms, ops, lo, mid - 1));
    n->children.push_back(balance(kind, terms, ops, mid, hi));
    return n;
  }

  std::unique_ptr<Node> conditional_or(CELParser::ConditionalOrContext* ctx) {
    need(ctx, nullptr);
    std::vector<std::unique_ptr<Node>> terms;
    terms.push_back(conditional_and(ctx->e));
    for (auto* t : ctx->e1) terms.push_back(conditional_and(t));
    if (terms.size() != ctx->ops.size() + 1) syntax(0, "incomplete expression");
    return balance(NodeKind::kOr, terms, ctx->ops, 0, terms.size() - 1);
  }

  std::unique_ptr<Node> conditional_and(CELParser::ConditionalAndContext* ctx) {
    need(ctx, nullptr);
    std::vector<std::unique_ptr<Node>> terms;
    terms.push_back(relation(ctx->e));
    for (auto* t : ctx->e1) terms.push_back(relation(t));
    if (terms.size() != ctx->ops.size() + 1) syntax(0, "incomplete expression");
    return balance(NodeKind::kAnd, terms, ctx->ops, 0, terms.size() - 1);
  }

  static BinaryOp binary_op(const antlr4::Token* op) {
    const std::string t = op->getText();
    if (t == "==") return BinaryOp::kEq;
    if (t == "!=") return BinaryOp::kNe;
    if (t == "<") return BinaryOp::kLt;
    if (t == "<=") return BinaryOp::kLe;
    if (t == ">") return BinaryOp::kGt;
    if (t == ">=") return BinaryOp::kGe;
    if (t == "in") return BinaryOp::kIn;
    if (t == "+") return BinaryOp::kAdd;
    if (t == "-") return BinaryOp::kSub;
    if (t == "*") return BinaryOp::kMul;
    if (t == "/") return BinaryOp::kDiv;
    if (t == "%") return BinaryOp::kMod;
    syntax(column_of(op), "unknown operator '" + t + "'");
  }

  // relation and calc are left-recursive: a chain "a < b < c" or "1 + 2 + ... + n" is a left spine of
  // contexts, walked here with a loop so that a long chain does not recurse.
  template <typename Ctx, typename Leaf>
  std::unique_ptr<Node> left_chain(Ctx* ctx, Leaf leaf) {
    need(ctx, nullptr);
    std::vector<Ctx*> spine;
    while (ctx != nullptr && ctx->op != nullptr) {
      spine.push_back(ctx);
      auto* left = child<Ctx>(ctx, 0);
      need(left, ctx->op);
      ctx = left;
    }
    std::unique_ptr<Node> acc = leaf(ctx);
    for (size_t i = spine.size(); i-- > 0;) {
      auto* right = child<Ctx>(spine[i], 1);
      need(right, spine[i]->op);
      auto n = make(NodeKind::kBinary, spine[i]->op);
      n->binary_op = binary_op(spine[i]->op);
      n->children.push_back(std::move(acc));
      n->children.push_back(right->op != nullptr ? left_chain(right, leaf) : leaf(right));
      acc = std::move(n);
    }
    return acc;
  }

  template <typename Ctx>
  static Ctx* child(Ctx* ctx, size_t i) {
    if constexpr (std::is_same_v<Ctx, CELParser::RelationContext>) return ctx->relation(i);
    else return ctx->calc(i);
  }

  std::unique_ptr<Node> relation(CELParser::RelationContext* ctx) {
    return left_chain(ctx, [this](CELParser::RelationContext* c) {
      need(c->calc(), nullptr);
      return calc(c->calc());
    });
  }

  std::unique_ptr<Node> calc(CELParser::CalcContext* ctx) {
    return left_chain(ctx, [this](CELParser::CalcContext* c) {
      need(c->unary(), nullptr);
      return unary(c->unary());
    });
  }

  std::unique_ptr<Node> unary(CELParser::UnaryContext* ctx) {
    if (auto* m = dynamic_cast<CELParser::MemberExprContext*>(ctx)) {
      need(m->member(), nullptr);
      return member(m->member());
    }
    if (auto* n = dynamic_cast<CELParser::LogicalNotContext*>(ctx)) {
      need(n->member(), nullptr);
      auto target = member(n->member());
      if (n->ops.size() % 2 == 0) return target;  // cel-go: an even number of '!' is the operand itself
      auto node = make(NodeKind::kNot, n->ops[0]);
      node->children.push_back(std::move(target));
      return node;
    }
    if (auto* n = dynamic_cast<CELParser::NegateContext*>(ctx)) {
      need(n->member(), nullptr);
      auto target = member(n->member());
      if (n->ops.size() % 2 == 0) return target;  // cel-go: an even number of '-' is the operand itself
      auto node = make(NodeKind::kNeg, n->ops[0]);
      node->children.push_back(std::move(target));
      return node;
    }
    syntax(ctx ? column_of(ctx->getStart()) : 0, "incomplete expression");
  }

  // member is left-recursive too ("a.b.c[0].f()"): the chain is walked with a loop.
  std::unique_ptr<Node> member(CELParser::MemberContext* ctx) {
    std::vector<CELParser::MemberContext*> chain;
    while (true) {
      need(ctx, nullptr);
      if (auto* p = dynamic_cast<CELParser::PrimaryExprContext*>(ctx)) {
        need(p->primary(), nullptr);
        break;
      }
      chain.push_back(ctx);
      if (auto* s = dynamic_cast<CELParser::SelectContext*>(ctx)) ctx = s->member();
      else if (auto* c = dynamic_cast<CELParser::MemberCallContext*>(ctx)) ctx = c->member();
      else if (auto* x = dynamic_cast<CELParser::IndexContext*>(ctx)) ctx = x->member();
      else syntax(column_of(ctx->getStart()), "incomplete expression");
    }
    auto* prim = dynamic_cast<CELParser::PrimaryExprContext*>(ctx);
    std::unique_ptr<Node> acc;
    // A call on a plain identifier may be the macro cel.bind: handled in member_call.
    size_t i = chain.size();
    acc = primary(prim->primary(), i > 0 ? chain[i - 1] : nullptr);
    for (; i-- > 0;) {
      CELParser::MemberContext* m = chain[i];
      if (auto* s = dynamic_cast<CELParser::SelectContext*>(m)) {
        if (s->opt != nullptr) fail(column_of(s->opt), "optional syntax", "gpufleet does not evaluate optional field selection '.?'");
        need(s->id, s->op);
        auto n = make(NodeKind::kSelect, s->op);
        n->name = escape_ident(s->id);
        n->children.push_back(std::move(acc));
        acc = std::move(n);
      } else if (auto* c = dynamic_cast<CELParser::MemberCallContext*>(m)) {
        acc = member_call(c, std::move(acc));
      } else if (auto* x = dynamic_cast<CELParser::IndexContext*>(m)) {
        if (x->opt != nullptr) fail(column_of(x->opt), "optional syntax", "gpufleet does not evaluate optional index '[?'");
        need(x->index, x->op);
        auto n = make(NodeKind::kIndex, x->op);
        n->children.push_back(std::move(acc));
        n->children.push_back(expr(x->index));
        acc = std::move(n);
      }
    }
    return acc;
  }

  std::string escape_ident(CELParser::EscapeIdentContext* ctx) {
    if (auto* s = dynamic_cast<CELParser::SimpleIdentifierContext*>(ctx)) {
      need(s->id, nullptr);
      return s->id->getText();
    }
    if (auto* e = dynamic_cast<CELParser::EscapedIdentifierContext*>(ctx)) {
      need(e->id, nullptr);
      const std::string t = e->id->getText();
      return t.size() >= 2 ? t.substr(1, t.size() - 2) : t;
    }
    syntax(ctx ? column_of(ctx->getStart()) : 0, "incomplete expression");
  }

  std::vector<CELParser::ExprContext*> args_of(CELParser::ExprListContext* list) {
    if (list == nullptr) return {};
    return list->e;
  }

  // The iteration variable of a macro: a simple identifier (cel-go "argument must be a simple name").
  std::string simple_name(CELParser::ExprContext* e, int column) {
    auto n = expr_unchecked_ident(e);
    if (n.empty()) fail(column, "syntax", "argument must be a simple name");
    return n;
  }

  // The identifier an argument consists of, or "" (without building it: it is a declaration).
  static std::string expr_unchecked_ident(CELParser::ExprContext* e) {
    if (e == nullptr || e->op != nullptr || e->e == nullptr || !e->e->ops.empty()) return "";
    auto* a = e->e->e;
    if (a == nullptr || !a->ops.empty()) return "";
    auto* r = a->e;
    if (r == nullptr || r->op != nullptr || r->calc() == nullptr) return "";
    auto* c = r->calc();
    if (c->op != nullptr || c->unary() == nullptr) return "";
    auto* u = dynamic_cast<CELParser::MemberExprContext*>(c->unary());
    if (u == nullptr) return "";
    auto* p = dynamic_cast<CELParser::PrimaryExprContext*>(u->member());
    if (p == nullptr) return "";
    auto* id = dynamic_cast<CELParser::IdentContext*>(p->primary());
    if (id == nullptr || id->leadingDot != nullptr || id->id == nullptr) return "";
    return id->id->getText();
  }

  std::unique_ptr<Node> macro(Macro m, const antlr4::Token* at, std::unique_ptr<Node> target,
                              const std::vector<CELParser::ExprContext*>& args) {
    auto n = make(NodeKind::kComprehension, at);
    n->macro = m;
    n->name = simple_name(args[0], column_of(at));
    n->children.push_back(std::move(target));
    scopes_.push_back(n->name);
    for (size_t i = 1; i < args.size(); ++i) n->children.push_back(expr(args[i]));
    scopes_.pop_back();
    return n;
  }

  std::unique_ptr<Node> member_call(CELParser::MemberCallContext* c, std::unique_ptr<Node> target) {
    need(c->id, c->op);
    const std::string name = c->id->getText();
    const auto args = args_of(c->args);
    const int col = column_of(c->id);
    static const std::unordered_map<std::string, std::pair<Macro, std::vector<size_t>>> macros = {
        {"all", {Macro::kAll, {2}}},       {"exists", {Macro::kExists, {2}}},
        {"exists_one", {Macro::kExistsOne, {2}}}, {"map", {Macro::kMap, {2, 3}}},
        {"filter", {Macro::kFilter, {2}}}};
    if (auto it = macros.find(name); it != macros.end()) {
      bool arity_ok = false;
      for (size_t a : it->second.second) arity_ok = arity_ok || a == args.size();
      if (arity_ok) return macro(it->second.first, c->id, std::move(target), args);
    }
    // The receiver `cel` of cel.bind is no variable: bind_pending_ marks it.
    if (target->kind == NodeKind::kIdent && target->name == "cel" && bind_pending_) {
      bind_pending_ = false;
      if (name == "bind" && args.size() == 3) {
        auto n = make(NodeKind::kBind, c->id);
        n->name = simple_name(args[0], col);
        n->children.push_back(expr(args[1]));
        scopes_.push_back(n->name);
        n->children.push_back(expr(args[2]));
        scopes_.pop_back();
        return n;
      }
      fail(col, "function cel." + name, "gpufleet does not evaluate 'cel." + name + "' with " +
                                                            std::to_string(args.size()) + " arguments");
    }
    return call(name, col, true, std::move(target), args);
  }

  std::unique_ptr<Node> call(const std::string& name, int col, bool is_member, std::unique_ptr<Node> target,
                             const std::vector<CELParser::ExprContext*>& args) {
    const std::string construct = (is_member ? "method " : "function ") + name;
    const auto& table = functions();
    const auto it = table.find(name);
    if (it == table.end()) {
      std::string why = "gpufleet does not evaluate '" + name + "'";
      if (name == "matches") why += " (RE2 regular expressions, which std::regex does not reproduce)";
      else if (name == "has" || name == "all" || name == "exists" || name == "exists_one" || name == "map" ||
               name == "filter")
        why = "macro '" + name + "' called with the wrong arguments";
      fail(col, construct, why + "; supported functions: docs/cel.md");
    }
    const int arity = is_member ? it->second.member_arity : it->second.global_arity;
    if (arity < 0 || static_cast<size_t>(arity) != args.size()) {
      fail(col, construct,
                         "found no matching overload for '" + name + "' applied to " + std::to_string(args.size()) +
                             " argument(s)" + (is_member ? " on a receiver" : ""));
    }
    auto n = std::make_unique<Node>();
    n->kind = NodeKind::kCall;
    n->column = col;
    n->name = name;
    n->function = it->second.function;
    n->member = is_member;
    if (is_member) n->children.push_back(std::move(target));
    for (auto* a : args) n->children.push_back(expr(a));
    return n;
  }

  // `next` is the member context applied to this primary first (to recognise the receiver of cel.bind).
  std::unique_ptr<Node> primary(CELParser::PrimaryContext* ctx, CELParser::MemberContext* next) {
    need(ctx, nullptr);
    if (auto* id = dynamic_cast<CELParser::IdentContext*>(ctx)) {
      need(id->id, nullptr);
      const std::string name = id->id->getText();
      const int col = column_of(id->id);
      if (reserved(name)) syntax(col, "reserved identifier: " + name);
      if (name == "cel" && id->leadingDot == nullptr) {
        if (auto* c = dynamic_cast<CELParser::MemberCallContext*>(next); c && c->id && c->id->getText() == "bind") {
          bind_pending_ = true;
          auto n = make(NodeKind::kIdent, id->id);
          n->name = name;
          return n;
        }
      }
      if (!in_scope(name))
        fail(col, "identifier " + name, "undeclared reference to '" + name + "' (in container '')");
      auto n = make(NodeKind::kIdent, id->id);
      n->name = name;
      return n;
    }
    if (auto* g = dynamic_cast<CELParser::GlobalCallContext*>(ctx)) {
      need(g->id, nullptr);
      const std::string name = g->id->getText();
      const int col = column_of(g->id);
      const auto args = args_of(g->args);
      if (name == "has" && g->leadingDot == nullptr) {
        if (args.size() != 1) fail(col, "macro has", "has() takes one argument");
        auto target = expr(args[0]);
        if (target->kind != NodeKind::kSelect) fail(col, "macro has", "invalid argument to has() macro");
        target->has_test = true;
        return target;
      }
      return call(name, col, false, nullptr, args);
    }
    if (auto* n = dynamic_cast<CELParser::NestedContext*>(ctx)) {
      need(n->e, nullptr);
      return expr(n->e);
    }
    if (auto* l = dynamic_cast<CELParser::CreateListContext*>(ctx)) {
      auto node = make(NodeKind::kList, l->op);
      if (l->elems != nullptr) {
        for (auto* e : l->elems->elems) {
          need(e, l->op);
          if (e->opt != nullptr) fail(column_of(e->opt), "optional syntax", "gpufleet does not evaluate optional list elements '?'");
          need(e->e, l->op);
          node->children.push_back(expr(e->e));
        }
      }
      return node;
    }
    if (auto* s = dynamic_cast<CELParser::CreateStructContext*>(ctx)) {
      auto node = make(NodeKind::kMap, s->op);
      if (s->entries != nullptr) {
        const auto& keys = s->entries->keys;
        const auto& values = s->entries->values;
        if (keys.size() != values.size()) syntax(column_of(s->op), "incomplete map");
        for (size_t i = 0; i < keys.size(); ++i) {
          need(keys[i], s->op);
          if (keys[i]->opt != nullptr) fail(column_of(keys[i]->opt), "optional syntax", "gpufleet does not evaluate optional map entries '?'");
          need(keys[i]->e, s->op);
          need(values[i], s->op);
          node->children.push_back(expr(keys[i]->e));
          node->children.push_back(expr(values[i]));
        }
      }
      return node;
    }
    if (auto* m = dynamic_cast<CELParser::CreateMessageContext*>(ctx)) {
      fail(column_of(m->op ? m->op : m->getStart()), "message construction",
                         "gpufleet does not evaluate protocol buffer message construction");
    }
    if (auto* c = dynamic_cast<CELParser::ConstantLiteralContext*>(ctx)) {
      need(c->literal(), nullptr);
      return literal(c->literal());
    }
    syntax(column_of(ctx->getStart()), "incomplete expression");
  }

  std::unique_ptr<Node> literal(CELParser::LiteralContext* ctx) {
    auto lit = [&](const antlr4::Token* at, Value v) {
      auto n = make(NodeKind::kLiteral, at);
      n->value = std::move(v);
      return n;
    };
    if (auto* i = dynamic_cast<CELParser::IntContext*>(ctx)) {
      need(i->tok, nullptr);
      std::string t = i->tok->getText();
      const antlr4::Token* at = i->sign ? i->sign : i->tok;
      const bool neg = i->sign != nullptr;
      const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
      uint64_t mag = 0;
      const char* b = t.data() + (hex ? 2 : 0);
      const auto r = std::from_chars(b, t.data() + t.size(), mag, hex ? 16 : 10);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size() ||
          mag > (neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1))
        syntax(column_of(at), "invalid int literal");
      const int64_t v = neg ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag);
      return lit(at, Value::integer(v));
    }
    if (auto* u = dynamic_cast<CELParser::UintContext*>(ctx)) {
      need(u->tok, nullptr);
      std::string t = u->tok->getText();
      t.pop_back();  // u or U
      const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
      uint64_t v = 0;
      const char* b = t.data() + (hex ? 2 : 0);
      const auto r = std::from_chars(b, t.data() + t.size(), v, hex ? 16 : 10);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size()) syntax(column_of(u->tok), "invalid uint literal");
      return lit(u->tok, Value::uinteger(v));
    }
    if (auto* d = dynamic_cast<CELParser::DoubleContext*>(ctx)) {
      need(d->tok, nullptr);
      const std::string t = d->tok->getText();
      const antlr4::Token* at = d->sign ? d->sign : d->tok;
      // Go's strconv.ParseFloat: an overflow (to infinity) is an error, an underflow gives 0.
      char* end = nullptr;
      const double v = std::strtod(t.c_str(), &end);
      if (end != t.c_str() + t.size() || std::isinf(v)) syntax(column_of(at), "invalid double literal");
      return lit(at, Value::real(d->sign ? -v : v));
    }
    if (auto* s = dynamic_cast<CELParser::StringContext*>(ctx)) {
      need(s->tok, nullptr);
      return lit(s->tok, Value::string(unescape(s->tok->getText(), false, column_of(s->tok))));
    }
    if (auto* b = dynamic_cast<CELParser::BytesContext*>(ctx)) {
      need(b->tok, nullptr);
      return lit(b->tok, Value::bytes(unescape(b->tok->getText().substr(1), true, column_of(b->tok))));
    }
    if (auto* t = dynamic_cast<CELParser::BoolTrueContext*>(ctx)) return lit(t->tok, Value::boolean(true));
    if (auto* f = dynamic_cast<CELParser::BoolFalseContext*>(ctx)) return lit(f->tok, Value::boolean(false));
    if (auto* n = dynamic_cast<CELParser::NullContext*>(ctx)) return lit(n->tok, Value::null());
    syntax(ctx ? column_of(ctx->getStart()) : 0, "incomplete literal");
  }

  bool in_scope(const std::string& name) const {
    for (const auto& s : scopes_)
      if (s == name) return true;
    return false;
  }

  const Limits& limits_;
  std::vector<std::string> scopes_;
  bool bind_pending_ = false;
};

// Deepest path of the tree, without recursion.
int tree_depth(const Node& root, int limit, int& column) {
  std::vector<std::pair<const Node*, int>> stack{{&root, 1}};
  int deepest = 0;
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    if (d > deepest) {
      deepest = d;
      column = n->column;
      if (deepest > limit) return deepest;
    }
    for (const auto& c : n->children) stack.emplace_back(c.get(), d + 1);
  }
  return deepest;
}

// The 1-based (line, column) of the absolute 1-based code point position `pos` ('\n' ends a line, as
// ANTLR counts lines).
std::pair<int, int> locate(std::string_view text, int pos) {
  int line = 1, column = 1, at = 1;
  for (size_t i = 0; i < text.size() && at < pos; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: same code point
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++at;
  }
  return {line, column};
}

// ANTLR caches its predictions (DFA states) in tables that every parse shares and that only grow with
// new input shapes. Past this many states they are emptied (they are rebuilt on demand and parses give
// the same trees), so a long stream of distinct expressions keeps memory bounded.
constexpr size_t kMaxCachedPredictionStates = 20'000;

void bound_prediction_cache(CELLexer& lexer, CELParser& parser) {
  auto* p = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  auto* l = lexer.getInterpreter<antlr4::atn::LexerATNSimulator>();
  size_t states = 0;
  for (const auto& dfa : p->decisionToDFA) states += dfa.states.size();
  for (const auto& dfa : l->_decisionToDFA) states += dfa.states.size();
  if (states <= kMaxCachedPredictionStates) return;
  p->clearDFA();
  l->clearDFA();
  p->getSharedContextCache().clear();
}

// ANTLR's generated parser shares its prediction cache (DFA) between instances; one parse at a time.
std::mutex& parse_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

namespace {
std::shared_ptr<Program::Impl> compile_absolute(std::string_view expression, const std::vector<std::string>& variables,
                                               const Limits& limits);
}

Program Program::compile(std::string_view expression, const std::vector<std::string>& variables,
                         const Limits& limits) {
  try {
    return Program(compile_absolute(expression, variables, limits));
  } catch (const CompileError& e) {
    if (e.line() != -1) throw;
    if (e.column() <= 0) throw CompileError(0, e.construct(), e.message(), 0);
    const auto [line, column] = locate(expression, e.column());
    throw CompileError(column, e.construct(), e.message(), line);
  }
}

namespace {
// Throws CompileErrors whose column is the absolute position and whose line is -1 (see column_of),
// except for errors about the whole expression (line 0, column 0).
std::shared_ptr<Program::Impl> compile_absolute(std::string_view expression, const std::vector<std::string>& variables,
                                               const Limits& limits) {
  if (expression.size() > limits.max_expression_bytes) {
    fail(0, "limit max_expression_bytes",
                       "expression is " + std::to_string(expression.size()) + " bytes, more than the limit " +
                           std::to_string(limits.max_expression_bytes) +
                           " (resource.k8s.io CELSelectorExpressionMaxLength)");
  }
  if (const size_t bad = invalid_utf8_at(expression); bad != std::string_view::npos) {
    // Column in code points up to the bad byte.
    int col = 1;
    for (size_t i = 0; i < bad; ++i)
      if ((static_cast<unsigned char>(expression[i]) & 0xC0) != 0x80) ++col;
    syntax(col, "invalid UTF-8");
  }
  auto impl = std::make_shared<Program::Impl>();
  impl->source = std::string(expression);
  impl->limits = limits;
  impl->variables = variables;

  std::lock_guard<std::mutex> lock(parse_mutex());
  antlr4::ANTLRInputStream input(impl->source);
  CELLexer lexer(&input);
  FirstError errors;
  lexer.removeErrorListeners();
  lexer.addErrorListener(&errors);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  if (errors.seen) throw CompileError(errors.column_, "syntax", "Syntax error: " + errors.message, errors.line_);

  // Nesting before parsing: ANTLR's parser recurses once per bracket and per conditional, so a
  // hostile "((((..." must be refused before it runs (cel-go checks recursion while parsing).
  {
    int open = 0, conditionals = 0;
    for (antlr4::Token* t : tokens.getTokens()) {
      const size_t type = t->getType();
      if (type == CELLexer::LPAREN || type == CELLexer::LBRACKET || type == CELLexer::LBRACE) ++open;
      else if (type == CELLexer::RPAREN || type == CELLexer::RPRACKET || type == CELLexer::RBRACE) open = open > 0 ? open - 1 : 0;
      else if (type == CELLexer::QUESTIONMARK) ++conditionals;
      if (open + conditionals > limits.max_depth)
        fail(column_of(t), "limit max_depth",
                           "expression nests deeper than " + std::to_string(limits.max_depth) +
                               " (cel-go parser maxRecursionDepth)");
    }
  }

  CELParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&errors);
  CELParser::StartContext* start = parser.start();
  bound_prediction_cache(lexer, parser);
  if (errors.seen) throw CompileError(errors.column_, "syntax", "Syntax error: " + errors.message, errors.line_);
  if (start == nullptr || start->e == nullptr) syntax(1, "Syntax error: empty expression");

  Builder builder(variables, limits);
  impl->root = builder.expr(start->e);
  int column = 0;
  if (tree_depth(*impl->root, limits.max_depth, column) > limits.max_depth) {
    fail(column, "limit max_depth",
                       "expression nests deeper than " + std::to_string(limits.max_depth) +
                           " (cel-go parser maxRecursionDepth)");
  }
  return impl;
}
}  // namespace

size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return i;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

const std::string& Program::source() const { return impl_->source; }

namespace {

// The static type of a node, or "" when it depends on the variables (Program::result_type).
// The path of a chain of field selections and indexes on an identifier, "*" for each index
// ("device.capacity.*.memory"); "" for anything else (Program::FieldTypes).
std::string field_path(const Node& n) {
  if (n.kind == NodeKind::kIdent) return n.name;
  if ((n.kind != NodeKind::kSelect || n.has_test) && n.kind != NodeKind::kIndex) return "";
  if (n.children.empty()) return "";
  const std::string p = field_path(*n.children[0]);
  if (p.empty()) return "";
  return p + "." + (n.kind == NodeKind::kSelect ? n.name : std::string("*"));
}

// Whether `path` matches `pattern` segment by segment ("*" in the pattern matches any one segment).
bool path_matches(std::string_view pattern, std::string_view path) {
  while (true) {
    const size_t a = pattern.find('.'), b = path.find('.');
    const std::string_view p = pattern.substr(0, a), q = path.substr(0, b);
    if (p != "*" && p != q) return false;
    if (a == std::string_view::npos || b == std::string_view::npos) return a == b;
    pattern.remove_prefix(a + 1);
    path.remove_prefix(b + 1);
  }
}

std::string known_type(const Node& n, const Program::FieldTypes& fields) {
  if (fields.empty()) return "";
  const std::string path = field_path(n);
  if (path.empty()) return "";
  for (const auto& [pattern, type] : fields)
    if (path_matches(pattern, path)) return type;
  return "";
}

std::string static_type(const Node& n, const Program::FieldTypes& fields) {
  switch (n.kind) {
    case NodeKind::kLiteral: return std::string(n.value.type_name());
    case NodeKind::kAnd:
    case NodeKind::kOr:
    case NodeKind::kNot: return "bool";
    case NodeKind::kList: return "list";
    case NodeKind::kMap: return "map";
    case NodeKind::kSelect: return n.has_test ? "bool" : known_type(n, fields);
    case NodeKind::kIdent:
    case NodeKind::kIndex: return known_type(n, fields);
    case NodeKind::kNeg: return "";
    // The bound name may shadow a variable: its body's fields are not known.
    case NodeKind::kBind: return n.children.size() > 1 ? static_type(*n.children[1], {}) : "";
    case NodeKind::kConditional: {
      if (n.children.size() < 3) return "";
      const std::string a = static_type(*n.children[1], fields), b = static_type(*n.children[2], fields);
      return a == b ? a : "";
    }
    case NodeKind::kComprehension: return n.macro == Macro::kMap || n.macro == Macro::kFilter ? "list" : "bool";
    case NodeKind::kBinary:
      switch (n.binary_op) {
        case BinaryOp::kEq:
        case BinaryOp::kNe:
        case BinaryOp::kLt:
        case BinaryOp::kLe:
        case BinaryOp::kGt:
        case BinaryOp::kGe:
        case BinaryOp::kIn: return "bool";
        default: {  // arithmetic: the operands' type when both are known and equal
          if (n.children.size() < 2) return "";
          const std::string a = static_type(*n.children[0], fields), b = static_type(*n.children[1], fields);
          return a == b ? a : "";
        }
      }
    case NodeKind::kCall:
      switch (n.function) {
        case Function::kStartsWith:
        case Function::kEndsWith:
        case Function::kContains:
        case Function::kBool:
        case Function::kIsQuantity:
        case Function::kIsSemver:
        case Function::kIsGreaterThan:
        case Function::kIsLessThan:
        case Function::kIsInteger: return "bool";
        case Function::kSize:
        case Function::kInt:
        case Function::kSign:
        case Function::kCompareTo:
        case Function::kAsInteger:
        case Function::kMajor:
        case Function::kMinor:
        case Function::kPatch: return "int";
        case Function::kUint: return "uint";
        case Function::kDouble:
        case Function::kAsApproximateFloat: return "double";
        case Function::kString:
        case Function::kLowerAscii:
        case Function::kUpperAscii: return "string";
        case Function::kBytes: return "bytes";
        case Function::kQuantity:
        case Function::kAdd:
        case Function::kSub: return "kubernetes.Quantity";
        case Function::kSemver: return "kubernetes.Semver";
      }
      return "";
  }
  return "";
}

bool numeric(const std::string& type) { return type == "int" || type == "uint" || type == "double"; }


// The comparison mismatch of Program::check_comparisons in `n`'s subtree with the smallest column
// (absolute code point position), or nullptr.
const Node* first_mismatch(const Node& n, const Program::FieldTypes& fields, std::string& message) {
  const Node* best = nullptr;
  std::string best_message;
  if (n.kind == NodeKind::kBinary && is_comparison(n.binary_op) && n.children.size() == 2) {
    const std::string a = static_type(*n.children[0], fields), b = static_type(*n.children[1], fields);
    if (!a.empty() && !b.empty() && a != b && !(numeric(a) && numeric(b))) {
      best = &n;
      best_message = std::string("found no matching overload for '") + binary_op_name(n.binary_op) + "' applied to '(" + a + ", " + b + ")'";
    }
  }
  for (size_t i = 0; i < n.children.size(); ++i) {
    // Inside a comprehension or cel.bind the iteration or bound name may shadow a variable.
    const bool scoped = (n.kind == NodeKind::kComprehension && i > 0) || (n.kind == NodeKind::kBind && i > 0);
    std::string m;
    const Node* c = first_mismatch(*n.children[i], scoped ? Program::FieldTypes{} : fields, m);
    if (c != nullptr && (best == nullptr || c->column < best->column)) {
      best = c;
      best_message = std::move(m);
    }
  }
  message = std::move(best_message);
  return best;
}

}  // namespace

std::string Program::result_type() const { return result_type({}); }

std::string Program::result_type(const FieldTypes& fields) const { return impl_->root ? static_type(*impl_->root, fields) : std::string(); }

void Program::check_comparisons(const FieldTypes& fields) const {
  if (!impl_->root || fields.empty()) return;
  std::string message;
  if (const Node* n = first_mismatch(*impl_->root, fields, message); n != nullptr) {
    const auto [line, column] = locate(impl_->source, n->column);
    throw CompileError(column, "type", message, line);
  }
}

}  // namespace gpufleet::cel
