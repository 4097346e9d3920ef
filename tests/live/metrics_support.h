// A live::Snapshot built straight from Kubernetes files, as the cluster cache builds it from the API
// server's objects (the same reader and set-up: readers/k8s/place_inputs.h, place/prepared_cluster.h), for the
// metrics tests (tests/live/cluster_metrics_test.cpp, tests/live/metrics_fixture.cpp).
#pragma once

#include <memory>
#include <string>

#include "readers/k8s/place_inputs.h"
#include "live/cluster_cache.h"
#include "place/prepared_cluster.h"

namespace gpufleet::testing {

/// The snapshot of the nodes and pods of `path` (one file holding both), generation 1, default
/// policy and seed. Throws what the readers throw.
inline std::unique_ptr<live::Snapshot> snapshot_of_file(const std::string& path) {
  auto s = std::make_unique<live::Snapshot>();
  s->generation = 1;
  s->inputs = io::read_place_inputs({path}, {path});
  s->cluster = place::prepare_cluster(s->inputs.input, place::PlaceOptions{});
  for (size_t i = 0; i < s->inputs.input.pods.size(); ++i) {
    const Pod& p = s->inputs.input.pods[i];
    s->pod_by_key.emplace(p.namespace_name + "/" + p.name, i);
    if (!p.uid.empty()) s->pod_by_uid.emplace(p.uid, i);
  }
  return s;
}

}  // namespace gpufleet::testing
