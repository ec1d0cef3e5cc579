// What the tests of pipelines/segmentation_train.yaml share: the check that a sample's mask lies on
// its image. The sample scenes (tools/make_sample_data, coco/) paint every object in its
// category's colour (times a texture of 0.7..1) on a muted background, and readers.coco paints
// the mask from the objects' polygons; so after the pipeline's crop, resize and flip, a pixel
// whose mask neighbourhood holds one label L must show category L's colour (L > 0) or no
// category's bright colour (L = 0; thresholds below). Pixels near a label edge are skipped: the image's linear filter, the
// JPEG's chroma subsampling and an ellipse's 24-gon blur or move the colour edge by a few source
// pixels there.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "tests/cli/detection_outputs.h"

namespace conveyor::cli_test {

inline constexpr char kSegmentationYaml[] = "pipelines/segmentation_train.yaml";
inline constexpr int kSegmentationSide = 256;  // the YAML's resize size

// make_sample_data's categories (ids 1, 2, 3, 5 → labels 1..4): red rectangle, green ellipse,
// blue rectangle, yellow ellipse.
inline constexpr std::array<std::array<double, 3>, 4> kCategoryRgb = {
    {{220, 40, 40}, {40, 200, 60}, {40, 70, 230}, {235, 215, 40}}};
// Distance from `rgb` to the segment {t c : t in [t_min, 1]} of category colour c.
inline double SegmentDistance(const double rgb[3], const std::array<double, 3>& c, double t_min) {
  const double t = std::clamp((rgb[0] * c[0] + rgb[1] * c[1] + rgb[2] * c[2]) / (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]),
                              t_min, 1.0);
  double d2 = 0;
  for (int ch = 0; ch < 3; ++ch) d2 += (rgb[ch] - t * c[ch]) * (rgb[ch] - t * c[ch]);
  return std::sqrt(d2);
}

// The label (1..4) whose colour `rgb` shows — within `radius` of t * colour, t in [t_min, 1] —
// or 0 for none (the four segments lie over 100 apart at t >= 0.65).
inline int ColourLabel(const double rgb[3], double t_min, double radius) {
  for (size_t k = 0; k < kCategoryRgb.size(); ++k) {
    if (SegmentDistance(rgb, kCategoryRgb[k], t_min) <= radius) return static_cast<int>(k) + 1;
  }
  return 0;
}

// An object pixel is its colour times a texture in [0.7, 1] (plus JPEG's error): it must show its
// label's colour at t >= 0.65 within 40. The background (40 + 0.45 x a photo: every channel
// <= 155) may come near the dark end of a category (a dim green), never its bright end: a
// label-0 pixel must not show any category's colour at t >= 0.9 within 20 (each category has a
// channel >= 180 there, over 20 above the background's).
inline int ObjectColourLabel(const double rgb[3]) { return ColourLabel(rgb, 0.65, 40); }
inline int BrightColourLabel(const double rgb[3]) { return ColourLabel(rgb, 0.9, 20); }

struct MaskCheck {
  int64_t object_pixels = 0;      // checked pixels with a label > 0
  int64_t background_pixels = 0;  // checked pixels with label 0
  int64_t mismatches = 0;
  std::string first_mismatch;     // "" when none
};

// Image: float16 CHW normalized with the YAML's mean/std; mask: int32 [side, side, 1]. Checks every
// pixel whose (2 radius + 1)^2 mask neighbourhood holds one label.
inline MaskCheck CheckMaskOnImage(const SampleArray& image, const SampleArray& mask, int radius) {
  constexpr int n = kSegmentationSide;
  constexpr double kMean[3] = {123.675, 116.28, 103.53}, kStd[3] = {58.395, 57.12, 57.375};
  MaskCheck check;
  auto label_at = [&](int y, int x) { return static_cast<int>(mask.data[static_cast<size_t>(y) * n + x]); };
  for (int y = radius; y < n - radius; ++y) {
    for (int x = radius; x < n - radius; ++x) {
      const int label = label_at(y, x);
      bool uniform = true;
      for (int v = y - radius; v <= y + radius && uniform; ++v) {
        for (int u = x - radius; u <= x + radius && uniform; ++u) uniform = label_at(v, u) == label;
      }
      if (!uniform) continue;
      ++(label > 0 ? check.object_pixels : check.background_pixels);
      double rgb[3];
      for (int c = 0; c < 3; ++c) rgb[c] = image.data[(static_cast<size_t>(c) * n + y) * n + x] * kStd[c] + kMean[c];
      const int shown = label > 0 ? ObjectColourLabel(rgb) : BrightColourLabel(rgb);
      if (shown == label) continue;
      if (check.mismatches++ == 0) {
        check.first_mismatch = "pixel (x " + std::to_string(x) + ", y " + std::to_string(y) + ") of mask label " +
                               std::to_string(label) + " shows colour (" + std::to_string(std::lround(rgb[0])) + ", " +
                               std::to_string(std::lround(rgb[1])) + ", " + std::to_string(std::lround(rgb[2])) +
                               "), label " + std::to_string(shown) + "'s";
      }
    }
  }
  return check;
}

}  // namespace conveyor::cli_test
