// A memory ceiling for a run: the process's address space is limited (setrlimit RLIMIT_AS, POSIX
// getrlimit(2)), so a run that would pass it gets std::bad_alloc from its next allocation instead of
// taking the machine's memory; the CLI turns that into one clear line and exit status 2
// (memory_ceiling_message). The limit counts address space, not resident memory, so it sits a little
// above what the run can actually fill.
#pragma once

#include <cstdint>
#include <string>

namespace gpufleet {

/// Three quarters of the machine's physical memory, in MiB (sysconf _SC_PHYS_PAGES x _SC_PAGE_SIZE);
/// 0 when the machine does not say.
int64_t default_memory_ceiling_mib();

/// Limits the process's address space to `mib` MiB (never above a limit already set, e.g. by
/// `ulimit -v`). Returns false when the system refuses (the limit stays as it was). mib > 0.
bool set_memory_ceiling_mib(int64_t mib);

/// The ceiling in force, in MiB; 0 = none.
int64_t memory_ceiling_mib();

/// "out of memory: the run passed its memory ceiling of N MiB (--max-memory-mib, default three
/// quarters of the machine's memory); lower the work (docs/input-limits.md, "Work budget")".
std::string memory_ceiling_message();

}  // namespace gpufleet
