// A progress line on stderr for long runs: "label: done/total (pct%) ETA m:ss". On a terminal it
// redraws one line; otherwise it prints a line at most every 10% so logs stay short.
// Thread-safe: update() may be called from worker threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace gpufleet {

class Progress {
 public:
  /// `enabled` false makes every call a no-op (--quiet).
  Progress(std::string label, int64_t total, bool enabled);
  ~Progress();
  /// Records that `n` more items are done.
  void advance(int64_t n = 1);
  /// Ends the line (called by the destructor if not before).
  void finish();
  /// A callback for one run that reports the fraction of it done (0..1, e.g. sim::SimOptions::progress):
  /// it advances this progress by `steps` items over the run, fraction * steps rounded to the nearest
  /// item, never backwards. Call once per run (each callback counts its own run); this Progress must
  /// outlive the callback.
  std::function<void(double)> fraction_callback(int64_t steps);

 private:
  void draw(bool final_line);
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool tty_;
  bool finished_ = false;
  int last_decile_ = -1;
  int64_t drawn_done_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::mutex mu_;
};

}  // namespace gpufleet
