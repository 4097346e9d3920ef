// make_constant_step_time (step_time.h): every non-empty step takes the same time.
#include <cmath>
#include <memory>
#include <stdexcept>

#include "inference/step_time.h"

namespace gpufleet::inference {
namespace {

class ConstantStepTime final : public StepTimeModel {
 public:
  explicit ConstantStepTime(double seconds) : seconds_(seconds) {}
  double step_seconds(const StepBatch&) const override { return seconds_; }

 private:
  double seconds_;
};

}  // namespace

std::unique_ptr<StepTimeModel> make_constant_step_time(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) throw std::invalid_argument("constant step time must be a positive number of seconds");
  return std::make_unique<ConstantStepTime>(seconds);
}

}  // namespace gpufleet::inference
