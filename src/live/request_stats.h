// The live server's own request metrics: a latency histogram per extender verb and a request counter
// per verb and HTTP status code, written in the Prometheus text format (report/prometheus_text.h).
//
//   gpufleet_extender_request_duration_seconds{verb}   histogram, seconds from the request read to the
//                                                      response written, buckets kDurationBucketsSeconds
//   gpufleet_http_requests_total{verb,code}            counter, requests answered
//
// `verb` is the route's short name ("filter", "prioritize", "preempt", "bind", "metrics", ...); the
// server passes a name from its fixed set of routes, not the request path (a path is unbounded). At most
// kMaxVerbs distinct verbs are kept; observations of further ones count under verb "other".
//
// Threads: observe() and render() may be called from any thread; observe() takes a short mutex
// (a map lookup and a few additions) and never allocates once its verb and code were seen.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::live {

/// Upper bounds (le) of the latency histogram, seconds: 100 us to 1 s, finer below 10 ms where
/// the extender's decisions fall (the goal is a p99 of at most 2 ms), plus +Inf.
inline constexpr std::array<double, 14> kDurationBucketsSeconds = {0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003,
                                                                   0.005,  0.01,    0.025,  0.05,  0.1,    0.25,  1.0};

/// Most distinct verbs kept (see the top of this file).
inline constexpr size_t kMaxVerbs = 32;

class RequestStats {
 public:
  /// `verbs` are written from the first scrape on, with zero counts, so that rate() sees them start
  /// at 0 (Prometheus' advice for labels known in advance). A status code appears once observed.
  explicit RequestStats(std::vector<std::string> verbs = {});

  /// Records one answered request: its verb, HTTP status code and duration in seconds (negative or
  /// NaN durations count as 0).
  void observe(std::string_view verb, int http_status, double seconds);

  /// Both families in the text format, verbs and codes in ascending order.
  std::string render() const;

  /// Requests observed for (verb, code); 0 when none.
  uint64_t count(std::string_view verb, int http_status) const;

 private:
  struct Histogram {
    std::array<uint64_t, kDurationBucketsSeconds.size()> buckets{};  // non-cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  struct Verb {
    Histogram latency;
    std::map<int, uint64_t> codes;
  };
  Verb& verb_locked(std::string_view verb);

  mutable std::mutex mutex_;
  std::map<std::string, Verb, std::less<>> verbs_;
};

/// Pods with spec.resourceClaims (Dynamic Resource Allocation) that the extender's verbs left to
/// kube-scheduler's own DynamicResources plugin (live/extender.h), per verb:
///
///   gpufleet_extender_dra_pods_passed_total{verb}   counter; verb filter, prioritize, preempt, bind
///
/// All four verbs are written from the first scrape on, at 0. Thread-safe (atomics, no lock).
class DraPassCounts {
 public:
  enum class Verb : uint8_t { kFilter, kPrioritize, kPreempt, kBind };
  void add(Verb verb) { counts_[static_cast<size_t>(verb)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t count(Verb verb) const { return counts_[static_cast<size_t>(verb)].load(std::memory_order_relaxed); }
  /// The family in the text format, verbs in ascending order.
  std::string render() const;

 private:
  std::array<std::atomic<uint64_t>, 4> counts_{};
};

/// The process's counts: the extender's verbs are free functions the server calls (server/
/// http_server.h), so the counter is one per process, as a Prometheus client's default registry is.
DraPassCounts& extender_dra_pods_passed();

}  // namespace gpufleet::live
