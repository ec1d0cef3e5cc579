#include <cmath>

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
  return p;
}

void EncodeBoxes(const std::vector<Box>& boxes, const std::vector<int64_t>& labels, const BoxEncoderParams& params,
                 float* out_boxes, int64_t* out_labels) {
  const size_t num_anchors = params.anchors.size();
  std::vector<size_t> used;  // the boxes with area
  for (size_t b = 0; b < boxes.size(); ++b) {
    if (HasArea(boxes[b])) used.push_back(b);
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> match(num_anchors, kNone);
  std::vector<double> match_iou(num_anchors, 0.0);
  std::vector<size_t> best_anchor(used.size(), 0);
  std::vector<double> best_anchor_iou(used.size(), 0.0);
  std::vector<double> anchor_area(num_anchors);
  for (size_t a = 0; a < num_anchors; ++a) anchor_area[a] = Area(params.anchors[a]);

  for (size_t k = 0; k < used.size(); ++k) {
    const Box& box = boxes[used[k]];
    const double box_area = Area(box);
    for (size_t a = 0; a < num_anchors; ++a) {
      const double inter = IntersectionArea(box, params.anchors[a]);
      const double iou = inter > 0 ? inter / (box_area + anchor_area[a] - inter) : 0.0;
      if (iou > match_iou[a]) {  // strictly: the first box keeps a tie
        match_iou[a] = iou;
        match[a] = k;
      }
      if (iou > best_anchor_iou[k]) {
        best_anchor_iou[k] = iou;
        best_anchor[k] = a;
      }
    }
  }
  for (size_t a = 0; a < num_anchors; ++a) {
    if (!(match_iou[a] > params.criteria)) match[a] = kNone;
  }
  for (size_t k = 0; k < used.size(); ++k) {
    if (best_anchor_iou[k] > 0) match[best_anchor[k]] = k;
  }

  for (size_t a = 0; a < num_anchors; ++a) {
    const Box& anchor_box = params.anchors[a];
    const Box& target = match[a] == kNone ? anchor_box : boxes[used[match[a]]];
    out_labels[a] = match[a] == kNone ? 0 : labels[used[match[a]]];
    float* dst = out_boxes + 4 * a;
    if (!params.offset) {
      const CenterBox c = Center(target, 1.0);
      dst[0] = static_cast<float>(c.cx);
      dst[1] = static_cast<float>(c.cy);
      dst[2] = static_cast<float>(c.w);
      dst[3] = static_cast<float>(c.h);
      continue;
    }
    const CenterBox c = Center(target, params.scale), an = Center(anchor_box, params.scale);
    const double raw[4] = {(c.cx - an.cx) / an.w, (c.cy - an.cy) / an.h, std::log(c.w / an.w), std::log(c.h / an.h)};
    for (size_t i = 0; i < 4; ++i) dst[i] = static_cast<float>((raw[i] - params.means[i]) / params.stds[i]);
  }
}

}  // namespace conveyor::ops
