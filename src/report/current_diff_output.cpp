#include "report/current_diff_output.h"

#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/text_table.h"

namespace gpufleet::io {

namespace {

std::vector<std::string> header() {
  return {"kind", "instance type", "zone", "capacity", "current nodes", "committed", "plan min", "plan max", "plan committed"};
}

std::vector<std::vector<std::string>> cells(const plan::CurrentDiff& diff) {
  std::vector<std::vector<std::string>> rows;
  for (const plan::DiffRow& r : diff.rows) {
    const auto plan_cell = [&](int32_t v) { return r.in_plan ? std::to_string(v) : std::string("-"); };
    rows.push_back({std::string(plan::diff_kind_name(r.kind)), r.instance_type, r.zone.empty() ? "(none)" : r.zone,
                    std::string(sim::capacity_type_name(r.capacity)), std::to_string(r.current_nodes), std::to_string(r.current_committed),
                    plan_cell(r.plan_min), plan_cell(r.plan_max), plan_cell(r.plan_committed)});
  }
  return rows;
}

std::string cost_line(const plan::CurrentDiff& diff) {
  if (!diff.current.usd_per_hour || !diff.plan_usd_per_hour) return "";
  return fmt::format("hourly cost: current cluster {:.2f} USD/h at its node counts, the plan {:.2f} USD/h (its mean: cost over the horizon / hours)",
                     *diff.current.usd_per_hour, *diff.plan_usd_per_hour);
}

std::string nodes_phrase(const plan::CurrentDiff& diff) {
  return fmt::format("{} node{} in {} group{}", diff.current.nodes, diff.current.nodes == 1 ? "" : "s", diff.current.groups.size(),
                     diff.current.groups.size() == 1 ? "" : "s");
}

}  // namespace

std::string current_diff_text(const plan::CurrentDiff& diff) {
  std::string s = fmt::format("current cluster: {}, {} (instance type, zone, capacity type), against the plan:\n", diff.current.source,
                              nodes_phrase(diff));
  s += aligned_table(header(), cells(diff), 4);
  if (!diff.current.unlabelled.empty())
    s += fmt::format("  not in the table: {} node{} without an instance type (warned on stderr)\n", diff.current.unlabelled.size(),
                     diff.current.unlabelled.size() == 1 ? "" : "s");
  if (const std::string c = cost_line(diff); !c.empty()) s += c + "\n";
  for (const std::string& n : diff.notes) s += "  note: " + n + "\n";
  return s;
}

std::string current_diff_markdown(const plan::CurrentDiff& diff, const std::string& plan_label) {
  std::string s = "# gpufleet plan: the current cluster against the plan\n\n";
  s += fmt::format("- current cluster: `{}`, {}\n", diff.current.source, nodes_phrase(diff));
  s += fmt::format("- plan: {}\n\n", plan_label);
  const std::vector<std::string> h = header();
  s += "|";
  for (const std::string& c : h) s += " " + c + " |";
  s += "\n|";
  for (size_t i = 0; i < h.size(); ++i) s += i < 4 ? "---|" : "---:|";
  s += "\n";
  for (const std::vector<std::string>& row : cells(diff)) {
    s += "|";
    for (const std::string& c : row) s += " " + c + " |";
    s += "\n";
  }
  s += "\n";
  if (const std::string c = cost_line(diff); !c.empty()) s += c + ".\n\n";
  s += "Kinds: **add** a pool the cluster does not have; **remove** a group the plan does not keep; **keep** the current nodes lie within "
       "the plan's min..max and the committed nodes are the same; **change** otherwise (resize to the bounds, or buy or end "
       "commitments). Committed nodes (reserved, capacity blocks) count as on-demand capacity.\n";
  if (!diff.notes.empty()) {
    s += "\nNotes:\n\n";
    for (const std::string& n : diff.notes) s += "- " + n + "\n";
  }
  if (!diff.current.warnings.empty()) {
    s += "\nWarnings:\n\n";
    for (const std::string& w : diff.current.warnings) s += "- " + w + "\n";
  }
  return s;
}

std::string with_current_diff_json(const std::string& json, const plan::CurrentDiff* diff) {
  nlohmann::json j = nlohmann::json::parse(json);
  if (diff == nullptr) {
    j["current_diff"] = nullptr;
    return j.dump(2) + "\n";
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const plan::DiffRow& r : diff->rows) {
    rows.push_back({{"kind", std::string(plan::diff_kind_name(r.kind))},
                    {"instance_type", r.instance_type},
                    {"zone", r.zone},
                    {"capacity_type", std::string(sim::capacity_type_name(r.capacity))},
                    {"current_nodes", r.current_nodes},
                    {"current_committed", r.current_committed},
                    {"plan", r.in_plan ? nlohmann::json{{"min", r.plan_min}, {"max", r.plan_max}, {"committed", r.plan_committed}}
                                       : nlohmann::json(nullptr)}});
  }
  j["current_diff"] = {{"source", diff->current.source},
                       {"nodes", diff->current.nodes},
                       {"unlabelled", diff->current.unlabelled},
                       {"warnings", diff->current.warnings},
                       {"notes", diff->notes},
                       {"current_usd_per_hour", diff->current.usd_per_hour ? nlohmann::json(*diff->current.usd_per_hour) : nlohmann::json(nullptr)},
                       {"plan_mean_usd_per_hour", diff->plan_usd_per_hour ? nlohmann::json(*diff->plan_usd_per_hour) : nlohmann::json(nullptr)},
                       {"rows", rows}};
  return j.dump(2) + "\n";
}

}  // namespace gpufleet::io
