#include "io/fgd_reference.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "io/text_file.h"
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

std::vector<ReferenceRun> read_fgd_reference(const std::string& path) {
  const std::string text = read_text_file(path);
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  std::vector<ReferenceRun> out;
  auto split = [](const std::string& s) {
    std::vector<std::string> f;
    std::string cur;
    for (char c : s) {
      if (c == ',') {
        f.push_back(cur);
        cur.clear();
      } else if (c != '\r') {
        cur += c;
      }
    }
    f.push_back(cur);
    return f;
  };
  auto number = [&](const std::string& s, const std::string& field) {
    if (s.empty()) return std::nan("");
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) throw InputError(path, line_no, field, fmt::format("'{}' is not a number", s));
    return v;
  };
  size_t first_curve = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto fields = split(line);
    if (header.empty()) {
      header = fields;
      if (header.size() < 5 || header[0] != "workload" || header[1] != "sc_policy" || header[2] != "tune" || header[3] != "seed")
        throw InputError(path, line_no, "", "expected header workload,sc_policy,tune,seed,...");
      for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == "0") first_curve = i;
      if (first_curve == 0) throw InputError(path, line_no, "0", "missing column");
      continue;
    }
    if (fields.size() != header.size())
      throw InputError(path, line_no, "", fmt::format("row has {} fields, header has {}", fields.size(), header.size()));
    ReferenceRun r;
    r.workload = fields[0];
    r.policy = policy_from_artifact_label(fields[1]);
    if (r.policy.empty()) r.policy = fields[1];
    r.tune = number(fields[2], "tune");
    r.seed = static_cast<int64_t>(number(fields[3], "seed"));
    for (size_t i = first_curve; i < fields.size(); ++i) r.curve.push_back(number(fields[i], header[i]));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpufleet::io
