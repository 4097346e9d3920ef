// Reader for `gpufleet simulate --pools FILE`: a node-pool file (docs/node-pools.md, read with
// io::parse_pool_text) that may also hold one simulation settings document:
//
//   apiVersion: sim.gpufleet.io/v1
//   kind: Autoscaling
//   admissionPlugins: [ExtendedResourceToleration]   # optional; the only kube-apiserver admission
//                                      # plugin modelled (model/extended_resource_toleration.h)
//   autoscaler:                        # all optional; defaults in inputs/sim/cluster_config.h
//     enabled: true                    # false: a static cluster (pools keep their size)
//     scaleDown: true
//     expander: least-waste            # or price
//     scanIntervalSeconds: 10          # at least 1
//     scaleUpDelaySeconds: 30
//     scaleDownUnneededSeconds: 600
//     scaleDownDelayAfterAddSeconds: 600
//     unremovableRecheckSeconds: 300
//     utilizationThreshold: 0.5
//     ignoreDaemonSetsUtilization: false   # CA --ignore-daemonsets-utilization
//   consolidation:                     # Karpenter-style; all optional; defaults in inputs/sim/cluster_config.h
//     enabled: false
//     threshold: 0.4                   # candidates: below this share of their GPUs requested
//     intervalSeconds: 10              # at least 1
//     consolidateAfterSeconds: 0
//   pools:                             # optional; per pool name, all keys optional
//     training-h100:
//       provisioner: cluster-autoscaler   # or karpenter: sets the default provisionSeconds (180 / 60)
//       provisionSeconds: 180
//       capacityType: on-demand           # or spot (needs prices.spot)
//       reservedNodes: 2                  # needs prices.reserved; on-demand pools only
//       spotInterruptionsPerNodeHour: 0.002  # 0..60
//       spotNoticeSeconds: 120
//       resourceSlices: [a100-gpu]        # DRA: node-local ResourceSlices of this file, the pool's
//                                         # template (sim::PoolSettings::resource_slices)
//
// It may also hold one FaultSchedule document (the same apiVersion; readers/sim/fault_schedule.h,
// docs/faults.md), read into ClusterConfig::faults after the pools and their settings.
//
// It may also hold apps/v1 DaemonSets: the file is then read as Kubernetes objects as well
// (readers/k8s/k8s_yaml.h, with its errors), and its DaemonSets go to ClusterConfig::daemon_sets; one
// whose pods ask for nvidia.com/* devices is left out with a warning (ClusterConfig::warnings), as
// are the template fields that reader reads but does not model. Its Dynamic Resource Allocation
// objects (resource.k8s.io) are read the same way into ClusterConfig::dra, less the slices a pool
// names in resourceSlices (a name that is not a slice of the file, or a slice without nodeName, is
// an error at the name).
//
// The apiVersion is sim.gpufleet.io/v1, not gpufleet.io/v1, because the node-pool reader skips
// documents outside gpufleet.io/ (so the same file still works with `gpufleet place`). A kind
// Autoscaling document with another apiVersion (or none), or a sim.gpufleet.io/ document of another
// version, is an error at its apiVersion (at kind when apiVersion is missing), not skipped: the run
// would silently use the defaults (checked by readers/k8s/pool_file.h, which reads the file first). Full
// description: docs/simulate.md.
//
// Errors throw InputError with file, line, column and field path: unknown keys, an unknown pool
// name, an admission plugin other than ExtendedResourceToleration, a second Autoscaling document, an unknown expander / provisioner / capacity type, negative
// times or rates, times above 1e10 s (readers/formats/yaml_field.h seconds()), a spot interruption rate above 60
// per node-hour, a threshold outside [0, 1], a scan or consolidation interval below 1 s, reserved nodes above
// max or without a reserved price, a spot pool without a spot price, plus everything the node-pool
// reader checks.
#pragma once

#include <string>
#include <string_view>

#include "inputs/sim/cluster_config.h"

namespace gpufleet::io {

/// Reads the pools and settings (see above). Throws InputError.
sim::ClusterConfig read_sim_cluster_file(const std::string& path);

/// Parses the text; `source_name` names it in errors. Throws InputError.
sim::ClusterConfig parse_sim_cluster_text(std::string_view text, const std::string& source_name);

}  // namespace gpufleet::io
