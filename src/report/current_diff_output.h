// Writers of the plan's diff against the current cluster (plan/current_diff.h, `plan --current`): a
// section of the summary on stdout, the plain markdown table of --diff-out that a reviewer reads, and
// the "current_diff" key of --json.
#pragma once

#include <string>

#include "plan/current_diff.h"

namespace gpufleet::io {

/// The summary's section: a line naming the file and its node count, the table (kind, instance type,
/// zone, capacity, current nodes, committed, plan min, max, committed; "-" where the plan has no pool)
/// and, when the current cluster is priced, the hourly costs.
std::string current_diff_text(const plan::CurrentDiff& diff);

/// --diff-out: a markdown page: what was compared (the file, the plan's label), the same table as
/// a markdown table, the hourly costs, what each kind means, and the warnings.
std::string current_diff_markdown(const plan::CurrentDiff& diff, const std::string& plan_label);

/// `json` (an object, as plan_json writes it) with "current_diff": {"source", "nodes", "unlabelled":
/// [names], "warnings": [...], "current_usd_per_hour" (null when unpriced), "plan_mean_usd_per_hour",
/// "rows": [{"kind", "instance_type", "zone", "capacity_type", "current_nodes", "current_committed",
/// "plan": {"min", "max", "committed"} | null}]}; `diff` null gives "current_diff": null (no plan).
std::string with_current_diff_json(const std::string& json, const plan::CurrentDiff* diff);

}  // namespace gpufleet::io
