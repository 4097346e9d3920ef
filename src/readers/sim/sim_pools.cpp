#include "readers/sim/sim_pools.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "model/extended_resource_toleration.h"

#include "readers/karpenter/karpenter_nodepool.h"
#include "readers/sim/fault_schedule.h"
#include "readers/k8s/k8s_yaml.h"
#include "readers/k8s/pool_file.h"
#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::kSimApiVersion;
using detail::seconds;
using detail::Source;

constexpr const char* kKind = detail::kSimSettingsKind;

// The simulator's own limits (inputs/sim/cluster_config.h), checked here too so that the error has a position.
constexpr double kMaxPerNodeHour = sim::kMaxSpotInterruptionsPerNodeHour;
constexpr double kMinIntervalS = sim::kMinTickIntervalSeconds;

// A tick interval: a number of seconds, positive and at least kMinIntervalS, at most seconds()'s.
double interval_seconds(const Field& f) {
  const double v = f.number();
  if (v <= 0) f.fail(fmt::format("{} must be positive", f.scalar()));
  if (v < kMinIntervalS) f.fail(fmt::format("{} is below the minimum of {:g} s", f.scalar(), kMinIntervalS));
  return seconds(f);
}

// A rate in events per node-hour (spotInterruptionsPerNodeHour): a finite number in
// [0, kMaxPerNodeHour]. Errors: "'s' is not a number", "s is negative", "s is above the maximum of
// 60 per node-hour".
double per_node_hour(const Field& f) {
  const double v = f.number();
  if (v < 0) f.fail(fmt::format("{} is negative", f.scalar()));
  if (v > kMaxPerNodeHour) f.fail(fmt::format("{} is above the maximum of {:g} per node-hour", f.scalar(), kMaxPerNodeHour));
  return v;
}

// admissionPlugins: the kube-apiserver admission plugins the simulation applies to every pod; the
// only one modelled is ExtendedResourceToleration (model/extended_resource_toleration.h).
void parse_admission_plugins(const Field& list, sim::ClusterConfig& config) {
  if (!list.present()) return;
  for (size_t i = 0, n = list.size(); i < n; ++i) {
    const Field plugin = list.at(i);
    const std::string name = plugin.required_str();
    if (name != kExtendedResourceTolerationPlugin)
      plugin.fail(fmt::format("unknown admission plugin '{}' (the simulation models {})", name, kExtendedResourceTolerationPlugin));
    config.extended_resource_toleration = true;
  }
}

void parse_autoscaler(const Field& a, sim::AutoscalerSettings& s) {
  if (!a.present()) return;
  a.require_map();
  a.only_keys({"enabled", "scaleDown", "expander", "scanIntervalSeconds", "scaleUpDelaySeconds", "scaleDownUnneededSeconds",
               "scaleDownDelayAfterAddSeconds", "unremovableRecheckSeconds", "utilizationThreshold", "maxNodeProvisionSeconds",
               "initialBackoffSeconds", "maxBackoffSeconds", "backoffResetSeconds", "launchFailureSeconds",
               "ignoreDaemonSetsUtilization"});
  s.enabled = a["enabled"].boolean(s.enabled);
  s.scale_down = a["scaleDown"].boolean(s.scale_down);
  s.ignore_daemon_sets_utilization = a["ignoreDaemonSetsUtilization"].boolean(s.ignore_daemon_sets_utilization);
  if (const Field e = a["expander"]; e.present()) {
    const std::string v = e.scalar();
    if (v == "least-waste") s.expander = sim::Expander::kLeastWaste;
    else if (v == "price") s.expander = sim::Expander::kPrice;
    else e.fail(fmt::format("unknown expander '{}' (expected least-waste, price)", v));
  }
  if (const Field f = a["scanIntervalSeconds"]; f.present()) s.scan_interval_s = interval_seconds(f);
  if (const Field f = a["scaleUpDelaySeconds"]; f.present()) s.scale_up_delay_s = seconds(f);
  if (const Field f = a["scaleDownUnneededSeconds"]; f.present()) s.scale_down_unneeded_s = seconds(f);
  if (const Field f = a["scaleDownDelayAfterAddSeconds"]; f.present()) s.scale_down_delay_after_add_s = seconds(f);
  if (const Field f = a["unremovableRecheckSeconds"]; f.present()) s.unremovable_recheck_s = seconds(f);
  if (const Field f = a["utilizationThreshold"]; f.present()) {
    s.utilization_threshold = f.number();
    if (s.utilization_threshold < 0 || s.utilization_threshold > 1) f.fail(fmt::format("{} is outside [0, 1]", f.scalar()));
  }
  if (const Field f = a["maxNodeProvisionSeconds"]; f.present()) {
    s.max_node_provision_s = seconds(f);
    if (s.max_node_provision_s <= 0) f.fail(fmt::format("{} must be positive", f.scalar()));
  }
  if (const Field f = a["initialBackoffSeconds"]; f.present()) s.initial_backoff_s = seconds(f);
  if (const Field f = a["maxBackoffSeconds"]; f.present()) s.max_backoff_s = seconds(f);
  if (s.max_backoff_s < s.initial_backoff_s) {
    const Field f = a["maxBackoffSeconds"].present() ? a["maxBackoffSeconds"] : a["initialBackoffSeconds"];
    f.fail(fmt::format("maxBackoffSeconds {:g} is below initialBackoffSeconds {:g}", s.max_backoff_s, s.initial_backoff_s));
  }
  if (const Field f = a["backoffResetSeconds"]; f.present()) s.backoff_reset_s = seconds(f);
  if (const Field f = a["launchFailureSeconds"]; f.present()) s.launch_failure_s = seconds(f);
}

void parse_consolidation(const Field& c, sim::ConsolidationSettings& s) {
  if (!c.present()) return;
  c.require_map();
  c.only_keys({"enabled", "threshold", "intervalSeconds", "consolidateAfterSeconds"});
  s.enabled = c["enabled"].boolean(s.enabled);
  if (const Field f = c["threshold"]; f.present()) {
    s.threshold = f.number();
    if (s.threshold < 0 || s.threshold > 1) f.fail(fmt::format("{} is outside [0, 1]", f.scalar()));
  }
  if (const Field f = c["intervalSeconds"]; f.present()) s.interval_s = interval_seconds(f);
  if (const Field f = c["consolidateAfterSeconds"]; f.present()) s.consolidate_after_s = seconds(f);
}

void parse_pool_settings(const Field& f, sim::SimPool& pool) {
  f.require_map();
  f.only_keys({"provisioner", "provisionSeconds", "capacityType", "reservedNodes", "spotInterruptionsPerNodeHour", "spotNoticeSeconds",
                "gpuAdvertiseDelaySeconds", "resourceSlices"});
  sim::PoolSettings& s = pool.settings;
  if (const Field p = f["provisioner"]; p.present()) {
    const std::string v = p.scalar();
    if (v == "cluster-autoscaler") s.provision_s = sim::kProvisionClusterAutoscalerS;
    else if (v == "karpenter") s.provision_s = sim::kProvisionKarpenterS;
    else p.fail(fmt::format("unknown provisioner '{}' (expected cluster-autoscaler, karpenter)", v));
  }
  if (const Field p = f["provisionSeconds"]; p.present()) s.provision_s = seconds(p);
  if (const Field c = f["capacityType"]; c.present()) {
    const std::string v = c.scalar();
    if (v == "on-demand") s.capacity_type = sim::CapacityType::kOnDemand;
    else if (v == "spot") s.capacity_type = sim::CapacityType::kSpot;
    else c.fail(fmt::format("unknown capacity type '{}' (expected on-demand, spot)", v));
    if (s.capacity_type == sim::CapacityType::kSpot && !pool.pool.spot_usd_per_hour)
      c.fail(fmt::format("pool {} has no spot price (prices.spot in its NodePoolSet)", pool.pool.name));
  }
  if (const Field r = f["reservedNodes"]; r.present()) {
    s.reserved_nodes = static_cast<int32_t>(r.integer(0, pool.pool.max_nodes));
    if (s.reserved_nodes > 0 && !pool.pool.reserved_usd_per_hour)
      r.fail(fmt::format("pool {} has no reserved price (prices.reserved in its NodePoolSet)", pool.pool.name));
    if (s.reserved_nodes > 0 && s.capacity_type == sim::CapacityType::kSpot) r.fail("a spot pool cannot hold reserved nodes");
  }
  if (const Field r = f["spotInterruptionsPerNodeHour"]; r.present()) s.spot_interruptions_per_hour = per_node_hour(r);
  if (const Field n = f["spotNoticeSeconds"]; n.present()) s.spot_notice_s = seconds(n);
  if (const Field g = f["gpuAdvertiseDelaySeconds"]; g.present()) s.gpu_advertise_delay_s = seconds(g);
  try {
    sim::validate_pool_settings(pool);  // checked above with positions; a safety net
  } catch (const std::invalid_argument& e) {
    f.fail(e.what());
  }
}

// DaemonSets (apps/v1) among the documents: the file is then read as Kubernetes objects, as `place`
// reads it (readers/k8s/k8s_yaml.h, with its errors), and its DaemonSets go to the config. One whose
// pods ask for GPUs or other devices is left out with a warning; so are the fields the Kubernetes
// reader reads but does not model (its not_modelled list).
// Dynamic Resource Allocation objects (resource.k8s.io) are read the same way, into ClusterConfig::dra.
void read_daemon_sets(std::string_view text, const std::string& source_name, const std::vector<detail::YamlNode>& docs,
                      const Source& src, sim::ClusterConfig& config) {
  bool any = false;
  for (const detail::YamlNode& doc : docs)
    if (doc.type == detail::YamlType::kMapping) {
      const Field root(doc, "", src);
      any |= root["kind"].str() == "DaemonSet" || root["apiVersion"].str().rfind("resource.k8s.io/", 0) == 0;
    }
  if (!any) return;
  K8sObjects objects = parse_k8s_text(text, source_name);
  config.dra = std::move(objects.dra);
  for (const NotModelled& f : objects.not_modelled)
    config.warnings.push_back(fmt::format("{}:{}:{}: field '{}': {} is not modelled ({} object(s)): {}", f.first.file, f.first.line,
                                          f.first.column, f.first.field, f.what, f.objects, f.consequence));
  for (DaemonSet& ds : objects.daemon_sets) {
    if (ds.pod.is_gpu_pod() || ds.pod.has_device_requests()) {
      config.warnings.push_back(fmt::format("{}: DaemonSet {}/{} requests nvidia.com/* devices, which simulate does not model for "
                                            "DaemonSets: its pods are left out",
                                            source_name, ds.namespace_name, ds.name));
      continue;
    }
    config.daemon_sets.push_back(std::move(ds));
  }
}

// The most devices the pools' ResourceSlice templates may give over all their nodes up to max (the
// fleet's catalog, sim::fleet_dra_catalog, holds one copy per node): e.g. 7,812 nodes with a
// 128-device slice. docs/input-limits.md.
constexpr int64_t kMaxPoolSliceDevices = 1'000'000;

// A pool's `resourceSlices` (PoolSettings::resource_slices): names of node-local ResourceSlices of the
// file, its template. Each is taken out of ClusterConfig::dra (a template reaches no node as written).
void read_pool_slices(const std::vector<std::pair<size_t, Field>>& refs, sim::ClusterConfig& config) {
  std::set<std::string> taken;
  int64_t copies = 0;  // devices of every pool's template slices times its max nodes
  for (const auto& [p, list] : refs) {
    sim::SimPool& pool = config.pools[p];
    if (list.size() == 0) list.fail("expected a list of ResourceSlice names");
    if (pool.pool.mig_devices || pool.pool.time_slicing_replicas)
      list.fail("a pool whose GPUs are DRA devices has no device-plugin sharing (remove its mig, timeSlicing or mps)");
    for (size_t i = 0, n = list.size(); i < n; ++i) {
      const Field f = list.at(i);
      const std::string name = f.required_str();
      auto it = std::find_if(config.dra.slices.begin(), config.dra.slices.end(), [&](const ResourceSlice& s) { return s.name == name; });
      if (it == config.dra.slices.end()) f.fail(fmt::format("no ResourceSlice '{}' in this file", name));
      if (it->node_name.empty())
        f.fail(fmt::format("ResourceSlice '{}' is not node-local (a pool's template slices set spec.nodeName; it is replaced by each node's name)", name));
      pool.settings.resource_slices.push_back(*it);
      taken.insert(name);
    }
    // Every node up to max gets a copy of the template's devices (sim::fleet_dra_catalog).
    int64_t devices = 0;
    for (const ResourceSlice& s : pool.settings.resource_slices) devices += static_cast<int64_t>(s.devices.size());
    copies += devices * pool.pool.max_nodes;
    if (copies > kMaxPoolSliceDevices)
      list.fail(fmt::format("the pools' ResourceSlice templates give {} devices over their nodes up to max, above {} (docs/input-limits.md)",
                            copies, kMaxPoolSliceDevices));
  }
  std::erase_if(config.dra.slices, [&](const ResourceSlice& s) { return taken.count(s.name) > 0; });
}

}  // namespace

sim::ClusterConfig parse_sim_cluster_text(std::string_view text, const std::string& source_name) {
  sim::ClusterConfig config;
  std::vector<K8sNodeSource> sources;
  std::vector<NodePool> pools = parse_pool_text(text, source_name, &sources);
  for (size_t i = 0; i < pools.size(); ++i) {
    const SourcePosition& at = sources[i].max_nodes;
    config.pools.push_back(sim::SimPool{std::move(pools[i]), {}, {at.file, at.line, at.column, at.field}});
  }
  Source src;
  src.file = source_name;
  bool found = false;
  std::vector<std::pair<size_t, Field>> slice_refs;  // (pool, its resourceSlices)
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  for (const detail::YamlNode& doc : docs) {
    if (doc.type != detail::YamlType::kMapping) continue;
    const Field root(doc, "", src);
    if (root["apiVersion"].str() != kSimApiVersion) continue;
    const Field kind = root["kind"];
    if (kind.str() == kInstanceTypesKind) continue;  // readers/karpenter/karpenter_nodepool.h
    if (kind.str() == kFaultScheduleKind) continue;  // read below, once the pools' settings are known
    if (kind.str() != kKind)
      kind.fail(fmt::format("unknown kind '{}' for {} in a pool file (expected {}, {} or {})", kind.str(), kSimApiVersion, kKind,
                            kFaultScheduleKind, kInstanceTypesKind));
    if (found) kind.fail(fmt::format("a second {} document (one per file)", kKind));
    found = true;
    root.only_keys({"apiVersion", "kind", "metadata", "autoscaler", "consolidation", "pools", "admissionPlugins"});
    parse_admission_plugins(root["admissionPlugins"], config);
    parse_autoscaler(root["autoscaler"], config.autoscaler);
    parse_consolidation(root["consolidation"], config.consolidation);
    root["pools"].each_entry([&](const std::string& name, const Field& f) {
      for (size_t i = 0; i < config.pools.size(); ++i)
        if (config.pools[i].pool.name == name) {
          if (f.is_map() && f["resourceSlices"].present()) slice_refs.emplace_back(i, f["resourceSlices"]);
          return parse_pool_settings(f, config.pools[i]);
        }
      std::string known;
      for (const sim::SimPool& p : config.pools) known += known.empty() ? p.pool.name : ", " + p.pool.name;
      f.fail(fmt::format("unknown pool '{}' (pools in this file: {})", name, known));
    });
  }
  read_karpenter_documents(docs, src, config);
  read_daemon_sets(text, source_name, docs, src, config);
  read_pool_slices(slice_refs, config);
  const std::vector<std::string> node_pools = node_pool_names(config);
  if (std::optional<sim::FaultSchedule> faults = parse_fault_schedule_text(text, source_name, config.pools, false, &node_pools))
    config.faults = std::move(*faults);
  return config;
}

sim::ClusterConfig read_sim_cluster_file(const std::string& path) { return parse_sim_cluster_text(read_yaml_file(path), path); }

}  // namespace gpufleet::io
