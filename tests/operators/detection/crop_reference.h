// An independent reference for what random_bbox_crop outputs once its window is known: which boxes
// survive (centre rule or area fraction), clipped and re-expressed in the window, with their labels.
// Written per box with its own overlap arithmetic; the operator's window comes from its outputs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/operators/detection/box_testing.h"

namespace conveyor::testing {

struct Window {
  double x, y, w, h;
  bool whole() const { return x == 0 && y == 0 && w == 1 && h == 1; }
};

inline Window WindowOf(const std::vector<TensorListCPU>& out, int s) {
  const std::vector<float> a = Values<float>(out[0], s), sh = Values<float>(out[1], s);
  return {a[0], a[1], sh[0], sh[1]};
}

// Area of the intersection of window and ltrb box `b`.
inline double InterArea(const Window& win, const float* b) {
  const double iw = std::min(win.x + win.w, double{b[2]}) - std::max(win.x, double{b[0]});
  const double ih = std::min(win.y + win.h, double{b[3]}) - std::max(win.y, double{b[1]});
  return iw > 0 && ih > 0 ? iw * ih : 0.0;
}

inline double BoxArea(const float* b) { return (double{b[2]} - b[0]) * (double{b[3]} - b[1]); }

inline double WindowIoU(const Window& win, const float* b) {
  const double inter = InterArea(win, b);
  return inter / (win.w * win.h + BoxArea(b) - inter);
}

// Checks sample `s` of the operator's outputs (anchor, shape, bboxes (ltrb), labels) against the
// reference applied to the sample's input boxes (ltrb, in range, with area) and labels. Boxes
// within 1e-6 of the keep/drop boundary (float window vs the operator's double) may go either way.
inline void ExpectKeptBoxes(const std::vector<float>& in, const std::vector<int32_t>& labels,
                            const std::vector<TensorListCPU>& out, int s, double prune_threshold = -1) {
  const Window win = WindowOf(out, s);
  const std::vector<float> got = Values<float>(out[2], s);
  const std::vector<int32_t> got_labels = Values<int32_t>(out[3], s);
  ASSERT_EQ(got.size() / 4, got_labels.size());
  size_t next = 0;
  for (size_t i = 0; i < in.size() / 4; ++i) {
    const float* b = &in[4 * i];
    bool keep = false, unsure = false;
    if (prune_threshold < 0) {
      const double cx = (double{b[0]} + b[2]) / 2, cy = (double{b[1]} + b[3]) / 2;
      const double margin = std::min({cx - win.x, win.x + win.w - cx, cy - win.y, win.y + win.h - cy});
      keep = margin >= 0;
      unsure = std::abs(margin) < 1e-6;
    } else {
      const double fraction = InterArea(win, b) / BoxArea(b);
      keep = fraction >= prune_threshold && fraction > 0;
      unsure = std::abs(fraction - prune_threshold) < 1e-5;
    }
    if (!keep && !unsure) continue;
    const double want[4] = {(std::max(double{b[0]}, win.x) - win.x) / win.w,
                            (std::max(double{b[1]}, win.y) - win.y) / win.h,
                            (std::min(double{b[2]}, win.x + win.w) - win.x) / win.w,
                            (std::min(double{b[3]}, win.y + win.h) - win.y) / win.h};
    bool same = next < got_labels.size() && got_labels[next] == labels[i];
    for (int c = 0; c < 4 && same; ++c) same = std::abs(got[4 * next + c] - std::clamp(want[c], 0.0, 1.0)) < 2e-5;
    if (same) {
      ++next;
    } else if (!unsure) {
      ADD_FAILURE() << "sample " << s << ": input box " << i << " (label " << labels[i] << ") should be output " << next
                    << " [" << want[0] << ", " << want[1] << ", " << want[2] << ", " << want[3] << "] for window ["
                    << win.x << ", " << win.y << ", " << win.w << ", " << win.h << "]";
      return;
    }
  }
  EXPECT_EQ(next, got_labels.size()) << "sample " << s << ": the operator kept more boxes than the reference";
}

}  // namespace conveyor::testing
