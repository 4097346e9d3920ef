#include "readers/traces/fgd_reference.h"

#include <limits>

#include "readers/formats/csv_table.h"
#include "readers/formats/text_file.h"
#include "util/input_error.h"

namespace gpufleet::io {

std::string policy_from_artifact_label(const std::string& label) {
  static const std::map<std::string, std::string> names = {{"01-Random", "random"},  {"02-DotProd", "dotprod"},
                                                           {"03-GpuClustering", "clustering"},
                                                           {"04-GpuPacking", "packing"}, {"05-BestFit", "bestfit"},
                                                           {"06-FGD", "fgd"}};
  auto it = names.find(label);
  return it == names.end() ? std::string() : it->second;
}

std::vector<pack::ReferenceRun> parse_fgd_reference(std::string_view text, const std::string& source) {
  detail::CsvTable t(text, source);
  const auto& header = t.header();
  if (header.size() < 5 || header[0] != "workload" || header[1] != "sc_policy" || header[2] != "tune" || header[3] != "seed")
    throw InputError(source, 1, "", "expected header workload,sc_policy,tune,seed,...");
  size_t first_curve = 0;
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == "0") first_curve = i;
  if (first_curve == 0) throw InputError(source, 1, "0", "missing column");
  std::vector<pack::ReferenceRun> out;
  while (t.next_row()) {
    pack::ReferenceRun r;
    r.workload = std::string(t.text(0));
    r.policy = policy_from_artifact_label(std::string(t.text(1)));
    if (r.policy.empty()) r.policy = std::string(t.text(1));
    r.tune = t.number_or_nan(2);
    r.seed = t.integer(3, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    for (size_t i = first_curve; i < header.size(); ++i) r.curve.push_back(t.number_or_nan(i));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<pack::ReferenceRun> read_fgd_reference(const std::string& path) { return parse_fgd_reference(read_csv_file(path), path); }

}  // namespace gpufleet::io
