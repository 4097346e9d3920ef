#include "server/kube_watch.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "io/kube_watch.h"
#include "live/cluster_cache.h"
#include "io/text_file.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

using live::ResourceKind;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// RFC 3986 percent-encoding of a query value (continue tokens are base64 with '=', '+', '/').
std::string query_escape(std::string_view s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') out.push_back(static_cast<char>(c));
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

live::WatchEventType to_live(io::KubeWatchType t) {
  switch (t) {
    case io::KubeWatchType::kAdded: return live::WatchEventType::kAdded;
    case io::KubeWatchType::kModified: return live::WatchEventType::kModified;
    case io::KubeWatchType::kDeleted: return live::WatchEventType::kDeleted;
    default: return live::WatchEventType::kBookmark;
  }
}

void set_timeout(httplib::ClientImpl& c, double seconds, bool read) {
  const auto sec = static_cast<time_t>(seconds);
  const auto usec = static_cast<time_t>((seconds - static_cast<double>(sec)) * 1e6);
  if (read) c.set_read_timeout(sec, usec);
  else c.set_connection_timeout(sec, usec);
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

// TLS material loaded once: the CA as a file (CA data goes to a private temporary file, so that it
// is the only trusted root), the client certificate and key in memory.
struct KubeWatcher::Tls {
  std::string ca_path;
  std::string temp_ca_path;  // removed on destruction
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  ~Tls() {
    if (cert != nullptr) X509_free(cert);
    if (key != nullptr) EVP_PKEY_free(key);
    if (!temp_ca_path.empty()) std::remove(temp_ca_path.c_str());
  }
};

namespace {

std::string pem_of(const std::string& path, const std::string& data) {
  return path.empty() ? data : io::read_text_file(path, io::kMiB, "PEM file size");
}

std::string source_of(const std::string& path, const char* data_field) { return path.empty() ? data_field : path; }

}  // namespace

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
    : config_(std::move(config)), sink_(sink), options_(std::move(options)), tls_(std::make_unique<Tls>()) {
  reflectors_[0] = std::make_unique<Reflector>(ResourceKind::kNode, options_.seed);
  reflectors_[1] = std::make_unique<Reflector>(ResourceKind::kPod, options_.seed + 1);
}

KubeWatcher::~KubeWatcher() { stop(); }

void KubeWatcher::start() {
  if (started_) return;
  if (config_.url.scheme == "https") {
    Tls& t = *tls_;
    if (!config_.certificate_authority.empty() || !config_.certificate_authority_data.empty()) {
      const std::string pem = pem_of(config_.certificate_authority, config_.certificate_authority_data);
      const std::string src = source_of(config_.certificate_authority, "certificate-authority-data");
      BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
      X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
      if (ca == nullptr) throw InputError(src, 0, "certificate-authority", "no PEM certificate in the CA bundle");
      X509_free(ca);
      if (!config_.certificate_authority.empty()) {
        t.ca_path = config_.certificate_authority;
      } else {
        std::string templ = (std::filesystem::temp_directory_path() / "gpufleet-ca-XXXXXX").string();
        const int fd = mkstemp(templ.data());
        if (fd < 0) throw InputError(templ, 0, "certificate-authority-data", "cannot create a temporary file for the CA");
        const bool ok = write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
        close(fd);
        t.temp_ca_path = templ;
        if (!ok) throw InputError(templ, 0, "certificate-authority-data", "cannot write the CA to a temporary file");
        t.ca_path = templ;
      }
    }
    const bool has_cert = !config_.client_certificate.empty() || !config_.client_certificate_data.empty();
    if (has_cert) {
      const std::string cert_pem = pem_of(config_.client_certificate, config_.client_certificate_data);
      const std::string key_pem = pem_of(config_.client_key, config_.client_key_data);
      BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
      t.cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
      if (t.cert == nullptr)
        throw InputError(source_of(config_.client_certificate, "client-certificate-data"), 0, "client-certificate",
                         "no PEM certificate");
      bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
      t.key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
      if (t.key == nullptr)
        throw InputError(source_of(config_.client_key, "client-key-data"), 0, "client-key", "no PEM private key");
      if (X509_check_private_key(t.cert, t.key) != 1)
        throw InputError(source_of(config_.client_key, "client-key-data"), 0, "client-key",
                         "the private key does not match the client certificate");
    }
  }
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
  const std::string base = config_.url.path_prefix + "/api/v1/" + resource;
  const size_t max_items = r.kind == ResourceKind::kNode ? io::kObjectLimits.max_nodes : io::kObjectLimits.max_pods;
  ReflectorBackoff backoff(options_, r.rng);

  // A client for one request (or one list's pages), registered for stop(); nullptr when stopping.
  auto make_client = [&](double read_timeout_s) -> std::unique_ptr<httplib::ClientImpl> {
    std::unique_ptr<httplib::ClientImpl> c;
    if (config_.url.scheme == "https") {
      std::unique_ptr<httplib::SSLClient> s;
      if (tls_->cert != nullptr) s = std::make_unique<httplib::SSLClient>(config_.url.host, config_.url.port, tls_->cert, tls_->key);
      else s = std::make_unique<httplib::SSLClient>(config_.url.host, config_.url.port);
      if (!tls_->ca_path.empty()) s->set_ca_cert_path(tls_->ca_path.c_str());
      s->enable_server_certificate_verification(!config_.insecure_skip_tls_verify);
      c = std::move(s);
    } else {
      c = std::make_unique<httplib::ClientImpl>(config_.url.host, config_.url.port);
    }
    set_timeout(*c, options_.connect_timeout_s, false);
    set_timeout(*c, read_timeout_s, true);
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
  auto headers = [&]() {
    httplib::Headers h{{"Accept", "application/json"}};
    const std::string token = io::current_bearer_token(config_);
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return h;
  };
  auto http_failure = [&](const std::string& what, int status, const std::string& body) {
    const io::KubeStatus st = io::parse_status_body(body, status);
    return fmt::format("{}: HTTP {} {} {}", what, status, st.reason, st.message);
  };

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
      if (!token.empty()) path += "&continue=" + query_escape(token);
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
        r.fail(http_failure("list " + resource, status, body));
        outcome = Outcome::kExpired;
        break;
      }
      if (status != 200) {
        r.fail(http_failure("list " + resource, status, body));
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
                                         query_escape(rv), timeout_s);
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
      r.last_error = http_failure(source, status, error_body);
      return Outcome::kExpired;
    }
    if (status != 200) {
      r.fail(http_failure(source, status, error_body));
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
