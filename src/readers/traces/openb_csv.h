// Readers for the Alibaba "openb" trace (cluster-trace-gpu-v2023) CSV files.
//
// Node list columns: sn, cpu_milli, memory_mib, gpu, model.
// Pod list columns, 11-column layout: name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
//   pod_phase, creation_time, deletion_time, scheduled_time; 5-column layout (multigpu*): the first five.
// Columns are found by header name, in any order; extra columns are ignored.
// Units: cpu_milli milli-cores, memory_mib MiB (kept as Node/Pod::memory_bytes), gpu_milli thousandths
// of one GPU per GPU.
//
// Validation (each violation throws InputError naming file, line and field): a missing required
// column; a row with fewer fields than the header; a non-integer or negative number; num_gpu above
// kMaxGpusPerPod; gpu_milli above 1000; num_gpu and gpu_milli not both zero or both positive; a
// multi-GPU pod with gpu_milli below 1000; a node with 0 CPU or memory, or more than
// kMaxGpusPerNode GPUs, or GPUs without a model; a duplicate name; an empty file; a qos other than LS,
// BE, Burstable, Guaranteed or a pod_phase other than Running, Failed, Pending, Succeeded (the values
// the trace README lists; an empty cell means not given). pod_phase is only validated.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/node.h"
#include "model/pod.h"
#include "readers/formats/text_file.h"
#include "inputs/sim/openb_trace.h"

namespace gpufleet::io {

/// Parses a node list from CSV text; `source` names it in errors.
std::vector<Node> parse_openb_nodes(std::string_view text, const std::string& source);
/// Parses a pod list (either layout) from CSV text; `source` names it in errors.
std::vector<Pod> parse_openb_pods(std::string_view text, const std::string& source);

/// Parses an 11-column pod list with its times (creation_time, deletion_time, scheduled_time, in
/// seconds; scheduled_time may be empty) for `gpufleet simulate --openb-pods` (inputs/sim/openb_trace.h).
/// Besides the pod checks above: a missing time column, a negative or non-integer time, a deletion
/// before the creation, a scheduled_time outside [creation, deletion]. Throws InputError.
std::vector<sim::TracePod> parse_openb_trace(std::string_view text, const std::string& source);

/// Reads and parses a file. Throws InputError (line 0) when it cannot be read.
std::vector<Node> read_openb_nodes(const std::string& path);
std::vector<Pod> read_openb_pods(const std::string& path);
std::vector<sim::TracePod> read_openb_trace(const std::string& path);

}  // namespace gpufleet::io
