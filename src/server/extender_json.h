// The JSON answers of the extender's filter verb (k8s.io/kube-scheduler/extender/v1
// ExtenderFilterResult, Go field names), apart from HTTP: the server's /filter route
// (server/http_server.h) and the benchmarks (bench/live_bench.cpp) run the same code.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace gpufleet::server
