// libFuzzer target: CEL expressions as Kubernetes DRA device selectors (gpufleet::cel::Program,
// src/cel/cel.h): the parser ANTLR generates from CEL's grammar, the checks, and the evaluator run
// against a fixed `device` (an NVIDIA GPU as the dra-driver-gpu publishes it). Build and run:
// scripts/fuzz (fuzz/CMakeLists.txt).
//
// cel::CompileError is compile()'s documented rejection and is swallowed; evaluate() never throws.
// Anything else is a finding, and so is a broken invariant checked below:
//  - a CompileError's column lies within the expression (0 = unknown, else 1 .. characters + 1);
//  - evaluate() returns exactly one of a value and an error, and the same answer twice (deterministic);
//  - an expression over the limit of Limits::max_expression_bytes never compiles.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cel/cel.h"
#include "fuzz_support.h"

using gpufleet::Quantity;
using gpufleet::cel::CompileError;
using gpufleet::cel::Program;
using gpufleet::cel::Semver;
using gpufleet::cel::Value;
using gpufleet::fuzz::invariant_failed;

namespace {

Value str(const char* s) { return Value::string(s); }

const Value& device() {
  static const Value d = [] {
    Value::Entries nvidia = {
        {str("productName"), str("NVIDIA H100 80GB HBM3")},
        {str("architecture"), str("Hopper")},
        {str("brand"), str("Nvidia")},
        {str("cudaComputeCapability"), Value::semver(Semver::parse("9.0.0"))},
        {str("driverVersion"), Value::semver(Semver::parse("550.54.15"))},
        {str("cudaDriverVersion"), Value::semver(Semver::parse("12.4.0"))},
        {str("index"), Value::integer(0)},
        {str("minor"), Value::integer(0)},
        {str("uuid"), str("GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c")},
        {str("type"), str("gpu")},
        {str("profile"), str("1g.10gb")},
        {str("mig"), Value::boolean(false)},
    };
    Value::Entries capacity = {
        {str("memory"), Value::quantity(Quantity::parse("80Gi"))},
        {str("multiprocessors"), Value::quantity(Quantity::parse("132"))},
    };
    return Value::map({
        {str("driver"), str("gpu.nvidia.com")},
        {str("attributes"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(nvidia)}}, Value::map({}))},
        {str("capacity"), Value::map_with_default({{str("gpu.nvidia.com"), Value::map(capacity)}}, Value::map({}))},
    });
  }();
  return d;
}

size_t characters(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = gpufleet::fuzz::as_text(data, size);
  std::optional<Program> program;
  try {
    program = Program::compile(text, {"device"});
  } catch (const CompileError& e) {
    if (e.column() < 0 || static_cast<size_t>(e.column()) > characters(text) + 1)
      invariant_failed("CompileError column outside the expression");
    return 0;
  }
  if (text.size() > gpufleet::cel::Limits{}.max_expression_bytes) invariant_failed("an expression over the limit compiled");
  const std::vector<std::pair<std::string, Value>> bindings = {{"device", device()}};
  const Program::Result first = program->evaluate(bindings);
  if (first.value.has_value() == !first.error.empty()) invariant_failed("evaluate() gave both or neither of value and error");
  const Program::Result second = program->evaluate(bindings);
  if (first.error != second.error || first.value.has_value() != second.value.has_value() ||
      (first.value && first.value->debug_string() != second.value->debug_string()))
    invariant_failed("evaluate() is not deterministic");
  return 0;
}
