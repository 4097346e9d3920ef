#include "io/pool_file.h"

#include <charconv>
#include <cmath>
#include <exception>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "io/openb_csv.h"  // read_text_file
#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

constexpr const char* kApiVersion = "gpufleet.io/v1";
constexpr const char* kKind = "NodePoolSet";
constexpr int64_t kMaxNodes = 1'000'000;            // absurdity guards
constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;
constexpr int64_t kMaxMemoryMib = int64_t{1} << 40;

const char* type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "null";
    case YAML::NodeType::Scalar: return "a scalar";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

// A YAML node with its field path: typed access that throws InputError at the node, or, for a missing
// field, at the enclosing node (same conventions as io/k8s_yaml.cpp). Only const access: no inserts.
class Field {
 public:
  Field(const YAML::Node& node, std::string path, const std::string& file)
      : node_(node), defined_(node.IsDefined()), path_(std::move(path)), file_(&file) {
    if (defined_) mark_ = node_.Mark();
  }

  bool present() const { return defined_ && !node_.IsNull(); }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& message) const {
    const int line = mark_.is_null() ? 0 : mark_.line + 1;
    const int column = mark_.is_null() ? 0 : mark_.column + 1;
    throw InputError(*file_, line, path_, message, column);
  }

  void require_map() const {
    if (!present()) fail("required field is missing");
    if (!node_.IsMap()) fail(fmt::format("expected a mapping, got {}", type_name(node_)));
  }

  /// Rejects keys outside `allowed` (typos), at the key's position.
  void only_keys(std::initializer_list<const char*> allowed) const {
    if (!present()) return;
    require_map();
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const YAML::Node k = it->first;
      if (!k.IsScalar()) Field(k, path_, *file_).fail(fmt::format("expected a string key, got {}", type_name(k)));
      bool ok = false;
      std::string list;
      for (const char* a : allowed) {
        ok = ok || k.Scalar() == a;
        list += list.empty() ? a : fmt::format(", {}", a);
      }
      if (!ok)
        Field(k, child_path(k.Scalar()), *file_).fail(fmt::format("unknown key '{}' (expected {})", k.Scalar(), list));
    }
  }

  Field operator[](std::string_view key) const {
    std::string p = child_path(key);
    if (!present()) return missing(std::move(p));
    require_map();
    const YAML::Node child = node_[std::string(key)];
    if (!child.IsDefined()) return missing(std::move(p));
    return Field(child, std::move(p), *file_);
  }

  size_t size() const {
    if (!present()) return 0;
    if (!node_.IsSequence()) fail(fmt::format("expected a list, got {}", type_name(node_)));
    return node_.size();
  }
  Field at(size_t i) const { return Field(node_[i], fmt::format("{}[{}]", path_, i), *file_); }

  /// f(key, value) for each entry of a mapping, in document order.
  template <class F>
  void each_entry(F&& f) const {
    if (!present()) return;
    require_map();
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const YAML::Node k = it->first;
      if (!k.IsScalar()) Field(k, path_, *file_).fail(fmt::format("expected a string key, got {}", type_name(k)));
      Field v(it->second, child_path(k.Scalar()), *file_);
      if (v.mark_.is_null()) v.mark_ = k.Mark();
      f(k.Scalar(), v);
    }
  }

  const std::string& scalar() const {
    if (!present()) fail("required field is missing");
    if (!node_.IsScalar()) fail(fmt::format("expected a scalar, got {}", type_name(node_)));
    return node_.Scalar();
  }
  std::string str() const { return present() ? scalar() : std::string(); }
  std::string required_str() const {
    std::string s = scalar();
    if (s.empty()) fail("must not be empty");
    return s;
  }

  int64_t integer(int64_t min, int64_t max) const {
    const std::string& s = scalar();
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) fail(fmt::format("'{}' is not an integer", s));
    if (v < 0 && min >= 0) fail(fmt::format("{} is negative", v));
    if (v < min || v > max) fail(fmt::format("{} is out of range [{}, {}]", v, min, max));
    return v;
  }

  double usd() const {
    const std::string& s = scalar();
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
      fail(fmt::format("'{}' is not a number", s));
    if (v < 0) fail(fmt::format("price {} is negative", s));
    return v;
  }

  Quantity quantity() const {
    const std::string& s = scalar();
    Quantity q;
    try {
      q = Quantity::parse(s);
    } catch (const std::exception& e) {
      fail(fmt::format("'{}' is not a valid quantity: {}", s, e.what()));
    }
    if (q.is_negative()) fail(fmt::format("'{}' is negative", s));
    return q;
  }

 private:
  std::string child_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  Field missing(std::string p) const {
    Field f(YAML::Node(YAML::NodeType::Undefined), std::move(p), *file_);
    f.defined_ = false;
    f.mark_ = mark_;
    return f;
  }

  YAML::Node node_;
  bool defined_ = false;
  YAML::Mark mark_ = YAML::Mark::null_mark();
  std::string path_;
  const std::string* file_;
};

bool dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

NodePool parse_pool(const Field& p) {
  p.only_keys({"name", "instanceType", "gpu", "cpu", "memory", "nodes", "min", "max", "labels", "taints", "prices",
               "mig", "timeSlicing"});
  NodePool pool;
  const Field name = p["name"];
  pool.name = name.required_str();
  if (!dns_label(pool.name))
    name.fail(fmt::format("'{}' is not a DNS label (lowercase letters, digits and '-', at most 63)", pool.name));
  pool.instance_type = p["instanceType"].str();

  const GpuModelInfo* model = nullptr;
  const Field gpu = p["gpu"];
  if (gpu.present()) {
    gpu.only_keys({"model", "count"});
    const Field m = gpu["model"];
    const std::string model_name = m.required_str();
    model = find_gpu_model(model_name);
    if (model == nullptr) {
      std::string known;
      for (const GpuModelInfo& g : gpu_catalog()) known += known.empty() ? g.name : ", " + g.name;
      m.fail(fmt::format("unknown GPU model '{}' (known: {})", model_name, known));
    }
    pool.gpu_model = model->name;
    pool.gpus_per_node = static_cast<int32_t>(gpu["count"].integer(1, kMaxGpusPerNode));
  }

  const Field cpu = p["cpu"];
  try {
    pool.cpu_milli = cpu.quantity().milli();
  } catch (const std::invalid_argument& e) {
    cpu.fail(e.what());
  }
  if (pool.cpu_milli > kMaxCpuMilli) cpu.fail(fmt::format("'{}' is absurdly large", cpu.scalar()));
  const Field memory = p["memory"];
  pool.memory_mib = memory.quantity().mebibytes();
  if (pool.memory_mib > kMaxMemoryMib) memory.fail(fmt::format("'{}' is absurdly large", memory.scalar()));

  const Field nodes = p["nodes"];
  pool.node_count = static_cast<int32_t>(nodes.integer(0, kMaxNodes));
  const Field min = p["min"], max = p["max"];
  pool.min_nodes = min.present() ? static_cast<int32_t>(min.integer(0, kMaxNodes)) : pool.node_count;
  pool.max_nodes = max.present() ? static_cast<int32_t>(max.integer(0, kMaxNodes)) : pool.node_count;
  if (pool.min_nodes > pool.max_nodes)
    (min.present() ? min : max).fail(fmt::format("min {} is above max {}", pool.min_nodes, pool.max_nodes));
  if (pool.node_count < pool.min_nodes || pool.node_count > pool.max_nodes)
    nodes.fail(fmt::format("{} nodes is outside [min, max] = [{}, {}]", pool.node_count, pool.min_nodes, pool.max_nodes));

  p["labels"].each_entry([&](const std::string& k, const Field& v) {
    if (k.empty()) v.fail("label key must not be empty");
    if (k == kPoolLabel || k == kInstanceTypeLabel || k == kGpuProductLabel || k == kGpuCountLabel ||
        k == kGpuReplicasLabel)
      v.fail(fmt::format("label {} is set by gpufleet from the pool and must not be given", k));
    pool.labels.emplace_back(k, v.str());
  });

  const Field taints = p["taints"];
  for (size_t i = 0, n = taints.size(); i < n; ++i) {
    const Field t = taints.at(i);
    t.only_keys({"key", "value", "effect"});
    t.require_map();
    Taint taint;
    taint.key = t["key"].required_str();
    taint.value = t["value"].str();
    const Field effect = t["effect"];
    taint.effect = effect.required_str();
    if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" && taint.effect != "NoExecute")
      effect.fail(fmt::format("unknown taint effect '{}' (expected NoSchedule, PreferNoSchedule, NoExecute)", taint.effect));
    pool.taints.push_back(std::move(taint));
  }

  const Field prices = p["prices"];
  prices.require_map();
  prices.only_keys({"onDemand", "spot", "reserved"});
  pool.on_demand_usd_per_hour = prices["onDemand"].usd();
  if (const Field s = prices["spot"]; s.present()) pool.spot_usd_per_hour = s.usd();
  if (const Field r = prices["reserved"]; r.present()) pool.reserved_usd_per_hour = r.usd();

  const Field mig = p["mig"];
  if (mig.present()) {
    mig.require_map();
    if (model == nullptr) mig.fail("MIG devices need a GPU (pool has no gpu)");
    if (!model->mig_capable)
      mig.fail(fmt::format("GPU model {} is not MIG-capable (MIG: A100, H100, H200, B200)", model->name));
    std::map<std::string, int> counts;
    mig.each_entry([&](const std::string& profile, const Field& v) {
      if (model->find_mig_profile(profile) == nullptr) {
        std::string known;
        for (const MigProfile& mp : model->mig_profiles) known += known.empty() ? mp.name : ", " + mp.name;
        v.fail(fmt::format("GPU model {} has no MIG profile '{}' (known: {})", model->name, profile, known));
      }
      counts[profile] = static_cast<int>(v.integer(0, kMigMaxInstances));
    });
    if (!layout_for_counts(*model, counts)) {
      std::string list;
      for (const auto& [profile, n] : counts) list += fmt::format("{}{}x {}", list.empty() ? "" : ", ", n, profile);
      mig.fail(fmt::format("MIG devices {} do not fit on one {} GPU (7 compute and 8 memory slices)", list, model->name));
    }
    pool.mig_devices = std::move(counts);
  }

  const Field ts = p["timeSlicing"];
  if (ts.present()) {
    ts.require_map();
    ts.only_keys({"replicas"});
    if (model == nullptr) ts.fail("time-slicing needs a GPU (pool has no gpu)");
    pool.time_slicing_replicas = static_cast<int32_t>(ts["replicas"].integer(1, 1024));
  }

  try {
    validate_pool(pool);  // everything above is checked with positions; this is a safety net
  } catch (const std::invalid_argument& e) {
    p.fail(e.what());
  }
  return pool;
}

}  // namespace

std::vector<NodePool> parse_pool_text(std::string_view text, const std::string& source_name) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError(source_name, e.mark.is_null() ? 0 : e.mark.line + 1, "",
                     fmt::format("YAML syntax error: {}", e.msg), e.mark.is_null() ? 0 : e.mark.column + 1);
  }
  std::vector<NodePool> pools;
  std::set<std::string> names;
  bool found = false;
  for (const YAML::Node& doc : docs) {
    if (doc.IsNull()) continue;
    const Field root(doc, "", source_name);
    try {
      root.require_map();
      const Field api = root["apiVersion"];
      const std::string api_version = api.str();
      const std::string kind = root["kind"].str();
      const bool ours = api_version.rfind("gpufleet.io/", 0) == 0;
      if (kind != kKind) {
        if (ours) root["kind"].fail(fmt::format("unknown kind '{}' for {} (expected {})", kind, api_version, kKind));
        continue;  // a Kubernetes object beside the pools (e.g. a mig-parted ConfigMap)
      }
      if (api_version != kApiVersion)
        api.fail(fmt::format("apiVersion '{}' is not supported (expected {})", api_version, kApiVersion));
      root.only_keys({"apiVersion", "kind", "metadata", "pools"});
      found = true;
      const Field list = root["pools"];
      if (!list.present()) list.fail("required field is missing");
      for (size_t i = 0, n = list.size(); i < n; ++i) {
        const Field p = list.at(i);
        p.require_map();
        NodePool pool = parse_pool(p);
        if (!names.insert(pool.name).second) p["name"].fail(fmt::format("duplicate pool name '{}'", pool.name));
        pools.push_back(std::move(pool));
      }
    } catch (const YAML::Exception& e) {  // not expected: all access is checked; never leak it
      throw InputError(source_name, e.mark.is_null() ? 0 : e.mark.line + 1, "", e.msg,
                       e.mark.is_null() ? 0 : e.mark.column + 1);
    }
  }
  if (!found) throw InputError(source_name, 0, "kind", fmt::format("no document with kind {}", kKind));
  return pools;
}

std::vector<NodePool> read_pool_file(const std::string& path) { return parse_pool_text(read_text_file(path), path); }

}  // namespace gpufleet::io
