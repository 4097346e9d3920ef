#include "util/atomic_file.h"

#include <cerrno>
#include <filesystem>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpufleet {

namespace {

// Writes `content` to a new temporary file beside `path`; returns its name. Throws on failure
// (nothing left behind).
std::string write_temporary(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(path + ": cannot create a temporary file: " + std::strerror(errno));
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(err));
  };
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod failed");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": close failed: " + std::strerror(err));
  }
  return tmp;
}

void rename_over(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(path + ": rename failed: " + std::strerror(err));
  }
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  rename_over(write_temporary(path, content), path);
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  try {
    for (const auto& [path, content] : files) temps.push_back(write_temporary(path, content));
  } catch (...) {
    for (const auto& t : temps) ::unlink(t.c_str());
    throw;
  }
  for (size_t i = 0; i < files.size(); ++i) rename_over(temps[i], files[i].first);
}

std::string output_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return "empty path";
  if (fs::is_directory(path, ec)) return "is a directory";
  // The output replaces the file by rename: a device, FIFO or socket would be replaced by a regular
  // file (e.g. /dev/null), a symbolic link by the file instead of its target being written.
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::is_symlink(status)) return "is a symbolic link (the link would be replaced, not its target; give the target)";
  if (fs::exists(status) && !fs::is_regular_file(status)) return "is not a regular file (a device, FIFO or socket)";
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) return "folder " + dir.string() + " does not exist";
  // Try what the write will do (access(W_OK) says yes to root even on read-only file systems).
  std::string probe = (dir / ".gpufleet-write-check.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return "folder " + dir.string() + " is not writable: " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

}  // namespace gpufleet
