// Independent tasks on a fixed number of threads: the small thread pool of `gpufleet pack` (policies x
// seeds), for any caller whose tasks share nothing but read-only inputs and write to their own slot.
#pragma once

#include <cstddef>
#include <functional>

namespace gpufleet {

/// The threads parallel_for should use for `tasks` tasks when `requested` are asked for:
/// `requested`, or std::thread::hardware_concurrency() when it is 0 or less; then at most `tasks`
/// and at least 1. E.g. (0, 60) on 8 cores -> 8; (4, 2) -> 2; (4, 0) -> 1.
int parallel_threads(int requested, size_t tasks);

/// Calls body(i) once for every i in [0, count), on `threads` threads (the calling thread is one of
/// them; threads <= 1 runs everything on it, in order). Threads take the next index in increasing
/// order, so with one thread the calls run 0, 1, 2, ...; with more, any order. Returns when every
/// call has returned. A call that throws does not stop the others: the remaining indices still run,
/// then the first exception caught is rethrown. `body` must be safe to call from several threads at
/// once.
void parallel_for(size_t count, int threads, const std::function<void(size_t)>& body);

}  // namespace gpufleet
