// Kubernetes text read once and read again before other text: the live cluster cache reads every
// watch event's object together with the static objects of --cluster-config (live/cluster_cache.h),
// and loading their YAML again for every event cost most of the event (LiveApplyEventStatic in
// bench/live_bench.cpp).
//
// PreloadedK8sText keeps the YAML documents of a text (loaded once, readers/formats/yaml_field.h
// load_documents); parse_k8s_text_after(first, text, source) reads first's documents, then `text`'s,
// through one reader (readers/k8s/k8s_yaml.h parse_k8s_text): the same objects, warnings and checks
// across both (a pod's priorityClassName resolved against first's PriorityClasses, a duplicate
// across both refused) as parse_k8s_text of the two texts joined by "---", except that an error in
// `text` names `source_name` with its line and column in `text` itself.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "readers/formats/input_limits.h"
#include "readers/k8s/k8s_objects.h"

namespace gpufleet::io {

class PreloadedK8sText {
 public:
  /// Loads `text`'s YAML documents (`source_name` names it in errors). Throws InputError for a YAML
  /// error; the objects are checked by parse_k8s_text_after (call it once with an empty text to check them).
  PreloadedK8sText(std::string text, std::string source_name);
  ~PreloadedK8sText();
  struct Loaded;
  const Loaded& loaded() const { return *loaded_; }

 private:
  std::shared_ptr<const Loaded> loaded_;
};

/// `first`'s documents, then `text`'s, read by one reader (see the top of this file). Throws InputError.
K8sObjects parse_k8s_text_after(const PreloadedK8sText& first, std::string_view text, const std::string& source_name,
                                const ObjectLimits& limits = kObjectLimits);

}  // namespace gpufleet::io
