#include "readers/kube_api/kubeconfig.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "readers/formats/text_file.h"
#include "readers/formats/yaml_field.h"
#include "util/input_error.h"

namespace gpufleet::io {
namespace {

using detail::Field;
using detail::Source;

// Go's base64.StdEncoding.DecodeString as encoding/json applies it to a []byte field: the standard
// alphabet, padding required, '\r' and '\n' skipped. nullopt when `in` does not decode.
std::optional<std::string> base64_decode(std::string_view in) {
  std::string clean;
  clean.reserve(in.size());
  for (const char c : in)
    if (c != '\r' && c != '\n') clean.push_back(c);
  if (clean.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (size_t i = 0; i < clean.size(); i += 4) {
    const bool last = i + 4 == clean.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = clean[i + static_cast<size_t>(k)];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[k] = value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const uint32_t n = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                       (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out.push_back(static_cast<char>((n >> 16) & 0xFF));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
  }
  return out;
}

std::string decoded(const Field& f) {
  if (!f.present()) return {};
  auto d = base64_decode(f.scalar());
  if (!d) f.fail("not valid base64 (standard alphabet, padded with '=')");
  return *d;
}

KubeConfigPosition position_of(const Field& path, const Field& data) {
  const Field& f = path.present() ? path : data;
  if (!f.present()) return {};
  const auto [line, column] = f.position();
  return {f.source().file, line, column, f.path()};
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// The entry named `name` of the named list `list` ("clusters", "contexts", "users"), its inner mapping
// `inner` ("cluster", "context", "user"). Every entry's name is checked (non-empty, not repeated), as
// clientcmd's conversion of the lists to maps refuses a repeated name.
std::optional<Field> find_named(const Field& list, const char* inner, const std::string& name) {
  std::optional<Field> found;
  std::map<std::string, bool> seen;
  if (list.present() && !list.is_seq()) list.fail(fmt::format("expected a list, got {}", list.type()));
  for (size_t i = 0; i < list.size(); ++i) {
    const Field e = list.at(i);
    e.require_map();
    const std::string n = e["name"].required_str();
    if (seen.count(n) != 0) e["name"].fail(fmt::format("duplicate name '{}' in {}", n, list.path()));
    seen[n] = true;
    if (n == name) found = e[inner];
  }
  return found;
}

}  // namespace

KubeServerUrl parse_server_url(const std::string& url, const std::string& source, const std::string& field) {
  auto fail = [&](const std::string& why) -> void {
    throw InputError(source, 0, field, fmt::format("server '{}' {}", url, why));
  };
  KubeServerUrl out;
  std::string_view rest = url;
  if (rest.rfind("https://", 0) == 0) {
    out.scheme = "https";
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    out.scheme = "http";
    rest.remove_prefix(7);
  } else {
    fail("is not an http:// or https:// URL");
  }
  if (rest.find_first_of("?#") != std::string_view::npos) fail("has a query or fragment");
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string prefix = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  out.path_prefix = prefix;
  if (authority.find('@') != std::string_view::npos) fail("has user information (use the user's credentials)");
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) fail("has an unclosed '[' in its host");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') fail("has characters after its IPv6 address");
      port = after.substr(1);
      if (port.empty()) fail("has an empty port");
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) fail("has an empty port");
    }
  }
  if (out.host.empty()) fail("has no host");
  if (port.empty()) {
    out.port = out.scheme == "https" ? 443 : 80;
  } else {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) fail("has a port that is not a number");
    out.port = std::stoi(std::string(port));
    if (out.port < 1 || out.port > 65535) fail("has a port outside 1-65535");
  }
  return out;
}

KubeRestConfig parse_kubeconfig_text(std::string_view text, const std::string& source, const std::string& base_dir,
                                     const std::string& context) {
  Source src;
  src.file = source;
  const std::vector<detail::YamlNode> docs = detail::load_documents(detail::strip_bom(text), src);
  const detail::YamlNode* doc = nullptr;
  for (const auto& d : docs) {
    if (d.type == detail::YamlType::kNull) continue;
    if (doc != nullptr) Field(d, "", src).fail("a second document (a kubeconfig is one Config)");
    doc = &d;
  }
  static const detail::YamlNode kEmpty;
  const Field root(doc != nullptr ? *doc : kEmpty, "", src);
  if (!root.present()) root.fail("the kubeconfig is empty (expected a Config with clusters, contexts and users)");
  root.require_map();
  if (const Field kind = root["kind"]; kind.present() && kind.scalar() != "Config")
    kind.fail(fmt::format("kind '{}' is not a kubeconfig (expected Config)", kind.scalar()));

  KubeRestConfig cfg;
  const Field current = root["current-context"];
  cfg.context = context.empty() ? current.str() : context;
  if (cfg.context.empty()) current.fail("no context chosen: current-context is not set and no context was given");
  const std::optional<Field> ctx = find_named(root["contexts"], "context", cfg.context);
  if (!ctx) {
    if (context.empty()) current.fail(fmt::format("context '{}' was not found in contexts", cfg.context));
    root["contexts"].fail(fmt::format("context '{}' was not found in contexts", cfg.context));
  }
  ctx->require_map();
  const Field cluster_name = (*ctx)["cluster"];
  const Field user_name = (*ctx)["user"];
  if (cluster_name.str().empty()) cluster_name.fail(fmt::format("cluster was not specified for context '{}'", cfg.context));
  cfg.namespace_ = (*ctx)["namespace"].str();

  const std::optional<Field> cluster = find_named(root["clusters"], "cluster", cluster_name.scalar());
  if (!cluster) cluster_name.fail(fmt::format("cluster '{}' was not found in clusters", cluster_name.scalar()));
  cluster->require_map();
  const Field server = (*cluster)["server"];
  if (server.str().empty()) server.fail(fmt::format("no server found for cluster '{}'", cluster_name.scalar()));
  cfg.server = server.scalar();
  try {
    cfg.url = parse_server_url(cfg.server, source, server.path());
  } catch (const InputError& e) {
    std::string why = e.what();
    if (const size_t at = why.find(": server '"); at != std::string::npos) why = why.substr(at + 2);
    server.fail(why);
  }
  const Field ca = (*cluster)["certificate-authority"];
  const Field ca_data = (*cluster)["certificate-authority-data"];
  if (ca.present() && ca_data.present())
    ca_data.fail("certificate-authority-data and certificate-authority are both specified (give one)");
  cfg.certificate_authority = resolve(ca.str(), base_dir);
  cfg.certificate_authority_data = decoded(ca_data);
  cfg.certificate_authority_at = position_of(ca, ca_data);
  const Field insecure = (*cluster)["insecure-skip-tls-verify"];
  cfg.insecure_skip_tls_verify = insecure.boolean(false);
  if (cfg.insecure_skip_tls_verify && (ca.present() || ca_data.present()))
    insecure.fail("specifying a root certificates file with the insecure flag is not allowed");

  if (!user_name.str().empty()) {
    const std::optional<Field> user = find_named(root["users"], "user", user_name.scalar());
    if (!user) user_name.fail(fmt::format("user '{}' was not found in users", user_name.scalar()));
    if (user->present()) {
      user->require_map();
      for (const char* unsupported : {"username", "password", "exec", "auth-provider"})
        user->fail_key(unsupported, fmt::format("{} is not supported: use token, tokenFile or client-certificate and client-key", unsupported));
      cfg.token = (*user)["token"].str();
      cfg.token_file = resolve((*user)["tokenFile"].str(), base_dir);
      const Field cert = (*user)["client-certificate"];
      const Field cert_data = (*user)["client-certificate-data"];
      const Field key = (*user)["client-key"];
      const Field key_data = (*user)["client-key-data"];
      if (cert.present() && cert_data.present())
        cert_data.fail("client-certificate-data and client-certificate are both specified (give one)");
      if (key.present() && key_data.present()) key_data.fail("client-key-data and client-key are both specified (give one)");
      const bool has_cert = cert.present() || cert_data.present();
      const bool has_key = key.present() || key_data.present();
      if (has_cert && !has_key)
        (cert.present() ? cert : cert_data).fail("client-key-data or client-key must be specified to use the client certificate");
      if (has_key && !has_cert)
        (key.present() ? key : key_data).fail("client-certificate-data or client-certificate must be specified to use the client key");
      cfg.client_certificate = resolve(cert.str(), base_dir);
      cfg.client_certificate_data = decoded(cert_data);
      cfg.client_key = resolve(key.str(), base_dir);
      cfg.client_key_data = decoded(key_data);
      cfg.client_certificate_at = position_of(cert, cert_data);
      cfg.client_key_at = position_of(key, key_data);
    }
  }
  return cfg;
}

KubeRestConfig read_kubeconfig_file(const std::string& path, const std::string& context) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_kubeconfig_text(read_yaml_file(path), path, dir.empty() ? "." : dir, context);
}

KubeRestConfig in_cluster_config(const std::string& service_host, const std::string& service_port,
                                 const std::string& service_account_dir) {
  const char* kWhy = "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined";
  if (service_host.empty()) throw InputError("environment", 0, "KUBERNETES_SERVICE_HOST", kWhy);
  if (service_port.empty()) throw InputError("environment", 0, "KUBERNETES_SERVICE_PORT", kWhy);
  KubeRestConfig cfg;
  const bool v6 = service_host.find(':') != std::string::npos;
  cfg.server = fmt::format("https://{}{}{}:{}", v6 ? "[" : "", service_host, v6 ? "]" : "", service_port);
  cfg.url = parse_server_url(cfg.server, "environment", "KUBERNETES_SERVICE_PORT");
  const std::filesystem::path dir(service_account_dir);
  cfg.token_file = (dir / "token").string();
  cfg.token = current_bearer_token(cfg);
  if (cfg.token.empty()) throw InputError(cfg.token_file, 0, "", "the service account token is empty");
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / "ca.crt", ec)) cfg.certificate_authority = (dir / "ca.crt").string();
  if (std::filesystem::is_regular_file(dir / "namespace", ec)) {
    cfg.namespace_ = read_text_file((dir / "namespace").string(), 4096, "namespace file size");
    while (!cfg.namespace_.empty() && std::isspace(static_cast<unsigned char>(cfg.namespace_.back()))) cfg.namespace_.pop_back();
  }
  return cfg;
}

KubeRestConfig in_cluster_config_from_env(const std::string& service_account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return in_cluster_config(host != nullptr ? host : "", port != nullptr ? port : "", service_account_dir);
}

std::string current_bearer_token(const KubeRestConfig& config) {
  if (config.token_file.empty()) return config.token;
  try {
    std::string t = read_text_file(config.token_file, 1 << 20, "token file size");
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    return t;
  } catch (const InputError&) {
    if (!config.token.empty()) return config.token;
    throw;
  }
}

}  // namespace gpufleet::io
