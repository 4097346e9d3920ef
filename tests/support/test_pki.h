// Test helpers for files and TLS: a temporary directory removed at the end of the test, and a small
// PKI made with the openssl command (Debian package openssl): a CA, a server certificate for
// 127.0.0.1 (subjectAltName IP) and a client certificate it signs, and a second, unrelated CA.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpufleet::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "gpufleet-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Writes `text` to `name` in the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

/// ca.crt/ca.key, server.crt/server.key (CN and IP SAN 127.0.0.1, signed by ca), client.crt/client.key
/// (CN admin, O system:masters, signed by ca), other.crt/other.key (a self-signed CA that signs
/// nothing here). `ok` is false when the openssl command failed (tests then skip).
struct Pki {
  TempDir dir{"gpufleet-pki"};
  bool ok = false;
  Pki() {
    const std::string d = dir.path.string();
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    dir.write("san.ext", "subjectAltName=IP:127.0.0.1\n");
    const std::string cmd =
        "cd " + d + " && openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 1 -subj /CN=test-ca" +
        " && openssl req " + key + " -keyout server.key -out server.csr -subj /CN=127.0.0.1" +
        " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile san.ext" +
        " && openssl req " + key + " -keyout client.key -out client.csr -subj /CN=admin/O=system:masters" +
        " && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1" +
        " && openssl req -x509 " + key + " -keyout other.key -out other.crt -days 1 -subj /CN=other-ca";
    ok = std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) == 0;
  }
  std::string path(const char* name) const { return (dir.path / name).string(); }
  /// The file's bytes ("" when unreadable).
  std::string read(const char* name) const {
    std::ifstream in(dir.path / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace gpufleet::test
