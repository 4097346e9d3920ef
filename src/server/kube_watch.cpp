#include "server/kube_watch.h"

#include <chrono>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>
#include <httplib.h>

#include "readers/kube_api/kube_watch.h"
#include "live/cluster_cache.h"
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

std::string KubeWatcher::last_error(ResourceKind kind) const {
  const Reflector& r = *reflectors_[kind == ResourceKind::kPod ? 1 : 0];
  std::lock_guard lock(r.error_mutex);
  return r.last_error;
}

void KubeWatcher::run(Reflector& r) {
  const std::string resource = live::resource_path_name(r.kind);
  const std::string base = client_->path("/api/v1/" + resource);
  const size_t max_items = r.kind == ResourceKind::kNode ? io::kObjectLimits.max_nodes : io::kObjectLimits.max_pods;
  ReflectorBackoff backoff(options_, r.rng);

  // A client for one request (or one list's pages), registered for stop(); nullptr when stopping.
  auto make_client = [&](double read_timeout_s) -> std::unique_ptr<httplib::ClientImpl> {
    std::unique_ptr<httplib::ClientImpl> c = client_->make_client(options_.connect_timeout_s, read_timeout_s);
    c->set_keep_alive(true);
    std::lock_guard lock(r.client_mutex);
    if (stopping_) return nullptr;
    r.active = c.get();
    return c;
  };
  auto release_client = [&] {
    std::lock_guard lock(r.client_mutex);
    r.active = nullptr;
  };
  auto headers = [&] { return client_->headers(); };

  // One complete list into the sink; `rv` gets its resourceVersion.
  auto list = [&](std::string& rv) -> Outcome {
    auto client = make_client(options_.list_read_timeout_s);
    if (!client) return Outcome::kStopped;
    std::vector<nlohmann::json> items;
    std::string token;
    Outcome outcome = Outcome::kOk;
    std::string list_rv;
    for (size_t page = 0;; ++page) {
      if (page >= options_.limits.max_list_pages) {
        r.fail(fmt::format("list {}: {}", resource,
                           io::limit_message(options_.limits.max_list_pages, "pages", "KubeWatchLimits::max_list_pages")));
        outcome = Outcome::kError;
        break;
      }
      std::string path = fmt::format("{}?limit={}", base, options_.list_page_size);
      if (!token.empty()) path += "&continue=" + kube_url_escape(token);
      std::string body;
      int status = 0;
      bool too_big = false;
      std::optional<httplib::Result> res;
      try {
        res.emplace(client->Get(
            path, headers(),
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
        r.fail(e.what());
        outcome = Outcome::kError;
        break;
      }
      if (stopping_) {
        outcome = Outcome::kStopped;
        break;
      }
      if (too_big) {
        r.fail(fmt::format("list {}: {}", resource,
                           io::limit_message(options_.limits.max_list_page_bytes, "bytes in a list page",
                                             "KubeWatchLimits::max_list_page_bytes")));
        outcome = Outcome::kError;
        break;
      }
      if (!*res) {
        r.fail(fmt::format("list {}: {}", resource, httplib::to_string(res->error())));
        outcome = Outcome::kError;
        break;
      }
      if (status == 410) {  // the continue token expired: list again from the start
        ++r.expired;
        r.fail(kube_http_failure("list " + resource, status, body));
        outcome = Outcome::kExpired;
        break;
      }
      if (status != 200) {
        r.fail(kube_http_failure("list " + resource, status, body));
        outcome = Outcome::kError;
        break;
      }
      try {
        io::KubeListPage p = io::parse_list_page(body, "list " + resource, options_.limits);
        ++r.list_pages;
        if (items.size() + p.items.size() > max_items)
          throw InputError("list " + resource, 0, "items",
                           io::limit_message(max_items, live::kind_name(r.kind) + std::string("s"),
                                             r.kind == ResourceKind::kNode ? "ObjectLimits::max_nodes" : "ObjectLimits::max_pods"));
        for (auto& item : p.items) items.push_back(std::move(item));
        list_rv = p.resource_version;
        token = p.continue_token;
      } catch (const InputError& e) {
        r.fail(e.what());
        outcome = Outcome::kError;
        break;
      }
      if (token.empty()) break;
    }
    release_client();
    if (outcome != Outcome::kOk) return outcome;
    try {
      sink_.replace(r.kind, std::move(items), list_rv);
    } catch (const std::exception& e) {  // the sink's fault, not the server's: retry after the backoff
      r.fail(fmt::format("list {}: the cache refused the list: {}", resource, e.what()));
      return Outcome::kError;
    }
    rv = list_rv;
    if (r.lists++ > 0) ++r.relists;
    r.synced = true;
    return Outcome::kOk;
  };

  // One watch from `rv` (moved along by every event).
  auto watch = [&](std::string& rv) -> Outcome {
    const auto timeout_s = static_cast<int64_t>(options_.min_watch_timeout_s * (r.rng.float64() + 1.0));
    auto client = make_client(static_cast<double>(timeout_s) + options_.read_timeout_slack_s);
    if (!client) return Outcome::kStopped;
    ++r.watches;
    const std::string path = fmt::format("{}?watch=1&resourceVersion={}&allowWatchBookmarks=true&timeoutSeconds={}", base,
                                         kube_url_escape(rv), timeout_s);
    const std::string source = "watch " + resource;
    std::string buf;
    std::string error_body;
    int status = 0;
    int line_no = 0;
    Outcome outcome = Outcome::kOk;  // kOk: still reading
    // Applies one line; false when the watch must end (outcome set).
    auto handle_line = [&](std::string_view line) -> bool {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
      try {
        io::KubeWatchEvent ev = io::parse_watch_event(line, source, line_no, options_.limits);
        if (ev.type == io::KubeWatchType::kError) {
          const std::string what = fmt::format("{}: ERROR event: {} {} {}", source, ev.status.code, ev.status.reason, ev.status.message);
          if (ev.status.expired()) {
            ++r.expired;
            std::lock_guard lock(r.error_mutex);
            r.last_error = what;
            outcome = Outcome::kExpired;
          } else {
            r.fail(what);
            outcome = Outcome::kError;
          }
          return false;
        }
        sink_.apply(r.kind, to_live(ev.type), ev.object);
        rv = ev.resource_version;
        if (ev.type == io::KubeWatchType::kBookmark) ++r.bookmarks;
        else ++r.events;
        return true;
      } catch (const InputError& e) {
        r.fail(e.what());
        outcome = Outcome::kError;
        return false;
      } catch (const std::exception& e) {  // the sink refused the event
        r.fail(fmt::format("{}: line {}: the cache refused the event: {}", source, line_no, e.what()));
        outcome = Outcome::kError;
        return false;
      }
    };
    std::optional<httplib::Result> res;
    try {
      httplib::Headers h = headers();
      h.emplace("Accept-Encoding", "identity");  // each event as it comes, not held in a compressor
      res.emplace(client->Get(
          path, h,
          [&](const httplib::Response& response) {
            status = response.status;
            return !stopping_;
          },
          [&](const char* data, size_t n) {
            if (stopping_) return false;
            if (status != 200) {
              if (error_body.size() < io::kMiB) error_body.append(data, std::min(n, io::kMiB - error_body.size()));
              return true;
            }
            buf.append(data, n);
            size_t start = 0;
            for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
              if (!handle_line(std::string_view(buf).substr(start, nl - start))) return false;
            buf.erase(0, start);
            if (buf.size() > options_.limits.max_event_bytes) {
              r.fail(fmt::format("{}: line {}: {}", source, line_no + 1,
                                 io::limit_message(options_.limits.max_event_bytes, "bytes in a watch event",
                                                   "KubeWatchLimits::max_event_bytes")));
              outcome = Outcome::kError;
              return false;
            }
            return true;
          }));
    } catch (const InputError& e) {  // the token file
      r.fail(e.what());
      outcome = Outcome::kError;
    }
    release_client();
    if (stopping_) return Outcome::kStopped;
    if (outcome != Outcome::kOk) return outcome;
    if (!*res) {  // refused, dropped mid-stream, read timeout
      r.fail(fmt::format("{}: {}", source, httplib::to_string(res->error())));
      return Outcome::kError;
    }
    if (status == 410) {
      ++r.expired;
      std::lock_guard lock(r.error_mutex);
      r.last_error = kube_http_failure(source, status, error_body);
      return Outcome::kExpired;
    }
    if (status != 200) {
      r.fail(kube_http_failure(source, status, error_body));
      return Outcome::kError;
    }
    if (!buf.empty() && !handle_line(buf)) return outcome;  // a last line without its newline
    return Outcome::kEnded;
  };

  auto wait = [&](double seconds) {
    std::unique_lock lock(stop_mutex_);
    stop_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stopping_.load(); });
  };

  std::string rv;
  bool need_list = true;
  bool just_listed = false;
  while (!stopping_) {
    if (need_list) {
      const Outcome o = list(rv);
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
    const Outcome o = watch(rv);
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
