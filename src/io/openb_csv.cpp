#include "io/openb_csv.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

// Splits one CSV line on commas (the openb files have no quoting). Strips a trailing '\r'.
void split_line(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Walks the lines of a CSV text with a header; gives named-column access with validation.
class CsvTable {
 public:
  CsvTable(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {
    if (text_.size() >= 3 && text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // UTF-8 BOM
    std::string_view header_line;
    if (!next_line(header_line)) throw InputError(source_, 1, "", "empty file: expected a CSV header");
    split_line(header_line, header_);
    for (auto& h : header_) h = trim(h);
    for (size_t i = 0; i < header_.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (!header_[i].empty() && header_[i] == header_[j])
          throw InputError(source_, 1, std::string(header_[i]), "column appears twice in the header");
  }

  // Index of a required column; throws naming the header line.
  size_t require(std::string_view name) const {
    for (size_t i = 0; i < header_.size(); ++i)
      if (header_[i] == name) return i;
    throw InputError(source_, 1, std::string(name), fmt::format("missing column (header has: {})", header_names()));
  }
  bool has(std::string_view name) const {
    for (auto h : header_)
      if (h == name) return true;
    return false;
  }

  // Advances to the next non-empty data row; false at the end.
  bool next_row() {
    std::string_view line;
    while (next_line(line)) {
      if (trim(line).empty() || trim(line) == "\r") continue;
      split_line(line, fields_);
      if (fields_.size() < header_.size())
        throw InputError(source_, line_no_, std::string(header_[fields_.size()]),
                         fmt::format("truncated row: {} of {} fields", fields_.size(), header_.size()));
      if (fields_.size() > header_.size())
        throw InputError(source_, line_no_, "", fmt::format("row has {} fields, header has {}", fields_.size(), header_.size()));
      return true;
    }
    return false;
  }

  std::string_view text(size_t col) const { return trim(fields_[col]); }

  int64_t integer(size_t col, int64_t min, int64_t max) const {
    const std::string_view s = text(col);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range && ptr == s.data() + s.size())
      fail(col, fmt::format("{} is out of range [{}, {}]", s, min, max));
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      // Accept integral decimals such as "1000.0" (some exports write them); reject anything else.
      double d = 0;
      const auto [dptr, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (s.empty() || dec != std::errc() || dptr != s.data() + s.size() || d != static_cast<double>(static_cast<int64_t>(d)))
        fail(col, fmt::format("'{}' is not an integer", s));
      v = static_cast<int64_t>(d);
    }
    if (v < min || v > max) {
      if (v < 0 && min >= 0) fail(col, fmt::format("{} is negative", v));
      fail(col, fmt::format("{} is out of range [{}, {}]", v, min, max));
    }
    return v;
  }

  [[noreturn]] void fail(size_t col, const std::string& message) const {
    throw InputError(source_, line_no_, std::string(header_[col]), message);
  }
  [[noreturn]] void fail(std::string_view field, const std::string& message) const {
    throw InputError(source_, line_no_, std::string(field), message);
  }
  int line() const { return line_no_; }
  const std::string& source() const { return source_; }

 private:
  bool next_line(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const size_t nl = text_.find('\n', pos_);
    const size_t end = nl == std::string_view::npos ? text_.size() : nl;
    line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }
  std::string header_names() const { return fmt::format("{}", fmt::join(header_, ",")); }

  std::string_view text_;
  std::string source_;
  size_t pos_ = 0;
  int line_no_ = 0;
  std::vector<std::string_view> header_;
  std::vector<std::string_view> fields_;
};

constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;    // absurdity guard: ~1e9 vCPU
constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;   // ~1 EiB

// The trace README (alibaba-gpu-v2023, "Columns") lists qos LS, BE, Burstable, Guaranteed and
// pod_phase Running, Failed, Pending, Succeeded. An empty cell means not given.
QosClass parse_qos(const CsvTable& t, size_t col) {
  const std::string_view s = t.text(col);
  if (s.empty()) return QosClass::kUnspecified;
  if (s == "LS") return QosClass::kLS;
  if (s == "BE") return QosClass::kBE;
  if (s == "Burstable") return QosClass::kBurstable;
  if (s == "Guaranteed") return QosClass::kGuaranteed;
  t.fail(col, fmt::format("unknown qos '{}' (expected LS, BE, Burstable or Guaranteed, or empty)", s));
}

void check_pod_phase(const CsvTable& t, size_t col) {
  const std::string_view s = t.text(col);
  if (s.empty() || s == "Running" || s == "Failed" || s == "Pending" || s == "Succeeded") return;
  t.fail(col, fmt::format("unknown pod_phase '{}' (expected Running, Failed, Pending or Succeeded, or empty)", s));
}

}  // namespace

std::vector<Node> parse_openb_nodes(std::string_view text, const std::string& source) {
  CsvTable t(text, source);
  const size_t c_name = t.require("sn"), c_cpu = t.require("cpu_milli"), c_mem = t.require("memory_mib"),
               c_gpu = t.require("gpu"), c_model = t.require("model");
  std::vector<Node> nodes;
  std::unordered_set<std::string> names;
  while (t.next_row()) {
    Node n;
    n.name = std::string(t.text(c_name));
    if (n.name.empty()) t.fail(c_name, "empty node name");
    if (!names.insert(n.name).second) t.fail(c_name, fmt::format("duplicate node name '{}'", n.name));
    n.cpu_milli = t.integer(c_cpu, 1, kMaxCpuMilli);
    n.memory_mib = t.integer(c_mem, 1, kMaxMemoryMib);
    n.gpu_count = static_cast<int32_t>(t.integer(c_gpu, 0, kMaxGpusPerNode));
    n.gpu_model = std::string(t.text(c_model));
    if (n.gpu_count > 0 && n.gpu_model.empty()) t.fail(c_model, fmt::format("node has {} GPUs but no model", n.gpu_count));
    if (n.gpu_count == 0 && !n.gpu_model.empty()) t.fail(c_gpu, fmt::format("0 GPUs but model '{}'", n.gpu_model));
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) throw InputError(source, t.line() + 1, "", "no node rows");
  return nodes;
}

namespace {

// Columns of a pod list, found by name; the time columns only when `with_times`.
struct PodColumns {
  size_t name, cpu, mem, num, milli, spec = 0, qos = 0, phase = 0, creation = 0, deletion = 0, scheduled = 0;
  bool has_spec = false, has_qos = false, has_phase = false;
  PodColumns(const CsvTable& t, bool with_times)
      : name(t.require("name")), cpu(t.require("cpu_milli")), mem(t.require("memory_mib")), num(t.require("num_gpu")),
        milli(t.require("gpu_milli")), has_spec(t.has("gpu_spec")), has_qos(t.has("qos")), has_phase(t.has("pod_phase")) {
    if (has_spec) spec = t.require("gpu_spec");
    if (has_qos) qos = t.require("qos");
    if (has_phase) phase = t.require("pod_phase");
    if (with_times) {
      creation = t.require("creation_time");
      deletion = t.require("deletion_time");
      scheduled = t.require("scheduled_time");
    }
  }
};

Pod parse_pod_row(const CsvTable& t, const PodColumns& c, std::unordered_set<std::string>& names) {
  Pod p;
  p.name = std::string(t.text(c.name));
  if (p.name.empty()) t.fail(c.name, "empty pod name");
  if (!names.insert(p.name).second) t.fail(c.name, fmt::format("duplicate pod name '{}'", p.name));
  p.cpu_milli = t.integer(c.cpu, 0, kMaxCpuMilli);
  p.memory_mib = t.integer(c.mem, 0, kMaxMemoryMib);
  p.num_gpu = static_cast<int32_t>(t.integer(c.num, 0, kMaxGpusPerPod));
  p.gpu_milli = static_cast<int32_t>(t.integer(c.milli, 0, kGpuMilliPerGpu));
  if ((p.num_gpu == 0) != (p.gpu_milli == 0))
    t.fail(p.num_gpu == 0 ? c.milli : c.num,
           fmt::format("num_gpu {} with gpu_milli {}: both must be 0 (CPU-only pod) or both positive", p.num_gpu, p.gpu_milli));
  if (p.num_gpu > 1 && p.gpu_milli < kGpuMilliPerGpu)
    t.fail(c.milli, fmt::format("a pod with {} GPUs must take whole GPUs (gpu_milli 1000), got {}", p.num_gpu, p.gpu_milli));
  if (c.has_spec && p.num_gpu > 0) p.gpu_spec = std::string(t.text(c.spec));
  if (c.has_qos) p.qos = parse_qos(t, c.qos);
  if (c.has_phase) check_pod_phase(t, c.phase);
  return p;
}

// Trace times are seconds; more than 100 years is absurd.
constexpr int64_t kMaxTraceTimeS = int64_t{100} * 365 * 86400;

}  // namespace

std::vector<Pod> parse_openb_pods(std::string_view text, const std::string& source) {
  CsvTable t(text, source);
  const PodColumns c(t, false);
  std::vector<Pod> pods;
  std::unordered_set<std::string> names;
  while (t.next_row()) pods.push_back(parse_pod_row(t, c, names));
  if (pods.empty()) throw InputError(source, t.line() + 1, "", "no pod rows");
  return pods;
}

std::vector<sim::TracePod> parse_openb_trace(std::string_view text, const std::string& source) {
  CsvTable t(text, source);
  const PodColumns c(t, true);
  std::vector<sim::TracePod> pods;
  std::unordered_set<std::string> names;
  while (t.next_row()) {
    sim::TracePod tp;
    tp.pod = parse_pod_row(t, c, names);
    tp.creation_time_s = t.integer(c.creation, 0, kMaxTraceTimeS);
    tp.deletion_time_s = t.integer(c.deletion, 0, kMaxTraceTimeS);
    if (tp.deletion_time_s < tp.creation_time_s)
      t.fail(c.deletion, fmt::format("{} is before creation_time {}", tp.deletion_time_s, tp.creation_time_s));
    if (!t.text(c.scheduled).empty()) {
      tp.scheduled_time_s = t.integer(c.scheduled, 0, kMaxTraceTimeS);
      if (tp.scheduled_time_s < tp.creation_time_s || tp.scheduled_time_s > tp.deletion_time_s)
        t.fail(c.scheduled, fmt::format("{} is outside [creation_time {}, deletion_time {}]", tp.scheduled_time_s,
                                        tp.creation_time_s, tp.deletion_time_s));
    }
    pods.push_back(std::move(tp));
  }
  if (pods.empty()) throw InputError(source, t.line() + 1, "", "no pod rows");
  return pods;
}

std::vector<Node> read_openb_nodes(const std::string& path) { return parse_openb_nodes(read_text_file(path), path); }
std::vector<Pod> read_openb_pods(const std::string& path) { return parse_openb_pods(read_text_file(path), path); }
std::vector<sim::TracePod> read_openb_trace(const std::string& path) { return parse_openb_trace(read_text_file(path), path); }

}  // namespace gpufleet::io
