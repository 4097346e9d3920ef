#include "sched/framework/profile_config.h"

namespace gpufleet::sched {

std::string_view extension_point_name(ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kQueueSort: return "queueSort";
    case ExtensionPoint::kPreFilter: return "preFilter";
    case ExtensionPoint::kFilter: return "filter";
    case ExtensionPoint::kPostFilter: return "postFilter";
    case ExtensionPoint::kPreScore: return "preScore";
    case ExtensionPoint::kScore: return "score";
    case ExtensionPoint::kSelectGpu: return "selectGpu";
    case ExtensionPoint::kReserve: return "reserve";
    case ExtensionPoint::kPermit: return "permit";
    case ExtensionPoint::kBind: return "bind";
    case ExtensionPoint::kCount: break;
  }
  return "unknown";
}

}  // namespace gpufleet::sched
