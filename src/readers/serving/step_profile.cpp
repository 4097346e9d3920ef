// The measured step-time table reader (step_profile.h).
#include "readers/serving/step_profile.h"

#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "readers/formats/csv_table.h"
#include "readers/formats/text_file.h"
#include "util/input_error.h"

namespace gpufleet::io {

std::vector<inference::StepProfileRow> parse_step_profile(std::string_view text, const std::string& source,
                                                           const StepProfileLimits& limits) {
  detail::CsvTable table(text, source);
  const size_t c_seqs = table.require("num_seqs");
  const size_t c_tokens = table.require("tokens");
  const size_t c_step = table.require("step_s");
  std::vector<inference::StepProfileRow> rows;
  std::map<std::pair<int64_t, int64_t>, int> seen;  // (num_seqs, tokens) -> line
  while (table.next_row()) {
    if (rows.size() >= limits.max_rows)
      table.fail_at(c_seqs, limit_message(limits.max_rows, "rows", "StepProfileLimits::max_rows"));
    inference::StepProfileRow r;
    r.num_seqs = static_cast<int32_t>(table.integer_at(c_seqs, 1, limits.max_num_seqs));
    r.tokens = static_cast<int32_t>(table.integer_at(c_tokens, 0, limits.max_tokens));
    double s = std::nan("");
    try {
      s = table.number_or_nan(c_step);
    } catch (const InputError&) {  // re-raised below with the cell's column
    }
    if (!(s > 0) || !(s <= limits.max_step_s))
      table.fail_at(c_step, fmt::format("'{}' is not a step time in (0, {}] seconds", table.text(c_step), limits.max_step_s));
    r.step_s = s;
    const auto [it, fresh] = seen.emplace(std::make_pair(int64_t{r.num_seqs}, int64_t{r.tokens}), table.line());
    if (!fresh)
      table.fail_at(c_tokens, fmt::format("num_seqs {} tokens {} is given twice (first at line {})", r.num_seqs, r.tokens, it->second));
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(source, table.line(), "", "the step profile has no rows");
  return rows;
}

std::vector<inference::StepProfileRow> read_step_profile(const std::string& path, const StepProfileLimits& limits) {
  return parse_step_profile(read_text_file(path, limits.max_file_bytes, "StepProfileLimits::max_file_bytes"), path, limits);
}

}  // namespace gpufleet::io
