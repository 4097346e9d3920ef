// How the live server talks to the Kubernetes API server: the TLS material and credentials of one
// io::KubeRestConfig, loaded once, and an HTTP client per request. KubeWatcher (server/kube_watch.h)
// lists and watches with it; KubeBinder (server/kube_binder.h) writes binds with it.
//
// Auth, as client-go's transport builds it from a rest.Config (k8s.io/client-go transport/config.go,
// transport/transport.go TLSConfigFor, rest/config.go):
//  - the CA (certificate_authority file or certificate_authority_data) is the ONLY trusted root;
//  - a client certificate and key, presented on every TLS connection;
//  - insecure_skip_tls_verify: the server's certificate is not verified;
//  - a bearer token in every request's Authorization header, token_file read again before every
//    request (projected service-account tokens rotate; client-go transport/token_source.go).
// Plain http:// servers get neither TLS nor anything else but the token.
//
// Thread safety: after construction a KubeClient is immutable; make_client() and headers() may be
// called from any number of threads at once (each client they return is the caller's own).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <httplib.h>

#include "readers/kube_api/kubeconfig.h"

namespace gpufleet::server {

class KubeClient {
 public:
  /// Loads the TLS material of `config` (https only; nothing is read for http): the CA bundle must
  /// hold a PEM certificate (CA data is written to a private temporary file, removed by the
  /// destructor, so that it is the only trusted root), the client certificate and key must be PEM
  /// and match. Opens no connection. Throws InputError (file: the path or the *-data field's name;
  /// field certificate-authority, client-certificate or client-key) when they do not load, or when
  /// the temporary CA file cannot be written.
  explicit KubeClient(io::KubeRestConfig config);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  const io::KubeRestConfig& config() const { return config_; }

  /// The request path of `api_path` ("/api/v1/pods"): the server URL's path prefix, then api_path.
  std::string path(std::string_view api_path) const;

  /// A new client for one request (or a few in sequence) to the server: an SSLClient with the
  /// loaded CA, client certificate and verification setting for https, a plain client for http.
  /// `connect_timeout_s` bounds the connection (TLS handshake included), `read_timeout_s` each
  /// wait for bytes of the response; both seconds, fractions kept to the microsecond. Keep-alive
  /// is off (callers that send several requests on it turn it on).
  std::unique_ptr<httplib::ClientImpl> make_client(double connect_timeout_s, double read_timeout_s) const;

  /// The headers of every request: Accept: application/json and, when the config has a token,
  /// Authorization: Bearer <io::current_bearer_token(config)>. Throws InputError when token_file
  /// cannot be read and there is no token to fall back on.
  httplib::Headers headers() const;

 private:
  struct Tls;
  io::KubeRestConfig config_;
  std::unique_ptr<Tls> tls_;
};

/// `s` percent-encoded for a URL query value or path segment (RFC 3986 section 2.3: every byte
/// but ALPHA / DIGIT / "-" / "." / "_" / "~" becomes %XX, upper-case hex; Go's url.QueryEscape
/// differs only in writing ' ' as '+').
std::string kube_url_escape(std::string_view s);

/// One line for a request that got a non-2xx answer: "<what>: HTTP <status> <reason> <message>",
/// reason and message from the metav1.Status in `body` (io::parse_status_body: a body that is not a
/// Status gives an empty reason and its first 200 bytes as the message).
std::string kube_http_failure(const std::string& what, int status, const std::string& body);

}  // namespace gpufleet::server
