#include "readers/k8s/device_setup.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "model/gpu_catalog.h"
#include "model/mig.h"
#include "model/resources.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

constexpr std::string_view kProductLabel = "nvidia.com/gpu.product";
constexpr std::string_view kCountLabel = "nvidia.com/gpu.count";
constexpr std::string_view kReplicasLabel = "nvidia.com/gpu.replicas";
constexpr std::string_view kMigConfigLabel = "nvidia.com/mig.config";
constexpr std::string_view kDevicePluginConfigLabel = "nvidia.com/device-plugin.config";
constexpr std::string_view kSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
constexpr size_t kWarningNodes = 3;  // nodes named per warning line

// PCI device ids (device id + vendor 10DE) of the MIG-capable catalog models, for mig-parted's
// device-filter (gpu-sharing.md s.1 "Device ids seen").
std::vector<std::string_view> pci_ids(std::string_view model) {
  if (model == "A100-40GB") return {"0x20B010DE", "0x20B110DE"};
  if (model == "A100-80GB") return {"0x20B210DE", "0x20B510DE"};
  if (model == "H100-80GB") return {"0x233010DE", "0x233110DE"};
  if (model == "H200-141GB") return {"0x233510DE", "0x233B10DE"};
  if (model == "B200-180GB") return {"0x290110DE"};
  return {};
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string profile_list(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [profile, n] : counts)
    if (n > 0) out += fmt::format("{}{}x {}", out.empty() ? "" : ", ", n, profile);
  return out.empty() ? "nothing" : out;
}

// Warnings grouped by message, naming the first few nodes.
class Warnings {
 public:
  void add(const std::string& message, const std::string& node) {
    for (auto& [m, nodes] : items_)
      if (m == message) {
        nodes.push_back(node);
        return;
      }
    items_.push_back({message, {node}});
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& [m, nodes] : items_) {
      std::vector<std::string> named(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(std::min(nodes.size(), kWarningNodes)));
      std::string who = join(named);
      if (nodes.size() > kWarningNodes) who += fmt::format(" and {} more", nodes.size() - kWarningNodes);
      out.push_back(fmt::format("{} (node{} {})", m, nodes.size() > 1 ? "s" : "", who));
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> items_;
};

// Field path of a config inside its ConfigMap (or standalone document).
std::string config_field(const ConfigOrigin& origin, const std::string& path) {
  return origin.data_key.empty() ? path : "data." + origin.data_key + "." + path;
}

struct Inputs {
  const std::vector<TimeSlicingConfig>& ts_configs;
  const std::vector<MigPartedConfig>& mig_parted;
  std::map<std::string, std::pair<const MigPartedConfig*, const MigConfig*>> mig_by_name;
  std::map<std::string, const TimeSlicingConfig*> ts_by_key;
  const TimeSlicingConfig* ts_default = nullptr;
};

// One node being set up.
class NodeSetup {
 public:
  NodeSetup(Node& node, const K8sNodeExtras* extras, const K8sNodeSource* source, const Inputs& in, Warnings& w,
            std::vector<NodeCountMismatch>& mismatches)
      : node_(node), extras_(extras), source_(source), in_(in), w_(w), mismatches_(mismatches) {}

  void run();

 private:
  [[noreturn]] void fail_at(const SourcePosition* pos, const std::string& message) const {
    if (pos == nullptr) throw InputError(fmt::format("node {}", node_.name), 0, "", message);
    throw InputError(pos->file, pos->line, pos->field, fmt::format("node {}: {}", node_.name, message), pos->column);
  }
  [[noreturn]] void fail_label(std::string_view key, const std::string& message) const {
    const SourcePosition* pos = source_ != nullptr ? &source_->name : nullptr;
    if (source_ != nullptr)
      if (const auto it = source_->labels.find(std::string(key)); it != source_->labels.end()) pos = &it->second;
    fail_at(pos, message);
  }
  [[noreturn]] void fail_node(const std::string& message) const { fail_at(source_ ? &source_->name : nullptr, message); }
  [[noreturn]] void fail_config(const ConfigOrigin& origin, const std::string& field, const std::string& message) const {
    throw InputError(origin.file, origin.line, config_field(origin, field), fmt::format("node {}: {}", node_.name, message));
  }
  void warn(const std::string& message) { w_.add(message, node_.name); }
  // Read as a Node (advertised resources, GPU feature discovery labels); not an expanded pool node,
  // whose source, if any, only gives its pool's positions.
  bool from_yaml() const { return source_ != nullptr && !source_->pool; }

  int64_t advertised(std::string_view resource) const {
    if (extras_ == nullptr) return 0;
    const auto it = extras_->extended.find(std::string(resource));
    return it == extras_->extended.end() ? 0 : it->second;
  }
  std::optional<int32_t> int_label(std::string_view key, int32_t min, int32_t max) const;
  void resolve_model();
  std::optional<TimeSlicing> time_slicing_from(const TimeSlicingConfig& c);
  void choose_time_slicing();
  void count_gpus(bool mig_config);
  void check_sharing_labels();
  void check_mps_mig() const;
  void apply_mig_config(const MigPartedConfig& parted, const MigConfig& config);
  void check_advertised_mig() const;  // the model has MIG and every advertised profile
  void spread_advertised_mig();
  std::optional<std::vector<std::map<std::string, int>>> spread(int32_t gpus) const;

  Node& node_;
  const K8sNodeExtras* extras_;
  const K8sNodeSource* source_;
  const Inputs& in_;
  Warnings& w_;
  std::vector<NodeCountMismatch>& mismatches_;

  const GpuModelInfo* model_ = nullptr;
  std::map<std::string, int> advertised_mig_;
  std::optional<TimeSlicing> ts_;
  const TimeSlicingConfig* ts_config_ = nullptr;
  int32_t non_mig_gpus_ = 0;  // GPUs without MIG as advertised (nodes read from YAML)
  int32_t mig_gpus_ = 0;      // GPUs left for advertised MIG devices (nodes read from YAML)
};

std::optional<int32_t> NodeSetup::int_label(std::string_view key, int32_t min, int32_t max) const {
  const std::string* v = find_label(node_.labels, key);
  if (v == nullptr) return std::nullopt;
  int32_t out = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size() || out < min || out > max)
    fail_label(key, fmt::format("label {} is '{}', expected an integer in [{}, {}]", key, *v, min, max));
  return out;
}

void NodeSetup::run() {
  if (extras_ != nullptr)
    for (const auto& [name, n] : extras_->extended)
      if (name.starts_with(kMigResourcePrefix) && !name.ends_with(".shared") && n > 0)
        advertised_mig_[name.substr(kMigResourcePrefix.size())] = static_cast<int>(n);
  const std::optional<int32_t> count = int_label(kCountLabel, 0, kMaxGpusPerNode);
  const bool has_gpus = node_.gpu_count > 0 || count.value_or(0) > 0 || advertised(kGpuSharedResource) > 0 ||
                        !advertised_mig_.empty() || !node_.mig.empty();
  if (!has_gpus) return;
  resolve_model();
  choose_time_slicing();

  // MIG (rule 3): the config named by the label, if any.
  const std::pair<const MigPartedConfig*, const MigConfig*>* mig_config = nullptr;
  if (const std::string* mig_label = find_label(node_.labels, kMigConfigLabel)) {
    if (const auto it = in_.mig_by_name.find(*mig_label); it != in_.mig_by_name.end()) {
      mig_config = &it->second;
    } else if (!in_.mig_parted.empty()) {
      std::vector<std::string> names;
      for (const auto& [name, c] : in_.mig_by_name) names.push_back(name);
      fail_label(kMigConfigLabel, fmt::format("mig-parted config '{}' is not among the inputs (configs: {})", *mig_label,
                                              join(names)));
    } else {
      warn(fmt::format("mig-parted config '{}' (label {}) is not among the inputs; MIG set-up from the node pool or the "
                       "advertised MIG devices",
                       *mig_label, kMigConfigLabel));
    }
  }
  count_gpus(mig_config != nullptr);
  if (mig_config != nullptr) apply_mig_config(*mig_config->first, *mig_config->second);
  else if (node_.mig.empty() && !advertised_mig_.empty()) spread_advertised_mig();
  if (ts_config_ != nullptr && !node_.mig.empty() && !ts_config_->mig_strategy.empty() &&
      ts_config_->mig_strategy != "mixed" && !(ts_ && ts_->mps()))
    warn(fmt::format("device-plugin migStrategy '{}' is not modelled: MIG devices are counted as migStrategy mixed "
                     "advertises them (nvidia.com/mig-<profile>)",
                     ts_config_->mig_strategy));

  check_mps_mig();
  node_.time_slicing = ts_;
}

void NodeSetup::check_mps_mig() const {
  if (!ts_ || !ts_->mps() || std::none_of(node_.mig.begin(), node_.mig.end(), [](const GpuMig& g) { return g.enabled; }))
    return;
  const std::string message = "sharing using MPS is not supported for MIG devices (the node has MIG enabled)";
  if (ts_config_ != nullptr) fail_config(ts_config_->origin, "sharing.mps", message);
  fail_node(message);
}

void NodeSetup::check_sharing_labels() {
  if (!from_yaml() || ts_config_ == nullptr) return;
  const int32_t replicas = ts_ ? ts_->replicas : 1;
  const std::string_view strategy = ts_ ? gpu_sharing_strategy_name(ts_->strategy) : std::string_view("none");
  if (const std::string* r = find_label(node_.labels, kReplicasLabel); r != nullptr && *r != std::to_string(replicas))
    warn(fmt::format("label {}={} disagrees with the device-plugin config's {} replicas per GPU; the config wins",
                     kReplicasLabel, *r, replicas));
  if (const std::string* st = find_label(node_.labels, kSharingStrategyLabel); st != nullptr && *st != strategy)
    warn(fmt::format("label {}={} disagrees with the device-plugin config's sharing strategy {}; the config wins",
                     kSharingStrategyLabel, *st, strategy));
}

void NodeSetup::resolve_model() {
  const std::string* label = find_label(node_.labels, kProductLabel);
  const std::string product = label != nullptr ? *label : node_.gpu_model;
  if (product.empty()) return;
  // GPU feature discovery's derived labels (gpu-sharing.md s.5): <product>-SHARED under sharing,
  // <product>-MIG-<profile> under the single MIG strategy.
  std::string base = product;
  if (base.ends_with("-SHARED")) base.resize(base.size() - 7);
  if (const size_t mig = base.find("-MIG-"); mig != std::string::npos) {
    base.resize(mig);
    warn(fmt::format("product label '{}' comes from the single MIG strategy, which is not modelled (mixed is)", product));
  }
  model_ = find_gpu_model(base);
  if (model_ == nullptr) {
    std::vector<std::string> known;
    for (const GpuModelInfo& m : gpu_catalog()) known.push_back(m.name);
    fail_label(kProductLabel, fmt::format("unknown GPU model '{}': nvidia.com/gpu.product matches no catalog model "
                                          "({}, or one of their product labels)",
                                          product, join(known)));
  }
  node_.gpu_model = model_->name;
}

std::optional<TimeSlicing> NodeSetup::time_slicing_from(const TimeSlicingConfig& c) {
  std::optional<TimeSlicing> out;
  for (size_t i = 0; i < c.resources.size(); ++i) {
    const TimeSlicingResource& r = c.resources[i];
    const bool mps = c.strategy == GpuSharingStrategy::kMps;
    const std::string field = fmt::format("sharing.{}.resources[{}]", mps ? "mps" : "timeSlicing", i);
    const std::string_view what = mps ? "MPS sharing" : "time-slicing";
    if (r.name != kGpuResource) {
      // MPS: "The only supported resource type is nvidia.com/gpu" (GPU Operator, gpu-sharing-mps).
      warn(fmt::format("{} of {} (device-plugin config at {}:{}) is not modelled; ignored", what, r.name, c.origin.file,
                       c.origin.line));
      continue;
    }
    if (!r.devices.empty())
      fail_config(c.origin, field + ".devices", fmt::format("{} a subset of the GPUs (devices) is not modelled", what));
    bool renamed = c.rename_by_default;
    if (!r.rename.empty()) {
      if (r.rename != kGpuSharedResource)
        fail_config(c.origin, field + ".rename",
                    fmt::format("rename to '{}' is not modelled (only {})", r.rename, kGpuSharedResource));
      renamed = true;
    }
    out = TimeSlicing{r.replicas, renamed, c.fail_requests_greater_than_one, c.strategy};
  }
  return out;
}

void NodeSetup::choose_time_slicing() {
  // Rule 4a/b: the config by label, else the default.
  const std::string* key = find_label(node_.labels, kDevicePluginConfigLabel);
  if (key != nullptr) {
    if (const auto it = in_.ts_by_key.find(*key); it != in_.ts_by_key.end()) {
      ts_config_ = it->second;
    } else if (!in_.ts_configs.empty()) {
      std::vector<std::string> keys;
      for (const auto& [k, c] : in_.ts_by_key) keys.push_back(k);
      fail_label(kDevicePluginConfigLabel,
                 fmt::format("device-plugin config '{}' is not among the inputs (data keys: {})", *key,
                             keys.empty() ? "none" : join(keys)));
    } else {
      warn(fmt::format("device-plugin config '{}' (label {}) is not among the inputs; time-slicing from the node pool "
                       "or GPU feature discovery's labels",
                       *key, kDevicePluginConfigLabel));
    }
  } else {
    ts_config_ = in_.ts_default;
  }
  if (ts_config_ != nullptr) {
    ts_ = time_slicing_from(*ts_config_);
    if (node_.time_slicing && ts_ && node_.time_slicing->replicas != ts_->replicas)
      warn(fmt::format("the device-plugin config gives {} time-slicing replicas, the node pool {}; the config wins",
                       ts_->replicas, node_.time_slicing->replicas));
    if (node_.time_slicing && ts_ && node_.time_slicing->strategy != ts_->strategy)
      warn(fmt::format("the device-plugin config shares GPUs by {}, the node pool by {}; the config wins",
                       gpu_sharing_strategy_name(ts_->strategy), gpu_sharing_strategy_name(node_.time_slicing->strategy)));
    check_sharing_labels();
    return;
  }
  // Rule 4d: the pool's, else GPU feature discovery's labels.
  if (node_.time_slicing) {
    ts_ = node_.time_slicing;
    return;
  }
  if (!from_yaml()) return;
  const std::optional<int32_t> replicas = int_label(kReplicasLabel, 1, 1 << 20);
  if (replicas && *replicas > 1 && find_label(node_.labels, kCountLabel) != nullptr) {
    const std::string* strategy = find_label(node_.labels, kSharingStrategyLabel);
    const bool mps = strategy != nullptr && *strategy == "mps";
    ts_ = TimeSlicing{*replicas, advertised(kGpuSharedResource) > 0, mps,
                      mps ? GpuSharingStrategy::kMps : GpuSharingStrategy::kTimeSlicing};
  }
}

void NodeSetup::count_gpus(bool mig_config) {
  if (!advertised_mig_.empty()) check_advertised_mig();
  const std::optional<int32_t> count = int_label(kCountLabel, 0, kMaxGpusPerNode);
  if (!from_yaml()) {  // an expanded pool: gpu_count is physical, and so is the label
    if (count) node_.gpu_count = *count;
    return;
  }
  // Rule 2 and 4: GPUs without MIG from the advertised counts.
  const int64_t gpu = extras_ != nullptr && extras_->extended.count(std::string(kGpuResource)) != 0
                          ? advertised(kGpuResource)
                          : node_.gpu_count;
  const int64_t shared = advertised(kGpuSharedResource);
  int64_t non_mig = gpu;
  if (ts_ && !ts_->renamed && ts_->replicas > 1) {
    if (gpu % ts_->replicas != 0)
      fail_node(fmt::format("advertises {} {}, not a multiple of its {} {} replicas", gpu, kGpuResource,
                            ts_->replicas, gpu_sharing_strategy_name(ts_->strategy)));
    non_mig = gpu / ts_->replicas;
  } else if (ts_ && ts_->renamed && shared > 0) {
    if (shared % ts_->replicas != 0)
      fail_node(fmt::format("advertises {} {}, not a multiple of its {} {} replicas", shared,
                            kGpuSharedResource, ts_->replicas, gpu_sharing_strategy_name(ts_->strategy)));
    non_mig = gpu + shared / ts_->replicas;
  }
  if (non_mig > kMaxGpusPerNode) fail_node(fmt::format("{} GPUs is more than {} per node", non_mig, kMaxGpusPerNode));
  non_mig_gpus_ = static_cast<int32_t>(non_mig);
  mig_gpus_ = 0;
  const bool uses_mig = mig_config || !advertised_mig_.empty();
  if (!uses_mig && count && non_mig != *count) {
    // Rule 5: what the device plugin advertises against what the labels and the sharing imply.
    NodeCountMismatch m;
    m.node = node_.name;
    m.gpus = *count;
    m.replicas = ts_ ? ts_->replicas : 1;
    m.strategy = ts_ ? std::string(gpu_sharing_strategy_name(ts_->strategy)) : "none";
    const bool renamed = ts_ && ts_->renamed;
    m.resource = std::string(renamed ? kGpuSharedResource : kGpuResource);
    m.advertised = renamed ? shared : gpu;
    m.expected = int64_t{renamed ? *count - gpu : *count} * m.replicas;
    m.message = fmt::format("node {} advertises {} {} but its labels imply {} ({} {} x {} {} replica{}); placing on the "
                            "advertised {} ({} GPUs)",
                            m.node, m.advertised, m.resource, m.expected, renamed ? *count - gpu : *count, kCountLabel,
                            m.replicas, m.strategy, m.replicas == 1 ? "" : "s", m.advertised, non_mig);
    mismatches_.push_back(std::move(m));
  }
  if (uses_mig && count) {
    if (*count < non_mig)
      fail_label(kCountLabel, fmt::format("nvidia.com/gpu.count {} is below the {} GPUs without MIG it advertises", *count, non_mig));
    mig_gpus_ = *count - non_mig_gpus_;
  } else if (!advertised_mig_.empty()) {
    // The fewest GPUs that hold the advertised MIG devices.
    for (int32_t k = 1; non_mig_gpus_ + k <= kMaxGpusPerNode && mig_gpus_ == 0; ++k)
      if (spread(k)) mig_gpus_ = k;
    if (mig_gpus_ == 0)
      fail_node(fmt::format("the advertised MIG devices ({}) fit on no more than {} {} GPUs",
                            profile_list(advertised_mig_), kMaxGpusPerNode - non_mig_gpus_, model_->name));
    // A guess, said out loud: GPU feature discovery always writes the physical count.
    warn(fmt::format("no {} label: the GPUs with MIG are counted as the fewest {} GPUs that hold the advertised MIG "
                     "devices ({}); label the node with its physical GPU count to override",
                     kCountLabel, model_->name, profile_list(advertised_mig_)));
  }
  node_.gpu_count = non_mig_gpus_ + mig_gpus_;
}

void NodeSetup::apply_mig_config(const MigPartedConfig& parted, const MigConfig& config) {
  const int32_t gpus = node_.gpu_count;
  const std::vector<std::string_view> ids = pci_ids(model_ != nullptr ? model_->name : "");
  const std::string base = "mig-configs." + config.name;
  for (size_t i = 0; i < config.groups.size(); ++i)
    for (const int32_t d : config.groups[i].devices)
      if (d >= gpus)
        fail_config(parted.origin, fmt::format("{}[{}].devices", base, i),
                    fmt::format("mig-parted config '{}': device index {} is beyond the node's {} GPUs", config.name, d, gpus));
  std::vector<GpuMig> mig(static_cast<size_t>(gpus));
  std::map<std::string, int> configured;
  for (int32_t g = 0; g < gpus; ++g) {
    const MigDeviceGroup* chosen = nullptr;
    size_t chosen_index = 0;
    for (size_t i = 0; i < config.groups.size(); ++i) {
      const MigDeviceGroup& group = config.groups[i];
      const bool device = group.all_devices || std::find(group.devices.begin(), group.devices.end(), g) != group.devices.end();
      const bool filter = group.device_filter.empty() ||
                          std::any_of(group.device_filter.begin(), group.device_filter.end(), [&](const std::string& f) {
                            return std::any_of(ids.begin(), ids.end(), [&](std::string_view id) { return iequals(f, id); });
                          });
      if (device && filter) {
        chosen = &group;
        chosen_index = i;
      }
    }
    if (chosen == nullptr || !chosen->mig_enabled) continue;
    const std::string field = fmt::format("{}[{}].mig-devices", base, chosen_index);
    if (model_ == nullptr)
      fail_node(fmt::format("mig-parted config '{}' enables MIG, but the node has no {} label naming its GPU model",
                            config.name, kProductLabel));
    if (!model_->mig_capable)
      fail_config(parted.origin, field,
                  fmt::format("mig-parted config '{}' enables MIG on GPU {}, but GPU model {} is not MIG-capable",
                              config.name, g, model_->name));
    std::map<std::string, int> counts(chosen->mig_devices.begin(), chosen->mig_devices.end());
    for (const auto& [profile, n] : counts)
      if (model_->find_mig_profile(profile) == nullptr)
        fail_config(parted.origin, field,
                    fmt::format("mig-parted config '{}': GPU model {} has no MIG profile '{}'", config.name, model_->name, profile));
    const auto layout = layout_for_counts(*model_, counts);
    if (!layout)
      fail_config(parted.origin, field,
                  fmt::format("mig-parted config '{}': MIG devices {} do not fit on one {} GPU", config.name,
                              profile_list(counts), model_->name));
    mig[static_cast<size_t>(g)] = GpuMig{true, *layout};
    for (const MigInstance& i : *layout) ++configured[i.profile];
  }
  const bool any = std::any_of(mig.begin(), mig.end(), [](const GpuMig& m) { return m.enabled; });
  if (any ? mig != node_.mig : !node_.mig.empty())
    if (!node_.mig.empty())
      warn(fmt::format("mig-parted config '{}' differs from the node pool's MIG layout; the config wins", config.name));
  node_.mig = any ? std::move(mig) : std::vector<GpuMig>{};
  if (!advertised_mig_.empty() && configured != advertised_mig_)
    warn(fmt::format("the node advertises MIG devices {} but mig-parted config '{}' makes {}; the config wins (not yet "
                     "applied by the MIG manager?)",
                     profile_list(advertised_mig_), config.name, profile_list(configured)));
}

// First-fit decreasing of the advertised MIG devices over `gpus` GPUs (nullopt: they do not fit).
std::optional<std::vector<std::map<std::string, int>>> NodeSetup::spread(int32_t gpus) const {
  std::vector<const MigProfile*> instances;
  for (const auto& [profile, n] : advertised_mig_)
    for (int i = 0; i < n; ++i) instances.push_back(model_->find_mig_profile(profile));
  std::stable_sort(instances.begin(), instances.end(), [](const MigProfile* a, const MigProfile* b) {
    if (a->memory_slices != b->memory_slices) return a->memory_slices > b->memory_slices;
    return a->compute_slices > b->compute_slices;
  });
  std::vector<std::map<std::string, int>> per_gpu(static_cast<size_t>(gpus));
  for (const MigProfile* p : instances) {
    bool placed = false;
    for (auto& counts : per_gpu) {
      ++counts[p->name];
      if (layout_for_counts(*model_, counts)) {
        placed = true;
        break;
      }
      if (--counts[p->name] == 0) counts.erase(p->name);
    }
    if (!placed) return std::nullopt;
  }
  return per_gpu;
}

void NodeSetup::check_advertised_mig() const {
  if (model_ == nullptr)
    fail_node(fmt::format("advertises MIG devices ({}) but has no {} label naming its GPU model",
                          profile_list(advertised_mig_), kProductLabel));
  if (!model_->mig_capable)
    fail_label(kProductLabel, fmt::format("advertises MIG devices ({}) but GPU model {} is not MIG-capable",
                                          profile_list(advertised_mig_), model_->name));
  for (const auto& [profile, n] : advertised_mig_)
    if (model_->find_mig_profile(profile) == nullptr)
      fail_node(fmt::format("advertises {}{}, not a MIG profile of GPU model {}", kMigResourcePrefix, profile, model_->name));
}

void NodeSetup::spread_advertised_mig() {
  if (mig_gpus_ <= 0)
    fail_label(kCountLabel, fmt::format("advertises MIG devices ({}) but its {} GPUs are all advertised without MIG",
                                        profile_list(advertised_mig_), node_.gpu_count));
  const auto per_gpu = spread(mig_gpus_);
  if (!per_gpu)
    fail_node(fmt::format("the advertised MIG devices ({}) do not fit on its {} MIG GPU(s) of model {}",
                          profile_list(advertised_mig_), mig_gpus_, model_->name));
  std::vector<GpuMig> mig(static_cast<size_t>(node_.gpu_count));
  for (int32_t k = 0; k < mig_gpus_; ++k)
    mig[static_cast<size_t>(non_mig_gpus_ + k)] = GpuMig{true, *layout_for_counts(*model_, (*per_gpu)[static_cast<size_t>(k)])};
  node_.mig = std::move(mig);
}

}  // namespace

DeviceSetupReport apply_device_setup(std::vector<Node>& nodes, const std::vector<TimeSlicingConfig>& time_slicing_configs,
                                     const std::vector<MigPartedConfig>& mig_parted_configs,
                                     const std::vector<K8sNodeExtras>& advertised,
                                     const std::vector<const K8sNodeSource*>& source_per_node) {
  if (!source_per_node.empty() && source_per_node.size() != nodes.size())
    throw std::invalid_argument("apply_device_setup: source_per_node must be empty or one per node");
  Inputs in{time_slicing_configs, mig_parted_configs, {}, {}, nullptr};
  for (const MigPartedConfig& parted : mig_parted_configs)
    for (const MigConfig& c : parted.configs) {
      const auto [it, fresh] = in.mig_by_name.try_emplace(c.name, &parted, &c);
      if (!fresh)
        throw InputError(parted.origin.file, parted.origin.line, config_field(parted.origin, "mig-configs." + c.name),
                         fmt::format("mig-parted config '{}' is defined twice (also at {}:{})", c.name,
                                     it->second.first->origin.file, it->second.first->origin.line));
    }
  for (const TimeSlicingConfig& c : time_slicing_configs) {
    if (c.origin.data_key.empty()) continue;
    const auto [it, fresh] = in.ts_by_key.try_emplace(c.origin.data_key, &c);
    if (!fresh)
      throw InputError(c.origin.file, c.origin.line, "data." + c.origin.data_key,
                       fmt::format("device-plugin config key '{}' is defined twice (also at {}:{})", c.origin.data_key,
                                   it->second->origin.file, it->second->origin.line));
  }
  if (const auto it = in.ts_by_key.find("default"); it != in.ts_by_key.end()) in.ts_default = it->second;
  else if (time_slicing_configs.size() == 1) in.ts_default = &time_slicing_configs.front();

  std::map<std::string, const K8sNodeExtras*> extras_of;
  for (const K8sNodeExtras& e : advertised) extras_of[e.node] = &e;
  Warnings warnings;
  std::vector<NodeCountMismatch> mismatches;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto e = extras_of.find(nodes[i].name);
    NodeSetup(nodes[i], e == extras_of.end() ? nullptr : e->second, source_per_node.empty() ? nullptr : source_per_node[i],
              in, warnings, mismatches)
        .run();
  }
  DeviceSetupReport report{warnings.lines(), {}};
  for (const NodeCountMismatch& m : mismatches) report.warnings.push_back(m.message);
  report.count_mismatches = std::move(mismatches);
  return report;
}

DeviceSetupReport apply_device_setup(K8sObjects& objects) {
  std::vector<const K8sNodeSource*> sources;  // the reader keeps one per node, in node order
  for (const K8sNodeSource& s : objects.node_sources) sources.push_back(&s);
  return apply_device_setup(objects.nodes, objects.time_slicing_configs, objects.mig_parted_configs, objects.node_extras,
                            sources);
}

}  // namespace gpufleet::io
