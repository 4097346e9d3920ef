#include "readers/formats/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "readers/formats/input_limits.h"
#include "util/input_error.h"

namespace gpufleet::io {

namespace {

// Closes the descriptor on every path out of read_text_file.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_text_file(const std::string& path, size_t max_bytes, const char* limit_name) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // The readers built for the fuzz targets (fuzz/CMakeLists.txt) parse the fuzzer's bytes only: a
  // path in those bytes (a workload's trace or autoscaler file) must not open files of the machine.
  (void)max_bytes;
  (void)limit_name;
  throw InputError(path, 0, "", "no file is read in a fuzzing build");
#endif
  // O_NONBLOCK: opening a FIFO with no writer would block forever; such a file is refused below by
  // fstat, on the opened file itself (no window between the check and the read).
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw InputError(path, 0, "", "cannot open file: no such file");
    throw InputError(path, 0, "", std::string("cannot open file: ") + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw InputError(path, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "is a directory, expected a file");
  if (!S_ISREG(st.st_mode))
    throw InputError(path, 0, "", "is not a regular file (a device, FIFO or socket); give a file");
  const auto size = static_cast<unsigned long long>(st.st_size);
  const auto too_large = [&] { throw InputError(path, 0, "", limit_message(max_bytes, "bytes in the file", limit_name)); };
  if (size > max_bytes) too_large();
  std::string text;
  text.reserve(static_cast<size_t>(size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path, 0, "", std::string("read error: ") + std::strerror(errno));
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) too_large();  // the file grew while it was read
  }
  return text;
}

std::string read_csv_file(const std::string& path) {
  return read_text_file(path, kCsvLimits.max_file_bytes, "CsvLimits::max_file_bytes");
}

std::string read_yaml_file(const std::string& path) {
  return read_text_file(path, kYamlLimits.max_file_bytes, "YamlLimits::max_file_bytes");
}

}  // namespace gpufleet::io
