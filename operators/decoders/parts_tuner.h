// How many hardware handles ("parts") the engines' images of a call are split over: the decoder's
// whole call timed under each choice, the faster kept. GPU-free and unit-tested.
//
// Two handles drive the engines from two threads, which pays where the engines' host work is the
// call's limit (uniform 4:2:0 photos); but each handle's calls free nvJPEG's internal buffers, and
// a free waits for the device while the CUDA backend's threads stall behind it, which costs more
// than the second thread gives where the CUDA backend holds the call (progressive and 4:4:4/gray
// images in the mix). Which side wins depends on the data and the machine (docs/decoding.md), so
// it is measured:
//
//   calls:  warm-up | probe: A A A A A A A A  B B B B B B B B  A ... B ... | hold the faster ... | probe
//                            ^^ settle (not measured), then `measure` calls
//
// A is the most handles, B one; a call's figure is its wall time over its cost (the batch's
// pixels, progressive ones counted three times as in the host queue), summed per choice over the
// probe's windows; the lower mean wins and holds for `hold` calls, then the probe runs again.
#pragma once

#include <cstdint>

namespace conveyor::ops {

class PartsTuner {
 public:
  struct Schedule {
    int warmup = 6;   // first calls: most handles, not measured (allocation, preallocation)
    int settle = 2;   // calls after each switch that are not measured (the balance re-settles)
    int measure = 6;  // measured calls per window
    int rounds = 2;   // windows per choice in one probe, alternating
    int hold = 500;   // calls the faster choice holds before the next probe
  };

  // `max_parts` handles exist; untuned (or one handle): always max_parts.
  PartsTuner(int max_parts, bool tuned) : PartsTuner(max_parts, tuned, Schedule{}) {}
  PartsTuner(int max_parts, bool tuned, Schedule schedule);

  // The handles the next call may use, and its choice's index (0: max_parts, 1: one handle): each
  // choice keeps a balance of its own.
  int parts() const { return Parts(Choice()); }
  int choice() const { return Choice(); }
  // The call just made with parts(): its wall seconds and its cost (ignored when not positive).
  void Record(double seconds, double cost);

  bool tuned() const { return tuned_; }
  int probes() const { return probes_; }  // probes finished
  // The last probe's mean seconds per unit of cost for a choice (0 before any probe).
  double measured(int choice) const { return measured_[choice]; }

 private:
  enum class Phase { kWarmup, kProbe, kHold };
  int Parts(int choice) const { return choice == 0 ? max_parts_ : 1; }
  int Choice() const;

  int max_parts_;
  bool tuned_;
  Schedule schedule_;
  Phase phase_;
  int calls_in_phase_ = 0;  // calls since the phase began
  int held_ = 0;            // the choice that holds (kHold) and rules the warm-up
  int probes_ = 0;
  double seconds_[2] = {0, 0}, cost_[2] = {0, 0};
  double measured_[2] = {0, 0};
};

// A call's cost for the tuner: the image's pixels, three times for a progressive JPEG.
inline double TunerCost(int64_t pixels, bool progressive) {
  return static_cast<double>(pixels) * (progressive ? 3 : 1);
}

}  // namespace conveyor::ops
