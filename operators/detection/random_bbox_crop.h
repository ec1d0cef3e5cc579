// The window search of random_bbox_crop (DALI's semantics, SSD's sampler), on one sample's boxes,
// drawing from the sample's counter-based Philox stream so a run is reproducible and a resumed run
// draws the same windows.
//
//   boxes: clipped (boxes.h); boxes without area take no part and are never output
//   options = thresholds, plus "no crop" when allow_no_crop
//   until `total_num_attempts` windows were drawn (default cap: kDefaultTotalAttempts):
//     option = options[U32 % options]                                      (1 draw)
//     no crop: window [0, 0, 1, 1], every box kept, done
//     up to num_attempts times:
//       w, h = uniform(scaling[0], scaling[1]) each                        (2 draws)
//       aspect_ratio[0] == aspect_ratio[1] = r: w, h become the window of aspect r whose longer
//         side is max(w, h); otherwise w / h must lie in aspect_ratio, else next attempt
//       x = uniform * (1 - w), y = uniform * (1 - h)                       (2 draws)
//       overlap of each box with the window: IoU, or (threshold_type overlap) intersection area /
//         box area; the window passes when every box (all_boxes_above_threshold) or at least
//         one box reaches the threshold — and at least one box is kept (below), when there are any
//       passes: done
//   budget spent: the best window drawn (highest min, or max, overlap among those that keep a
//     box), else no crop
//
// Kept boxes: the centre lies in the window, edges included (bbox_prune_threshold < 0, DALI's
// default), or intersection area / box area >= bbox_prune_threshold; and the intersection has area.
// A kept box is clipped to the window and expressed relative to it ([0, 1] spans the window).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op/philox.h"
#include "operators/detection/boxes.h"

namespace conveyor::ops {

enum class OverlapMetric { kIoU, kOverlap };

struct BboxCropParams {
  std::vector<double> thresholds = {0.0};
  bool allow_no_crop = true;
  double aspect_min = 1, aspect_max = 1;  // window width / height, normalized coordinates
  double scale_min = 1, scale_max = 1;    // window extent / image extent, per axis
  int num_attempts = 1;
  int64_t total_num_attempts = -1;  // <= 0: kDefaultTotalAttempts
  OverlapMetric metric = OverlapMetric::kIoU;
  bool all_boxes_above_threshold = true;
  double prune_threshold = -1;  // < 0: the centre rule
};

// DALI searches forever when total_num_attempts is not given; we stop here and take the best
// window drawn (or no crop), so an unsatisfiable configuration costs time, never a hang.
constexpr int64_t kDefaultTotalAttempts = 1000;

// Checks argument values as given in YAML and builds the parameters; throws InvalidArgument
// prefixed with `where` ("op \"random_bbox_crop\" (c): argument \"scaling\": expected [min, max] with
// 0 <= min <= max <= 1, got [0.5, 0.2]").
BboxCropParams MakeBboxCropParams(const std::vector<double>& thresholds, bool allow_no_crop,
                                  const std::vector<double>& aspect_ratio, const std::vector<double>& scaling,
                                  int64_t num_attempts, int64_t total_num_attempts, const std::string& threshold_type,
                                  bool all_boxes_above_threshold, double bbox_prune_threshold,
                                  const std::string& where);

struct BboxCropResult {
  Box window{0, 0, 1, 1};     // normalized: anchor (l, t), shape (width, height)
  std::vector<int64_t> kept;  // indices of the kept input boxes, ascending
  std::vector<Box> boxes;     // the kept boxes relative to the window
};

double OverlapOf(const Box& window, const Box& box, OverlapMetric metric);
// Whether `box` (with area) is kept by `window` (see above).
bool KeepsBox(const Box& window, const Box& box, double prune_threshold);
// `box` clipped to `window`, in the window's coordinates, clamped to [0, 1].
Box RelativeTo(const Box& window, const Box& box);

// One sample: `boxes` clipped (ReadClippedBoxes), `rng` the sample's stream (ws.Rng(i)).
BboxCropResult RandomBboxCrop(const std::vector<Box>& boxes, const BboxCropParams& params, Philox& rng);

}  // namespace conveyor::ops
