#include "util/progress.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace gpufleet {

Progress::Progress(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0), tty_(::isatty(2) != 0),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) draw(false);
}

Progress::~Progress() { finish(); }

void Progress::advance(int64_t n) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  done_ += n;
  draw(false);
}

std::function<void(double)> Progress::fraction_callback(int64_t steps) {
  return [this, steps, done = int64_t{0}](double fraction) mutable {
    const auto now = static_cast<int64_t>(fraction * static_cast<double>(steps) + 0.5);
    if (now > done) advance(now - done);
    done = std::max(done, now);
  };
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  draw(true);
}

void Progress::draw(bool final_line) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double frac = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  const int decile = static_cast<int>(frac * 10);
  if (!final_line) {
    if (tty_ && now - last_draw_ < std::chrono::milliseconds(100) && done_ < total_) return;
    if (!tty_ && decile == last_decile_) return;
  } else if (!tty_ && decile == last_decile_ && drawn_done_ == done_) {
    return;  // the last line already said it
  }
  drawn_done_ = done_;
  last_draw_ = now;
  last_decile_ = decile;
  std::string eta = "--:--";
  if (done_ > 0 && done_ < total_) {
    const auto secs = static_cast<int64_t>(elapsed / frac * (1.0 - frac) + 0.5);
    eta = fmt::format("{}:{:02}", secs / 60, secs % 60);
  } else if (done_ >= total_) {
    eta = "0:00";
  }
  const std::string line = fmt::format("{}: {}/{} ({:.0f}%) elapsed {:.1f}s ETA {}", label_, done_, total_, frac * 100.0, elapsed, eta);
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final_line ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace gpufleet
