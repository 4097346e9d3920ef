// The JSON answers of the extender's filter and prioritize verbs (k8s.io/kube-scheduler/extender/v1
// ExtenderFilterResult and HostPriorityList, Go field names), apart from HTTP: the server's /filter
// and /prioritize routes (server/http_server.h) and the benchmarks (bench/live_bench.cpp) run the
// same code. The answers are written directly (no JSON tree), byte for byte as nlohmann::json's
// dump() writes them: keys in byte order, no whitespace, the same escapes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "live/cluster_cache.h"
#include "live/extender.h"
#include "readers/kube_api/extender_args.h"

namespace gpufleet::server {

/// The ExtenderFilterResult for `answer` to `args`: with NodeNames (nodeCacheCapable) the passing
/// names in NodeNames and "Nodes": null; else the passing Node objects echoed in Nodes.items and
/// "NodeNames": null. FailedNodes and FailedAndUnresolvableNodes map node -> reason; "Error" is
/// answer.error; "gpufleetNote" (ignored by kube-scheduler) only when answer.note is set. Keys in
/// byte order, no whitespace (as nlohmann::json's dump()).
std::string filter_result_json(const io::ExtenderArgs& args, const live::FilterAnswer& answer);

/// A whole filter request: the body read (io::parse_extender_args, InputError on a bad one), the
/// decision on `snapshot` (live::extender_filter) and its ExtenderFilterResult.
std::string filter_response(const live::Snapshot& snapshot, std::string_view body);

/// The HostPriorityList for `scores`, in their order: [{"Host":"node-1","Score":10},...]; "[]" when
/// empty.
std::string prioritize_result_json(const std::vector<live::HostScore>& scores);

/// A whole prioritize request: the body read (io::parse_extender_args, InputError on a bad one), the
/// scores on `snapshot` (live::extender_prioritize) and its HostPriorityList.
std::string prioritize_response(const live::Snapshot& snapshot, std::string_view body);

}  // namespace gpufleet::server
