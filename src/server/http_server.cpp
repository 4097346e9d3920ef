#include "server/http_server.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "readers/kube_api/extender_args.h"
#include "readers/formats/json_request.h"
#include "live/extender.h"
#include "server/extender_json.h"
#include "model/device_annotations.h"
#include "util/input_error.h"

namespace gpufleet::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kJson = "application/json";

void reply_json(HttpResponse& res, const nlohmann::json& body) { res.set_content(body.dump(), kJson); }

void bad_request(HttpResponse& res, const std::string& reason) {
  res.status = 400;
  res.set_content(reason + "\n", "text/plain");
}

std::string lower_trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  std::string out(v);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Printable and short, for a reason line.
std::string printable(std::string_view v) {
  std::string out;
  for (const char ch : v.substr(0, 100)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  return out;
}

// Percent-decoding of a URL part (RFC 3986 2.1); in a query, '+' is a space (HTML's form encoding,
// as Go's url.ParseQuery and cpp-httplib read it). A '%' not followed by two hex digits stays.
std::string percent_decoded(std::string_view v, bool plus_is_space) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size() && hex(v[i + 1]) >= 0 && hex(v[i + 2]) >= 0) {
      out += static_cast<char>(hex(v[i + 1]) * 16 + hex(v[i + 2]));
      i += 2;
    } else if (plus_is_space && v[i] == '+') {
      out += ' ';
    } else {
      out += v[i];
    }
  }
  return out;
}

// Workers started on demand, at most `max_workers`; each runs one complete request's handler at a time.
class WorkerPool {
 public:
  explicit WorkerPool(size_t max_workers) : max_workers_(std::max<size_t>(max_workers, 1)) {}
  ~WorkerPool() { shutdown(); }

  void enqueue(std::function<void()> fn) {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && workers_.size() < max_workers_)
      workers_.emplace_back([this] { run(); });
    else
      cond_.notify_one();
  }

  // Runs the jobs queued, then joins the workers.
  void shutdown() {
    {
      std::lock_guard lock(mutex_);
      shutdown_ = true;
    }
    cond_.notify_all();
    for (std::thread& t : workers_)
      if (t.joinable()) t.join();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      cond_.wait(lock, [this] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (jobs_.empty()) return;  // shut down, nothing left
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_workers_;
  std::mutex mutex_;
  std::condition_variable cond_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (equal_ignoring_case(k, name)) return v;
  return "";
}

bool HttpRequest::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return equal_ignoring_case(h.first, name); });
}

struct Routes::Route {
  std::string method;
  std::regex path;
  RouteHandler handler;
};

void Routes::add(std::string method, const std::string& path_regex, RouteHandler handler) {
  routes_.push_back(std::make_shared<const Route>(Route{std::move(method), std::regex(path_regex), std::move(handler)}));
}

const RouteHandler* Routes::find(HttpRequest& req) const {
  const std::string& method = req.method == "HEAD" ? std::string("GET") : req.method;
  for (const auto& route : routes_) {
    if (route->method != method) continue;
    std::smatch m;
    if (!std::regex_match(req.path, m, route->path)) continue;
    req.matches.clear();
    for (const auto& group : m) req.matches.push_back(group.str());
    return &route->handler;
  }
  return nullptr;
}

std::optional<std::string> read_request_body(const HttpRequest& req, HttpResponse& res, const BodyLimits& limits) {
  if (lower_trimmed(req.header("Content-Type")).starts_with("multipart/form-data")) {  // no route takes one
    res.status = 415;
    res.set_content("request body: a multipart/form-data body is not accepted; send Content-Type: application/json\n", "text/plain");
    return std::nullopt;
  }
  std::string encoding;  // every Content-Encoding header, as one list
  for (const auto& [k, v] : req.headers)
    if (equal_ignoring_case(k, "Content-Encoding")) encoding += (encoding.empty() ? "" : ", ") + v;
  encoding = lower_trimmed(encoding);
  const bool inflate = encoding == "gzip" || encoding == "x-gzip" || encoding == "deflate";
  if (!inflate && !encoding.empty() && encoding != "identity") {
    res.status = 415;
    res.set_content(fmt::format("request body: Content-Encoding '{}' is not supported (gzip, deflate or identity)\n", printable(encoding)),
                    "text/plain");
    return std::nullopt;
  }
  if (!inflate) {
    if (req.body.size() > limits.max_bytes) {
      res.status = 413;
      res.set_content(fmt::format("request body is over the limit of {} bytes\n", limits.max_bytes), "text/plain");
      return std::nullopt;
    }
    return req.body;
  }
  // 15 + 32: a zlib or gzip header, detected (HTTP's "deflate" is zlib-wrapped, RFC 9110 8.4.1.2).
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  struct ZEnd {
    z_stream& z;
    ~ZEnd() { inflateEnd(&z); }
  } z_end{z};
  std::string body, bad;
  bool stream_end = false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(req.body.data()));
  z.avail_in = static_cast<uInt>(req.body.size());  // at most max_body_bytes (the server's limit), under 4 GiB
  char out[16384];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = sizeof out;
    const int r = ::inflate(&z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
      bad = z.msg != nullptr ? z.msg : fmt::format("zlib error {}", r);
      break;
    }
    const size_t produced = sizeof out - z.avail_out;
    if (body.size() + produced > limits.max_bytes) {  // stop inflating at the first byte over
      res.status = 413;
      res.set_content(fmt::format("request body (decoded from {}) is over the limit of {} bytes\n", encoding, limits.max_bytes), "text/plain");
      return std::nullopt;
    }
    body.append(out, produced);
    if (r == Z_STREAM_END) {
      stream_end = true;
      break;
    }
    if (r == Z_BUF_ERROR || (z.avail_in == 0 && produced < sizeof out)) break;  // needs input there is not: truncated
  }
  if (bad.empty() && stream_end && z.avail_in > 0) bad = "data after the end of the compressed stream";
  if (!bad.empty() || (!stream_end && !req.body.empty())) {
    res.status = 400;
    res.set_content(fmt::format("request body: Content-Encoding {}: {}\n", encoding, bad.empty() ? "truncated compressed stream" : printable(bad)),
                    "text/plain");
    return std::nullopt;
  }
  return body;
}

namespace {

struct Session;

// What the connections share; everything but `pool` and `handle` is touched on the I/O thread only.
struct Core {
  explicit Core(const ServerOptions& o) : options(o), pool(o.threads) {}
  const ServerOptions& options;
  asio::io_context io{1};
  std::optional<asio::ssl::context> tls;
  Routes routes;
  std::function<void(HttpRequest&, HttpResponse&)> handle;  // runs a route (on a worker)
  Session* oldest_idle() const;
  std::unordered_set<Session*> open;       // connections not closed yet
  bool stopping = false;
  bool accept_paused = false;
  std::function<void()> resume_accept;      // accepting again after a connection closed
  std::function<void()> last_closed;        // stopping, and the last connection closed
  WorkerPool pool;                          // last: joined first, before the sessions and io go
};

enum class Phase { handshake, idle, reading, handling, writing, closing, closed };

// One connection; its methods run on the I/O thread.
struct Session {
  virtual ~Session() = default;
  virtual void close() = 0;
  Phase phase = Phase::handshake;
  SteadyClock::time_point idle_since;
};

Session* Core::oldest_idle() const {
  Session* best = nullptr;
  for (Session* s : open)
    if (s->phase == Phase::idle && (best == nullptr || s->idle_since < best->idle_since)) best = s;
  return best;
}

tcp::socket& lowest_socket(tcp::socket& s) { return s; }
tcp::socket& lowest_socket(asio::ssl::stream<tcp::socket>& s) { return s.next_layer(); }

template <class Stream>
class Connection final : public Session, public std::enable_shared_from_this<Connection<Stream>> {
 public:
  template <class... Args>
  Connection(Core& core, Args&&... args) : core_(core), stream_(std::forward<Args>(args)...), timer_(core.io) {}

  void start() {
    core_.open.insert(this);
    if constexpr (std::is_same_v<Stream, tcp::socket>) {
      wait_request();
    } else {
      phase = Phase::handshake;
      arm(core_.options.request_timeout_s);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (self->phase == Phase::closed) return;
        if (ec) return self->close();
        self->wait_request();
      });
    }
  }

  void close() override {
    if (phase == Phase::closed) return;
    phase = Phase::closed;
    ++timer_generation_;
    timer_.cancel();
    beast::error_code ignored;
    lowest_socket(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    lowest_socket(stream_).close(ignored);
    core_.open.erase(this);
    if (core_.stopping) {
      if (core_.open.empty() && core_.last_closed) core_.last_closed();
    } else if (core_.accept_paused) {
      core_.accept_paused = false;
      asio::post(core_.io, core_.resume_accept);
    }
  }

 private:
  // The timer for the current phase; a firing that a later arm() or close() superseded does nothing.
  void arm(double seconds) {
    timer_.expires_after(std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds)));
    timer_.async_wait([self = this->shared_from_this(), generation = ++timer_generation_](beast::error_code ec) {
      if (ec || generation != self->timer_generation_ || self->phase == Phase::closed) return;
      self->expired();
    });
  }
  void disarm() {
    ++timer_generation_;
    timer_.cancel();
  }

  void expired() {
    switch (phase) {
      case Phase::reading:  // answered 408 by the read's completion
        timed_out_ = true;
        lowest_socket(stream_).cancel();
        break;
      case Phase::handling:
        break;
      default:  // idle, a handshake, a write or a lingering close past its time
        close();
    }
  }

  // Waits for the next request's first byte (idle_timeout_s), then reads it.
  void wait_request() {
    if (core_.stopping) return close();
    parser_.emplace();
    parser_->header_limit(kHeaderLimitBytes);
    // The body is counted here (413 over max_body_bytes, naming its Content-Length). Not boost::none:
    // Boost 1.74's parser compares a Content-Length with the optional limit, and any number is > none.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    request_ = HttpRequest{};
    timed_out_ = false;
    if (buffer_.size() > 0) return read_head();  // a pipelined request
    phase = Phase::idle;
    idle_since = SteadyClock::now();
    arm(core_.options.idle_timeout_s);
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      if (self->phase == Phase::closed) return;
      if (ec) return self->close();
      self->buffer_.commit(n);
      self->read_head();
    });
  }

  void read_head() {
    phase = Phase::reading;
    arm(core_.options.request_timeout_s);  // one deadline for head and body, from the first byte
    http::async_read_header(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (self->phase == Phase::closed) return;
      if (ec) return self->refuse_unread(ec, "head");
      self->on_head();
    });
  }

  void on_head() {
    auto& head = parser_->get();
    request_.method = std::string(head.method_string());
    const std::string_view target(head.target().data(), head.target().size());
    const size_t q = target.find('?');
    request_.path = percent_decoded(target.substr(0, q), false);
    if (q != std::string_view::npos) {
      std::string_view query = target.substr(q + 1);
      while (!query.empty()) {
        const size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        if (!pair.empty()) {
          const size_t eq = pair.find('=');
          request_.params.emplace(percent_decoded(pair.substr(0, eq), true),
                                  eq == std::string_view::npos ? std::string() : percent_decoded(pair.substr(eq + 1), true));
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
      }
    }
    for (const auto& field : head) request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    const size_t max = core_.options.max_body_bytes;
    if (const auto length = parser_->content_length(); length && *length > max)  // refused unread
      return answer_now(413, fmt::format("request body of {} bytes is over the limit of {} bytes\n", *length, max), true);
    if (equal_ignoring_case(request_.header("Expect"), "100-continue")) {  // the client waits for this before its body
      continue_.emplace(http::status::continue_, head.version());
      http::async_write(stream_, *continue_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
        if (self->phase == Phase::closed) return;
        if (ec) return self->close();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  void read_body() {
    if (parser_->is_done()) return complete();
    if (scratch_.empty()) scratch_.resize(65536);
    auto& body = parser_->get().body();
    body.data = scratch_.data();
    body.size = scratch_.size();
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (self->phase == Phase::closed) return;
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return self->refuse_unread(ec, "body");
      const size_t got = self->scratch_.size() - self->parser_->get().body().size;
      const size_t max = self->core_.options.max_body_bytes;
      if (self->request_.body.size() + got > max) {  // chunked: no Content-Length to check first
        std::string().swap(self->request_.body);
        return self->answer_now(413, fmt::format("request body is over the limit of {} bytes\n", max), true);
      }
      self->request_.body.append(self->scratch_.data(), got);
      self->read_body();
    });
  }

  // The request could not be read whole: past the deadline (408), or malformed or truncated (400).
  void refuse_unread(beast::error_code ec, const char* part) {
    if (timed_out_)
      return answer_now(408, fmt::format("request {}: not received within the request timeout of {} s\n", part, core_.options.request_timeout_s),
                        true);
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset) {
      if (std::string_view(part) == "head" && parser_->got_some() == false) return close();  // closed between requests
    }
    answer_now(400, fmt::format("request: malformed or truncated HTTP request{}\n", std::string_view(part) == "body" ? " body" : ""), true);
  }

  void complete() {
    std::vector<char>().swap(scratch_);
    disarm();
    keep_alive_ = parser_->get().keep_alive();
    head_only_ = request_.method == "HEAD";
    version_ = parser_->get().version();
    phase = Phase::handling;
    core_.pool.enqueue([self = this->shared_from_this(), request = std::move(request_)]() mutable {
      HttpResponse response;
      self->core_.handle(request, response);
      asio::post(self->core_.io, [self, response = std::move(response)]() mutable { self->respond(std::move(response)); });
    });
  }

  void answer_now(int status, std::string text, bool close_after) {
    if (close_after) keep_alive_ = false;
    if (parser_ && parser_->is_header_done()) version_ = parser_->get().version();
    HttpResponse r;
    r.status = status;
    r.body = std::move(text);
    r.close = close_after;
    respond(std::move(r));
  }

  void respond(HttpResponse r) {
    if (phase == Phase::closed) return;
    phase = Phase::writing;
    const bool keep = keep_alive_ && !r.close && !core_.stopping;
    response_.emplace(static_cast<http::status>(r.status), version_ == 10 ? 10 : 11);
    response_->set(http::field::content_type, r.content_type);
    const size_t length = r.body.size();
    response_->body() = std::move(r.body);
    response_->keep_alive(keep);
    response_->prepare_payload();
    if (head_only_) {
      response_->body().clear();
      response_->content_length(length);
    }
    head_only_ = false;
    arm(core_.options.write_timeout_s);
    http::async_write(stream_, *response_, [self = this->shared_from_this(), keep](beast::error_code ec, size_t) {
      if (self->phase == Phase::closed) return;
      self->response_.reset();
      if (ec) return self->close();
      if (!keep) return self->linger();
      self->wait_request();
    });
  }

  // Closes after an answer: the write side first, then what the client still sends is read and
  // dropped for a moment, so that the answer is not lost to a reset (closing with unread input
  // sends RST, and the client may drop the answer it has not read yet).
  void linger() {
    phase = Phase::closing;
    beast::error_code ignored;
    lowest_socket(stream_).shutdown(tcp::socket::shutdown_send, ignored);
    arm(kLingerSeconds);
    if (scratch_.empty()) scratch_.resize(4096);
    drain();
  }
  void drain() {
    lowest_socket(stream_).async_read_some(asio::buffer(scratch_), [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (self->phase == Phase::closed) return;
      if (ec) return self->close();
      self->drain();
    });
  }

  static constexpr uint32_t kHeaderLimitBytes = 64 * 1024;
  static constexpr double kLingerSeconds = 1;

  Core& core_;
  Stream stream_;
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::buffer_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<http::response<http::string_body>> response_;
  std::vector<char> scratch_;
  HttpRequest request_;
  bool timed_out_ = false, keep_alive_ = true, head_only_ = false;
  unsigned version_ = 11;
};

}  // namespace

struct HttpServer::Impl {
  ServerOptions options;
  live::ClusterCache& cache;
  PodBinder* binder;
  ServerHooks hooks;
  Core core{options};
  std::optional<tcp::acceptor> acceptor;
  asio::steady_timer grace_timer{core.io};
  asio::steady_timer accept_retry{core.io};

  Impl(ServerOptions o, live::ClusterCache& c, PodBinder* b, ServerHooks h) : options(std::move(o)), cache(c), binder(b), hooks(std::move(h)) {}

  // 500 with a generic body: the detail goes to stderr, never to the client.
  static void internal_error(const HttpRequest& req, HttpResponse& res, const char* what) {
    std::fprintf(stderr, "gpufleet serve: error: %s %s: %s\n", printable(req.method).c_str(), printable(req.path).c_str(), what);
    res = HttpResponse{};
    res.status = 500;
    res.set_content("internal error\n", "text/plain");
  }

  // Runs a request (on a worker): its route, or 404; InputError is 400, anything else 500.
  void dispatch(HttpRequest& req, HttpResponse& res) {
    try {
      const RouteHandler* handler = core.routes.find(req);
      if (handler == nullptr) {
        res.status = 404;
        res.set_content(fmt::format("no route {} {}\n", printable(req.method), printable(req.path)), "text/plain");
        return;
      }
      (*handler)(req, res);
    } catch (const InputError& e) {
      res = HttpResponse{};
      bad_request(res, e.what());
    } catch (const std::exception& e) {
      internal_error(req, res, e.what());
    } catch (...) {
      internal_error(req, res, "an exception that is not a std::exception");
    }
  }

  // Runs `body` for route `route`: times it, maps reader errors to 400 and anything else to 500.
  void handle(std::string_view route, const HttpRequest& req, HttpResponse& res, const std::function<void(const HttpRequest&, HttpResponse&)>& body) {
    const auto start = SteadyClock::now();
    try {
      body(req, res);
    } catch (const InputError& e) {
      bad_request(res, e.what());
    } catch (const std::exception& e) {
      internal_error(req, res, e.what());
    } catch (...) {
      internal_error(req, res, "an exception that is not a std::exception");
    }
    if (hooks.on_request) hooks.on_request(route, res.status, std::chrono::duration<double>(SteadyClock::now() - start).count());
  }

  void accept() {
    if (core.stopping || !acceptor || !acceptor->is_open()) return;
    if (core.open.size() >= std::max<size_t>(options.max_connections, 1)) {
      if (Session* idle = core.oldest_idle()) idle->close();  // erases it from core.open
      if (core.open.size() >= std::max<size_t>(options.max_connections, 1)) {
        core.accept_paused = true;  // resumed by the next close
        return;
      }
    }
    acceptor->async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (core.stopping) return;
      if (ec) {  // out of descriptors, ...: try again shortly
        if (ec == asio::error::operation_aborted) return;
        accept_retry.expires_after(std::chrono::milliseconds(50));
        accept_retry.async_wait([this](beast::error_code e) {
          if (!e) accept();
        });
        return;
      }
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // answers go out as written (no 40 ms delayed-ACK wait)
      if (core.tls)
        std::make_shared<Connection<asio::ssl::stream<tcp::socket>>>(core, std::move(socket), *core.tls)->start();
      else
        std::make_shared<Connection<tcp::socket>>(core, std::move(socket))->start();
      accept();
    });
  }

  // On the I/O thread: no more connections; idle ones and requests arriving closed; the rest get
  // shutdown_grace_s.
  void begin_stop() {
    if (core.stopping) return;
    core.stopping = true;
    beast::error_code ignored;
    if (acceptor) acceptor->close(ignored);
    accept_retry.cancel();
    const std::vector<Session*> sessions(core.open.begin(), core.open.end());
    for (Session* s : sessions)
      if (s->phase == Phase::idle || s->phase == Phase::reading || s->phase == Phase::handshake) s->close();
    if (core.open.empty()) return;
    core.last_closed = [this] { grace_timer.cancel(); };
    grace_timer.expires_after(std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(options.shutdown_grace_s)));
    grace_timer.async_wait([this](beast::error_code ec) {
      if (ec) return;
      const std::vector<Session*> left(core.open.begin(), core.open.end());
      for (Session* s : left) s->close();
      core.io.stop();  // handlers still running post to a stopped loop: their answers are dropped
    });
  }

  void filter(const std::string& body, HttpResponse& res) {
    const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
    const auto snapshot = cache.snapshot();
    res.set_content(filter_result_json(args, live::extender_filter(*snapshot, args.pod, args.node_names)), kJson);
  }

  void prioritize(const std::string& body, HttpResponse& res) {
    const io::ExtenderArgs args = io::parse_extender_args(body, "request body");
    const auto snapshot = cache.snapshot();
    res.set_content(prioritize_result_json(live::extender_prioritize(*snapshot, args.pod, args.node_names)), kJson);
  }

  void preempt(const std::string& body, HttpResponse& res) {
    const io::ExtenderPreemptionArgs args = io::parse_extender_preemption_args(body, "request body");
    std::map<std::string, live::NodeVictims> candidates;
    for (const auto& [node, victims] : args.node_victims) candidates[node] = live::NodeVictims{victims.pod_uids, victims.num_pdb_violations};
    const auto snapshot = cache.snapshot();
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [node, victims] : live::extender_preempt(*snapshot, args.pod, candidates)) {
      nlohmann::json pods = nlohmann::json::array();
      for (const std::string& uid : victims.pod_uids) pods.push_back({{"UID", uid}});
      meta[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", victims.num_pdb_violations}};
    }
    reply_json(res, {{"NodeNameToMetaVictims", std::move(meta)}});
  }

  void bind(const std::string& body, HttpResponse& res) {
    const io::ExtenderBindingArgs args = io::parse_extender_binding_args(body, "request body");
    const std::string key = args.pod_namespace + "/" + args.pod_name;
    const auto snapshot = cache.snapshot();
    Pod pod;  // a copy: the live snapshot changes under its decide_mutex (live/cluster_cache.h)
    {
      const std::lock_guard lock(snapshot->decide_mutex);
      const auto it = snapshot->pod_by_key.find(key);
      if (it == snapshot->pod_by_key.end()) {
        reply_json(res, {{"Error", fmt::format("pod {} is not in gpufleet's cache", key)}});
        return;
      }
      pod = snapshot->inputs.input.pods[it->second];
    }
    if (!pod.uid.empty() && pod.uid != args.pod_uid) {
      reply_json(res, {{"Error", fmt::format("pod {} has UID {}, not {}", key, pod.uid, args.pod_uid)}});
      return;
    }
    if (!pod.node_name.empty()) {  // the API server refuses a second Binding (409 Conflict)
      reply_json(res, {{"Error", fmt::format("pod {} is already bound to node {}", key, pod.node_name)}});
      return;
    }
    const live::DeviceChoice choice = live::choose_devices(*snapshot, pod, args.node);
    if (!choice.devices) {
      reply_json(res, {{"Error", choice.error}});
      return;
    }
    std::map<std::string, std::string> annotations = device_annotation_values(*choice.devices);
    const int64_t now = hooks.now_ns ? hooks.now_ns()
                                     : std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    annotations.emplace(kAssumeTimeAnnotation, std::to_string(now));
    if (binder != nullptr)
      if (std::string error = binder->bind(args.pod_namespace, args.pod_name, args.pod_uid, args.node, annotations); !error.empty()) {
        reply_json(res, {{"Error", error}});
        return;
      }
    cache.assume_bound(key, args.node, *choice.devices);
    reply_json(res, {{"Error", ""}});
  }

  void snapshot_post(const std::string& body, HttpResponse& res) {
    if (!options.accept_snapshots) {
      res.status = 409;
      res.set_content("the state comes from the API server (--kubeconfig / --in-cluster); POST /snapshot is for offline use\n", "text/plain");
      return;
    }
    const nlohmann::json list = io::parse_json_request(body, "request body", io::kSnapshotRequestLimits);
    const std::map<std::string, size_t> skipped = cache.replace_all(list, "request body");
    const auto snapshot = cache.snapshot();
    const std::lock_guard lock(snapshot->decide_mutex);
    reply_json(res, {{"nodes", snapshot->inputs.input.nodes.size()},
                     {"pods", snapshot->inputs.input.pods.size()},
                     {"refused", snapshot->refused},
                     {"skipped", skipped}});
  }
};

HttpServer::HttpServer(ServerOptions options, live::ClusterCache& cache, PodBinder* binder, ServerHooks hooks)
    : impl_(std::make_unique<Impl>(std::move(options), cache, binder, std::move(hooks))) {
  Impl& s = *impl_;
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    try {
      asio::ssl::context tls(asio::ssl::context::tls_server);
      tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 |
                      asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
      tls.use_certificate_chain_file(s.options.tls_cert_file);
      tls.use_private_key_file(s.options.tls_key_file, asio::ssl::context::pem);
      s.core.tls.emplace(std::move(tls));
    } catch (const boost::system::system_error&) {
      throw std::runtime_error(fmt::format("cannot load the TLS certificate {} and key {}", s.options.tls_cert_file, s.options.tls_key_file));
    }
  }
  s.core.handle = [&s](HttpRequest& req, HttpResponse& res) { s.dispatch(req, res); };
  Routes& routes = s.core.routes;
  // The verbs and /snapshot decode their bodies within the route's limit (read_request_body).
  const auto route = [&s](std::string_view name, void (Impl::*fn)(const std::string&, HttpResponse&), size_t limit) {
    const BodyLimits limits{std::min(limit, s.options.max_body_bytes)};
    return [&s, name, fn, limits](const HttpRequest& req, HttpResponse& res) {
      s.handle(name, req, res, [&](const HttpRequest& q, HttpResponse& r) {
        if (const std::optional<std::string> body = read_request_body(q, r, limits)) (s.*fn)(*body, r);
      });
    };
  };
  routes.post("/filter", route("filter", &Impl::filter, io::kJsonRequestLimits.max_body_bytes));
  routes.post("/prioritize", route("prioritize", &Impl::prioritize, io::kJsonRequestLimits.max_body_bytes));
  routes.post("/preempt", route("preempt", &Impl::preempt, io::kJsonRequestLimits.max_body_bytes));
  routes.post("/bind", route("bind", &Impl::bind, io::kJsonRequestLimits.max_body_bytes));
  routes.post("/snapshot", route("snapshot", &Impl::snapshot_post, io::kSnapshotRequestLimits.max_body_bytes));
  routes.get("/healthz", [&s](const HttpRequest& req, HttpResponse& res) {
    s.handle("healthz", req, res, [](const HttpRequest&, HttpResponse& r) { r.set_content("ok\n", "text/plain"); });
  });
  routes.get("/readyz", [&s](const HttpRequest& req, HttpResponse& res) {
    s.handle("readyz", req, res, [&s](const HttpRequest&, HttpResponse& r) {
      if (s.cache.synced()) {
        r.set_content("ok\n", "text/plain");
      } else {
        r.status = 503;
        r.set_content("not ready: Nodes and Pods not listed yet\n", "text/plain");
      }
    });
  });
  routes.get("/metrics", [&s](const HttpRequest& req, HttpResponse& res) {
    s.handle("metrics", req, res, [&s](const HttpRequest&, HttpResponse& r) {
      r.set_content(s.hooks.metrics ? s.hooks.metrics() : std::string(), "text/plain; version=0.0.4; charset=utf-8");
    });
  });
  if (s.hooks.add_routes) s.hooks.add_routes(routes);
  s.core.resume_accept = [&s] { s.accept(); };
}

HttpServer::~HttpServer() {
  stop();
  impl_->core.pool.shutdown();  // before the loop and the connections go
}

int HttpServer::bind() {
  Impl& s = *impl_;
  try {
    tcp::resolver resolver(s.core.io);
    const auto endpoints = resolver.resolve(s.options.host, std::to_string(s.options.port), tcp::resolver::passive | tcp::resolver::numeric_service);
    const tcp::endpoint endpoint = endpoints.begin()->endpoint();
    tcp::acceptor acceptor(s.core.io);
    acceptor.open(endpoint.protocol());
    // SO_REUSEADDR: restarts fast after a stop, and still refuses a port another server listens on.
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(asio::socket_base::max_listen_connections);
    port_ = acceptor.local_endpoint().port();
    s.acceptor.emplace(std::move(acceptor));
  } catch (const boost::system::system_error&) {
    throw std::runtime_error(s.options.port == 0 ? fmt::format("cannot listen on {}", s.options.host)
                                                 : fmt::format("cannot listen on {}:{}", s.options.host, s.options.port));
  }
  return port_;
}

void HttpServer::serve() {
  Impl& s = *impl_;
  asio::post(s.core.io, [&s] { s.accept(); });
  s.core.io.run();
}

void HttpServer::stop() {
  if (!impl_) return;
  Impl& s = *impl_;
  asio::post(s.core.io, [&s] { s.begin_stop(); });
}

}  // namespace gpufleet::server
