// parallel_threads / parallel_for (util/parallel.h): how many threads, every index exactly once, the
// calling thread alone running in order, and a failing call that stops nothing but is rethrown.
#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace gpufleet {
namespace {

struct ThreadsCase {
  int requested;
  size_t tasks;
  int expected;
};

TEST(ParallelThreads, RequestedCappedByTasksAtLeastOne) {
  const std::vector<ThreadsCase> cases = {
      {4, 10, 4}, {4, 2, 2}, {4, 0, 1}, {1, 10, 1}, {16, 16, 16}, {3, 1, 1},
  };
  for (const auto& c : cases) EXPECT_EQ(parallel_threads(c.requested, c.tasks), c.expected) << c.requested << " " << c.tasks;
  // 0 (or less) asks for the hardware threads, still capped by the tasks.
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(parallel_threads(0, 1000), cores);
  EXPECT_EQ(parallel_threads(-1, 1000), cores);
  EXPECT_EQ(parallel_threads(0, 1), 1);
}

TEST(ParallelFor, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> calls(100);
    parallel_for(calls.size(), threads, [&](size_t i) { calls[i].fetch_add(1); });
    for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << "threads " << threads << " index " << i;
  }
  parallel_for(0, 4, [](size_t) { FAIL() << "no index to run"; });
}

TEST(ParallelFor, OneThreadRunsInOrderOnTheCaller) {
  std::vector<size_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(5, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(ParallelFor, AFailureStopsNothingAndIsRethrown) {
  for (int threads : {1, 3}) {
    std::mutex mu;
    std::vector<size_t> done;
    try {
      parallel_for(6, threads, [&](size_t i) {
        if (i == 2) throw std::runtime_error("task 2 failed");
        std::lock_guard lock(mu);
        done.push_back(i);
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "task 2 failed");
    }
    std::sort(done.begin(), done.end());
    EXPECT_EQ(done, (std::vector<size_t>{0, 1, 3, 4, 5})) << threads << " threads";
  }
}

}  // namespace
}  // namespace gpufleet
