// PodGroup: a gang, pods that run all together or not at all. Plain data, no I/O.
//
// Read from either upstream object (the reader, readers/k8s/k8s_yaml.h, maps both to this type):
//  - scheduler-plugins scheduling.x-k8s.io/v1alpha1 PodGroup (spec.minMember,
//    spec.scheduleTimeoutSeconds); members carry the label scheduling.x-k8s.io/pod-group: <name>
//    (kubernetes-sigs/scheduler-plugins pkg/coscheduling, apis/scheduling/v1alpha1/types.go);
//  - Volcano scheduling.volcano.sh/v1beta1 PodGroup (spec.minMember, spec.queue,
//    spec.priorityClassName); members carry the annotation scheduling.k8s.io/group-name: <name>
//    (volcano-sh/apis pkg/apis/scheduling/v1beta1/types.go, KubeGroupNameAnnotationKey).
// The reader gives members of either kind the label kPodGroupLabel (Pod carries no annotations).
#pragma once

#include <cstdint>
#include <string>

namespace gpufleet {

/// The member label of scheduler-plugins' coscheduling and the member annotation of Volcano.
inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr const char* kVolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name";

struct PodGroup {
  std::string namespace_name = "default";
  std::string name;
  int32_t min_member = 1;              ///< spec.minMember: pods bound together, >= 1, <= the members
  double schedule_timeout_s = 60;      ///< scheduleTimeoutSeconds (coscheduling's default permit wait)
  std::string queue;                   ///< Volcano spec.queue (informational); empty otherwise
};

}  // namespace gpufleet
