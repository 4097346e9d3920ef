#include "cli/command_checks.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "readers/k8s/k8s_yaml.h"
#include "sched/policy_registry.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {

namespace {

namespace fs = std::filesystem;

// `p` made absolute, its existing part's symbolic links resolved, "." and ".." removed.
fs::path normalized(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(p, ec);
  if (ec) out = fs::absolute(p, ec).lexically_normal();
  if (ec) out = p.lexically_normal();
  return out;
}

// The same file: equivalent() when both exist, else equal normalized paths.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ea, eb;
  if (fs::exists(a, ea) && fs::exists(b, eb)) {
    std::error_code ec;
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  return normalized(a) == normalized(b);
}

}  // namespace

std::string seed_problem(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && v >= 0) return {};
  const size_t first = text.find_first_not_of(" \t");
  if (first != std::string_view::npos && text[first] == '-')
    return fmt::format("{} is negative (a seed is an integer from 0 to {})", text, kMaxSeed);
  return fmt::format("'{}' is not an integer from 0 to {}", text, kMaxSeed);
}

int64_t parse_seed(std::string_view text, std::string_view option) {
  if (const std::string why = seed_problem(text); !why.empty()) throw UsageError(fmt::format("{}: {}", option, why));
  int64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

void check_output_paths(std::initializer_list<PathArg> outputs, const std::vector<InputArg>& inputs) {
  std::vector<PathArg> asked;
  for (const PathArg& out : outputs) {
    const auto& [flag, path] = out;
    if (path.empty()) continue;
    if (const std::string why = output_path_problem(std::string(path)); !why.empty())
      throw UsageError(fmt::format("{} {}: cannot write there: {}", flag, path, why));
    asked.push_back(out);
  }
  for (size_t i = 0; i < asked.size(); ++i)
    for (size_t j = i + 1; j < asked.size(); ++j)
      if (same_file(fs::path(asked[i].second), fs::path(asked[j].second)))
        throw UsageError(fmt::format("{} {} and {} {} are the same file: give each output its own path", asked[i].first,
                                     asked[i].second, asked[j].first, asked[j].second));
  for (const auto& [flag, path] : asked) {
    const fs::path out(path);
    fs::path dir = out.parent_path();
    if (dir.empty()) dir = ".";
    for (const auto& [in_flag, in_path, reads_directory] : inputs) {
      if (in_path.empty()) continue;
      const fs::path in(in_path);
      std::error_code ec;
      if (fs::is_directory(in, ec)) {  // its reader fails on it unless reads_directory
        if (reads_directory && io::is_k8s_input_name(out.filename().string()) && same_file(dir, in))
          throw UsageError(fmt::format("{} {}: is in the {} directory {}, whose *.yaml, *.yml and *.json files are read as input",
                                       flag, path, in_flag, in_path));
      } else if (same_file(out, in)) {
        throw UsageError(fmt::format("{} {}: would overwrite the {} input {}", flag, path, in_flag, in_path));
      }
    }
  }
}

std::string one_policy(std::string_view text, std::string_view option, const std::string& error) {
  const std::vector<std::string> policies = sched::parse_policy_list(text, option);
  if (policies.size() != 1) throw UsageError(error);
  return policies.front();
}

FeatureGates parse_feature_gates(std::string_view text) {
  FeatureGates out;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    start = comma + 1;
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos)
      throw UsageError(fmt::format("--feature-gates: missing bool value for {} (expected Name=true or Name=false)", entry));
    const std::string name(entry.substr(0, eq));
    std::string value(entry.substr(eq + 1));
    for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (value != "true" && value != "false")
      throw UsageError(fmt::format("--feature-gates: invalid value of {}={}, err: expected true or false", name, entry.substr(eq + 1)));
    if (name == "DRAConsumableCapacity") out.dra_consumable_capacity = value == "true";
    else if (name == "DRADeviceTaints") {  // GA and locked on since Kubernetes 1.37: true is accepted and changes nothing
      if (value != "true") throw UsageError("--feature-gates: cannot set feature gate DRADeviceTaints to false, feature is locked to true");
    } else throw UsageError(fmt::format("--feature-gates: unrecognized feature gate: {} (gpufleet models DRAConsumableCapacity)", name));
  }
  return out;
}

}  // namespace gpufleet::cli
