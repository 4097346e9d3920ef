#include "sched/framework/status.h"

namespace gpufleet::sched {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kSuccess: return "Success";
    case Code::kError: return "Error";
    case Code::kUnschedulable: return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::kWait: return "Wait";
    case Code::kSkip: return "Skip";
  }
  return "Unknown";
}

std::string Status::message() const {
  std::string out;
  for (const std::string& r : reasons_) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

std::string_view filter_reason(FilterCode code) {
  switch (code) {
    case FilterCode::kFits: return "fits";
    case FilterCode::kInsufficientCpu: return "Insufficient cpu";
    case FilterCode::kInsufficientMemory: return "Insufficient memory";
    case FilterCode::kTooManyPods: return "Too many pods";
    case FilterCode::kInsufficientGpu: return "Insufficient nvidia.com/gpu";
    case FilterCode::kGpuModelMismatch: return "node(s) didn't match pod's GPU model constraint";
    case FilterCode::kUntoleratedTaint: return "node(s) had untolerated taint(s)";
    case FilterCode::kNodeAffinityMismatch: return "node(s) didn't match Pod's node affinity/selector";
    case FilterCode::kInsufficientMig: return "Insufficient nvidia.com/mig-<profile>";
    case FilterCode::kInsufficientGpuShared: return "Insufficient nvidia.com/gpu.shared";
    case FilterCode::kSharedRequestAboveOne:
      return "node(s) refuse more than one shared GPU replica per pod (failRequestsGreaterThanOne)";
    case FilterCode::kAntiAffinityRulesNotMatch: return "node(s) didn't match pod anti-affinity rules";
    case FilterCode::kExistingAntiAffinityRulesNotMatch: return "node(s) didn't satisfy existing pods anti-affinity rules";
    case FilterCode::kNodeUnschedulable: return "node(s) were unschedulable";
    case FilterCode::kAffinityRulesNotMatch: return "node(s) didn't match pod affinity rules";
    case FilterCode::kCannotAlign: return "cannot align pod";
    case FilterCode::kCount: break;
  }
  return "unknown";
}

bool filter_code_resolvable(FilterCode code) {
  switch (code) {
    case FilterCode::kInsufficientCpu:
    case FilterCode::kInsufficientMemory:
    case FilterCode::kTooManyPods:
    case FilterCode::kInsufficientGpu:
    case FilterCode::kInsufficientMig:
    case FilterCode::kInsufficientGpuShared:
    case FilterCode::kAntiAffinityRulesNotMatch:
    case FilterCode::kExistingAntiAffinityRulesNotMatch:
    case FilterCode::kCannotAlign:
      return true;
    case FilterCode::kFits:
    case FilterCode::kGpuModelMismatch:
    case FilterCode::kUntoleratedTaint:
    case FilterCode::kNodeAffinityMismatch:
    case FilterCode::kSharedRequestAboveOne:  // the device plugin's rule, whatever runs on the node
    case FilterCode::kNodeUnschedulable:
    case FilterCode::kAffinityRulesNotMatch:
    case FilterCode::kCount:
      return false;
  }
  return false;
}

Status filter_status(FilterCode code) {
  if (code == FilterCode::kFits) return Status();
  return Status(filter_code_resolvable(code) ? Code::kUnschedulable : Code::kUnschedulableAndUnresolvable,
                std::string(filter_reason(code)));
}

}  // namespace gpufleet::sched
