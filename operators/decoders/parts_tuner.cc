#include "operators/decoders/parts_tuner.h"

#include <algorithm>
#include <iterator>

namespace conveyor::ops {

PartsTuner::PartsTuner(int max_parts, bool tuned, Schedule schedule)
    : max_parts_(std::max(max_parts, 1)),
      tuned_(tuned && max_parts > 1),
      schedule_(schedule),
      phase_(schedule.warmup > 0 ? Phase::kWarmup : Phase::kProbe) {
  schedule_.settle = std::max(schedule_.settle, 0);
  schedule_.measure = std::max(schedule_.measure, 1);
  schedule_.rounds = std::max(schedule_.rounds, 1);
  schedule_.hold = std::max(schedule_.hold, 1);
}

int PartsTuner::Choice() const {
  if (!tuned_) return 0;
  if (phase_ != Phase::kProbe) return held_;
  const int window = calls_in_phase_ / (schedule_.settle + schedule_.measure);
  return window % 2;
}

void PartsTuner::Record(double seconds, double cost) {
  if (!tuned_) return;
  const int window_calls = schedule_.settle + schedule_.measure;
  switch (phase_) {
    case Phase::kWarmup:
      if (++calls_in_phase_ >= schedule_.warmup) {
        phase_ = Phase::kProbe;
        calls_in_phase_ = 0;
      }
      return;
    case Phase::kProbe: {
      const int choice = Choice();
      if (calls_in_phase_ % window_calls >= schedule_.settle && seconds > 0 && cost > 0) {
        seconds_[choice] += seconds;
        cost_[choice] += cost;
      }
      if (++calls_in_phase_ < 2 * schedule_.rounds * window_calls) return;
      for (int c = 0; c < 2; ++c) measured_[c] = cost_[c] > 0 ? seconds_[c] / cost_[c] : 0;
      // Both measured: the lower mean; otherwise keep what held before.
      if (measured_[0] > 0 && measured_[1] > 0) held_ = measured_[1] < measured_[0] ? 1 : 0;
      std::fill(std::begin(seconds_), std::end(seconds_), 0.0);
      std::fill(std::begin(cost_), std::end(cost_), 0.0);
      ++probes_;
      phase_ = Phase::kHold;
      calls_in_phase_ = 0;
      return;
    }
    case Phase::kHold:
      if (++calls_in_phase_ >= schedule_.hold) {
        phase_ = Phase::kProbe;
        calls_in_phase_ = 0;
      }
      return;
  }
}

}  // namespace conveyor::ops
