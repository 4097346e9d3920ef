// Writers of the files `gpufleet plan` adds for inference services: the planned workload as a workload
// file `simulate --workload` reads (readers/sim/workload_file.h), and the KEDA ScaledObjects
// (keda.sh/v1alpha1) of the services the plan autoscales, as users apply them and as the workload's
// `autoscaler.kubernetes` reads them. Only the subset of the format a plan's workload uses is written;
// anything else is refused by name, so that reading the file back gives the same workload.
#pragma once

#include <map>
#include <string>

#include "inputs/sim/workload.h"

namespace gpufleet::io {

/// The workload as a workload file written at `out_path`: horizonSeconds, the jobs and services
/// (name, namespace, arrival, pods or replicas, gpus, gpuMilli, cpu, memory, duration, checkpoints,
/// priority, capacity, pools, doNotDisrupt, minReadySeconds) and each service's `inference:` block
/// (model, every engine argument, a trace (its path made relative to out_path's folder) or a
/// generator with lognormal lengths, router, SLO, cold start, scrape interval, and the autoscaler:
/// `kubernetes:` the file of `scaled_object_files[service]`, relative to out_path's folder, and
/// `predictive:`). Numbers print in their shortest exact form. `comment` goes first as comments.
/// Throws std::invalid_argument naming what it cannot write: MIG requests, nodeSelector,
/// tolerations, disruption budgets, queues, topology, ScaledJobs, rollouts, external metrics,
/// autoscalers of plain services, a non-default rolling update, a step profile, an empirical token
/// law, an HPA, or a ScaledObject without its file.
std::string sim_workload_yaml(const sim::Workload& workload, const std::string& out_path,
                              const std::map<std::string, std::string>& scaled_object_files, const std::string& comment);

/// The ScaledObject of the inference service `service` (its autoscaler's keda part) as YAML; throws
/// std::invalid_argument when it has none.
std::string keda_scaled_object_yaml(const sim::Workload& workload, const std::string& service, const std::string& comment);

}  // namespace gpufleet::io
