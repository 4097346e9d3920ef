#include "readers/traces/openb_csv.h"

#include <unordered_set>

#include <fmt/format.h>

#include "readers/formats/csv_table.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::CsvTable;

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
    n.memory_bytes = t.integer(c_mem, 1, kMaxMemoryMib) * kBytesPerMib;
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
  p.memory_bytes = t.integer(c.mem, 0, kMaxMemoryMib) * kBytesPerMib;
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

std::vector<Node> read_openb_nodes(const std::string& path) { return parse_openb_nodes(read_csv_file(path), path); }
std::vector<Pod> read_openb_pods(const std::string& path) { return parse_openb_pods(read_csv_file(path), path); }
std::vector<sim::TracePod> read_openb_trace(const std::string& path) { return parse_openb_trace(read_csv_file(path), path); }

}  // namespace gpufleet::io
