// Kubernetes objects in YAML or JSON files as JSON values: what the live server's cache takes
// (live/cluster_cache.h), for `gpufleet serve --replay` and a --snapshot file, which start from
// files rather than from the API server.
//
// Input: files or directories as readers/k8s/k8s_yaml.h takes them (k8s_input_files); every document, and
// every item of a List (`kind: List`, NodeList, PodList, ...; a List in a List unpacked too), is one
// object. Scalars become JSON
// strings (the YAML tree keeps no types: `8` and `"8"` read the same through readers/k8s/k8s_yaml.h, which
// takes quantities and integers from their text), a null scalar JSON null. Limits: YamlLimits per
// file, ObjectLimits::max_nodes + max_pods objects in all. Errors: InputError at the document
// (syntax, limits, a document that is not a mapping, a mapping key that is not a scalar).
#pragma once

#include <string>
#include <vector>

#include <map>

#include <nlohmann/json.hpp>

namespace gpufleet::io {

/// The objects of `paths`, in file order, then document order.
std::vector<nlohmann::json> read_k8s_json_objects(const std::vector<std::string>& paths);

/// The Node and Pod items of a posted List (`kubectl get nodes,pods -o json`: a v1 List, NodeList or
/// PodList), in order, each with its kind (the API's typed lists leave their items' kind out); items
/// of other kinds are skipped, counted by kind in `skipped` when given ("" for an item without one).
/// Throws InputError (`source`, field "items[i]...") for a value that is
/// not such a list, an item that is not an object, a Node or Pod without metadata.name (a string), a
/// Node or Pod given twice (name; namespace and name), or more than ObjectLimits::max_nodes + max_pods items.
std::vector<nlohmann::json> k8s_list_items(nlohmann::json list, const std::string& source,
                                           std::map<std::string, size_t>* skipped = nullptr);

}  // namespace gpufleet::io
