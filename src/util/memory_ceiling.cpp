#include "util/memory_ceiling.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>

namespace gpufleet {

namespace {
constexpr int64_t kMiB = int64_t{1} << 20;
}  // namespace

int64_t default_memory_ceiling_mib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) / kMiB * static_cast<int64_t>(page) * 3 / 4;
}

bool set_memory_ceiling_mib(int64_t mib) {
  if (mib <= 0) return false;
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0) return false;
  rlim_t want = static_cast<rlim_t>(mib) * static_cast<rlim_t>(kMiB);
  if (limit.rlim_max != RLIM_INFINITY) want = std::min(want, limit.rlim_max);
  if (limit.rlim_cur != RLIM_INFINITY) want = std::min(want, limit.rlim_cur);
  limit.rlim_cur = want;
  return ::setrlimit(RLIMIT_AS, &limit) == 0;
}

int64_t memory_ceiling_mib() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<int64_t>(limit.rlim_cur / static_cast<rlim_t>(kMiB));
}

std::string memory_ceiling_message() {
  const int64_t mib = memory_ceiling_mib();
  return fmt::format("out of memory: the run passed its memory ceiling{} (--max-memory-mib, default three quarters of the "
                     "machine's memory); lower the work or raise the ceiling (docs/input-limits.md, \"Work budget\")",
                     mib > 0 ? fmt::format(" of {} MiB", mib) : std::string());
}

}  // namespace gpufleet
