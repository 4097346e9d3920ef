// Where the Kubernetes API server is and how to authenticate to it: a kubeconfig file (the
// clientcmd/v1 Config kubectl reads) or the in-cluster configuration of a Pod's service account.
// Upstream semantics: k8s.io/client-go tools/clientcmd (api/v1/types.go, loader.go, validation.go,
// client_config.go) and rest/config.go InClusterConfig.
//
// kubeconfig (YAML or JSON; unknown keys are ignored, as clientcmd does):
//
//   apiVersion: v1
//   kind: Config
//   current-context: prod                 # the context used unless one is asked for
//   contexts: [{name: prod, context: {cluster: gpu, user: admin, namespace: default}}]
//   clusters:
//   - name: gpu
//     cluster:
//       server: https://10.0.0.1:6443     # http:// or https://, optional port and path prefix
//       certificate-authority: ca.crt     # or certificate-authority-data: <base64 PEM>
//       insecure-skip-tls-verify: false   # true: the server's certificate is not verified
//   users:
//   - name: admin
//     user:
//       token: <bearer token>             # or tokenFile: <path>
//       client-certificate: admin.crt     # or client-certificate-data: <base64 PEM>
//       client-key: admin.key             # or client-key-data: <base64 PEM>
//
// Relative paths are relative to the kubeconfig's directory (clientcmd ResolveLocalPaths). Files
// named are not read here (read_kubeconfig_file and the watcher read them when connecting).
// Errors (InputError at the file, line, column and field), as clientcmd's validation refuses them:
// no context chosen, a context, cluster or user named that the lists do not have, a name listed
// twice, no server, a server that is not an http(s) URL, both a *-data and its file form, a client
// certificate without its key (or a key without a certificate), a CA together with
// insecure-skip-tls-verify ("specifying a root certificates file with the insecure flag is not
// allowed", client-go transport TLSConfigFor), base64 that does not decode (Go's StdEncoding: padded,
// line breaks ignored), and credentials gpufleet does not implement (username/password, exec,
// auth-provider): the message says which forms are supported.
// Limits: the file is at most YamlLimits::max_file_bytes, parsed within YamlLimits (readers/formats/input_limits.h).
#pragma once

#include <string>
#include <string_view>

namespace gpufleet::io {

/// The API server's URL split for an HTTP client.
struct KubeServerUrl {
  std::string scheme;       ///< "https" or "http"
  std::string host;         ///< host name or address (an IPv6 address without brackets)
  int port = 0;             ///< from the URL; 443 for https, 80 for http when absent
  std::string path_prefix;  ///< "" or a prefix such as "/k8s/clusters/c-1" (no trailing '/')
};

/// Splits `url` ("https://host[:port][/prefix]"). Throws InputError(source, 0, field, ...) for another
/// scheme, an empty host, a port outside 1-65535, a query or a fragment.
KubeServerUrl parse_server_url(const std::string& url, const std::string& source, const std::string& field);

/// Where a kubeconfig gave a setting: the kubeconfig file, 1-based line and column, and the field
/// path ("clusters[0].cluster.certificate-authority"). file "" when the setting came from elsewhere
/// (the in-cluster service account, a config built in code).
struct KubeConfigPosition {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;
};

/// The connection settings of one context (or of the in-cluster service account).
struct KubeRestConfig {
  std::string context;                     ///< the context's name; "" for in-cluster
  std::string server;                      ///< cluster.server as written
  KubeServerUrl url;                       ///< server, split
  std::string certificate_authority;       ///< path of the CA bundle (PEM); "" when none
  std::string certificate_authority_data;  ///< the CA bundle itself (PEM, decoded); "" when none
  bool insecure_skip_tls_verify = false;   ///< true: do not verify the server's certificate
  std::string token;                       ///< bearer token; "" when none
  std::string token_file;                  ///< file holding the bearer token (read per request); "" when none
  std::string client_certificate;          ///< path of the client certificate (PEM); "" when none
  std::string client_certificate_data;     ///< the client certificate (PEM, decoded)
  std::string client_key;                  ///< path of the client key (PEM); "" when none
  std::string client_key_data;             ///< the client key (PEM, decoded)
  std::string namespace_;                  ///< the context's namespace; "" when none
  /// Where the kubeconfig gave the CA (certificate-authority or -data), the client certificate and
  /// the client key, for the errors found when they are loaded (server/kube_client.h).
  KubeConfigPosition certificate_authority_at, client_certificate_at, client_key_at;
};

/// Reads the kubeconfig `text` (named `source` in errors), selecting `context` (or current-context
/// when empty); relative paths resolve against `base_dir` (the file's directory; "" leaves them as
/// written). Reads no file. Throws InputError (see the top of this file).
KubeRestConfig parse_kubeconfig_text(std::string_view text, const std::string& source, const std::string& base_dir,
                                     const std::string& context = "");

/// Reads the kubeconfig file `path` with parse_kubeconfig_text, relative paths against its directory.
KubeRestConfig read_kubeconfig_file(const std::string& path, const std::string& context = "");

/// The service-account directory every Pod gets (rest.InClusterConfig): token, ca.crt, namespace.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The in-cluster configuration (client-go rest.InClusterConfig): server https://host:port from
/// `service_host` and `service_port` (the KUBERNETES_SERVICE_HOST / _PORT environment variables; an
/// IPv6 host is bracketed), token_file <dir>/token (its token read now: it must be readable and not
/// empty), certificate_authority <dir>/ca.crt when that file exists, namespace from <dir>/namespace
/// when present. Throws InputError: host or port empty (file "environment", field
/// KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT: not running in a cluster), the token unreadable.
KubeRestConfig in_cluster_config(const std::string& service_host, const std::string& service_port,
                                 const std::string& service_account_dir = kServiceAccountDir);

/// in_cluster_config with KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT from the environment.
KubeRestConfig in_cluster_config_from_env(const std::string& service_account_dir = kServiceAccountDir);

/// The bearer token of `config` now: the content of token_file (trailing whitespace removed) when
/// set and readable, else `token`. Throws InputError when token_file is set, unreadable and `token`
/// is empty.
std::string current_bearer_token(const KubeRestConfig& config);

}  // namespace gpufleet::io
