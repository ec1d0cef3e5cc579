// SSD box encoding (DALI's box_encoder, the MLPerf SSD reference's matching): each anchor gets the
// ground-truth box it matches best, or stays background.
//
//   1. Boxes are clipped (boxes.h); boxes without area are dropped with their labels.
//   2. IoU of every (anchor, box) pair. Each anchor's best box: the highest IoU, the first box on
//      a tie. An anchor matches its best box when that IoU > criteria.
//   3. Every box also claims its own best anchor (highest IoU, the first anchor on a tie), when
//      that IoU > 0, whatever criteria says; boxes are visited in input order, so a later box
//      claiming the same anchor wins.
//   4. Output per anchor, in anchor order:
//        matched:    the box as [cx, cy, w, h] (centre and size), its label;
//        background: the anchor itself as [cx, cy, w, h], label 0.
//      With offset, both the box and the anchor are first scaled by `scale`, and the output is
//        [((cx - acx) / aw - means[0]) / stds[0], ((cy - acy) / ah - means[1]) / stds[1],
//         (log(w / aw) - means[2]) / stds[2],     (log(h / ah) - means[3]) / stds[3]]
//      (a background anchor encodes itself: ((0 - means) / stds)).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "operators/detection/boxes.h"

namespace conveyor::ops {

struct BoxEncoderParams {
  std::vector<Box> anchors;
  double criteria = 0.5;
  bool offset = false;
  double scale = 1;
  std::array<double, 4> means = {0, 0, 0, 0};
  std::array<double, 4> stds = {1, 1, 1, 1};
  // From the above (MakeBoxEncoderParams), so that a sample's work is the IoUs and its matched
  // anchors only: each anchor's area, and its background output (4 floats, rule 4).
  std::vector<double> anchor_area;
  std::vector<float> background;
  // Each anchor as rule 4's offsets see it: [cx, cy, w, h] times scale, 4 doubles per anchor. The
  // GPU backend reads these (and the two above) from a device copy, so it uses the CPU's bits.
  std::vector<double> anchor_center;
};

// Checks the argument values (anchors: a nonempty multiple of 4 floats, ltrb, each anchor finite
// with positive width and height; means and stds: 4 values, stds nonzero; scale > 0). Throws
// InvalidArgument prefixed with `where`.
BoxEncoderParams MakeBoxEncoderParams(const std::vector<double>& anchors, double criteria, bool offset, double scale,
                                      const std::vector<double>& means, const std::vector<double>& stds,
                                      const std::string& where);

// One sample. `boxes`: clipped (ReadClippedBoxes); `labels`: one per box. Writes
// 4 * anchors floats to `out_boxes` and one label per anchor to `out_labels`. The background is
// copied from params.background; only matched anchors are computed (SSD300: 8,732 anchors, a
// few dozen matched).
void EncodeBoxes(const std::vector<Box>& boxes, const std::vector<int64_t>& labels, const BoxEncoderParams& params,
                 float* out_boxes, int64_t* out_labels);

}  // namespace conveyor::ops
