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

Code FilterCode::code() const {
  if (reason_ == nullptr) return Code::kSuccess;
  return reason_->resolvable ? Code::kUnschedulable : Code::kUnschedulableAndUnresolvable;
}

Status FilterCode::status() const {
  if (reason_ == nullptr) return Status();
  return Status(code(), std::string(reason_->reason));
}

}  // namespace gpufleet::sched
