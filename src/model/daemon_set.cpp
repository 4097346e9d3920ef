#include "model/daemon_set.h"

namespace gpufleet {
namespace {

// v1helper.AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator, value and effect
// (Toleration.MatchToleration) is replaced by `t`, in its place; otherwise `t` is appended.
void add_or_update(std::vector<Toleration>& tolerations, Toleration t) {
  for (Toleration& old : tolerations)
    if (old.key == t.key && old.operator_ == t.operator_ && old.value == t.value && old.effect == t.effect) {
      old = std::move(t);
      return;
    }
  tolerations.push_back(std::move(t));
}

}  // namespace

void add_daemon_pod_tolerations(Pod& pod, bool host_network) {
  std::vector<Toleration>& t = pod.constraints.tolerations;
  add_or_update(t, {"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", std::nullopt});
  add_or_update(t, {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", std::nullopt});
  add_or_update(t, {"node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule", std::nullopt});
  add_or_update(t, {"node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule", std::nullopt});
  add_or_update(t, {"node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule", std::nullopt});
  add_or_update(t, {"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule", std::nullopt});
  if (host_network) add_or_update(t, {"node.kubernetes.io/network-unavailable", "Exists", "", "NoSchedule", std::nullopt});
}

}  // namespace gpufleet
