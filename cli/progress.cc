#include "cli/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace conveyor::cli {

std::string FormatDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return buf;
}

Progress::Progress(std::ostream& out, bool terminal, double interval_s, int64_t total_iterations,
                   int64_t epoch_iterations, int batch_size)
    : out_(out),
      terminal_(terminal),
      interval_s_(terminal ? 0.1 : interval_s),
      total_(total_iterations),
      epoch_iterations_(epoch_iterations),
      batch_size_(batch_size),
      start_(std::chrono::steady_clock::now()) {}

std::string Progress::Line(int64_t done, double elapsed_s) const {
  const double per_it = done > 0 ? elapsed_s / static_cast<double>(done) : 0.0;
  const double rate = elapsed_s > 0 ? static_cast<double>(done) * batch_size_ / elapsed_s : 0.0;
  // The epoch of the last finished iteration; ETA to its end (or to the run's end without one).
  int64_t epoch = 1, left = total_ - done;
  if (epoch_iterations_ > 0) {
    epoch = std::max<int64_t>(done - 1, 0) / epoch_iterations_ + 1;
    left = std::min(total_, epoch * epoch_iterations_) - done;
  }
  const double eta = per_it * static_cast<double>(left);
  char buf[256];
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
    std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    std::snprintf(buf, sizeof(buf), "epoch %lld  [%s]  %lld/%lld it  %.1f samples/s  ETA %s",
                  static_cast<long long>(epoch), bar.c_str(), static_cast<long long>(done),
                  static_cast<long long>(total_), rate, FormatDuration(eta).c_str());
  } else {
    std::snprintf(buf, sizeof(buf), "progress: iteration %lld/%lld, epoch %lld, %.1f samples/s, %s ETA %.1f s",
                  static_cast<long long>(done), static_cast<long long>(total_), static_cast<long long>(epoch), rate,
                  epoch_iterations_ > 0 ? "epoch" : "run", eta);
  }
  return buf;
}

void Progress::Update(int64_t done) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed - last_draw_s_ < interval_s_ && done < total_) return;
  last_draw_s_ = elapsed;
  if (terminal_) {
    out_ << "\r" << Line(done, elapsed) << "\x1b[K" << std::flush;  // \x1b[K: clear the rest of the line
    drawn_ = true;
  } else {
    out_ << Line(done, elapsed) << "\n" << std::flush;
  }
}

void Progress::Finish() {
  if (terminal_ && drawn_) out_ << "\n" << std::flush;
}

}  // namespace conveyor::cli
