#include "cli/command_checks.h"

#include <vector>

#include <fmt/format.h>

#include "sched/policy_registry.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

namespace gpufleet::cli {

void check_output_paths(std::initializer_list<std::pair<std::string_view, std::string_view>> outputs) {
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    if (const std::string why = output_path_problem(std::string(path)); !why.empty())
      throw UsageError(fmt::format("{} {}: cannot write there: {}", flag, path, why));
  }
}

std::string one_policy(std::string_view text, const std::string& error) {
  const std::vector<std::string> policies = sched::parse_policy_list(text);
  if (policies.size() != 1) throw UsageError(error);
  return policies.front();
}

}  // namespace gpufleet::cli
