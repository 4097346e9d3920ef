// GPU model constraints of a pod (openb `gpu_spec`).
#pragma once

#include <string_view>

namespace gpufleet {

/// Whether a pod whose gpu_spec is `spec` may use a node whose GPU model is `node_model`.
/// Rule (FGD simulator, pkg/utils/utils.go IsNodeAccessibleToPodByType): an empty spec matches every
/// node; otherwise a node without a GPU model is rejected; the spec is split on '|', empty items are
/// ignored, and the node is accepted when one item equals its model exactly; a spec whose items are
/// all empty (e.g. "|") accepts every node that has a model.
bool gpu_spec_allows(std::string_view spec, std::string_view node_model);

}  // namespace gpufleet
