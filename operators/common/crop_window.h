// Random crop windows with DALI's (and torchvision's RandomResizedCrop) semantics, shared by
// decoders.image_random_crop and random_resized_crop. Windows are drawn on the host from the
// sample's counter-based Philox stream, so the CPU and GPU backends of an operator crop the same
// window of the same sample in the same iteration.
//
//   for attempt in [0, num_attempts):
//     area   = uniform(area_min, area_max) * H * W
//     aspect = exp(uniform(log aspect_min, log aspect_max))       (w / h)
//     w = round(sqrt(area * aspect)), h = round(sqrt(area / aspect))
//     if 0 < w <= W and 0 < h <= H: x = uniform int in [0, W - w], y in [0, H - h]; done
//   fallback: the whole image, narrowed to the nearest aspect in [aspect_min, aspect_max], centred
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op/philox.h"

namespace conveyor::ops {

struct CropWindow {
  int64_t y = 0, x = 0, h = 0, w = 0;
  friend bool operator==(const CropWindow&, const CropWindow&) = default;
};

struct RandomCropParams {
  double area_min = 0.08, area_max = 1.0;        // fraction of the image area
  double aspect_min = 3.0 / 4, aspect_max = 4.0 / 3;  // width / height
  int num_attempts = 10;
};

// Checks the argument values as given in YAML (`random_area`, `random_aspect_ratio`,
// `num_attempts`) and builds the parameters; throws InvalidArgument prefixed with `where`
// ("op \"x\" (random_resized_crop): random_area must be [lo, hi] with 0 < lo <= hi <= 1, got [0.5, 0.2]").
RandomCropParams MakeRandomCropParams(const std::vector<double>& random_area,
                                      const std::vector<double>& random_aspect_ratio, int num_attempts,
                                      const std::string& where);

// A window inside a height x width image (h, w >= 1 when the image is not empty; all zeros when
// it is). Consumes draws from `rng` (the sample's stream).
CropWindow DrawRandomCropWindow(Philox& rng, int64_t height, int64_t width, const RandomCropParams& params);

}  // namespace conveyor::ops
