// Program::evaluate: a walk over the syntax tree of ast.h. Semantics of CEL's standard definitions
// (cel-spec doc/langdef.md) as cel-go implements them (common/types/*.go, interpreter/), error texts
// from cel-go common/types/err.go; the Kubernetes functions from k8s.io/apiserver/pkg/cel/library
// quantity.go and semverlib.go.
#include <cerrno>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "cel/ast.h"

namespace gpufleet::cel {

namespace {

using K = Value::Kind;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();

// kube resource.ErrFormatWrong (k8s.io/apimachinery/pkg/api/resource/quantity.go).
constexpr const char* kQuantityFormatWrong =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

struct R {
  Value v;
  std::string err;
  bool is_err = false;
};

R ok(Value v) { return R{std::move(v), {}, false}; }
R error(std::string message) { return R{Value(), std::move(message), true}; }

std::string types_of(std::initializer_list<const Value*> args) {
  std::string s;
  for (const Value* a : args) {
    if (!s.empty()) s += ", ";
    s += a->type_name();
  }
  return s;
}

R no_overload(const char* name, std::initializer_list<const Value*> args) {
  return error(std::string("no such overload: ") + name + "(" + types_of(args) + ")");
}

const char* function_name(Function f) {
  switch (f) {
    case Function::kSize: return "size";
    case Function::kStartsWith: return "startsWith";
    case Function::kEndsWith: return "endsWith";
    case Function::kContains: return "contains";
    case Function::kLowerAscii: return "lowerAscii";
    case Function::kUpperAscii: return "upperAscii";
    case Function::kInt: return "int";
    case Function::kUint: return "uint";
    case Function::kDouble: return "double";
    case Function::kString: return "string";
    case Function::kBool: return "bool";
    case Function::kBytes: return "bytes";
    case Function::kQuantity: return "quantity";
    case Function::kIsQuantity: return "isQuantity";
    case Function::kSemver: return "semver";
    case Function::kIsSemver: return "isSemver";
    case Function::kSign: return "sign";
    case Function::kIsGreaterThan: return "isGreaterThan";
    case Function::kIsLessThan: return "isLessThan";
    case Function::kCompareTo: return "compareTo";
    case Function::kAdd: return "add";
    case Function::kSub: return "sub";
    case Function::kAsInteger: return "asInteger";
    case Function::kAsApproximateFloat: return "asApproximateFloat";
    case Function::kIsInteger: return "isInteger";
    case Function::kMajor: return "major";
    case Function::kMinor: return "minor";
    case Function::kPatch: return "patch";
  }
  return "?";
}

bool is_number(K k) { return k == K::kInt || k == K::kUint || k == K::kDouble; }

// Ordering across int, uint and double (cel-go Int.Compare etc.); nullopt when unordered (NaN).
std::optional<int> compare_numbers(const Value& a, const Value& b) {
  auto sgn = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.kind() == K::kInt && b.kind() == K::kInt) return sgn(a.as_int(), b.as_int());
  if (a.kind() == K::kUint && b.kind() == K::kUint) return sgn(a.as_uint(), b.as_uint());
  if (a.kind() == K::kInt && b.kind() == K::kUint) {
    if (a.as_int() < 0) return -1;
    return sgn(static_cast<uint64_t>(a.as_int()), b.as_uint());
  }
  if (a.kind() == K::kUint && b.kind() == K::kInt) {
    if (b.as_int() < 0) return 1;
    return sgn(a.as_uint(), static_cast<uint64_t>(b.as_int()));
  }
  // One side is a double.
  auto cmp_double_int = [&](double d, int64_t i) -> std::optional<int> {
    if (std::isnan(d)) return std::nullopt;
    if (d < -9223372036854775808.0) return -1;
    if (d >= 9223372036854775808.0) return 1;
    const double t = std::trunc(d);
    const auto ti = static_cast<int64_t>(t);
    if (ti != i) return sgn(ti, i);
    return sgn(d, t);
  };
  auto cmp_double_uint = [&](double d, uint64_t u) -> std::optional<int> {
    if (std::isnan(d)) return std::nullopt;
    if (d < 0) return -1;
    if (d >= 18446744073709551616.0) return 1;
    const double t = std::trunc(d);
    const auto tu = static_cast<uint64_t>(t);
    if (tu != u) return sgn(tu, u);
    return sgn(d, t);
  };
  if (a.kind() == K::kDouble && b.kind() == K::kDouble) {
    if (std::isnan(a.as_double()) || std::isnan(b.as_double())) return std::nullopt;
    return sgn(a.as_double(), b.as_double());
  }
  if (a.kind() == K::kDouble) {
    return b.kind() == K::kInt ? cmp_double_int(a.as_double(), b.as_int()) : cmp_double_uint(a.as_double(), b.as_uint());
  }
  auto r = a.kind() == K::kInt ? cmp_double_int(b.as_double(), a.as_int()) : cmp_double_uint(b.as_double(), a.as_uint());
  if (!r) return r;
  return -*r;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}


// Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string(double) prints ("%g").
std::string go_format_g(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]xx
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  const int exp = std::atoi(sci.c_str() + e + 1);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int nd = static_cast<int>(digits.size());
  if (d == 0) return sign + "0";
  // Go strconv 'g' with the shortest digits: %e when exp < -4 || exp >= 6 (eprec = 6 when shortest).
  std::string out;
  if (exp < -4 || exp >= 6) {
    out = digits.substr(0, 1);
    if (nd > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (exp + 1 >= nd) {
    out = digits + std::string(static_cast<size_t>(exp + 1 - nd), '0');
  } else {
    out = digits.substr(0, static_cast<size_t>(exp + 1)) + "." + digits.substr(static_cast<size_t>(exp + 1));
  }
  return sign + out;
}

__extension__ typedef __int128 I128;            // GCC and clang; exact quantity sums
__extension__ typedef unsigned __int128 U128;

// A quantity as signed nanos (exact: |value| < 2^63 units).
I128 nanos_of(const Quantity& q) {
  const I128 mag = static_cast<I128>(q.magnitude_units()) * 1'000'000'000 + q.magnitude_nanos();
  return q.is_negative() ? -mag : mag;
}

std::optional<Quantity> quantity_from_nanos(I128 n) {
  const bool neg = n < 0;
  const U128 mag = neg ? static_cast<U128>(-n) : static_cast<U128>(n);
  const U128 units = mag / 1'000'000'000;
  const auto nanos = static_cast<uint32_t>(mag % 1'000'000'000);
  if (units > static_cast<U128>(kInt64Max)) return std::nullopt;
  char frac[16];
  std::snprintf(frac, sizeof frac, "%09u", nanos);
  const std::string text = (neg ? "-" : "") + std::to_string(static_cast<uint64_t>(units)) + "." + frac;
  return Quantity::parse(text);
}

struct Evaluator {
  const Limits& limits;
  uint64_t cost = 0;
  bool cancelled = false;
  std::vector<std::pair<const std::string*, Value>> scope;

  bool charge(uint64_t n) {
    cost += n;
    if (cost > limits.max_cost) cancelled = true;
    return !cancelled;
  }

  R cancelled_error() const { return error("operation cancelled: actual cost limit exceeded"); }

  R eval(const Node& n) {
    if (!charge(1)) return cancelled_error();
    switch (n.kind) {
      case NodeKind::kLiteral: return ok(n.value);
      case NodeKind::kIdent: {
        for (size_t i = scope.size(); i-- > 0;)
          if (*scope[i].first == n.name) return ok(scope[i].second);
        return error("no such attribute(s): " + n.name);
      }
      case NodeKind::kSelect: return select(n);
      case NodeKind::kIndex: return index(n);
      case NodeKind::kCall: return call(n);
      case NodeKind::kList: {
        std::vector<Value> elements;
        elements.reserve(n.children.size());
        for (const auto& c : n.children) {
          R r = eval(*c);
          if (r.is_err) return r;
          elements.push_back(std::move(r.v));
        }
        return ok(Value::list(std::move(elements)));
      }
      case NodeKind::kMap: {
        Value::Entries entries;
        for (size_t i = 0; i + 1 < n.children.size(); i += 2) {
          R k = eval(*n.children[i]);
          if (k.is_err) return k;
          R v = eval(*n.children[i + 1]);
          if (v.is_err) return v;
          entries.emplace_back(std::move(k.v), std::move(v.v));
        }
        if (!charge(entries.size() * entries.size() / 10)) return cancelled_error();
        try {
          return ok(Value::map(std::move(entries)));
        } catch (const std::invalid_argument& e) {
          return error(e.what());
        }
      }
      case NodeKind::kAnd:
      case NodeKind::kOr: return logical(n);
      case NodeKind::kNot: {
        R r = eval(*n.children[0]);
        if (r.is_err) return r;
        if (r.v.kind() != K::kBool) return no_overload("!_", {&r.v});
        return ok(Value::boolean(!r.v.as_bool()));
      }
      case NodeKind::kNeg: {
        R r = eval(*n.children[0]);
        if (r.is_err) return r;
        if (r.v.kind() == K::kInt) {
          if (r.v.as_int() == kInt64Min) return error("integer overflow");
          return ok(Value::integer(-r.v.as_int()));
        }
        if (r.v.kind() == K::kDouble) return ok(Value::real(-r.v.as_double()));
        return no_overload("-_", {&r.v});
      }
      case NodeKind::kConditional: {
        R c = eval(*n.children[0]);
        if (c.is_err) return c;
        if (c.v.kind() != K::kBool) return no_overload("_?_:_", {&c.v});
        return eval(*n.children[c.v.as_bool() ? 1 : 2]);
      }
      case NodeKind::kBinary: return binary(n);
      case NodeKind::kComprehension: return comprehension(n);
      case NodeKind::kBind: {
        R init = eval(*n.children[0]);
        if (init.is_err) return init;
        scope.emplace_back(&n.name, std::move(init.v));
        R body = eval(*n.children[1]);
        scope.pop_back();
        return body;
      }
    }
    return error("internal error: unknown node");
  }

  static std::string key_text(const Value& k) {
    return k.kind() == K::kString ? k.as_string() : k.debug_string();
  }

  R select(const Node& n) {
    R operand = eval(*n.children[0]);
    if (operand.is_err) return operand;
    const Value& m = operand.v;
    if (m.kind() != K::kMap) {
      if (n.has_test) return error("invalid type for field selection.");
      return error("no such overload: field selection '." + n.name + "' on " + std::string(m.type_name()));
    }
    if (!charge(m.as_map().size() / 10)) return cancelled_error();
    const Value key = Value::string(n.name);
    const Value* v = m.find(key);
    if (n.has_test) return ok(Value::boolean(v != nullptr));
    if (v != nullptr) return ok(*v);
    if (const Value* d = m.missing_key_default()) return ok(*d);
    return error("no such key: " + n.name);
  }

  R index(const Node& n) {
    R operand = eval(*n.children[0]);
    if (operand.is_err) return operand;
    R key = eval(*n.children[1]);
    if (key.is_err) return key;
    const Value& c = operand.v;
    const Value& k = key.v;
    if (c.kind() == K::kList) {
      const auto& l = c.as_list();
      int64_t i = 0;
      if (k.kind() == K::kInt) {
        i = k.as_int();
      } else if (k.kind() == K::kUint) {
        i = k.as_uint() > static_cast<uint64_t>(kInt64Max) ? -1 : static_cast<int64_t>(k.as_uint());
      } else if (k.kind() == K::kDouble) {
        const double d = k.as_double();
        if (d != std::trunc(d) || !(d >= -9.2e18 && d <= 9.2e18)) return error("unsupported index value");
        i = static_cast<int64_t>(d);
      } else {
        return no_overload("_[_]", {&c, &k});
      }
      if (i < 0 || static_cast<uint64_t>(i) >= l.size())
        return error("index '" + std::to_string(i) + "' out of range in list size '" + std::to_string(l.size()) + "'");
      return ok(l[static_cast<size_t>(i)]);
    }
    if (c.kind() == K::kMap) {
      if (!charge(c.as_map().size() / 10)) return cancelled_error();
      if (k.kind() == K::kList || k.kind() == K::kMap || k.kind() == K::kNull || k.kind() == K::kBytes ||
          k.kind() == K::kQuantity || k.kind() == K::kSemver)
        return error("unsupported key type");
      if (const Value* v = c.find(k)) return ok(*v);
      if (const Value* d = c.missing_key_default()) return ok(*d);
      return error("no such key: " + key_text(k));
    }
    return no_overload("_[_]", {&c, &k});
  }

  // cel-go's logical && and ||: commutative over errors (langdef "Logical Operators").
  R logical(const Node& n) {
    const bool is_and = n.kind == NodeKind::kAnd;
    R l = eval(*n.children[0]);
    if (cancelled) return cancelled_error();
    if (!l.is_err && l.v.kind() == K::kBool && l.v.as_bool() != is_and) return l;  // false && _, true || _
    R r = eval(*n.children[1]);
    if (cancelled) return cancelled_error();
    if (!r.is_err && r.v.kind() == K::kBool && r.v.as_bool() != is_and) return r;
    if (!l.is_err && !r.is_err && l.v.kind() == K::kBool && r.v.kind() == K::kBool) return l;  // both decisive-neutral
    if (l.is_err) return l;
    if (r.is_err) return r;
    return no_overload(is_and ? "_&&_" : "_||_", {&l.v, &r.v});
  }

  R binary(const Node& n) {
    R lr = eval(*n.children[0]);
    if (lr.is_err) return lr;
    R rr = eval(*n.children[1]);
    if (rr.is_err) return rr;
    const Value& a = lr.v;
    const Value& b = rr.v;
    const BinaryOp op = n.binary_op;
    switch (op) {
      case BinaryOp::kEq:
      case BinaryOp::kNe: {
        if (!charge(deep_size(a))) return cancelled_error();
        const bool eq = a == b;
        return ok(Value::boolean(op == BinaryOp::kEq ? eq : !eq));
      }
      case BinaryOp::kLt:
      case BinaryOp::kLe:
      case BinaryOp::kGt:
      case BinaryOp::kGe: {
        std::optional<int> c;
        if (is_number(a.kind()) && is_number(b.kind())) {
          c = compare_numbers(a, b);
          if (!c) return ok(Value::boolean(false));  // NaN
        } else if (a.kind() != b.kind()) {
          return no_overload(binary_op_name(op), {&a, &b});
        } else if (a.kind() == K::kString || a.kind() == K::kBytes) {
          if (!charge(a.as_string().size() / 10)) return cancelled_error();
          const int r = a.as_string().compare(b.as_string());
          c = r < 0 ? -1 : (r > 0 ? 1 : 0);
        } else if (a.kind() == K::kBool) {
          c = static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
        } else {
          return no_overload(binary_op_name(op), {&a, &b});
        }
        const int v = *c;
        const bool res = op == BinaryOp::kLt ? v < 0 : op == BinaryOp::kLe ? v <= 0 : op == BinaryOp::kGt ? v > 0 : v >= 0;
        return ok(Value::boolean(res));
      }
      case BinaryOp::kIn: {
        if (b.kind() == K::kList) {
          if (!charge(deep_size(b))) return cancelled_error();
          for (const auto& e : b.as_list())
            if (e == a) return ok(Value::boolean(true));
          return ok(Value::boolean(false));
        }
        if (b.kind() == K::kMap) {
          if (!charge(b.as_map().size() / 10)) return cancelled_error();
          return ok(Value::boolean(b.find(a) != nullptr));
        }
        return no_overload(binary_op_name(op), {&a, &b});
      }
      default: return arithmetic(op, a, b);
    }
  }

  // The work of comparing or searching `v`: its elements, nested ones included, and its strings' bytes
  // / 10. Stops counting past the cost limit (the caller is cancelled then anyway).
  uint64_t deep_size(const Value& v) const {
    uint64_t n = 0;
    std::vector<const Value*> todo{&v};
    while (!todo.empty() && n <= limits.max_cost) {
      const Value* x = todo.back();
      todo.pop_back();
      switch (x->kind()) {
        case K::kString:
        case K::kBytes: n += x->as_string().size() / 10; break;
        case K::kList:
          n += x->as_list().size();
          for (const auto& e : x->as_list()) todo.push_back(&e);
          break;
        case K::kMap:
          n += x->as_map().size();
          for (const auto& [k, e] : x->as_map()) todo.push_back(&e);
          break;
        default: break;
      }
    }
    return n;
  }

  R arithmetic(BinaryOp op, const Value& a, const Value& b) {
    if (a.kind() == K::kInt && b.kind() == K::kInt) {
      const int64_t x = a.as_int(), y = b.as_int();
      int64_t r = 0;
      switch (op) {
        case BinaryOp::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return error("integer overflow");
          return ok(Value::integer(r));
        case BinaryOp::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return error("integer overflow");
          return ok(Value::integer(r));
        case BinaryOp::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return error("integer overflow");
          return ok(Value::integer(r));
        case BinaryOp::kDiv:
          if (y == 0) return error("division by zero");
          if (x == kInt64Min && y == -1) return error("integer overflow");
          return ok(Value::integer(x / y));
        case BinaryOp::kMod:
          if (y == 0) return error("modulus by zero");
          if (x == kInt64Min && y == -1) return error("integer overflow");
          return ok(Value::integer(x % y));
        default: break;
      }
    }
    if (a.kind() == K::kUint && b.kind() == K::kUint) {
      const uint64_t x = a.as_uint(), y = b.as_uint();
      uint64_t r = 0;
      switch (op) {
        case BinaryOp::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return error("unsigned integer overflow");
          return ok(Value::uinteger(r));
        case BinaryOp::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return error("unsigned integer overflow");
          return ok(Value::uinteger(r));
        case BinaryOp::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return error("unsigned integer overflow");
          return ok(Value::uinteger(r));
        case BinaryOp::kDiv:
          if (y == 0) return error("division by zero");
          return ok(Value::uinteger(x / y));
        case BinaryOp::kMod:
          if (y == 0) return error("modulus by zero");
          return ok(Value::uinteger(x % y));
        default: break;
      }
    }
    if (a.kind() == K::kDouble && b.kind() == K::kDouble) {
      const double x = a.as_double(), y = b.as_double();
      switch (op) {
        case BinaryOp::kAdd: return ok(Value::real(x + y));
        case BinaryOp::kSub: return ok(Value::real(x - y));
        case BinaryOp::kMul: return ok(Value::real(x * y));
        case BinaryOp::kDiv: return ok(Value::real(x / y));
        default: break;  // no % on doubles
      }
    }
    if (op == BinaryOp::kAdd && a.kind() == b.kind()) {
      if (a.kind() == K::kString || a.kind() == K::kBytes) {
        const size_t size = a.as_string().size() + b.as_string().size();
        if (!charge(size / 10)) return cancelled_error();
        std::string s = a.as_string() + b.as_string();
        return ok(a.kind() == K::kString ? Value::string(std::move(s)) : Value::bytes(std::move(s)));
      }
      if (a.kind() == K::kList) {
        const size_t size = a.as_list().size() + b.as_list().size();
        if (!charge(size)) return cancelled_error();
        std::vector<Value> l = a.as_list();
        l.insert(l.end(), b.as_list().begin(), b.as_list().end());
        return ok(Value::list(std::move(l)));
      }
    }
    return no_overload(binary_op_name(op), {&a, &b});
  }

  R comprehension(const Node& n) {
    R range = eval(*n.children[0]);
    if (range.is_err) return range;
    std::vector<Value> items;
    if (range.v.kind() == K::kList) {
      items = range.v.as_list();
    } else if (range.v.kind() == K::kMap) {
      for (const auto& [k, v] : range.v.as_map()) items.push_back(k);  // macros range over a map's keys
    } else {
      return error("no such overload: comprehension over " + std::string(range.v.type_name()));
    }
    scope.emplace_back(&n.name, Value());
    const size_t slot = scope.size() - 1;
    R result = run_macro(n, items, slot);
    scope.pop_back();
    return result;
  }

  R run_macro(const Node& n, const std::vector<Value>& items, size_t slot) {
    switch (n.macro) {
      case Macro::kAll:
      case Macro::kExists: {
        // cel-go: accu = init; loop while accu is not the decisive value; accu = accu op pred.
        const bool is_all = n.macro == Macro::kAll;
        R accu = ok(Value::boolean(is_all));
        for (const Value& item : items) {
          if (!charge(1)) return cancelled_error();
          if (!accu.is_err && accu.v.kind() == K::kBool && accu.v.as_bool() != is_all) break;
          scope[slot].second = item;
          R p = eval(*n.children[1]);
          if (cancelled) return cancelled_error();
          accu = combine(is_all, std::move(accu), std::move(p));
        }
        return accu;
      }
      case Macro::kExistsOne: {
        int64_t count = 0;
        for (const Value& item : items) {
          if (!charge(1)) return cancelled_error();
          scope[slot].second = item;
          R p = eval(*n.children[1]);
          if (p.is_err) return p;
          if (p.v.kind() != K::kBool) return no_overload("exists_one", {&p.v});
          if (p.v.as_bool()) ++count;
        }
        return ok(Value::boolean(count == 1));
      }
      case Macro::kMap:
      case Macro::kFilter: {
        std::vector<Value> out;
        const bool filter_first = n.macro == Macro::kFilter || n.children.size() == 3;
        for (const Value& item : items) {
          if (!charge(1)) return cancelled_error();
          scope[slot].second = item;
          if (filter_first) {
            R p = eval(*n.children[1]);
            if (p.is_err) return p;
            if (p.v.kind() != K::kBool) return no_overload(n.macro == Macro::kFilter ? "filter" : "map", {&p.v});
            if (!p.v.as_bool()) continue;
          }
          if (n.macro == Macro::kFilter) {
            out.push_back(item);
            continue;
          }
          R t = eval(*n.children[n.children.size() == 3 ? 2 : 1]);
          if (t.is_err) return t;
          out.push_back(std::move(t.v));
        }
        return ok(Value::list(std::move(out)));
      }
    }
    return error("internal error: unknown macro");
  }

  R combine(bool is_and, R l, R r) {
    if (!l.is_err && l.v.kind() == K::kBool && l.v.as_bool() != is_and) return l;
    if (!r.is_err && r.v.kind() == K::kBool && r.v.as_bool() != is_and) return r;
    if (!l.is_err && !r.is_err && l.v.kind() == K::kBool && r.v.kind() == K::kBool) return l;
    if (l.is_err) return l;
    if (r.is_err) return r;
    return no_overload(is_and ? "_&&_" : "_||_", {&l.v, &r.v});
  }

  R call(const Node& n) {
    std::vector<Value> args;
    args.reserve(n.children.size());
    for (const auto& c : n.children) {
      R r = eval(*c);
      if (r.is_err) return r;
      args.push_back(std::move(r.v));
    }
    return apply(n.function, args);
  }

  R bad(Function f, const std::vector<Value>& args) {
    std::string s = std::string("no such overload: ") + function_name(f) + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + std::string(args[i].type_name());
    return error(s + ")");
  }

  R apply(Function f, const std::vector<Value>& args) {
    const Value& a = args[0];
    const Value* b = args.size() > 1 ? &args[1] : nullptr;
    switch (f) {
      case Function::kSize:
        switch (a.kind()) {
          case K::kString:
            if (!charge(a.as_string().size() / 10)) return cancelled_error();
            return ok(Value::integer(static_cast<int64_t>(code_points(a.as_string()))));
          case K::kBytes: return ok(Value::integer(static_cast<int64_t>(a.as_string().size())));
          case K::kList: return ok(Value::integer(static_cast<int64_t>(a.as_list().size())));
          case K::kMap: return ok(Value::integer(static_cast<int64_t>(a.as_map().size())));
          default: return bad(f, args);
        }
      case Function::kStartsWith:
      case Function::kEndsWith:
      case Function::kContains: {
        if (a.kind() != K::kString || b->kind() != K::kString) return bad(f, args);
        const std::string& s = a.as_string();
        const std::string& t = b->as_string();
        if (!charge((s.size() + t.size()) / 10)) return cancelled_error();
        bool r;
        if (f == Function::kStartsWith) r = s.compare(0, t.size(), t) == 0 && s.size() >= t.size();
        else if (f == Function::kEndsWith) r = s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
        else r = s.find(t) != std::string::npos;
        return ok(Value::boolean(r));
      }
      case Function::kLowerAscii:
      case Function::kUpperAscii: {
        if (a.kind() != K::kString) return bad(f, args);
        if (!charge(a.as_string().size() / 10)) return cancelled_error();
        std::string s = a.as_string();
        for (char& c : s) {
          if (f == Function::kLowerAscii && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          if (f == Function::kUpperAscii && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        return ok(Value::string(std::move(s)));
      }
      case Function::kInt: return to_int(a, args);
      case Function::kUint: return to_uint(a, args);
      case Function::kDouble: return to_double(a, args);
      case Function::kString: return to_string(a, args);
      case Function::kBool: {
        if (a.kind() == K::kBool) return ok(a);
        if (a.kind() != K::kString) return bad(f, args);
        // Go strconv.ParseBool.
        const std::string& s = a.as_string();
        if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return ok(Value::boolean(true));
        if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") return ok(Value::boolean(false));
        return error("type conversion error from 'string' to 'bool'");
      }
      case Function::kBytes:
        if (a.kind() == K::kBytes) return ok(a);
        if (a.kind() == K::kString) return ok(Value::bytes(a.as_string()));
        return bad(f, args);
      case Function::kQuantity:
      case Function::kIsQuantity: {
        if (a.kind() != K::kString) return bad(f, args);
        try {
          Quantity q = Quantity::parse(a.as_string());
          return ok(f == Function::kQuantity ? Value::quantity(q) : Value::boolean(true));
        } catch (const std::invalid_argument&) {
          if (f == Function::kIsQuantity) return ok(Value::boolean(false));
          return error(kQuantityFormatWrong);
        }
      }
      case Function::kSemver:
      case Function::kIsSemver: {
        if (a.kind() != K::kString) return bad(f, args);
        try {
          Semver v = Semver::parse(a.as_string());
          return ok(f == Function::kSemver ? Value::semver(std::move(v)) : Value::boolean(true));
        } catch (const std::invalid_argument& e) {
          if (f == Function::kIsSemver) return ok(Value::boolean(false));
          return error(e.what());
        }
      }
      case Function::kSign:
        if (a.kind() != K::kQuantity) return bad(f, args);
        return ok(Value::integer(a.as_quantity().is_zero() ? 0 : (a.as_quantity().is_negative() ? -1 : 1)));
      case Function::kIsGreaterThan:
      case Function::kIsLessThan:
      case Function::kCompareTo: {
        int c;
        if (a.kind() == K::kQuantity && b->kind() == K::kQuantity) {
          const auto o = a.as_quantity() <=> b->as_quantity();
          c = o < 0 ? -1 : (o > 0 ? 1 : 0);
        } else if (a.kind() == K::kSemver && b->kind() == K::kSemver) {
          c = a.as_semver().compare(b->as_semver());
        } else {
          return bad(f, args);
        }
        if (f == Function::kCompareTo) return ok(Value::integer(c));
        return ok(Value::boolean(f == Function::kIsGreaterThan ? c == 1 : c == -1));
      }
      case Function::kAdd:
      case Function::kSub: {
        if (a.kind() != K::kQuantity) return bad(f, args);
        I128 y;
        if (b->kind() == K::kQuantity) y = nanos_of(b->as_quantity());
        else if (b->kind() == K::kInt) y = static_cast<I128>(b->as_int()) * 1'000'000'000;
        else return bad(f, args);
        const I128 x = nanos_of(a.as_quantity());
        const auto q = quantity_from_nanos(f == Function::kAdd ? x + y : x - y);
        if (!q) return error("quantity overflow: the result exceeds 2^63-1 base units");
        return ok(Value::quantity(*q));
      }
      case Function::kAsInteger:
      case Function::kIsInteger: {
        if (a.kind() != K::kQuantity) return bad(f, args);
        const Quantity& q = a.as_quantity();
        const bool whole = q.magnitude_nanos() == 0;
        if (f == Function::kIsInteger) return ok(Value::boolean(whole));
        if (!whole) return error("cannot convert value to integer");
        return ok(Value::integer(q.is_negative() ? -q.magnitude_units() : q.magnitude_units()));
      }
      case Function::kAsApproximateFloat: {
        if (a.kind() != K::kQuantity) return bad(f, args);
        const Quantity& q = a.as_quantity();
        const double v = static_cast<double>(q.magnitude_units()) + q.magnitude_nanos() / 1e9;
        return ok(Value::real(q.is_negative() ? -v : v));
      }
      case Function::kMajor:
      case Function::kMinor:
      case Function::kPatch: {
        if (a.kind() != K::kSemver) return bad(f, args);
        const Semver& v = a.as_semver();
        const uint64_t x = f == Function::kMajor ? v.major : (f == Function::kMinor ? v.minor : v.patch);
        return ok(Value::integer(static_cast<int64_t>(x)));  // Go: types.Int(v.Major), a uint64 -> int64 conversion
      }
    }
    return bad(f, args);
  }

  R to_int(const Value& a, const std::vector<Value>& args) {
    switch (a.kind()) {
      case K::kInt: return ok(a);
      case K::kUint:
        if (a.as_uint() > static_cast<uint64_t>(kInt64Max)) return error("integer overflow");
        return ok(Value::integer(static_cast<int64_t>(a.as_uint())));
      case K::kDouble: {
        const double d = a.as_double();
        // cel-go Double.ConvertToType(IntType): range-checked, truncated toward zero.
        if (!(d > -9223372036854775808.0 - 1 && d < 9223372036854775808.0) || std::isnan(d)) return error("integer overflow");
        if (d <= -9223372036854775808.0) return ok(Value::integer(kInt64Min));
        return ok(Value::integer(static_cast<int64_t>(d)));
      }
      case K::kString: {
        const std::string& s = a.as_string();
        int64_t v = 0;
        const char* b = s.data();
        const char* e = s.data() + s.size();
        if (b != e && *b == '+') ++b;
        const auto r = std::from_chars(b, e, v);
        if (s.empty() || r.ptr != e || (b != s.data() && *b == '-')) {
          if (r.ec == std::errc::result_out_of_range) return error("strconv.ParseInt: parsing \"" + s + "\": value out of range");
          return error("strconv.ParseInt: parsing \"" + s + "\": invalid syntax");
        }
        if (r.ec == std::errc::result_out_of_range) return error("strconv.ParseInt: parsing \"" + s + "\": value out of range");
        if (r.ec != std::errc()) return error("strconv.ParseInt: parsing \"" + s + "\": invalid syntax");
        return ok(Value::integer(v));
      }
      default: return bad(Function::kInt, args);
    }
  }

  R to_uint(const Value& a, const std::vector<Value>& args) {
    switch (a.kind()) {
      case K::kUint: return ok(a);
      case K::kInt:
        if (a.as_int() < 0) return error("unsigned integer overflow");
        return ok(Value::uinteger(static_cast<uint64_t>(a.as_int())));
      case K::kDouble: {
        const double d = a.as_double();
        if (!(d > -1 && d < 18446744073709551616.0)) return error("unsigned integer overflow");
        return ok(Value::uinteger(static_cast<uint64_t>(d)));
      }
      case K::kString: {
        const std::string& s = a.as_string();
        uint64_t v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || r.ptr != s.data() + s.size() || s[0] == '-' || s[0] == '+')
          return error("strconv.ParseUint: parsing \"" + s + "\": invalid syntax");
        if (r.ec == std::errc::result_out_of_range) return error("strconv.ParseUint: parsing \"" + s + "\": value out of range");
        if (r.ec != std::errc()) return error("strconv.ParseUint: parsing \"" + s + "\": invalid syntax");
        return ok(Value::uinteger(v));
      }
      default: return bad(Function::kUint, args);
    }
  }

  R to_double(const Value& a, const std::vector<Value>& args) {
    switch (a.kind()) {
      case K::kDouble: return ok(a);
      case K::kInt: return ok(Value::real(static_cast<double>(a.as_int())));
      case K::kUint: return ok(Value::real(static_cast<double>(a.as_uint())));
      case K::kString: {
        const std::string& s = a.as_string();
        // Go strconv.ParseFloat: no leading space; overflow is an error.
        if (s.empty() || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\v' || s[0] == '\f' || s[0] == '\r' ||
            s.find('\0') != std::string::npos)
          return error("strconv.ParseFloat: parsing \"" + s + "\": invalid syntax");
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size()) return error("strconv.ParseFloat: parsing \"" + s + "\": invalid syntax");
        if (errno == ERANGE && std::isinf(v)) return error("strconv.ParseFloat: parsing \"" + s + "\": value out of range");
        return ok(Value::real(v));
      }
      default: return bad(Function::kDouble, args);
    }
  }

  R to_string(const Value& a, const std::vector<Value>& args) {
    switch (a.kind()) {
      case K::kString: return ok(a);
      case K::kInt: return ok(Value::string(std::to_string(a.as_int())));
      case K::kUint: return ok(Value::string(std::to_string(a.as_uint())));
      case K::kDouble: return ok(Value::string(go_format_g(a.as_double())));
      case K::kBool: return ok(Value::string(a.as_bool() ? "true" : "false"));
      case K::kBytes:
        if (invalid_utf8_at(a.as_string()) != std::string_view::npos) return error("invalid UTF-8 in bytes, cannot convert to string");
        return ok(Value::string(a.as_string()));
      default: return bad(Function::kString, args);
    }
  }
};

}  // namespace

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq: return "_==_";
    case BinaryOp::kNe: return "_!=_";
    case BinaryOp::kLt: return "_<_";
    case BinaryOp::kLe: return "_<=_";
    case BinaryOp::kGt: return "_>_";
    case BinaryOp::kGe: return "_>=_";
    case BinaryOp::kIn: return "@in";
    case BinaryOp::kAdd: return "_+_";
    case BinaryOp::kSub: return "_-_";
    case BinaryOp::kMul: return "_*_";
    case BinaryOp::kDiv: return "_/_";
    case BinaryOp::kMod: return "_%_";
  }
  return "?";
}


Program::Result Program::evaluate(const std::vector<std::pair<std::string, Value>>& bindings) const {
  Result result;
  try {
    Evaluator ev{impl_->limits, 0, false, {}};
    ev.scope.reserve(bindings.size() + 8);
    for (const auto& [name, value] : bindings) ev.scope.emplace_back(&name, value);
    R r = ev.eval(*impl_->root);
    if (ev.cancelled) {
      result.error = "operation cancelled: actual cost limit exceeded";
    } else if (r.is_err) {
      result.error = std::move(r.err);
    } else {
      result.value = std::move(r.v);
    }
  } catch (const std::exception& e) {
    result.value.reset();
    result.error = std::string("internal error: ") + e.what();
  }
  return result;
}

}  // namespace gpufleet::cel
