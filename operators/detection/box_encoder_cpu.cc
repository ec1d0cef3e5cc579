#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "operators/detection/box_encoder.h"

namespace conveyor::ops {
namespace {

struct CenterBox {
  double cx, cy, w, h;
};

CenterBox Center(const Box& b, double scale) {
  return {0.5 * (b.l + b.r) * scale, 0.5 * (b.t + b.b) * scale, b.width() * scale, b.height() * scale};
}

std::array<double, 4> Four(const std::vector<double>& v, const char* name, const std::string& where) {
  if (v.size() != 4) {
    throw InvalidArgument(where + ": argument \"" + name + "\": expected 4 values [x, y, w, h], got " +
                          std::to_string(v.size()));
  }
  return {v[0], v[1], v[2], v[3]};
}

// Rule 4 for one anchor and its target (the anchor itself for the background).
void EncodeOne(const BoxEncoderParams& params, const Box& anchor_box, const Box& target, float* dst) {
  if (!params.offset) {
    const CenterBox c = Center(target, 1.0);
    dst[0] = static_cast<float>(c.cx);
    dst[1] = static_cast<float>(c.cy);
    dst[2] = static_cast<float>(c.w);
    dst[3] = static_cast<float>(c.h);
    return;
  }
  const CenterBox c = Center(target, params.scale), an = Center(anchor_box, params.scale);
  const double raw[4] = {(c.cx - an.cx) / an.w, (c.cy - an.cy) / an.h, std::log(c.w / an.w), std::log(c.h / an.h)};
  for (size_t i = 0; i < 4; ++i) dst[i] = static_cast<float>((raw[i] - params.means[i]) / params.stds[i]);
}

// IntersectionArea (boxes.cc), the same arithmetic, here where the compiler can inline it into the
// anchors' loop.
inline double Intersection(const Box& a, const Box& b) {
  const double w = std::min(a.r, b.r) - std::max(a.l, b.l);
  const double h = std::min(a.b, b.b) - std::max(a.t, b.t);
  return w > 0 && h > 0 ? w * h : 0.0;
}

}  // namespace

BoxEncoderParams MakeBoxEncoderParams(const std::vector<double>& anchors, double criteria, bool offset, double scale,
                                      const std::vector<double>& means, const std::vector<double>& stds,
                                      const std::string& where) {
  BoxEncoderParams p;
  if (anchors.empty() || anchors.size() % 4 != 0) {
    throw InvalidArgument(where +
                          ": argument \"anchors\": expected a nonempty multiple of 4 values (ltrb per anchor), "
                          "got " +
                          std::to_string(anchors.size()));
  }
  for (size_t a = 0; a < anchors.size() / 4; ++a) {
    const Box box{anchors[4 * a], anchors[4 * a + 1], anchors[4 * a + 2], anchors[4 * a + 3]};
    const bool finite = std::isfinite(box.l) && std::isfinite(box.t) && std::isfinite(box.r) && std::isfinite(box.b);
    if (!finite || !HasArea(box)) {
      throw InvalidArgument(where + ": argument \"anchors\": anchor " + std::to_string(a) + " [" + NumberText(box.l) +
                            ", " + NumberText(box.t) + ", " + NumberText(box.r) + ", " + NumberText(box.b) +
                            "] must be finite with right > left and bottom > top");
    }
    p.anchors.push_back(box);
  }
  p.criteria = criteria;
  p.offset = offset;
  if (!(scale > 0) || !std::isfinite(scale)) {
    throw InvalidArgument(where + ": argument \"scale\": expected a finite value > 0, got " + NumberText(scale));
  }
  p.scale = scale;
  p.means = Four(means, "means", where);
  p.stds = Four(stds, "stds", where);
  for (size_t i = 0; i < 4; ++i) {
    if (p.stds[i] == 0) {
      throw InvalidArgument(where + ": argument \"stds\": must be nonzero, got 0 at position " + std::to_string(i));
    }
  }
  p.anchor_area.reserve(p.anchors.size());
  p.background.reserve(4 * p.anchors.size());
  p.anchor_center.reserve(4 * p.anchors.size());
  for (const Box& anchor : p.anchors) {
    p.anchor_area.push_back(Area(anchor));
    float background[4];
    EncodeOne(p, anchor, anchor, background);
    p.background.insert(p.background.end(), background, background + 4);
    const CenterBox c = Center(anchor, p.scale);  // EncodeOne's `an`
    p.anchor_center.insert(p.anchor_center.end(), {c.cx, c.cy, c.w, c.h});
  }
  return p;
}

void EncodeBoxes(const std::vector<Box>& boxes, const std::vector<int64_t>& labels, const BoxEncoderParams& params,
                 float* out_boxes, int64_t* out_labels) {
  const size_t num_anchors = params.anchors.size();
  constexpr int32_t kNone = -1;
  // Per thread, reused: a sample allocates nothing once a thread has met the anchor count.
  thread_local std::vector<int32_t> match;
  thread_local std::vector<double> match_iou;
  thread_local std::vector<size_t> used;  // the boxes with area
  used.clear();
  for (size_t b = 0; b < boxes.size(); ++b) {
    if (HasArea(boxes[b])) used.push_back(b);
  }
  match.assign(num_anchors, kNone);
  match_iou.assign(num_anchors, 0.0);
  std::vector<size_t> best_anchor(used.size(), 0);
  std::vector<double> best_anchor_iou(used.size(), 0.0);
  const Box* anchors = params.anchors.data();
  const double* anchor_area = params.anchor_area.data();
  for (size_t k = 0; k < used.size(); ++k) {
    const Box& box = boxes[used[k]];
    const double box_area = Area(box);
    double best_iou = 0.0;
    size_t best = 0;
    for (size_t a = 0; a < num_anchors; ++a) {
      const double inter = Intersection(box, anchors[a]);
      if (!(inter > 0)) continue;  // IoU 0: neither an anchor's match nor the box's best
      const double iou = inter / (box_area + anchor_area[a] - inter);
      if (iou > match_iou[a]) {  // strictly: the first box keeps a tie
        match_iou[a] = iou;
        match[a] = static_cast<int32_t>(k);
      }
      if (iou > best_iou) {
        best_iou = iou;
        best = a;
      }
    }
    best_anchor[k] = best;
    best_anchor_iou[k] = best_iou;
  }
  for (size_t a = 0; a < num_anchors; ++a) {
    if (!(match_iou[a] > params.criteria)) match[a] = kNone;
  }
  for (size_t k = 0; k < used.size(); ++k) {
    if (best_anchor_iou[k] > 0) match[best_anchor[k]] = static_cast<int32_t>(k);
  }
  std::memcpy(out_boxes, params.background.data(), params.background.size() * sizeof(float));
  for (size_t a = 0; a < num_anchors; ++a) {
    if (match[a] == kNone) {
      out_labels[a] = 0;
      continue;
    }
    const size_t b = used[static_cast<size_t>(match[a])];
    out_labels[a] = labels[b];
    EncodeOne(params, anchors[a], boxes[b], out_boxes + 4 * a);
  }
}

}  // namespace conveyor::ops
