// The live server's view of the API server: Nodes and Pods by list and watch, as client-go's
// Reflector keeps an informer's store (k8s.io/client-go tools/cache/reflector.go, ListAndWatch).
//
// For each kind (Node, Pod) a background thread:
//  1. LISTs: GET /api/v1/<nodes|pods>?limit=<list_page_size>, following metadata.continue until the
//     last page, then calls sink.replace(kind, items, list resourceVersion). A continue token that
//     expired (410) restarts the list from its first page (client-go tools/pager falls back to a full
//     list the same way).
//  2. WATCHes from the last resourceVersion: GET /api/v1/<kind>?watch=1&resourceVersion=RV&
//     allowWatchBookmarks=true&timeoutSeconds=T, with T = min_watch_timeout_s * (1 + r), r uniform in
//     [0, 1) (reflector.go: minWatchTimeout 5 min), reading the body line by line
//     (readers/kube_api/kube_watch.h) and calling sink.apply for every ADDED / MODIFIED / DELETED / BOOKMARK.
//  3. A watch the server ends normally (timeoutSeconds) is started again at once from the last
//     resourceVersion. 410 Gone (the HTTP status, or an ERROR event with code 410 / reason Expired or
//     Gone) means that resourceVersion is compacted away: list again (step 1). Any other failure (the
//     connection refused or dropped mid-stream, an HTTP error, a read timeout, a line that does not
//     parse, another ERROR event) waits the backoff, then watches again from the last
//     resourceVersion. A failed list waits the backoff, then lists again; so does a relist after 410
//     (client-go runs every ListAndWatch under wait.BackoffUntil).
// Backoff: client-go reflector's wait.NewExponentialBackoffManager(800 ms, 30 s, 2 min, 2.0, 1.0):
// delays 0.8, 1.6, 3.2, ... s capped at 30 s, each plus a jitter uniform in [0, 1.0 x delay)
// (k8s.io/apimachinery pkg/util/wait backoff.go Backoff.Step, Jitter), starting over from 0.8 s when
// more than 2 min passed since the previous backoff. Randomness (jitter, watch timeouts) comes from
// GoRand seeded with KubeWatchOptions::seed (+1 for Pods), so a run is reproducible.
//
// Auth (readers/kube_api/kubeconfig.h KubeRestConfig, loaded by server/kube_client.h KubeClient): a bearer token (token_file read again before every request:
// projected service-account tokens rotate), a client certificate and key, the CA (file or data) as
// the only trusted roots, or no verification with insecure_skip_tls_verify.
//
// Threads: start() starts the two threads; stop() (also the destructor) stops them promptly: it
// wakes a backoff wait, makes the body reader return false at its next chunk and shuts the socket of
// a request in flight. The sink is called from both threads (it must be thread-safe, as
// live::ClusterCache is). counters() and the other accessors are safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "readers/formats/input_limits.h"
#include "readers/kube_api/kubeconfig.h"
#include "util/go_rand.h"

// live/cluster_cache.h (declared there; not included, so that this header does not carry that
// header's includes to its users).
namespace gpufleet::live {
class ObjectSink;
enum class ResourceKind;
}  // namespace gpufleet::live

namespace gpufleet::server {

class KubeClient;  // server/kube_client.h

struct KubeWatchOptions {
  /// Backoff after a failure (client-go reflector.go: 800 ms initial, x2, 30 s cap, jitter 1.0, reset
  /// after 2 min without a backoff). Tests shorten them.
  double initial_backoff_s = 0.8;
  double max_backoff_s = 30;
  double backoff_factor = 2.0;
  double backoff_jitter = 1.0;
  double backoff_reset_s = 120;
  /// Items per list page (`limit`; client-go tools/pager PageSize 500).
  int64_t list_page_size = 500;
  /// Watch timeoutSeconds is min_watch_timeout_s * (1 + r), r uniform in [0, 1), whole seconds
  /// (reflector.go minWatchTimeout = 5 min).
  double min_watch_timeout_s = 300;
  /// Seconds to connect; seconds a read may wait beyond the watch's timeoutSeconds (or, for a list,
  /// in all) before the connection counts as dropped.
  double connect_timeout_s = 10;
  double read_timeout_slack_s = 30;
  double list_read_timeout_s = 60;
  /// Seed of the jitter and watch-timeout draws (GoRand; Nodes use seed, Pods seed + 1).
  int64_t seed = 1;
  io::KubeWatchLimits limits = io::kKubeWatchLimits;
};

/// What one kind's reflector did since start(), for /metrics.
struct KubeWatchCounters {
  uint64_t lists = 0;           ///< complete lists (every page read), the first included
  uint64_t relists = 0;         ///< complete lists after the first
  uint64_t list_pages = 0;      ///< pages read
  uint64_t watches = 0;         ///< watch requests started
  uint64_t watch_restarts = 0;  ///< watches started again without a list before (after a watch ended or failed)
  uint64_t events = 0;          ///< ADDED / MODIFIED / DELETED events applied
  uint64_t bookmarks = 0;       ///< BOOKMARK events applied
  uint64_t expired = 0;         ///< 410 Gone seen (HTTP status or ERROR event)
  uint64_t errors = 0;          ///< failed lists and watches (connection, HTTP status, parse, ERROR event)
};

/// The delays between retries (see the top of this file); `rng` draws the jitter.
class ReflectorBackoff {
 public:
  ReflectorBackoff(const KubeWatchOptions& options, GoRand& rng);
  /// The next delay, seconds, when asked at monotonic time `now_s`.
  double next(double now_s);

 private:
  const KubeWatchOptions& options_;
  GoRand& rng_;
  double duration_s_;
  bool capped_ = false;
  double last_start_s_ = -1;
};

class KubeWatcher {
 public:
  /// Watches the API server of `config` into `sink`, which must outlive the watcher. Reads no file
  /// and opens no connection until start(). Throws InputError when the CA data or client certificate
  /// cannot be prepared (see start()).
  KubeWatcher(io::KubeRestConfig config, live::ObjectSink& sink, KubeWatchOptions options = {});
  ~KubeWatcher();
  KubeWatcher(const KubeWatcher&) = delete;
  KubeWatcher& operator=(const KubeWatcher&) = delete;

  /// Starts the Node and Pod threads. Throws InputError for TLS material that does not load (a CA or
  /// client certificate file missing or not PEM, a key that does not match). Once only.
  void start();
  /// Stops both threads and waits for them (see the top of this file). Idempotent.
  void stop();

  /// True once `kind` was listed completely at least once.
  bool synced(live::ResourceKind kind) const;
  KubeWatchCounters counters(live::ResourceKind kind) const;
  /// The counters of both kinds in the Prometheus text format (`serve` adds it to /metrics), each
  /// family with a `kind` label (Node, Pod). Events and relists are counted where they are applied,
  /// by the cache (gpufleet_cache_watch_events_total, gpufleet_cache_relists_total: live/cluster_metrics.h).
  ///   gpufleet_watch_lists_total          counter  complete lists, the first included
  ///   gpufleet_watch_expired_total        counter  410 Gone seen
  ///   gpufleet_watch_errors_total         counter  failed lists and watches
  ///   gpufleet_watch_synced               gauge    1 once the kind was listed completely
  std::string render_metrics() const;
  /// The last failure of `kind`, one line ("" if none yet).
  std::string last_error(live::ResourceKind kind) const;

 private:
  struct Reflector;
  class ListAndWatch;  // one reflector's list and watch requests (kube_watch.cpp)
  void run(Reflector& r);

  io::KubeRestConfig config_;
  live::ObjectSink& sink_;
  KubeWatchOptions options_;
  std::unique_ptr<KubeClient> client_;  // made by start(): the TLS material and credentials
  std::unique_ptr<Reflector> reflectors_[2];
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool started_ = false;
};

}  // namespace gpufleet::server
