// How the engines' side of a call runs, measured: how many hardware handles ("parts") the engines'
// images are split over, and (engines_share_tuned) whether the balancer may give 4:2:0 images to
// the CUDA backend at all. The decoder's whole call is timed under each choice, the faster kept.
// GPU-free and unit-tested.
//
// Two handles drive the engines from two threads, which pays where the engines' host work is the
// call's limit (uniform 4:2:0 photos); but each handle's calls free nvJPEG's internal buffers, and
// a free waits for the device while the CUDA backend's threads stall behind it, which costs more
// than the second thread gives where the CUDA backend holds the call (progressive and 4:4:4/gray
// images in the mix). Which side wins depends on the data and the machine (docs/decoding.md), so
// it is measured.
//
// The balance's 4:2:0 images on the CUDA backend cost CPU cores (its Huffman decoding runs on the
// host, ~1 ms of a thread per photo) and shorten the call only where the engines are its limit:
// with uniform photos every image on the engines ran as fast on half the cores, with 5% photos of
// >= 3000 px the balance was 19% faster (H200, docs/decoding_memory.md). So the share can be
// measured too: "balanced" (the DecodeBalance's automatic share) against "engines only" (share 1
// for the candidates); balanced must win by `balanced_margin` to be kept, since it costs cores.
//
//   calls:  warm-up | probe: A A A A A A A A  B B B B B B B B  A ... B ... | hold the fastest ... | probe
//                            ^^ settle (not measured), then `measure` calls
//
// Choices in order (those tuned): 0 most handles balanced, then most handles engines only, then one
// handle balanced, then one handle engines only; windows cycle through them. A call's figure is its
// wall time over its cost (the batch's pixels, progressive ones counted three times as in the host
// queue), summed per choice over the probe's windows; the lowest mean wins and holds for `hold`
// calls, then the probe runs again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

  // `max_parts` handles exist; untuned (or one handle) and share_tuned false: always max_parts,
  // balanced. share_tuned: "engines only" is a choice too; balanced_margin: how much faster a
  // balanced choice must be to win (0.03: 3%).
  PartsTuner(int max_parts, bool tuned) : PartsTuner(max_parts, tuned, Schedule{}) {}
  PartsTuner(int max_parts, bool tuned, Schedule schedule, bool share_tuned = false, double balanced_margin = 0);

  // The handles the next call may use, and its choice's index (0: max_parts, balanced): each choice
  // keeps a balance of its own.
  int parts() const { return choices_[static_cast<size_t>(Choice())].parts; }
  int choice() const { return Choice(); }
  // Whether the next call gives every 4:2:0 candidate to the engines (its balance's share is 1).
  bool engines_only() const { return engines_only(Choice()); }
  bool engines_only(int choice) const { return choices_[static_cast<size_t>(choice)].engines_only; }
  int choices() const { return static_cast<int>(choices_.size()); }
  // The call just made with parts(): its wall seconds and its cost (ignored when not positive).
  void Record(double seconds, double cost);

  bool tuned() const { return choices_.size() > 1; }
  int probes() const { return probes_; }  // probes finished
  // The last probe's mean seconds per unit of cost for a choice (0 before any probe).
  double measured(int choice) const { return measured_[static_cast<size_t>(choice)]; }

  static constexpr int kMaxChoices = 4;

 private:
  enum class Phase { kWarmup, kProbe, kHold };
  struct ChoiceSpec {
    int parts;
    bool engines_only;
  };
  int Choice() const;

  std::vector<ChoiceSpec> choices_;
  double balanced_margin_;  // 0 unless share_tuned
  Schedule schedule_;
  Phase phase_;
  int calls_in_phase_ = 0;  // calls since the phase began
  int held_ = 0;            // the choice that holds (kHold) and rules the warm-up
  int probes_ = 0;
  std::vector<double> seconds_, cost_, measured_;
};

// A call's cost for the tuner: the image's pixels, three times for a progressive JPEG.
inline double TunerCost(int64_t pixels, bool progressive) {
  return static_cast<double>(pixels) * (progressive ? 3 : 1);
}

}  // namespace conveyor::ops
