// Reader for the Gateway API Inference Extension objects a Kubernetes user writes for inference-aware
// routing (inference/endpoint_picker.h; docs/inference-routing.md):
//  - EndpointPickerConfig (inference.networking.x-k8s.io/v1alpha1): the endpoint picker's
//    --config-file. plugins [{name, type, parameters}], schedulingProfiles [{name, plugins
//    [{pluginRef, weight}]}], saturationDetector {pluginRef}, featureGates, dataLayer, parser,
//    flowControl. Parameters per type as upstream (v1.5.0) decodes them: prefix-cache-scorer
//    {autoTune, blockSizeTokens, blockSize (deprecated: > 0 without blockSizeTokens is an error),
//    maxPrefixBlocksToMatch, maxPrefixTokensToMatch, lruCapacityPerServer}; utilization-detector
//    {queueDepthThreshold > 0, kvCacheUtilThreshold in (0, 1], metricsStalenessThreshold (a Go
//    duration, > 0), headroom >= 0}; prefix-cache-affinity-filter {affinityThreshold <= 1,
//    explorationProbability in [0, 1], maxTTFTPenaltyMs >= 0}; max-score-picker and random-picker
//    {maxNumOfEndpoints}; the other types take none. Not modelled, and refused at the field: the
//    flowControl section and the flowControl feature gate (the EPP's queues), plugin types outside
//    inference::kEppPluginTypes, several profiles. dataLayer and parser are accepted with a warning
//    (the picker reads the replicas' gauges directly; requests carry no text).
//  - InferencePool (inference.networking.k8s.io/v1): metadata.name/namespace, spec.selector.matchLabels
//    (at least one), spec.targetPorts (1..8 unique numbers 1..65535), spec.appProtocol (http |
//    kubernetes.io/h2c), spec.endpointPickerRef {group, kind (Service), name (required), port.number
//    (required for a Service), failureMode FailOpen | FailClose}.
//  - InferenceObjective (inference.networking.x-k8s.io/v1alpha2): metadata.name/namespace,
//    spec.priority (integer; unset = 0), spec.poolRef {group, kind, name (required)}; poolRef must
//    name an InferencePool of the same namespace in the same input.
// Other kinds are skipped with one warning per kind (a whole manifest can be given). At most one
// EndpointPickerConfig. Unknown keys are errors. Every error is an InputError naming file, line,
// column and field, including the configuration's references (a pluginRef naming no plugin).
// Limits: readers/formats/input_limits.h YamlLimits, and the bounds stated per field in
// docs/input-limits.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inference/endpoint_picker.h"

namespace gpufleet::io {

struct EndpointPickerObjects {
  std::optional<inference::EndpointPickerConfig> config;  ///< nullopt: none in the input
  /// config (or the default when none) with the loader's defaults applied.
  std::shared_ptr<const inference::ResolvedEndpointPicker> resolved;
  std::vector<inference::InferencePool> pools;
  std::vector<inference::InferenceObjective> objectives;
  std::vector<std::string> warnings;
};

/// Parses the documents of `text`; `source_name` names it in errors.
EndpointPickerObjects parse_endpoint_picker_text(std::string_view text, const std::string& source_name);
/// Reads one YAML file (see the top of this file).
EndpointPickerObjects read_endpoint_picker_file(const std::string& path);

/// The InferenceObjective the requests name: `name`'s, or with `name` empty the file's only one
/// (nullptr when the file has none: priority 0). Throws std::invalid_argument ("no InferenceObjective
/// 'x' in FILE", or, with `name` empty and several in the file, "FILE has N InferenceObjectives (a,
/// b): name one") for the caller to report at its flag or field.
const inference::InferenceObjective* select_objective(const EndpointPickerObjects& objects, const std::string& name,
                                                      const std::string& file);

}  // namespace gpufleet::io
