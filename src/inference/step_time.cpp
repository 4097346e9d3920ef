#include "inference/step_time.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace gpufleet::inference {
namespace {

bool empty_batch(const StepBatch& b) { return b.num_seqs <= 0 && b.prefill_tokens <= 0 && b.decode_tokens <= 0; }

class RooflineStepTime final : public StepTimeModel {
 public:
  RooflineStepTime(const ServingCatalog& catalog, const EngineArgs& args, const ReplicaHardware& hw) {
    validate_engine_args(args);
    validate_replica_hardware(hw);
    const LlmModel* model = &catalog.model(args.model);
    const GpuPerformance* gpu = &catalog.gpu(hw.gpu);
    const LatencyConstants& c = catalog.latency;
    const double tp = args.tensor_parallel_size;
    const double wbytes = precision_bytes(args.dtype);

    // MoE: params = shared + experts' params X, active = shared + X x k / E, so X = (params - active)
    // / (1 - k / E). A step over n tokens reads each expert with probability 1 - (1 - k / E)^n.
    if (model->experts > 1 && model->experts_per_token < model->experts && model->active_params < model->params) {
      expert_share_ = static_cast<double>(model->experts_per_token) / model->experts;
      const double expert_params = (model->params - model->active_params) / (1 - expert_share_);
      expert_bytes_ = expert_params * wbytes / tp;
      shared_bytes_ = (model->params - expert_params) * wbytes / tp;
    } else {
      shared_bytes_ = model->params * wbytes / tp;
    }
    const double kv_heads_per_gpu = std::max(1.0, static_cast<double>(model->kv_heads) / tp);
    kv_bytes_per_token_ = 2.0 * model->layers * kv_heads_per_gpu * model->head_dim * precision_bytes(args.kv_cache_dtype);
    const double active = model->active_params > 0 ? model->active_params : model->params;
    flops_per_token_ = 2 * active / tp;
    attention_flops_per_pair_ = 4.0 * model->layers * model->heads * model->head_dim / tp;

    bandwidth_ = gpu->memory_bandwidth_gb_s * 1e9 * c.decode_bandwidth_efficiency * hw.bandwidth_fraction;
    const double tflops = args.dtype == Precision::kFp8 && gpu->fp8_tflops > 0 ? gpu->fp8_tflops : gpu->bf16_tflops;
    peak_flops_ = tflops * 1e12 * c.prefill_efficiency(gpu->name) * hw.compute_fraction;
    if (!(bandwidth_ > 0) || !(peak_flops_ > 0))
      throw std::invalid_argument(fmt::format("GPU '{}' has no bandwidth or FLOPS in the serving catalog", gpu->name));
    step_overhead_s_ = c.step_overhead_s;
    per_sequence_overhead_s_ = c.per_sequence_overhead_s;
    frontend_ = {c.frontend_s, c.frontend_per_request_s, c.frontend_chat_request_s, c.frontend_per_output_token_s};
    if (args.tensor_parallel_size > 1) {
      if (!(gpu->interconnect_gb_s > 0))
        throw std::invalid_argument(fmt::format("GPU '{}' has no interconnect bandwidth for tensor parallelism", gpu->name));
      allreduces_ = 2.0 * model->layers;
      allreduce_latency_s_ = c.allreduce_latency_s;
      // Ring all-reduce: each GPU sends and receives 2 (TP - 1) / TP of the message; activations bf16.
      allreduce_s_per_token_ = model->hidden * 2.0 * 2 * (tp - 1) / tp / (gpu->interconnect_gb_s * 1e9);
    }
  }

  double step_seconds(const StepBatch& b) const override {
    if (empty_batch(b)) return 0;
    const double tokens = static_cast<double>(std::max(0, b.prefill_tokens)) + std::max(0, b.decode_tokens);
    const double context = static_cast<double>(std::max<int64_t>(0, b.context_tokens));
    double weights = shared_bytes_;
    if (expert_bytes_ > 0) weights += expert_bytes_ * (1 - std::pow(1 - expert_share_, tokens));
    const double bytes = weights + (context + tokens) * kv_bytes_per_token_;  // KV read + the new tokens' KV write
    const double flops = flops_per_token_ * tokens + attention_flops_per_pair_ * (std::max(0.0, b.prefill_attention_token_pairs) + context);
    double t = std::max(bytes / bandwidth_, flops / peak_flops_) + step_overhead_s_ +
               per_sequence_overhead_s_ * std::max(0, b.num_seqs);
    t += allreduces_ * (allreduce_latency_s_ + tokens * allreduce_s_per_token_);
    return t;
  }

  FrontendCosts frontend() const override { return frontend_; }

 private:
  double shared_bytes_ = 0;       // per GPU, read every step
  double expert_bytes_ = 0;       // per GPU, MoE experts (read when routed to)
  double expert_share_ = 0;       // k / E
  double kv_bytes_per_token_ = 0;  // per GPU
  double flops_per_token_ = 0;
  double attention_flops_per_pair_ = 0;
  double bandwidth_ = 0;          // achieved, B/s
  double peak_flops_ = 0;         // achieved, FLOP/s
  double step_overhead_s_ = 0;
  double per_sequence_overhead_s_ = 0;
  double allreduces_ = 0;
  double allreduce_latency_s_ = 0;
  double allreduce_s_per_token_ = 0;
  FrontendCosts frontend_;
};

// y at x on the points (xs, ys), xs ascending and distinct: linear between neighbours, the first y
// below the first x, linear extrapolation from the last two above the last x (the last y if one).
double interpolate(const std::vector<std::pair<double, double>>& pts, double x) {
  if (x <= pts.front().first || pts.size() == 1) return x <= pts.front().first ? pts.front().second : pts.back().second;
  size_t i = 1;
  while (i + 1 < pts.size() && pts[i].first < x) ++i;
  const auto& [x0, y0] = pts[i - 1];
  const auto& [x1, y1] = pts[i];
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

class ProfileStepTime final : public StepTimeModel {
 public:
  explicit ProfileStepTime(std::vector<StepProfileRow> rows) {
    if (rows.empty()) throw std::invalid_argument("the step-time profile table is empty");
    min_step_s_ = rows.front().step_s;
    for (const StepProfileRow& r : rows) {
      if (!(r.step_s > 0) || !std::isfinite(r.step_s))
        throw std::invalid_argument(fmt::format("step time {} s (num_seqs {}, tokens {}) is not positive", r.step_s,
                                                r.num_seqs, r.tokens));
      if (r.num_seqs < 1 || r.tokens < 0)
        throw std::invalid_argument(fmt::format("profile row num_seqs {}, tokens {}: num_seqs must be >= 1 and tokens >= 0",
                                                r.num_seqs, r.tokens));
      auto& line = by_seqs_[r.num_seqs];
      if (!line.emplace(r.tokens, r.step_s).second)
        throw std::invalid_argument(fmt::format("profile row num_seqs {}, tokens {} appears twice", r.num_seqs, r.tokens));
      min_step_s_ = std::min(min_step_s_, r.step_s);
    }
    for (const auto& [seqs, line] : by_seqs_) {
      std::vector<std::pair<double, double>> pts;
      for (const auto& [tokens, s] : line) pts.emplace_back(tokens, s);
      lines_.emplace_back(seqs, std::move(pts));
    }
  }

  double step_seconds(const StepBatch& b) const override {
    if (empty_batch(b)) return 0;
    const double tokens = static_cast<double>(std::max(0, b.prefill_tokens)) + std::max(0, b.decode_tokens);
    std::vector<std::pair<double, double>> across;  // (num_seqs, time at `tokens`)
    across.reserve(lines_.size());
    for (const auto& [seqs, pts] : lines_) across.emplace_back(seqs, interpolate(pts, tokens));
    // Extrapolation of a decreasing edge could go to zero or below: never below the fastest row.
    return std::max(min_step_s_, interpolate(across, std::max(1, b.num_seqs)));
  }

 private:
  std::map<int32_t, std::map<int32_t, double>> by_seqs_;
  std::vector<std::pair<double, std::vector<std::pair<double, double>>>> lines_;
  double min_step_s_ = 0;
};

class ConstantStepTime final : public StepTimeModel {
 public:
  explicit ConstantStepTime(double seconds) : seconds_(seconds) {
    if (!(seconds > 0) || !std::isfinite(seconds))
      throw std::invalid_argument(fmt::format("constant step time {} s is not positive", seconds));
  }
  double step_seconds(const StepBatch& b) const override { return empty_batch(b) ? 0 : seconds_; }

 private:
  double seconds_;
};

}  // namespace

std::unique_ptr<StepTimeModel> make_roofline_step_time(const ServingCatalog& catalog, const EngineArgs& args,
                                                       const ReplicaHardware& hw) {
  return std::make_unique<RooflineStepTime>(catalog, args, hw);
}

std::unique_ptr<StepTimeModel> make_profile_step_time(std::vector<StepProfileRow> rows) {
  return std::make_unique<ProfileStepTime>(std::move(rows));
}

std::unique_ptr<StepTimeModel> make_constant_step_time(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw std::invalid_argument("constant step time must be a positive number of seconds");
  return std::make_unique<ConstantStepTime>(seconds);
}

}  // namespace gpufleet::inference
