// Progress of `conveyor run`: a bar redrawn in place on a terminal, plain lines otherwise.
//
//   terminal:  epoch 1  [##########..........]  37/100 it  1234.5 samples/s  ETA 0:03
//   not:       progress: iteration 37/100, epoch 1, 1234.5 samples/s, epoch ETA 3.1 s
//
// The rate is over the whole run so far; the ETA is to the end of the current epoch when the
// pipeline has a reader (else to the end of the run). Redraws at most every 0.1 s on a terminal
// and every `interval_s` otherwise; Finish() ends the bar's line.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>

namespace conveyor::cli {

class Progress {
 public:
  Progress(std::ostream& out, bool terminal, double interval_s, int64_t total_iterations,
           int64_t epoch_iterations, int batch_size);
  // After iteration `done` (1-based count of finished iterations).
  void Update(int64_t done);
  void Finish();

  // The text of one update (without the line ending), for tests.
  std::string Line(int64_t done, double elapsed_s) const;

 private:
  std::ostream& out_;
  bool terminal_;
  double interval_s_;
  int64_t total_;
  int64_t epoch_iterations_;
  int batch_size_;
  std::chrono::steady_clock::time_point start_;
  double last_draw_s_ = -1e9;
  bool drawn_ = false;
};

// "0:03", "1:02:03".
std::string FormatDuration(double seconds);

}  // namespace conveyor::cli
