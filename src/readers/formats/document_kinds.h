// What a YAML file holds, by its documents' kind and apiVersion, for the error when a file is given
// where another kind is expected (a Workload as --pools) or is empty.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "readers/formats/yaml_tree.h"

namespace gpufleet::io::detail {

/// The file's documents in words, in order of first appearance, with counts: "a Workload
/// (sim.gpufleet.io/v1)", "3 Node objects (v1)", "a NodePoolSet (gpufleet.io/v1) and an Autoscaling
/// (sim.gpufleet.io/v1)". A document without kind is "a document without kind"; null documents are
/// left out. "" when nothing is left (the file is empty or holds only empty documents).
std::string kinds_held(const std::vector<YamlNode>& docs);

/// Whether (`kind`, `api_version`) is one of gpufleet's own documents that a command reads
/// (Workload, NodePoolSet, Autoscaling, FaultSchedule, ServingCatalog).
bool is_gpufleet_kind(std::string_view kind, std::string_view api_version);

/// Throws InputError(file, line 0, field "kind") for a file without the `expected` document
/// (`kind` of `api_version`):
///   "the file is empty: expected a <kind> (<api_version>)" when kinds_held is "";
///   "the file holds <kinds_held>, not a <kind> (<api_version>)" otherwise, followed by the command
///   option that reads the first document's kind when it is one of gpufleet's own
///   ("; give it to simulate --workload").
[[noreturn]] void fail_without_kind(const std::string& file, const std::vector<YamlNode>& docs, std::string_view kind,
                                    std::string_view api_version);

}  // namespace gpufleet::io::detail
