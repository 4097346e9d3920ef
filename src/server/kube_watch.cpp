#include "server/kube_watch.h"

#include <pthread.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>
#include <httplib.h>

#include "readers/kube_api/kube_watch.h"
#include "live/cluster_cache.h"
#include "report/prometheus_text.h"
#include "server/kube_client.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

using live::ResourceKind;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

live::WatchEventType to_live(io::KubeWatchType t) {
  switch (t) {
    case io::KubeWatchType::kAdded: return live::WatchEventType::kAdded;
    case io::KubeWatchType::kModified: return live::WatchEventType::kModified;
    case io::KubeWatchType::kDeleted: return live::WatchEventType::kDeleted;
    default: return live::WatchEventType::kBookmark;
  }
}

// What ended one list or watch.
enum class Outcome { kOk, kEnded, kExpired, kError, kStopped };

}  // namespace

ReflectorBackoff::ReflectorBackoff(const KubeWatchOptions& options, GoRand& rng)
    : options_(options), rng_(rng), duration_s_(options.initial_backoff_s) {}

double ReflectorBackoff::next(double now) {
  // k8s.io/apimachinery pkg/util/wait: exponentialBackoffManagerImpl.getNextBackoff, Backoff.Step.
  if (last_start_s_ >= 0 && now - last_start_s_ > options_.backoff_reset_s) {
    duration_s_ = options_.initial_backoff_s;
    capped_ = false;
  }
  last_start_s_ = now;
  double d = duration_s_;
  if (!capped_ && options_.backoff_factor != 0) {
    duration_s_ *= options_.backoff_factor;
    if (options_.max_backoff_s > 0 && duration_s_ > options_.max_backoff_s) {
      duration_s_ = options_.max_backoff_s;
      capped_ = true;
    }
  }
  if (options_.backoff_jitter > 0) d += rng_.float64() * options_.backoff_jitter * d;
  return d;
}

struct KubeWatcher::Reflector {
  ResourceKind kind;
  GoRand rng;
  std::thread thread;
  std::atomic<bool> done{false};
  std::atomic<bool> synced{false};
  std::mutex client_mutex;
  httplib::ClientImpl* active = nullptr;  // the request in flight, for stop()
  mutable std::mutex error_mutex;
  std::string last_error;
  std::atomic<uint64_t> lists{0}, relists{0}, list_pages{0}, watches{0}, watch_restarts{0}, events{0}, bookmarks{0},
      expired{0}, errors{0};

  Reflector(ResourceKind k, int64_t seed) : kind(k), rng(seed) {}
  void fail(const std::string& what) {
    ++errors;
    std::lock_guard lock(error_mutex);
    last_error = what;
  }
};

KubeWatcher::KubeWatcher(io::KubeRestConfig config, live::ObjectSink& sink, KubeWatchOptions options)
    : config_(std::move(config)), sink_(sink), options_(std::move(options)) {
  reflectors_[0] = std::make_unique<Reflector>(ResourceKind::kNode, options_.seed);
  reflectors_[1] = std::make_unique<Reflector>(ResourceKind::kPod, options_.seed + 1);
}

KubeWatcher::~KubeWatcher() { stop(); }

void KubeWatcher::start() {
  if (started_) return;
  client_ = std::make_unique<KubeClient>(config_);  // throws InputError for TLS material that does not load
  started_ = true;
  for (auto& r : reflectors_) {
    Reflector* p = r.get();
    p->thread = std::thread([this, p] {
      // "watch-Node" / "watch-Pod": what top -H and perf show for this thread.
      pthread_setname_np(pthread_self(), p->kind == ResourceKind::kNode ? "watch-Node" : "watch-Pod");
      run(*p);
      p->done = true;
    });
  }
}

void KubeWatcher::stop() {
  if (!started_) return;
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  // A request may be between its start and its first byte; shut its socket until the thread is out.
  for (auto& r : reflectors_) {
    while (!r->done) {
      {
        std::lock_guard lock(r->client_mutex);
        if (r->active != nullptr) r->active->stop();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (r->thread.joinable()) r->thread.join();
  }
  started_ = false;
}

bool KubeWatcher::synced(ResourceKind kind) const { return reflectors_[kind == ResourceKind::kPod ? 1 : 0]->synced; }

KubeWatchCounters KubeWatcher::counters(ResourceKind kind) const {
  const Reflector& r = *reflectors_[kind == ResourceKind::kPod ? 1 : 0];
  KubeWatchCounters c;
  c.lists = r.lists;
  c.relists = r.relists;
  c.list_pages = r.list_pages;
  c.watches = r.watches;
  c.watch_restarts = r.watch_restarts;
  c.events = r.events;
  c.bookmarks = r.bookmarks;
  c.expired = r.expired;
  c.errors = r.errors;
  return c;
}

std::string KubeWatcher::render_metrics() const {
  struct Family {
    const char* name;
    const char* type;
    const char* help;
    uint64_t KubeWatchCounters::*counter;  // nullptr: synced()
  };
  static constexpr Family kFamilies[] = {
      {"gpufleet_watch_lists_total", "counter", "Complete lists of the kind from the API server, the first included.", &KubeWatchCounters::lists},
      {"gpufleet_watch_expired_total", "counter", "410 Gone seen (HTTP status or ERROR event).", &KubeWatchCounters::expired},
      {"gpufleet_watch_errors_total", "counter", "Failed lists and watches.", &KubeWatchCounters::errors},
      {"gpufleet_watch_synced", "gauge", "1 once the kind was listed completely.", nullptr},
  };
  live::PrometheusTextWriter w;
  for (const Family& f : kFamilies) {
    w.family(f.name, f.type, f.help);
    for (const ResourceKind kind : {ResourceKind::kNode, ResourceKind::kPod}) {
      const double value = f.counter != nullptr ? static_cast<double>(counters(kind).*f.counter) : (synced(kind) ? 1.0 : 0.0);
      w.sample(f.name, {{"kind", kind_name(kind)}}, value);
    }
  }
  return w.take();
}

std::string KubeWatcher::last_error(ResourceKind kind) const {
  const Reflector& r = *reflectors_[kind == ResourceKind::kPod ? 1 : 0];
  std::lock_guard lock(r.error_mutex);
  return r.last_error;
}

// One reflector's requests to the API server (client-go reflector.go ListAndWatch): a complete list
// into the sink, one watch from a resourceVersion. KubeWatcher::run loops over them.
class KubeWatcher::ListAndWatch {
 public:
  ListAndWatch(KubeWatcher& watcher, Reflector& r);

  // One complete list into the sink; `rv` gets its resourceVersion.
  Outcome list_all(std::string& rv);
  // One watch from `rv` (moved along by every event).
  Outcome watch(std::string& rv);

 private:
  // The pages of one list read so far.
  struct ListPages {
    std::vector<nlohmann::json> items;
    std::string continue_token;
    std::string resource_version;
  };
  // One watch's response as it comes in.
  struct WatchStream {
    WatchStream(std::string what, std::string& resource_version) : source(std::move(what)), rv(resource_version) {}
    const std::string source;  // "watch <resource>", for errors
    std::string& rv;           // moved along by every event
    std::string buf;           // the lines not applied yet
    std::string error_body;
    int status = 0;
    int line_no = 0;
    Outcome outcome = Outcome::kOk;  // kOk: still reading
  };

  std::unique_ptr<httplib::ClientImpl> make_client(double read_timeout_s);
  void release_client();
  Outcome list_page(httplib::ClientImpl& client, ListPages& list);
  Outcome get_list_page(httplib::ClientImpl& client, const std::string& path, std::string& body, int& status);
  bool receive_watch_chunk(WatchStream& w, const char* data, size_t n);
  bool handle_watch_line(WatchStream& w, std::string_view line);
  Outcome watch_ended(WatchStream& w, const httplib::Result& res);

  KubeClient& client_;
  const KubeWatchOptions& options_;
  live::ObjectSink& sink_;
  const std::atomic<bool>& stopping_;
  Reflector& r_;
  const std::string resource_;
  const std::string base_;
  const size_t max_items_;
};

KubeWatcher::ListAndWatch::ListAndWatch(KubeWatcher& watcher, Reflector& r)
    : client_(*watcher.client_),
      options_(watcher.options_),
      sink_(watcher.sink_),
      stopping_(watcher.stopping_),
      r_(r),
      resource_(live::resource_path_name(r.kind)),
      base_(client_.path("/api/v1/" + resource_)),
      max_items_(r.kind == ResourceKind::kNode ? io::kObjectLimits.max_nodes : io::kObjectLimits.max_pods) {}

// A client for one request (or one list's pages), registered for stop(); nullptr when stopping.
std::unique_ptr<httplib::ClientImpl> KubeWatcher::ListAndWatch::make_client(double read_timeout_s) {
  std::unique_ptr<httplib::ClientImpl> c = client_.make_client(options_.connect_timeout_s, read_timeout_s);
  c->set_keep_alive(true);
  std::lock_guard lock(r_.client_mutex);
  if (stopping_) return nullptr;
  r_.active = c.get();
  return c;
}

void KubeWatcher::ListAndWatch::release_client() {
  std::lock_guard lock(r_.client_mutex);
  r_.active = nullptr;
}

Outcome KubeWatcher::ListAndWatch::list_all(std::string& rv) {
  auto client = make_client(options_.list_read_timeout_s);
  if (!client) return Outcome::kStopped;
  ListPages list;
  Outcome outcome = Outcome::kOk;
  for (size_t page = 0;; ++page) {
    if (page >= options_.limits.max_list_pages) {
      r_.fail(fmt::format("list {}: {}", resource_,
                          io::limit_message(options_.limits.max_list_pages, "pages", "KubeWatchLimits::max_list_pages")));
      outcome = Outcome::kError;
      break;
    }
    outcome = list_page(*client, list);
    if (outcome != Outcome::kOk || list.continue_token.empty()) break;
  }
  release_client();
  if (outcome != Outcome::kOk) return outcome;
  try {
    sink_.replace(r_.kind, std::move(list.items), list.resource_version);
  } catch (const std::exception& e) {  // the sink's fault, not the server's: retry after the backoff
    r_.fail(fmt::format("list {}: the cache refused the list: {}", resource_, e.what()));
    return Outcome::kError;
  }
  rv = list.resource_version;
  if (r_.lists++ > 0) ++r_.relists;
  r_.synced = true;
  return Outcome::kOk;
}

// One page of a list (the first, or the one list.continue_token names): its items into `list`.
Outcome KubeWatcher::ListAndWatch::list_page(httplib::ClientImpl& client, ListPages& list) {
  std::string path = fmt::format("{}?limit={}", base_, options_.list_page_size);
  if (!list.continue_token.empty()) path += "&continue=" + kube_url_escape(list.continue_token);
  std::string body;
  int status = 0;
  if (const Outcome o = get_list_page(client, path, body, status); o != Outcome::kOk) return o;
  if (status == 410) {  // the continue token expired: list again from the start
    ++r_.expired;
    r_.fail(kube_http_failure("list " + resource_, status, body));
    return Outcome::kExpired;
  }
  if (status != 200) {
    r_.fail(kube_http_failure("list " + resource_, status, body));
    return Outcome::kError;
  }
  try {
    io::KubeListPage p = io::parse_list_page(body, "list " + resource_, options_.limits);
    ++r_.list_pages;
    if (list.items.size() + p.items.size() > max_items_)
      throw InputError("list " + resource_, 0, "items",
                       io::limit_message(max_items_, live::kind_name(r_.kind) + std::string("s"),
                                         r_.kind == ResourceKind::kNode ? "ObjectLimits::max_nodes" : "ObjectLimits::max_pods"));
    for (auto& item : p.items) list.items.push_back(std::move(item));
    list.resource_version = p.resource_version;
    list.continue_token = p.continue_token;
  } catch (const InputError& e) {
    r_.fail(e.what());
    return Outcome::kError;
  }
  return Outcome::kOk;
}

// GETs `path` into `body` and `status`; kOk when the server answered with a body within the limit.
Outcome KubeWatcher::ListAndWatch::get_list_page(httplib::ClientImpl& client, const std::string& path,
                                                              std::string& body, int& status) {
  bool too_big = false;
  std::optional<httplib::Result> res;
  try {
    res.emplace(client.Get(
        path, client_.headers(),
        [&](const httplib::Response& response) {
          status = response.status;
          return !stopping_;
        },
        [&](const char* data, size_t n) {
          if (stopping_) return false;
          if (body.size() + n > options_.limits.max_list_page_bytes) {
            too_big = true;
            return false;
          }
          body.append(data, n);
          return true;
        }));
  } catch (const InputError& e) {  // the token file
    r_.fail(e.what());
    return Outcome::kError;
  }
  if (stopping_) return Outcome::kStopped;
  if (too_big) {
    r_.fail(fmt::format("list {}: {}", resource_,
                        io::limit_message(options_.limits.max_list_page_bytes, "bytes in a list page",
                                          "KubeWatchLimits::max_list_page_bytes")));
    return Outcome::kError;
  }
  if (!*res) {
    r_.fail(fmt::format("list {}: {}", resource_, httplib::to_string(res->error())));
    return Outcome::kError;
  }
  return Outcome::kOk;
}

Outcome KubeWatcher::ListAndWatch::watch(std::string& rv) {
  const auto timeout_s = static_cast<int64_t>(options_.min_watch_timeout_s * (r_.rng.float64() + 1.0));
  auto client = make_client(static_cast<double>(timeout_s) + options_.read_timeout_slack_s);
  if (!client) return Outcome::kStopped;
  ++r_.watches;
  const std::string path = fmt::format("{}?watch=1&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds={}", base_,
                                       kube_url_escape(rv), timeout_s);
  WatchStream w("watch " + resource_, rv);
  std::optional<httplib::Result> res;
  try {
    httplib::Headers h = client_.headers();
    h.emplace("Accept-Encoding", "identity");  // each event as it comes, not held in a compressor
    res.emplace(client->Get(
        path, h,
        [&](const httplib::Response& response) {
          w.status = response.status;
          return !stopping_;
        },
        [&](const char* data, size_t n) { return receive_watch_chunk(w, data, n); }));
  } catch (const InputError& e) {  // the token file
    r_.fail(e.what());
    w.outcome = Outcome::kError;
  }
  release_client();
  if (stopping_) return Outcome::kStopped;
  if (w.outcome != Outcome::kOk) return w.outcome;
  return watch_ended(w, *res);
}

// The watch's body reader: applies every complete line; false when the watch must end (outcome set).
bool KubeWatcher::ListAndWatch::receive_watch_chunk(WatchStream& w, const char* data, size_t n) {
  if (stopping_) return false;
  if (w.status != 200) {
    if (w.error_body.size() < io::kMiB) w.error_body.append(data, std::min(n, io::kMiB - w.error_body.size()));
    return true;
  }
  w.buf.append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = w.buf.find('\n', start)) != std::string::npos; start = nl + 1)
    if (!handle_watch_line(w, std::string_view(w.buf).substr(start, nl - start))) return false;
  w.buf.erase(0, start);
  if (w.buf.size() > options_.limits.max_event_bytes) {
    r_.fail(fmt::format("{}: line {}: {}", w.source, w.line_no + 1,
                        io::limit_message(options_.limits.max_event_bytes, "bytes in a watch event",
                                          "KubeWatchLimits::max_event_bytes")));
    w.outcome = Outcome::kError;
    return false;
  }
  return true;
}

// Applies one line (one watch event) to the sink; false when the watch must end (outcome set).
bool KubeWatcher::ListAndWatch::handle_watch_line(WatchStream& w, std::string_view line) {
  ++w.line_no;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
  try {
    io::KubeWatchEvent ev = io::parse_watch_event(line, w.source, w.line_no, options_.limits);
    if (ev.type == io::KubeWatchType::kError) {
      const std::string what = fmt::format("{}: ERROR event: {} {} {}", w.source, ev.status.code, ev.status.reason, ev.status.message);
      if (ev.status.expired()) {
        ++r_.expired;
        std::lock_guard lock(r_.error_mutex);
        r_.last_error = what;
        w.outcome = Outcome::kExpired;
      } else {
        r_.fail(what);
        w.outcome = Outcome::kError;
      }
      return false;
    }
    sink_.apply(r_.kind, to_live(ev.type), ev.object);
    w.rv = ev.resource_version;
    if (ev.type == io::KubeWatchType::kBookmark) ++r_.bookmarks;
    else ++r_.events;
    return true;
  } catch (const InputError& e) {
    r_.fail(e.what());
    w.outcome = Outcome::kError;
    return false;
  } catch (const std::exception& e) {  // the sink refused the event
    r_.fail(fmt::format("{}: line {}: the cache refused the event: {}", w.source, w.line_no, e.what()));
    w.outcome = Outcome::kError;
    return false;
  }
}

// How a watch the body reader let run to its end ended: the response's status, then its last line.
Outcome KubeWatcher::ListAndWatch::watch_ended(WatchStream& w, const httplib::Result& res) {
  if (!res) {  // refused, dropped mid-stream, read timeout
    r_.fail(fmt::format("{}: {}", w.source, httplib::to_string(res.error())));
    return Outcome::kError;
  }
  if (w.status == 410) {
    ++r_.expired;
    std::lock_guard lock(r_.error_mutex);
    r_.last_error = kube_http_failure(w.source, w.status, w.error_body);
    return Outcome::kExpired;
  }
  if (w.status != 200) {
    r_.fail(kube_http_failure(w.source, w.status, w.error_body));
    return Outcome::kError;
  }
  if (!w.buf.empty() && !handle_watch_line(w, w.buf)) return w.outcome;  // a last line without its newline
  return Outcome::kEnded;
}

// client-go's ListAndWatch under wait.BackoffUntil: list, then watch until 410 Gone (list again) or a
// failure (watch again after the backoff).
void KubeWatcher::run(Reflector& r) {
  ListAndWatch lw(*this, r);
  ReflectorBackoff backoff(options_, r.rng);

  auto wait = [&](double seconds) {
    std::unique_lock lock(stop_mutex_);
    stop_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stopping_.load(); });
  };

  std::string rv;
  bool need_list = true;
  bool just_listed = false;
  while (!stopping_) {
    if (need_list) {
      const Outcome o = lw.list_all(rv);
      if (o == Outcome::kStopped) break;
      if (o == Outcome::kOk) {
        need_list = false;
        just_listed = true;
        continue;
      }
      wait(backoff.next(now_s()));
      continue;
    }
    if (!just_listed) ++r.watch_restarts;
    just_listed = false;
    const Outcome o = lw.watch(rv);
    switch (o) {
      case Outcome::kStopped: return;
      case Outcome::kEnded: break;  // timeoutSeconds: watch again at once
      case Outcome::kExpired:
        need_list = true;
        wait(backoff.next(now_s()));
        break;
      default: wait(backoff.next(now_s())); break;
    }
  }
}

}  // namespace gpufleet::server
