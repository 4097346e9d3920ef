#include "server/kube_client.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "readers/formats/input_limits.h"
#include "readers/kube_api/kube_watch.h"
#include "readers/formats/text_file.h"
#include "util/input_error.h"

namespace gpufleet::server {

// TLS material loaded once: the CA as a file (CA data goes to a private temporary file, so that it
// is the only trusted root), the client certificate and key in memory.
struct KubeClient::Tls {
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

// A TLS setting that does not load. From a kubeconfig: at the kubeconfig's field, the file it names
// (if a path) in the message -- "kc.yaml:7:28: field 'clusters[0].cluster.certificate-authority':
// ca.crt: no PEM certificate in the CA bundle". Otherwise (in-cluster): at the file, or at the field.
[[noreturn]] void fail_tls(const io::KubeConfigPosition& at, const std::string& path, const char* data_field,
                           const char* field, const std::string& message) {
  if (at.file.empty()) throw InputError(path.empty() ? data_field : path, 0, field, message);
  throw InputError(at.file, at.line, at.field, path.empty() ? message : fmt::format("{}: {}", path, message), at.column);
}

// The PEM text of a setting: the file `path` names (its read errors at the setting), else `data`.
std::string pem_of(const std::string& path, const std::string& data, const io::KubeConfigPosition& at) {
  if (path.empty()) return data;
  try {
    return io::read_text_file(path, io::kMiB, "PEM file size");
  } catch (const InputError& e) {
    if (at.file.empty()) throw;
    throw InputError(at.file, at.line, at.field, e.what(), at.column);
  }
}

void set_timeout(httplib::ClientImpl& c, double seconds, bool read) {
  const auto sec = static_cast<time_t>(seconds);
  const auto usec = static_cast<time_t>((seconds - static_cast<double>(sec)) * 1e6);
  if (read) c.set_read_timeout(sec, usec);
  else c.set_connection_timeout(sec, usec);
}

}  // namespace

KubeClient::KubeClient(io::KubeRestConfig config) : config_(std::move(config)), tls_(std::make_unique<Tls>()) {
  if (config_.url.scheme != "https") return;
  Tls& t = *tls_;
  if (!config_.certificate_authority.empty() || !config_.certificate_authority_data.empty()) {
    const std::string pem = pem_of(config_.certificate_authority, config_.certificate_authority_data, config_.certificate_authority_at);
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (ca == nullptr)
      fail_tls(config_.certificate_authority_at, config_.certificate_authority, "certificate-authority-data", "certificate-authority",
               "no PEM certificate in the CA bundle");
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
    const std::string cert_pem = pem_of(config_.client_certificate, config_.client_certificate_data, config_.client_certificate_at);
    const std::string key_pem = pem_of(config_.client_key, config_.client_key_data, config_.client_key_at);
    BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
    t.cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (t.cert == nullptr)
      fail_tls(config_.client_certificate_at, config_.client_certificate, "client-certificate-data", "client-certificate",
               "no PEM certificate");
    bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    t.key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (t.key == nullptr) fail_tls(config_.client_key_at, config_.client_key, "client-key-data", "client-key", "no PEM private key");
    if (X509_check_private_key(t.cert, t.key) != 1)
      fail_tls(config_.client_key_at, config_.client_key, "client-key-data", "client-key",
               "the private key does not match the client certificate");
  }
}

KubeClient::~KubeClient() = default;

std::string KubeClient::path(std::string_view api_path) const {
  std::string p = config_.url.path_prefix;
  p += api_path;
  return p;
}

std::unique_ptr<httplib::ClientImpl> KubeClient::make_client(double connect_timeout_s, double read_timeout_s) const {
  std::unique_ptr<httplib::ClientImpl> c;
  if (config_.url.scheme == "https") {
    // SSLClient takes its own references to the certificate and key (SSL_CTX_use_certificate,
    // SSL_CTX_use_PrivateKey), so clients made at once from several threads share them safely.
    std::unique_ptr<httplib::SSLClient> s;
    if (tls_->cert != nullptr) s = std::make_unique<httplib::SSLClient>(config_.url.host, config_.url.port, tls_->cert, tls_->key);
    else s = std::make_unique<httplib::SSLClient>(config_.url.host, config_.url.port);
    if (!tls_->ca_path.empty()) s->set_ca_cert_path(tls_->ca_path.c_str());
    s->enable_server_certificate_verification(!config_.insecure_skip_tls_verify);
    c = std::move(s);
  } else {
    c = std::make_unique<httplib::ClientImpl>(config_.url.host, config_.url.port);
  }
  set_timeout(*c, connect_timeout_s, false);
  set_timeout(*c, read_timeout_s, true);
  c->set_keep_alive(false);
  return c;
}

httplib::Headers KubeClient::headers() const {
  httplib::Headers h{{"Accept", "application/json"}};
  const std::string token = io::current_bearer_token(config_);
  if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
  return h;
}

std::string kube_url_escape(std::string_view s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') out.push_back(static_cast<char>(c));
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string kube_http_failure(const std::string& what, int status, const std::string& body) {
  const io::KubeStatus st = io::parse_status_body(body, status);
  return fmt::format("{}: HTTP {} {} {}", what, status, st.reason, st.message);
}

}  // namespace gpufleet::server
