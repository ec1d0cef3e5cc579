// The split of the images both GPU paths may take between the JPEG engines and the CUDA backend,
// from each path's measured rate. GPU-free and unit-tested.
//
// Rates are in pixels per second (whole images: both paths decode the whole entropy-coded scan
// even for a window), so a batch of large images and one of small ones measure the same path
// alike, and the split is by pixels: the engines take images until their pixels reach their
// share of the batch's, interleaved (Bresenham-style) so both paths get big and small images.
// share = engines_rate / (engines_rate + cuda_rate), each rate smoothed (EMA), kept inside
// [kMinShare, 1 - kMinShare] so both paths stay measured. A fixed share (hw_decoder_load) never
// moves and applies to the candidates alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace conveyor::ops {

class DecodeBalance {
 public:
  static constexpr double kEma = 0.3;        // weight of the newest rate measurement
  static constexpr double kMinShare = 0.05;  // each path keeps this share so its rate stays measured
  static constexpr double kInitialShare = 0.9;  // engines first

  // fixed_share in [0, 1]: that share always; < 0: automatic.
  explicit DecodeBalance(double fixed_share = -1)
      : fixed_(fixed_share >= 0), share_(fixed_share >= 0 ? fixed_share : kInitialShare) {}

  double share() const { return share_; }
  double engines_rate() const { return engines_rate_; }  // pixels/s, smoothed (0: none yet)
  double cuda_rate() const { return cuda_rate_; }

  // One measurement: `pixels` decoded in `seconds` (ignored when either is not positive).
  void AddEngines(double pixels, double seconds);
  void AddCuda(double pixels, double seconds);

  // For candidates with these pixel counts (in order): 1 where the engines take it. The engines
  // already have `engines_fixed` pixels of this call and the CUDA backend `cuda_fixed` (images
  // routed to one path only): the candidates are split so that both paths' whole loads follow the
  // share — both finish together — to within one image, each path keeping kMinShare of them.
  void Split(const std::vector<int64_t>& pixels, std::vector<uint8_t>& to_engines, double engines_fixed = 0,
             double cuda_fixed = 0) const;

 private:
  void Update();
  bool fixed_;
  double share_;
  double engines_rate_ = 0, cuda_rate_ = 0;
};

// The order of an engines' call: by (height, width) of the whole image, largest first, images of one
// size in the order given (nvImageCodec sorts a batch by area before its decoders). One hardware call
// of 256 varied-size images in the balancer's interleaved order took 17.4 ms, sorted 10.7 (H200,
// docs/decoding.md). `height_width(i)` gives image i's std::pair{height, width}.
template <typename HeightWidth>
void SortLargestFirst(std::vector<int>& images, HeightWidth height_width) {
  std::stable_sort(images.begin(), images.end(), [&](int x, int y) { return height_width(x) > height_width(y); });
}

}  // namespace conveyor::ops
