// Helpers for tests of a scheduling cycle's per-node results: ranks in node order, and one row of
// NodeToStatus (the rejecting plugin, its registered reason, the Status it stands for and the node's
// own words) checked in full.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "model/cluster_state.h"
#include "model/pod.h"
#include "sched/framework/node_to_status.h"
#include "sched/framework/status.h"

namespace gpufleet::testing {

/// Node ranks 0..n-1: the scheduler breaks score ties in node order.
inline std::vector<uint32_t> identity_ranks(size_t n) {
  std::vector<uint32_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0u);
  return ranks;
}

/// What one node's entry in NodeToStatus should hold. `plugin` is "" and `words` "" for a node that
/// was not rejected (`code` kFits, `status` kSuccess).
struct NodeStatusRow {
  NodeId node;
  const char* plugin;
  sched::FilterCode code;
  sched::Code status;
  const char* words;  // the node's words, as FitError prints them
};

/// Checks `statuses` at `row.node` against the row: the plugin, the code, the Status (code, plugin,
/// the reason's generic message) and the words for this pod on this node.
inline void expect_node_status(const sched::NodeToStatus& statuses, const Pod& pod, const ClusterState& state,
                               const NodeStatusRow& row) {
  SCOPED_TRACE(row.node);
  const sched::Rejection rejection = statuses.at(row.node);
  EXPECT_EQ(rejection.rejected(), row.code.rejected());
  EXPECT_EQ(rejection.plugin_name(), row.plugin);
  EXPECT_EQ(rejection.code, row.code);
  const sched::Status status = rejection.status();
  EXPECT_EQ(status.code(), row.status);
  EXPECT_EQ(status.plugin(), row.plugin);
  EXPECT_EQ(status.message(), row.code.reason());
  const std::vector<std::string> words = rejection.node_reasons(pod, state, row.node);
  EXPECT_EQ(words, row.code.rejected() ? std::vector<std::string>{row.words} : std::vector<std::string>{});
}

}  // namespace gpufleet::testing
