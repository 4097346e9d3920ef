// CEL (src/cel/cel.h) as DRA device selectors use it: real selector shapes from the Kubernetes DRA
// docs and NVIDIA's dra-driver-gpu against an H100 device, hand-computed truth tables of every operator,
// CEL's commutative error semantics of && and || (cel-spec langdef.md "Logical Operators"), the
// Kubernetes quantity and semver libraries (examples from k8s.io/apiserver/pkg/cel/library
// quantity.go and semverlib.go, semver.org precedence), compile errors with their columns, and limits.
#include "cel/cel.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace gpufleet::cel {
namespace {

Value str(const char* s) { return Value::string(s); }

// An H100 as NVIDIA's dra-driver-gpu publishes it in a ResourceSlice (domain gpu.nvidia.com), bound
// the way DRA binds `device` (k8s.io/dynamic-resource-allocation/cel/compile.go): attributes and
// capacity keyed by domain, an unknown domain reading as an empty map.
Value h100() {
  Value::Entries nvidia = {
      {str("productName"), str("NVIDIA H100 80GB HBM3")},
      {str("architecture"), str("Hopper")},
      {str("type"), str("gpu")},
      {str("index"), Value::integer(3)},
      {str("driverVersion"), Value::semver(Semver::parse("550.54.15"))},
      {str("cudaComputeCapability"), Value::semver(Semver::parse("9.0.0"))},
  };
  Value::Entries capacity = {{str("memory"), Value::quantity(Quantity::parse("80Gi"))}};
  return Value::map({
      {str("driver"), str("gpu.nvidia.com")},
      {str("attributes"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(nvidia)}}, Value::map({}))},
      {str("capacity"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(capacity)}}, Value::map({}))},
  });
}

// A MIG device of the same driver: profile 1g.10gb.
Value mig_1g10gb() {
  Value::Entries nvidia = {{str("type"), str("mig")}, {str("profile"), str("1g.10gb")},
                           {str("productName"), str("NVIDIA H100 80GB HBM3")}};
  Value::Entries capacity = {{str("memory"), Value::quantity(Quantity::parse("9856Mi"))}};
  return Value::map({
      {str("driver"), str("gpu.nvidia.com")},
      {str("attributes"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(nvidia)}}, Value::map({}))},
      {str("capacity"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(capacity)}}, Value::map({}))},
  });
}

// The result as text: the value's debug_string(), or "error: <message>".
std::string run(const std::string& expression, const Value& device = h100(), const Limits& limits = {}) {
  const Program p = Program::compile(expression, {"device"}, limits);
  const Program::Result r = p.evaluate({{"device", device}});
  if (r.value) {
    EXPECT_TRUE(r.error.empty()) << expression;
    return r.value->debug_string();
  }
  return "error: " + r.error;
}

// "<column> <construct>" of the CompileError compile() throws, or "compiled".
std::string compile_error(const std::string& expression, const Limits& limits = {}) {
  try {
    Program::compile(expression, {"device"}, limits);
  } catch (const CompileError& e) {
    return std::to_string(e.column()) + " " + e.construct();
  }
  return "compiled";
}

std::string compile_message(const std::string& expression) {
  try {
    Program::compile(expression, {"device"});
  } catch (const CompileError& e) {
    return e.message();
  }
  return "compiled";
}

TEST(CelDra, SelectorsOnAnH100) {
  EXPECT_EQ(run(R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3")"), "true");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-40GB")"), "false");
  // 80Gi >= 40Gi, 80Gi < 96Gi.
  EXPECT_EQ(run(R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)"), "true");
  EXPECT_EQ(run(R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("96Gi")) >= 0)"), "false");
  // 550.54.15 > 550.0.0; 550.54.15 < 555.42.2.
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0")))"), "true");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("555.42.2")))"), "false");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].type == "gpu")"), "true");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() >= 9)"), "true");
  // Single quotes, as in the Kubernetes docs' examples.
  EXPECT_EQ(run("device.driver == 'gpu.nvidia.com'"), "true");
}

TEST(CelDra, MigProfile) {
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].profile == "1g.10gb")", mig_1g10gb()), "true");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].profile == "2g.20gb")", mig_1g10gb()), "false");
  // The full GPU has no profile attribute: the lookup is an error, not a silent false.
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].profile == "1g.10gb")"), "error: no such key: profile");
  // ... which a has() guard turns into false.
  EXPECT_EQ(run(R"(has(device.attributes["gpu.nvidia.com"].profile) && device.attributes["gpu.nvidia.com"].profile == "1g.10gb")"), "false");
  // 9856Mi < 10Gi (10240Mi).
  EXPECT_EQ(run(R"(device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("10Gi")))", mig_1g10gb()), "true");
}

TEST(CelDra, UnknownDomainIsAnEmptyMap) {
  EXPECT_EQ(run(R"(device.attributes["dra.example.com"].model == "x")"), "error: no such key: model");
  EXPECT_EQ(run(R"("model" in device.attributes["dra.example.com"])"), "false");
  EXPECT_EQ(run(R"(size(device.capacity["dra.example.com"]))"), "0");
  EXPECT_EQ(run(R"("dra.example.com" in device.attributes)"), "false");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].index == 3)"), "true");
}

TEST(CelDra, BindMacro) {
  // cel.bind, which DRA enables (ext.Bindings) to name a domain's attributes once.
  EXPECT_EQ(run(R"(cel.bind(dra, device.attributes["gpu.nvidia.com"], dra.type == "gpu" && dra.index == 3))"), "true");
  EXPECT_EQ(run("cel.bind(x, 7, x * x)"), "49");
}

TEST(CelOperators, Comparisons) {
  EXPECT_EQ(run("1 < 2"), "true");
  EXPECT_EQ(run("2 < 1"), "false");
  EXPECT_EQ(run("1 <= 1"), "true");
  EXPECT_EQ(run("2 <= 1"), "false");
  EXPECT_EQ(run("1 > 1"), "false");
  EXPECT_EQ(run("2 > 1"), "true");
  EXPECT_EQ(run("1 >= 1"), "true");
  EXPECT_EQ(run("0 >= 1"), "false");
  EXPECT_EQ(run("1 == 1"), "true");
  EXPECT_EQ(run("1 != 1"), "false");
  EXPECT_EQ(run("1 != 2"), "true");
  // Across int, uint and double.
  EXPECT_EQ(run("1 < 1.5"), "true");
  EXPECT_EQ(run("2u > 1"), "true");
  EXPECT_EQ(run("-1 < 0u"), "true");
  EXPECT_EQ(run("1 == 1.0"), "true");
  EXPECT_EQ(run("1u == 1"), "true");
  EXPECT_EQ(run("18446744073709551615u > 9223372036854775807"), "true");
  EXPECT_EQ(run("0.1 + 0.2 == 0.3"), "false");  // IEEE: 0.30000000000000004
  EXPECT_EQ(run("double(\"NaN\") == double(\"NaN\")"), "false");
  EXPECT_EQ(run("double(\"NaN\") < 1.0"), "false");
  // Strings bytewise, bools false < true, bytes.
  EXPECT_EQ(run(R"("abc" < "abd")"), "true");
  EXPECT_EQ(run(R"("b" > "abc")"), "true");
  EXPECT_EQ(run("false < true"), "true");
  EXPECT_EQ(run("b'a' < b'b'"), "true");
  // Different types: == is false, ordering has no overload.
  EXPECT_EQ(run(R"(1 == "1")"), "false");
  EXPECT_EQ(run(R"(1 != "1")"), "true");
  EXPECT_EQ(run(R"(1 < "a")"), "error: no such overload: _<_(int, string)");
  EXPECT_EQ(run("[1, 2] == [1, 2.0]"), "true");
  EXPECT_EQ(run(R"({"a": 1} == {"a": 1u})"), "true");
  EXPECT_EQ(run("null == null"), "true");
}

TEST(CelOperators, Arithmetic) {
  EXPECT_EQ(run("2 * 3 + 4 * 5"), "26");
  EXPECT_EQ(run("10 - 2 - 3"), "5");
  EXPECT_EQ(run("7 / 2"), "3");
  EXPECT_EQ(run("-7 / 2"), "-3");  // truncated toward zero
  EXPECT_EQ(run("-7 % 3"), "-1");
  EXPECT_EQ(run("7 % -3"), "1");
  EXPECT_EQ(run("7u / 2u"), "3u");
  EXPECT_EQ(run("7.0 / 2.0"), "3.5");
  EXPECT_EQ(run("1.0 / 0.0"), "inf");
  EXPECT_EQ(run("9223372036854775807 + 1"), "error: integer overflow");
  EXPECT_EQ(run("-9223372036854775807 - 2"), "error: integer overflow");
  EXPECT_EQ(run("4611686018427387904 * 2"), "error: integer overflow");
  EXPECT_EQ(run("-9223372036854775808 / -1"), "error: integer overflow");
  EXPECT_EQ(run("-(-9223372036854775807 - 1)"), "error: integer overflow");
  EXPECT_EQ(run("3u - 4u"), "error: unsigned integer overflow");
  EXPECT_EQ(run("18446744073709551615u + 1u"), "error: unsigned integer overflow");
  EXPECT_EQ(run("1 / 0"), "error: division by zero");
  EXPECT_EQ(run("1 % 0"), "error: modulus by zero");
  EXPECT_EQ(run("1 + 1u"), "error: no such overload: _+_(int, uint)");
  EXPECT_EQ(run("1.5 % 1.0"), "error: no such overload: _%_(double, double)");
  EXPECT_EQ(run(R"("ab" + "cd")"), R"("abcd")");
  EXPECT_EQ(run("b'a' + b'b'"), R"(b"ab")");
  EXPECT_EQ(run("[1] + [2, 3]"), "[1, 2, 3]");
  EXPECT_EQ(run("-(-3)"), "3");
  EXPECT_EQ(run("--3"), "3");
  EXPECT_EQ(run("-2.5"), "-2.5");
  EXPECT_EQ(run(R"(-"a")"), "error: no such overload: -_(string)");
}

TEST(CelOperators, NotAndConditional) {
  EXPECT_EQ(run("!true"), "false");
  EXPECT_EQ(run("!false"), "true");
  EXPECT_EQ(run("!!true"), "true");
  EXPECT_EQ(run("!1"), "error: no such overload: !_(int)");
  EXPECT_EQ(run("true ? 1 : 2"), "1");
  EXPECT_EQ(run("false ? 1 : 2"), "2");
  EXPECT_EQ(run("true ? 1 : 1 / 0"), "1");  // the branch not taken is not evaluated
  EXPECT_EQ(run("false ? 1 : 1 / 0"), "error: division by zero");
  EXPECT_EQ(run("1 ? 2 : 3"), "error: no such overload: _?_:_(int)");
  EXPECT_EQ(run("1 / 0 == 1 ? 2 : 3"), "error: division by zero");
}

// cel-spec langdef.md "Logical Operators": && and || are commutative over errors: an error on one
// side is absorbed when the other side decides the result.
TEST(CelOperators, LogicalTruthTablesWithErrors) {
  const std::string E = "(1 / 0 == 1)";
  const std::string E2 = "(1 % 0 == 1)";
  EXPECT_EQ(run("true && true"), "true");
  EXPECT_EQ(run("true && false"), "false");
  EXPECT_EQ(run("false && true"), "false");
  EXPECT_EQ(run("false && false"), "false");
  EXPECT_EQ(run("false && " + E), "false");
  EXPECT_EQ(run(E + " && false"), "false");
  EXPECT_EQ(run("true && " + E), "error: division by zero");
  EXPECT_EQ(run(E + " && true"), "error: division by zero");
  EXPECT_EQ(run(E + " && " + E2), "error: division by zero");  // the left error first

  EXPECT_EQ(run("true || true"), "true");
  EXPECT_EQ(run("true || false"), "true");
  EXPECT_EQ(run("false || true"), "true");
  EXPECT_EQ(run("false || false"), "false");
  EXPECT_EQ(run("true || " + E), "true");
  EXPECT_EQ(run(E + " || true"), "true");
  EXPECT_EQ(run("false || " + E), "error: division by zero");
  EXPECT_EQ(run(E + " || false"), "error: division by zero");
  EXPECT_EQ(run(E2 + " || " + E), "error: modulus by zero");

  // A non-bool operand: absorbed like an error when the other side decides, else no overload.
  EXPECT_EQ(run("false && 1"), "false");
  EXPECT_EQ(run("true && 1"), "error: no such overload: _&&_(bool, int)");
  EXPECT_EQ(run("1 || true"), "true");
  // A missing attribute in a DRA selector behaves the same.
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].profile == "1g.10gb" || device.attributes["gpu.nvidia.com"].type == "gpu")"), "true");
  EXPECT_EQ(run(R"(device.attributes["gpu.nvidia.com"].profile == "1g.10gb" && device.driver == "other")"), "false");
  // Long chains (balanced as cel-go balances them).
  EXPECT_EQ(run("false || false || false || false || false || true"), "true");
  EXPECT_EQ(run("true && true && true && true && " + E + " && false"), "false");
}

TEST(CelOperators, InIndexSelect) {
  EXPECT_EQ(run("2 in [1, 2]"), "true");
  EXPECT_EQ(run("3 in [1, 2]"), "false");
  EXPECT_EQ(run("2.0 in [1, 2]"), "true");
  EXPECT_EQ(run(R"("a" in {"a": 1})"), "true");
  EXPECT_EQ(run(R"("b" in {"a": 1})"), "false");
  EXPECT_EQ(run("3 in 5"), "error: no such overload: @in(int, int)");
  EXPECT_EQ(run("[1, 2][1]"), "2");
  EXPECT_EQ(run("[1, 2][1u]"), "2");
  EXPECT_EQ(run("[1, 2][2]"), "error: index '2' out of range in list size '2'");
  EXPECT_EQ(run("[1, 2][-1]"), "error: index '-1' out of range in list size '2'");
  EXPECT_EQ(run(R"({"a": 1}["b"])"), "error: no such key: b");
  EXPECT_EQ(run(R"({"a": {"b": 1}}.a.b)"), "1");
  EXPECT_EQ(run(R"({1: "x"}[1u])"), R"("x")");
  EXPECT_EQ(run(R"({"a": 1, "a": 2})"), "error: Failed with repeated key");
  EXPECT_EQ(run(R"({1: 1, 1u: 2})"), "error: Failed with repeated key");
  EXPECT_EQ(run("{1.5: 1}"), "error: unsupported map key type: double");
  EXPECT_EQ(run(R"("a".b)"), "error: no such overload: field selection '.b' on string");
  EXPECT_EQ(run(R"(has({"a": 1}.a))"), "true");
  EXPECT_EQ(run(R"(has({"a": 1}.b))"), "false");
  EXPECT_EQ(run(R"({"a": 1}.`a`)"), "1");  // escaped field name (cel-go)
}

TEST(CelFunctions, SizeStringsConversions) {
  EXPECT_EQ(run(R"(size("héllo"))"), "5");  // code points, not bytes
  EXPECT_EQ(run(R"("héllo".size())"), "5");
  EXPECT_EQ(run(R"(size(b"h\xc3\xa9"))"), "3");
  EXPECT_EQ(run("size([1, 2, 3])"), "3");
  EXPECT_EQ(run("size({})"), "0");
  EXPECT_EQ(run("size(1)"), "error: no such overload: size(int)");
  EXPECT_EQ(run(R"("NVIDIA H100".startsWith("NVIDIA"))"), "true");
  EXPECT_EQ(run(R"("NVIDIA H100".startsWith("H100"))"), "false");
  EXPECT_EQ(run(R"("NVIDIA H100".endsWith("H100"))"), "true");
  EXPECT_EQ(run(R"("NVIDIA H100".contains("A H"))"), "true");
  EXPECT_EQ(run(R"("NVIDIA H100".contains("a h"))"), "false");
  EXPECT_EQ(run(R"("".endsWith(""))"), "true");
  EXPECT_EQ(run(R"("NVIDIA H100".lowerAscii())"), R"("nvidia h100")");
  EXPECT_EQ(run(R"("Àb".upperAscii())"), R"("ÀB")");
  EXPECT_EQ(run(R"(1.startsWith("1"))"), "error: no such overload: startsWith(int, string)");
  EXPECT_EQ(run("int(3.9)"), "3");
  EXPECT_EQ(run("int(-3.9)"), "-3");
  EXPECT_EQ(run("int(42u)"), "42");
  EXPECT_EQ(run(R"(int("42"))"), "42");
  EXPECT_EQ(run(R"(int("-42"))"), "-42");
  EXPECT_EQ(run(R"(int("4x"))"), R"(error: strconv.ParseInt: parsing "4x": invalid syntax)");
  EXPECT_EQ(run("int(9.3e18)"), "error: integer overflow");
  EXPECT_EQ(run("int(18446744073709551615u)"), "error: integer overflow");
  EXPECT_EQ(run("uint(-1)"), "error: unsigned integer overflow");
  EXPECT_EQ(run("uint(7)"), "7u");
  EXPECT_EQ(run(R"(uint("18446744073709551616"))"), R"(error: strconv.ParseUint: parsing "18446744073709551616": value out of range)");
  EXPECT_EQ(run(R"(double("1.5"))"), "1.5");
  EXPECT_EQ(run("double(2)"), "2.0");
  EXPECT_EQ(run(R"(double(" 1"))"), R"(error: strconv.ParseFloat: parsing " 1": invalid syntax)");
  // string(double) prints like Go's %g (cel-go Double.ConvertToType).
  EXPECT_EQ(run("string(1.5)"), R"("1.5")");
  EXPECT_EQ(run("string(1e6)"), R"("1e+06")");
  EXPECT_EQ(run("string(123456.0)"), R"("123456")");
  EXPECT_EQ(run("string(1234567.0)"), R"("1.234567e+06")");
  EXPECT_EQ(run("string(0.0001)"), R"("0.0001")");
  EXPECT_EQ(run("string(0.00001)"), R"("1e-05")");
  EXPECT_EQ(run("string(-2.0)"), R"("-2")");
  EXPECT_EQ(run("string(true) + string(2u) + string(-3)"), R"("true2-3")");
  EXPECT_EQ(run(R"(string(b"\xff"))"), "error: invalid UTF-8 in bytes, cannot convert to string");
  EXPECT_EQ(run(R"(bool("true") && !bool("0"))"), "true");
  EXPECT_EQ(run(R"(bool("yes"))"), "error: type conversion error from 'string' to 'bool'");
  EXPECT_EQ(run(R"(bytes("é"))"), R"(b"\xc3\xa9")");
}

TEST(CelLiterals, NumbersStringsBytes) {
  EXPECT_EQ(run("0x1F"), "31");
  EXPECT_EQ(run("0x1Fu"), "31u");
  EXPECT_EQ(run("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(run("1e3"), "1000.0");
  EXPECT_EQ(run(".5"), "0.5");
  EXPECT_EQ(run(R"("\x41\101\u0041\U00000041")"), R"("AAAA")");
  EXPECT_EQ(run(R"("\a\b\f\n\r\t\v\\\"\'\`\?" == "\x07\x08\x0c\x0a\x0d\x09\x0b\x5c\x22\x27\x60\x3f")"), "true");
  EXPECT_EQ(run(R"(r"\n")"), R"("\\n")");
  EXPECT_EQ(run(R"('''a"b''')"), R"("a\"b")");
  EXPECT_EQ(run(R"("""two
lines""")"), R"("two\x0alines")");
  EXPECT_EQ(run(R"(b"\xff\377")"), R"(b"\xff\xff")");
  EXPECT_EQ(run(R"("\xff")"), R"("ÿ")");  // in a string, \xff is the code point U+00FF
  EXPECT_EQ(run("null"), "null");
  EXPECT_EQ(run("[1, 'a', 2.5, true, null]"), R"([1, "a", 2.5, true, null])");
  EXPECT_EQ(run("// a comment\n1"), "1");
}

TEST(CelMacros, AllExistsMapFilter) {
  EXPECT_EQ(run("[1, 2, 3].all(x, x > 0)"), "true");
  EXPECT_EQ(run("[1, 2, 3].all(x, x > 1)"), "false");
  EXPECT_EQ(run("[].all(x, x > 1)"), "true");
  EXPECT_EQ(run("[1, 2, 3].exists(x, x > 2)"), "true");
  EXPECT_EQ(run("[1, 2, 3].exists(x, x > 3)"), "false");
  EXPECT_EQ(run("[1, 2, 3].exists_one(x, x > 2)"), "true");
  EXPECT_EQ(run("[1, 2, 3].exists_one(x, x > 1)"), "false");
  // Errors inside: absorbed when another element decides, as && and || absorb them.
  EXPECT_EQ(run("[0, 1].all(x, 1 / x > 5)"), "false");
  EXPECT_EQ(run("[1, 0].all(x, 1 / x > 0)"), "error: division by zero");
  EXPECT_EQ(run("[0, 1].exists(x, 1 / x == 1)"), "true");
  EXPECT_EQ(run("[0, 2].exists(x, 1 / x == 1)"), "error: division by zero");
  EXPECT_EQ(run("[0, 1].exists_one(x, 1 / x == 1)"), "error: division by zero");
  EXPECT_EQ(run("[1, 2].map(x, x * 10)"), "[10, 20]");
  EXPECT_EQ(run("[1, 2, 3].map(x, x > 1, x * 10)"), "[20, 30]");
  EXPECT_EQ(run("[1, 2, 3].filter(x, x % 2 == 1)"), "[1, 3]");
  EXPECT_EQ(run(R"({"a": 1, "b": 2}.map(k, k))"), R"(["a", "b"])");  // macros range over a map's keys
  EXPECT_EQ(run(R"({"a": 1, "b": 2}.all(k, k.size() == 1))"), "true");
  EXPECT_EQ(run("[[1, 2], [3]].all(l, l.all(x, x > 0))"), "true");
  EXPECT_EQ(run("1.all(x, true)"), "error: no such overload: comprehension over int");
}

// Kubernetes' quantity library: the examples of k8s.io/apiserver/pkg/cel/library/quantity.go.
TEST(CelQuantity, KubernetesExamples) {
  EXPECT_EQ(run(R"(quantity("200M").compareTo(quantity("0.2G")))"), "0");
  EXPECT_EQ(run(R"(quantity("50M").compareTo(quantity("50Mi")))"), "-1");
  EXPECT_EQ(run(R"(quantity("50Mi").compareTo(quantity("50M")))"), "1");
  EXPECT_EQ(run(R"(quantity("150Mi").isGreaterThan(quantity("100Mi")))"), "true");
  EXPECT_EQ(run(R"(quantity("50Mi").isGreaterThan(quantity("100Mi")))"), "false");
  EXPECT_EQ(run(R"(quantity("50M").isLessThan(quantity("100M")))"), "true");
  EXPECT_EQ(run(R"(quantity("100M").isLessThan(quantity("50M")))"), "false");
  EXPECT_EQ(run(R"(quantity("50k").add(quantity("20k")) == quantity("70k"))"), "true");
  EXPECT_EQ(run(R"(quantity("50k").add(20) == quantity("50020"))"), "true");
  EXPECT_EQ(run(R"(quantity("50k").sub(quantity("20k")) == quantity("30k"))"), "true");
  EXPECT_EQ(run(R"(quantity("50k").sub(20000) == quantity("30k"))"), "true");
  EXPECT_EQ(run(R"(quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20"))"), "true");
  EXPECT_EQ(run(R"(quantity("50k").asInteger())"), "50000");
  EXPECT_EQ(run(R"(quantity("50000000G").isInteger())"), "true");
  EXPECT_EQ(run(R"(quantity("50k").sub(20000).asApproximateFloat())"), "30000.0");
  EXPECT_EQ(run(R"(quantity("1.5").isInteger())"), "false");
  EXPECT_EQ(run(R"(quantity("1.5").asInteger())"), "error: cannot convert value to integer");
  EXPECT_EQ(run(R"(quantity("500m").asApproximateFloat())"), "0.5");
  EXPECT_EQ(run(R"(quantity("-5").sign())"), "-1");
  EXPECT_EQ(run(R"(sign(quantity("0")))"), "0");
  EXPECT_EQ(run(R"(quantity("1Gi") == quantity("1073741824"))"), "true");
  EXPECT_EQ(run(R"(quantity("1.5").add(quantity("-2.25")))"), R"(quantity("-0.75"))");
  EXPECT_EQ(run(R"(isQuantity("1.3Gi") && isQuantity("10000k") && !isQuantity("200K") && !isQuantity("Mi"))"), "true");
  EXPECT_EQ(run(R"(quantity("200K"))"),
            "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  EXPECT_EQ(run(R"(quantity("4Ei").add(quantity("4Ei")))"), "error: quantity overflow: the result exceeds 2^63-1 base units");
  EXPECT_EQ(run(R"(quantity("1").add(1.5))"), "error: no such overload: add(kubernetes.Quantity, double)");
  EXPECT_EQ(run(R"(quantity("1") < quantity("2"))"), "error: no such overload: _<_(kubernetes.Quantity, kubernetes.Quantity)");
  EXPECT_EQ(run(R"(quantity(1))"), "error: no such overload: quantity(int)");
}

// Kubernetes' semver library (semverlib.go examples) and semver.org 2.0.0 precedence (blang/semver).
TEST(CelSemver, KubernetesExamplesAndPrecedence) {
  EXPECT_EQ(run(R"(semver("1.2.3").major())"), "1");
  EXPECT_EQ(run(R"(semver("1.2.3").minor())"), "2");
  EXPECT_EQ(run(R"(semver("1.2.3").patch())"), "3");
  EXPECT_EQ(run(R"(semver("1.2.3").compareTo(semver("1.2.3")))"), "0");
  EXPECT_EQ(run(R"(semver("1.2.3").compareTo(semver("2.0.0")))"), "-1");
  EXPECT_EQ(run(R"(semver("1.2.3").compareTo(semver("0.1.2")))"), "1");
  EXPECT_EQ(run(R"(semver("1.10.0").isGreaterThan(semver("1.9.9")))"), "true");  // numeric, not text
  // semver.org: 1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < 1.0.0-beta < 1.0.0-beta.2 <
  // 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0.
  const std::vector<std::string> order = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                                          "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"};
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    EXPECT_EQ(run("semver('" + order[i] + "').isLessThan(semver('" + order[i + 1] + "'))"), "true") << order[i];
    EXPECT_EQ(run("semver('" + order[i + 1] + "').compareTo(semver('" + order[i] + "'))"), "1") << order[i];
  }
  EXPECT_EQ(run(R"(semver("1.0.0+build.1") == semver("1.0.0+build.2"))"), "true");  // build metadata ignored
  EXPECT_EQ(run(R"(isSemver("1.0.0") && !isSemver("hello") && !isSemver("v1.0") && !isSemver("1.0"))"), "true");
  EXPECT_EQ(run(R"(semver("1.0"))"), "error: No Major.Minor.Patch elements found");
  EXPECT_EQ(run(R"(semver("01.2.3"))"), R"(error: Major number must not contain leading zeroes "01")");
  EXPECT_EQ(run(R"(semver("v1.0.0"))"), R"(error: Invalid character(s) found in major number "v1")");
  EXPECT_EQ(run(R"(semver("1.0.0-01"))"), R"(error: Numeric PreRelease version must not contain leading zeroes "01")");
  EXPECT_EQ(run(R"(semver("1.0.0").compareTo(quantity("1")))"),
            "error: no such overload: compareTo(kubernetes.Semver, kubernetes.Quantity)");
}

TEST(CelSemver, ParseAndCompareDirectly) {
  const Semver v = Semver::parse("550.54.15-rc.1+abc.2");
  EXPECT_EQ(v.major, 550u);
  EXPECT_EQ(v.minor, 54u);
  EXPECT_EQ(v.patch, 15u);
  EXPECT_EQ(v.pre_release, (std::vector<std::string>{"rc", "1"}));
  EXPECT_EQ(v.build, (std::vector<std::string>{"abc", "2"}));
  EXPECT_EQ(v.to_string(), "550.54.15-rc.1+abc.2");
  EXPECT_EQ(v.compare(Semver::parse("550.54.15")), -1);
  EXPECT_THROW(Semver::parse(""), std::invalid_argument);
  EXPECT_THROW(Semver::parse("1.2.3-"), std::invalid_argument);
  EXPECT_THROW(Semver::parse("1.2.3+"), std::invalid_argument);
  EXPECT_THROW(Semver::parse("1.2.18446744073709551616"), std::invalid_argument);
}

TEST(CelCompile, SyntaxErrorsCarryColumns) {
  EXPECT_EQ(compile_error("1 +"), "4 syntax");                   // end of input after '+' at column 3
  EXPECT_EQ(compile_error(R"(device.driver = "x")"), "15 syntax");  // '=' is no token
  EXPECT_EQ(compile_error("(1 + 2"), "7 syntax");
  EXPECT_EQ(compile_error(""), "1 syntax");
  EXPECT_EQ(compile_error("[1, 2"), "6 syntax");
  EXPECT_EQ(compile_error("9223372036854775808"), "1 syntax");  // int literal out of range
  EXPECT_EQ(compile_message("9223372036854775808"), "invalid int literal");
  EXPECT_EQ(compile_error(R"("\uD800")"), "1 syntax");
  EXPECT_EQ(compile_message(R"("\uD800")"), "invalid unicode code point");
  EXPECT_EQ(compile_error(R"(b"\u0041")"), "1 syntax");  // \u in bytes
  EXPECT_EQ(compile_error("1e999"), "1 syntax");
  EXPECT_EQ(compile_error("\"\xff\""), "2 syntax");        // invalid UTF-8
  EXPECT_EQ(compile_error("\"é\" == ?"), "8 syntax");      // columns count characters, not bytes
  EXPECT_EQ(compile_error("if == 1"), "1 syntax");
  EXPECT_EQ(compile_message("if == 1"), "reserved identifier: if");
}

// A selector written as a YAML block scalar spans lines: the error names the line within the
// expression and the column within that line.
TEST(CelCompile, MultiLineExpressionsGiveLineAndColumn) {
  const std::string expression = "device.driver == \"gpu.nvidia.com\" &&\n  device.attributes[\"gpu.nvidia.com\"].name.matches(\"H100\")";
  try {
    Program::compile(expression, {"device"});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 44);  // after 2 spaces, device.attributes (17), ["gpu.nvidia.com"] (18), .name (5) and "."
    EXPECT_EQ(e.construct(), "method matches");
    EXPECT_EQ(std::string(e.what()).substr(0, 22), "2:44: method matches: ");
  }
  try {
    Program::compile("true &&\n\n  1 +", {"device"});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 6);  // end of input after "  1 +"
    EXPECT_EQ(e.construct(), "syntax");
  }
  try {
    Program::compile(std::string(20000, ' '), {"device"});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 0);  // a limit on the whole expression has no position
    EXPECT_EQ(e.column(), 0);
  }
}

TEST(CelCompile, UnsupportedConstructsAreNamed) {
  EXPECT_EQ(compile_error(R"("a".matches("a"))"), "5 method matches");
  EXPECT_EQ(compile_error(R"(matches("a", "b"))"), "1 function matches");
  EXPECT_EQ(compile_error("[1].sortBy(x, x)"), "5 method sortBy");
  EXPECT_EQ(compile_error(R"(device.attributes["gpu.nvidia.com"].productName.split(" "))"), "49 method split");
  EXPECT_EQ(compile_error("[1].exists_one(x)"), "5 method exists_one");
  EXPECT_EQ(compile_message("[1].exists_one(x)"),
            "macro 'exists_one' called with the wrong arguments; supported functions: docs/cel.md");
  EXPECT_EQ(compile_error("size(1, 2)"), "1 function size");
  EXPECT_EQ(compile_error(R"("a".startsWith())"), "5 method startsWith");
  EXPECT_EQ(compile_error(R"(quantity("1").mul(2))"), "15 method mul");
  EXPECT_EQ(compile_error(R"(semver("1.0", true))"), "1 function semver");
  EXPECT_EQ(compile_error("device.?driver"), "8 optional syntax");
  EXPECT_EQ(compile_error("[?device]"), "2 optional syntax");
  EXPECT_EQ(compile_error("Foo{a: 1}"), "4 message construction");
  EXPECT_EQ(compile_error("has(1)"), "1 macro has");
  EXPECT_EQ(compile_error("[1].all(1, true)"), "5 syntax");
  EXPECT_EQ(compile_error("cel.other(1)"), "1 identifier cel");  // only cel.bind is known
  EXPECT_EQ(compile_error("type(1) == int"), "1 function type");
  EXPECT_EQ(compile_error("duration('1s')"), "1 function duration");
}

TEST(CelCompile, UndeclaredIdentifiers) {
  EXPECT_EQ(compile_error("foo == 1"), "1 identifier foo");
  EXPECT_EQ(compile_message("foo == 1"), "undeclared reference to 'foo' (in container '')");
  EXPECT_EQ(compile_error("device.driver == 'x' && bar"), "25 identifier bar");
  EXPECT_EQ(compile_error("[1].all(x, x > 0) && x > 0"), "22 identifier x");  // x is local to the macro
  EXPECT_EQ(compile_error("cel.bind(y, 1, y) + y"), "21 identifier y");
  EXPECT_EQ(compile_error("cel == 1"), "1 identifier cel");
  EXPECT_EQ(compile_error("[1].all(x, x > 0)"), "compiled");
  EXPECT_EQ(compile_error(".device.driver == 'x'"), "compiled");  // leading dot: the root namespace
  // A variable compiled but not bound is a runtime error.
  const Program p = Program::compile("device.driver", {"device"});
  const Program::Result r = p.evaluate({});
  EXPECT_FALSE(r.value.has_value());
  EXPECT_EQ(r.error, "no such attribute(s): device");
  EXPECT_EQ(p.source(), "device.driver");
}

TEST(CelLimits, ExpressionBytes) {
  // A string literal filling exactly 10 KiB compiles; one byte more does not.
  const std::string at_limit = "'" + std::string(10 * 1024 - 2, 'a') + "'";
  EXPECT_EQ(compile_error(at_limit), "compiled");
  EXPECT_EQ(compile_error(at_limit + " "), "0 limit max_expression_bytes");
  Limits small;
  small.max_expression_bytes = 5;
  EXPECT_EQ(compile_error("1 + 2", small), "compiled");
  EXPECT_EQ(compile_error("1 + 23", small), "0 limit max_expression_bytes");
}

TEST(CelLimits, NestingDepth) {
  auto nested = [](int n) { return std::string(static_cast<size_t>(n), '(') + "1" + std::string(static_cast<size_t>(n), ')'); };
  EXPECT_EQ(run(nested(250)), "1");
  EXPECT_EQ(compile_error(nested(251)), "251 limit max_depth");  // refused at the 251st '(' before parsing
  EXPECT_EQ(compile_error(std::string(5000, '[')), "251 limit max_depth");
  // A left-deep chain: 1 + 1 + ... nests one node per operator.
  auto chain = [](int n) {
    std::string s = "1";
    for (int i = 1; i < n; ++i) s += "+1";
    return s;
  };
  EXPECT_EQ(run(chain(200)), "200");
  EXPECT_EQ(compile_error(chain(300)).substr(compile_error(chain(300)).find(' ') + 1), "limit max_depth");
  // Member chains too: a.b.c... 5000 deep is refused, not a stack overflow.
  std::string members = "device";
  for (int i = 0; i < 5000 && members.size() < 10000; ++i) members += ".a";
  EXPECT_EQ(compile_error(members).substr(compile_error(members).find(' ') + 1), "limit max_depth");
  // 300 conditions joined by || are balanced (depth 9) and compile.
  std::string ors = "false";
  for (int i = 0; i < 300; ++i) ors += " || false";
  EXPECT_EQ(run(ors + " || true"), "true");
}

TEST(CelLimits, CostBoundsEvaluation) {
  // 100 x 100 x 100 iterations exceed 1,000,000 steps.
  std::string hundred = "[";
  for (int i = 0; i < 100; ++i) hundred += (i ? "," : "") + std::to_string(i);
  hundred += "]";
  const std::string cube = hundred + ".all(x, " + hundred + ".all(y, " + hundred + ".all(z, z >= 0)))";
  EXPECT_EQ(run(cube), "error: operation cancelled: actual cost limit exceeded");
  // ... and the error is not absorbed by || true: the evaluation stops.
  EXPECT_EQ(run(cube + " || true"), "error: operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(run(hundred + ".all(x, " + hundred + ".all(y, y >= 0))"), "true");  // 10,000 iterations fit
  // Doubling a string 40 times would need 10 TiB: stopped after about 10 MB.
  std::string doubling = "'aaaaaaaaaa'";
  for (int i = 0; i < 40; ++i) doubling = "cel.bind(s" + std::to_string(i) + ", " + doubling + ", s" + std::to_string(i) + " + s" + std::to_string(i) + ")";
  EXPECT_EQ(run("size(" + doubling + ") > 0"), "error: operation cancelled: actual cost limit exceeded");
  Limits tight;
  tight.max_cost = 10;
  EXPECT_EQ(run("1 + 1", h100(), tight), "2");
  EXPECT_EQ(run("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, x)", h100(), tight),
            "error: operation cancelled: actual cost limit exceeded");
  // Comparing nested lists costs their elements: 1,000 comparisons of 10,000 elements exceed the limit.
  const std::string big = "cel.bind(l, " + hundred + ".map(x, " + hundred + "), ";
  EXPECT_EQ(run(big + hundred + ".map(i, l).size() == 100)"), "true");
  EXPECT_EQ(run(big + "[" + hundred + ", " + hundred + "].all(a, " + hundred + ".all(i, l == l)))"),
            "error: operation cancelled: actual cost limit exceeded");
}

// The result type the expression alone decides (cel-go's checker gives these types; "" = dyn, it
// depends on what `device` holds).
TEST(CelResultType, KnownWithoutTheVariables) {
  const auto type = [](const std::string& e) { return Program::compile(e, {"device"}).result_type(); };
  EXPECT_EQ(type("1"), "int");
  EXPECT_EQ(type("'a' + 'b'"), "string");
  EXPECT_EQ(type("device.driver == 'x'"), "bool");
  EXPECT_EQ(type("device.driver.startsWith('x') && true"), "bool");
  EXPECT_EQ(type("quantity('1Gi').compareTo(quantity('2Gi'))"), "int");
  EXPECT_EQ(type("quantity('1Gi')"), "kubernetes.Quantity");
  EXPECT_EQ(type("[1, 2].exists(x, x > 1)"), "bool");
  EXPECT_EQ(type("[1, 2].map(x, x * 2)"), "list");
  EXPECT_EQ(type("device.driver"), "");
  EXPECT_EQ(type("device.attributes['a'].b"), "");
  EXPECT_EQ(type("true ? 1 : 'a'"), "");
  EXPECT_EQ(type("true ? 1 : 2"), "int");
}

TEST(CelValue, EqualityAndMaps) {
  EXPECT_TRUE(Value::integer(1) == Value::uinteger(1));
  EXPECT_TRUE(Value::integer(1) == Value::real(1.0));
  EXPECT_FALSE(Value::integer(-1) == Value::uinteger(18446744073709551615u));
  EXPECT_FALSE(Value::real(0.5) == Value::integer(0));
  EXPECT_FALSE(Value::string("1") == Value::integer(1));
  EXPECT_FALSE(Value::string("a") == Value::bytes("a"));
  EXPECT_TRUE(Value::quantity(Quantity::parse("1k")) == Value::quantity(Quantity::parse("1000")));
  EXPECT_THROW(Value::map({{Value::integer(1), Value::null()}, {Value::uinteger(1), Value::null()}}), std::invalid_argument);
  EXPECT_THROW(Value::map({{Value::real(1), Value::null()}}), std::invalid_argument);
  const Value m = Value::map({{Value::string("a"), Value::integer(1)}});
  ASSERT_NE(m.find(Value::string("a")), nullptr);
  EXPECT_EQ(m.find(Value::string("a"))->as_int(), 1);
  EXPECT_EQ(m.find(Value::string("b")), nullptr);
  EXPECT_EQ(m.missing_key_default(), nullptr);
  EXPECT_THROW((void)m.as_int(), std::logic_error);
  EXPECT_EQ(m.type_name(), "map");
  EXPECT_EQ(Value::semver(Semver::parse("1.2.3")).debug_string(), R"(semver("1.2.3"))");
}

}  // namespace
}  // namespace gpufleet::cel
