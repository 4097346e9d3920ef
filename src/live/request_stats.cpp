#include "live/request_stats.h"

#include <algorithm>
#include <cmath>

#include "report/prometheus_text.h"

namespace gpufleet::live {

RequestStats::RequestStats(std::vector<std::string> verbs) {
  for (std::string& v : verbs)
    if (verbs_.size() < kMaxVerbs) verbs_.try_emplace(std::move(v));
}

RequestStats::Verb& RequestStats::verb_locked(std::string_view verb) {
  auto it = verbs_.find(verb);
  if (it != verbs_.end()) return it->second;
  if (verbs_.size() >= kMaxVerbs) return verbs_["other"];  // may exceed the cap by this one entry
  return verbs_.emplace(std::string(verb), Verb{}).first->second;
}

void RequestStats::observe(std::string_view verb, int http_status, double seconds) {
  if (!(seconds > 0)) seconds = 0;  // NaN too
  // The first bucket whose upper bound holds the duration (le is inclusive); none: only +Inf.
  const auto bucket = static_cast<size_t>(
      std::lower_bound(kDurationBucketsSeconds.begin(), kDurationBucketsSeconds.end(), seconds) - kDurationBucketsSeconds.begin());
  const std::lock_guard lock(mutex_);
  Verb& v = verb_locked(verb);
  if (bucket < v.latency.buckets.size()) ++v.latency.buckets[bucket];
  ++v.latency.count;
  v.latency.sum += seconds;
  ++v.codes[http_status];
}

uint64_t RequestStats::count(std::string_view verb, int http_status) const {
  const std::lock_guard lock(mutex_);
  const auto it = verbs_.find(verb);
  if (it == verbs_.end()) return 0;
  const auto c = it->second.codes.find(http_status);
  return c == it->second.codes.end() ? 0 : c->second;
}

std::string RequestStats::render() const {
  std::map<std::string, Verb, std::less<>> verbs;
  {
    const std::lock_guard lock(mutex_);
    verbs = verbs_;
  }
  PrometheusTextWriter w;
  w.family("gpufleet_extender_request_duration_seconds", "histogram",
           "Time gpufleet took to answer a request, from the request read to the response written, by verb.");
  for (const auto& [name, v] : verbs) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kDurationBucketsSeconds.size(); ++b) {
      cumulative += v.latency.buckets[b];
      const std::string le = format_metric_value(kDurationBucketsSeconds[b]);
      w.sample("gpufleet_extender_request_duration_seconds_bucket", {{"verb", name}, {"le", le}}, static_cast<double>(cumulative));
    }
    w.sample("gpufleet_extender_request_duration_seconds_bucket", {{"verb", name}, {"le", "+Inf"}}, static_cast<double>(v.latency.count));
    w.sample("gpufleet_extender_request_duration_seconds_sum", {{"verb", name}}, v.latency.sum);
    w.sample("gpufleet_extender_request_duration_seconds_count", {{"verb", name}}, static_cast<double>(v.latency.count));
  }
  w.family("gpufleet_http_requests_total", "counter", "HTTP requests gpufleet answered, by verb and status code.");
  for (const auto& [name, v] : verbs)
    for (const auto& [code, n] : v.codes) {
      const std::string c = std::to_string(code);
      w.sample("gpufleet_http_requests_total", {{"verb", name}, {"code", c}}, static_cast<double>(n));
    }
  return w.take();
}

std::string DraPassCounts::render() const {
  PrometheusTextWriter w;
  w.family("gpufleet_extender_dra_pods_passed_total", "counter",
           "Pods with spec.resourceClaims that gpufleet left to kube-scheduler's DynamicResources plugin, by extender verb.");
  static constexpr std::array<std::pair<const char*, Verb>, 4> kVerbs = {
      {{"bind", Verb::kBind}, {"filter", Verb::kFilter}, {"preempt", Verb::kPreempt}, {"prioritize", Verb::kPrioritize}}};
  for (const auto& [name, verb] : kVerbs) w.sample("gpufleet_extender_dra_pods_passed_total", {{"verb", name}}, static_cast<double>(count(verb)));
  return w.take();
}

DraPassCounts& extender_dra_pods_passed() {
  static DraPassCounts counts;
  return counts;
}

}  // namespace gpufleet::live
