// Registry: plugin name -> factory (kube-scheduler pkg/scheduler/framework/runtime/registry.go).
// The in-tree plugins' table is sched/plugins/registry.h; build_profile (profile.h) creates the
// plugins a profile names through it.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/capacity_outlook.h"
#include "model/cluster_state.h"
#include "model/pod.h"
#include "model/pod_disruption_budget.h"
#include "sched/framework/interface.h"
#include "sched/framework/plugin_args.h"

namespace gpufleet::sched {

class FragmentationMeasure;

/// What plugins may need from the run besides their arguments (kube passes the informers' listers
/// through framework.Handle). Every field is optional; a factory that needs one throws
/// std::invalid_argument without it. Pointers and spans must outlive the plugins.
struct PolicyContext {
  std::shared_ptr<const FragmentationMeasure> frag;  ///< FGDScore, fgd: the trace's typical pods
  std::vector<std::string> gpu_models;               ///< online policies: ClusterState::gpu_models()
  /// GpufleetScore: the state it will schedule on (read once, for its GPU models and node classes)
  const ClusterState* cluster = nullptr;
  /// GpufleetScore: the nodes that state may hold (model/capacity_outlook.h; copied); nullptr = the
  /// state's nodes, which do not change.
  const CapacityOutlook* outlook = nullptr;
  std::span<const PodDisruptionBudget> pdbs{};  ///< DefaultPreemption: the PodDisruptionBudgets
  std::span<const Pod> workload_pods{};       ///< DefaultPreemption: every pod of the run (PDB expected counts)
};

/// Creates a plugin from its arguments (nullptr: defaults). Throws std::invalid_argument for
/// arguments of another plugin's type or a context that lacks what the plugin needs.
using PluginFactory = std::function<std::shared_ptr<Plugin>(const PluginArgs* args, const PolicyContext& context)>;

struct RegistryEntry {
  std::string name;
  PluginFactory factory;
};

class Registry {
 public:
  Registry() = default;
  /// Throws std::invalid_argument for a repeated name (kube: "a plugin named X already exists").
  explicit Registry(std::vector<RegistryEntry> entries);
  void add(RegistryEntry entry);
  /// The factory registered under `name`, or nullptr.
  const PluginFactory* find(std::string_view name) const;
  /// Every name, in registration order.
  std::vector<std::string_view> names() const;

 private:
  std::vector<RegistryEntry> entries_;
};

}  // namespace gpufleet::sched
