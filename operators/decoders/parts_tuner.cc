#include "operators/decoders/parts_tuner.h"

#include <algorithm>

namespace conveyor::ops {

PartsTuner::PartsTuner(int max_parts, bool tuned, Schedule schedule, bool share_tuned, double balanced_margin)
    : balanced_margin_(share_tuned ? std::max(balanced_margin, 0.0) : 0.0),
      schedule_(schedule),
      phase_(schedule.warmup > 0 ? Phase::kWarmup : Phase::kProbe) {
  max_parts = std::max(max_parts, 1);
  std::vector<int> parts{max_parts};
  if (tuned && max_parts > 1) parts.push_back(1);
  for (int p : parts) {
    choices_.push_back({p, false});
    if (share_tuned) choices_.push_back({p, true});
  }
  seconds_.assign(choices_.size(), 0.0);
  cost_.assign(choices_.size(), 0.0);
  measured_.assign(choices_.size(), 0.0);
  schedule_.settle = std::max(schedule_.settle, 0);
  schedule_.measure = std::max(schedule_.measure, 1);
  schedule_.rounds = std::max(schedule_.rounds, 1);
  schedule_.hold = std::max(schedule_.hold, 1);
}

int PartsTuner::Choice() const {
  if (!tuned()) return 0;
  if (phase_ != Phase::kProbe) return held_;
  const int window = calls_in_phase_ / (schedule_.settle + schedule_.measure);
  return window % choices();
}

void PartsTuner::Record(double seconds, double cost) {
  if (!tuned()) return;
  const int window_calls = schedule_.settle + schedule_.measure;
  switch (phase_) {
    case Phase::kWarmup:
      if (++calls_in_phase_ >= schedule_.warmup) {
        phase_ = Phase::kProbe;
        calls_in_phase_ = 0;
      }
      return;
    case Phase::kProbe: {
      const auto c = static_cast<size_t>(Choice());
      if (calls_in_phase_ % window_calls >= schedule_.settle && seconds > 0 && cost > 0) {
        seconds_[c] += seconds;
        cost_[c] += cost;
      }
      if (++calls_in_phase_ < choices() * schedule_.rounds * window_calls) return;
      bool all = true;
      for (size_t k = 0; k < choices_.size(); ++k) {
        measured_[k] = cost_[k] > 0 ? seconds_[k] / cost_[k] : 0;
        all &= measured_[k] > 0;
      }
      // Every choice measured: the lowest mean, a balanced one counted `balanced_margin` slower
      // (it costs CPU cores); otherwise keep what held before.
      if (all) {
        auto judged = [&](size_t k) {
          return measured_[k] * (choices_[k].engines_only ? 1.0 : 1.0 + balanced_margin_);
        };
        size_t best = 0;
        for (size_t k = 1; k < choices_.size(); ++k) {
          if (judged(k) < judged(best)) best = k;
        }
        held_ = static_cast<int>(best);
      }
      std::fill(seconds_.begin(), seconds_.end(), 0.0);
      std::fill(cost_.begin(), cost_.end(), 0.0);
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
