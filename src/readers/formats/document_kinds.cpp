#include "readers/formats/document_kinds.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "util/input_error.h"

namespace gpufleet::io::detail {
namespace {

std::string scalar_at(const YamlNode& doc, std::string_view key) {
  const YamlNode* v = doc.find(key);
  return v != nullptr && v->type == YamlType::kScalar ? v->scalar : std::string();
}

// "a" or "an" before a kind's name.
const char* article(std::string_view word) {
  return !word.empty() && std::string_view("AEIOUaeiou").find(word[0]) != std::string_view::npos ? "an" : "a";
}

// gpufleet's own kinds and the option that reads each.
struct Reader {
  std::string_view kind, api_version, option;
};
constexpr Reader kReaders[] = {
    {"Workload", "sim.gpufleet.io/v1", "simulate --workload"},
    {"NodePoolSet", "gpufleet.io/v1", "simulate --pools (or place --cluster)"},
    {"Autoscaling", "sim.gpufleet.io/v1", "simulate --pools"},
    {"FaultSchedule", "sim.gpufleet.io/v1", "simulate --pools"},
    {"ServingCatalog", "gpufleet.io/v1", "--serving-catalog"},
};

}  // namespace

bool is_gpufleet_kind(std::string_view kind, std::string_view api_version) {
  for (const Reader& r : kReaders)
    if (r.kind == kind && r.api_version == api_version) return true;
  return false;
}

std::string kinds_held(const std::vector<YamlNode>& docs) {
  std::vector<std::pair<std::string, std::string>> order;  // (kind, apiVersion) in first appearance
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const YamlNode& doc : docs) {
    if (doc.type == YamlType::kNull) continue;
    std::pair<std::string, std::string> key{scalar_at(doc, "kind"), scalar_at(doc, "apiVersion")};
    if (counts[key]++ == 0) order.push_back(key);
  }
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& [kind, api] = order[i];
    const int n = counts[order[i]];
    if (i > 0) out += i + 1 == order.size() ? " and " : ", ";
    if (kind.empty()) out += n == 1 ? "a document without kind" : fmt::format("{} documents without kind", n);
    else if (n == 1) out += fmt::format("{} {}", article(kind), kind);
    else out += fmt::format("{} {} objects", n, kind);
    if (!api.empty()) out += fmt::format(" ({})", api);
  }
  return out;
}

void fail_without_kind(const std::string& file, const std::vector<YamlNode>& docs, std::string_view kind, std::string_view api_version) {
  const std::string held = kinds_held(docs);
  if (held.empty())
    throw InputError(file, 0, "kind", fmt::format("the file is empty: expected {} {} ({})", article(kind), kind, api_version));
  std::string hint;
  for (const YamlNode& doc : docs) {
    if (doc.type == YamlType::kNull) continue;
    const std::string first_kind = scalar_at(doc, "kind"), first_api = scalar_at(doc, "apiVersion");
    for (const Reader& r : kReaders)
      if (r.kind == first_kind && r.api_version == first_api && r.kind != kind)
        hint = fmt::format("; give it to {}", r.option);
    break;
  }
  throw InputError(file, 0, "kind", fmt::format("the file holds {}, not {} {} ({}){}", held, article(kind), kind, api_version, hint));
}

}  // namespace gpufleet::io::detail
