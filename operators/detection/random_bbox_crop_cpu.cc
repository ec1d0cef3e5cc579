#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "operators/detection/random_bbox_crop.h"

namespace conveyor::ops {
namespace {

double Clip01(double v) { return std::min(1.0, std::max(0.0, v)); }

std::string Pair(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + NumberText(v[i]);
  return s + "]";
}

// One sample's search (random_bbox_crop.h): the boxes with area, the parameters, the best window
// drawn so far.
class WindowSearch {
 public:
  WindowSearch(const std::vector<Box>& boxes, const BboxCropParams& params) : boxes_(boxes), params_(params) {
    for (size_t i = 0; i < boxes.size(); ++i) {
      if (HasArea(boxes[i])) used_.push_back(i);
    }
  }

  BboxCropResult Run(Philox& rng) {
    const size_t options = params_.thresholds.size() + (params_.allow_no_crop ? 1 : 0);
    const int64_t budget = params_.total_num_attempts > 0 ? params_.total_num_attempts : kDefaultTotalAttempts;
    int64_t drawn = 0;
    while (drawn < budget) {
      const size_t option = rng.NextU32() % options;
      if (option == params_.thresholds.size()) return Result(Box{0, 0, 1, 1});
      const double threshold = params_.thresholds[option];
      for (int attempt = 0; attempt < params_.num_attempts && drawn < budget; ++attempt, ++drawn) {
        const std::optional<Box> window = DrawWindow(rng);
        if (window && Passes(*window, threshold)) return Result(*window);
      }
    }
    return Result(best_ ? *best_ : Box{0, 0, 1, 1});
  }

 private:
  // A window of valid extent and aspect ratio, or nullopt (the attempt is spent).
  std::optional<Box> DrawWindow(Philox& rng) const {
    const double span = params_.scale_max - params_.scale_min;
    double w = params_.scale_min + span * rng.NextUniform();
    double h = params_.scale_min + span * rng.NextUniform();
    if (params_.aspect_min == params_.aspect_max) {
      const double longer = std::max(w, h), r = params_.aspect_min;
      w = r >= 1 ? longer : longer * r;
      h = r >= 1 ? longer / r : longer;
    } else if (!(h > 0) || w / h < params_.aspect_min || w / h > params_.aspect_max) {
      return std::nullopt;
    }
    if (!(w > 0 && h > 0)) return std::nullopt;
    const double x = (1.0 - w) * rng.NextUniform();
    const double y = (1.0 - h) * rng.NextUniform();
    return Box{x, y, std::min(1.0, x + w), std::min(1.0, y + h)};
  }

  // Whether `window` meets `threshold`; remembers the best window that keeps a box.
  bool Passes(const Box& window, double threshold) {
    if (used_.empty()) return true;
    bool keeps = false;
    double score = params_.all_boxes_above_threshold ? 2.0 : -1.0;
    for (size_t i : used_) {
      const double overlap = OverlapOf(window, boxes_[i], params_.metric);
      score = params_.all_boxes_above_threshold ? std::min(score, overlap) : std::max(score, overlap);
      keeps = keeps || KeepsBox(window, boxes_[i], params_.prune_threshold);
    }
    if (!keeps) return false;
    if (!best_ || score > best_score_) {
      best_ = window;
      best_score_ = score;
    }
    return score >= threshold;
  }

  BboxCropResult Result(const Box& window) const {
    BboxCropResult r;
    r.window = window;
    for (size_t i : used_) {
      if (!KeepsBox(window, boxes_[i], params_.prune_threshold)) continue;
      r.kept.push_back(static_cast<int64_t>(i));
      r.boxes.push_back(RelativeTo(window, boxes_[i]));
    }
    return r;
  }

  const std::vector<Box>& boxes_;
  const BboxCropParams& params_;
  std::vector<size_t> used_;
  std::optional<Box> best_;
  double best_score_ = 0;
};

}  // namespace

BboxCropParams MakeBboxCropParams(const std::vector<double>& thresholds, bool allow_no_crop,
                                  const std::vector<double>& aspect_ratio, const std::vector<double>& scaling,
                                  int64_t num_attempts, int64_t total_num_attempts, const std::string& threshold_type,
                                  bool all_boxes_above_threshold, double bbox_prune_threshold,
                                  const std::string& where) {
  BboxCropParams p;
  if (thresholds.empty())
    throw InvalidArgument(where + ": argument \"thresholds\": expected at least one value, got []");
  for (double t : thresholds) {
    if (!(t >= 0 && t <= 1)) {
      throw InvalidArgument(where + ": argument \"thresholds\": expected values in [0, 1], got " + Pair(thresholds));
    }
  }
  p.thresholds = thresholds;
  p.allow_no_crop = allow_no_crop;
  if (aspect_ratio.size() != 2 || !(aspect_ratio[0] > 0) || !(aspect_ratio[0] <= aspect_ratio[1]) ||
      std::isinf(aspect_ratio[1])) {
    throw InvalidArgument(where + ": argument \"aspect_ratio\": expected [min, max] with 0 < min <= max, got " +
                          Pair(aspect_ratio));
  }
  p.aspect_min = aspect_ratio[0];
  p.aspect_max = aspect_ratio[1];
  if (scaling.size() != 2 || !(scaling[0] >= 0) || !(scaling[0] <= scaling[1]) || !(scaling[1] <= 1)) {
    throw InvalidArgument(where + ": argument \"scaling\": expected [min, max] with 0 <= min <= max <= 1, got " +
                          Pair(scaling));
  }
  p.scale_min = scaling[0];
  p.scale_max = scaling[1];
  if (num_attempts < 1) {
    throw InvalidArgument(where + ": argument \"num_attempts\": expected a value >= 1, got " +
                          std::to_string(num_attempts));
  }
  p.num_attempts = static_cast<int>(std::min<int64_t>(num_attempts, 1 << 30));
  p.total_num_attempts = total_num_attempts;
  if (threshold_type != "iou" && threshold_type != "overlap") {
    throw InvalidArgument(where + ": argument \"threshold_type\": expected iou or overlap, got \"" + threshold_type +
                          "\"");
  }
  p.metric = threshold_type == "iou" ? OverlapMetric::kIoU : OverlapMetric::kOverlap;
  p.all_boxes_above_threshold = all_boxes_above_threshold;
  if (bbox_prune_threshold > 1 || std::isnan(bbox_prune_threshold)) {
    throw InvalidArgument(where +
                          ": argument \"bbox_prune_threshold\": expected a value <= 1 (negative: keep boxes "
                          "by centre), got " +
                          NumberText(bbox_prune_threshold));
  }
  p.prune_threshold = bbox_prune_threshold;
  return p;
}

double OverlapOf(const Box& window, const Box& box, OverlapMetric metric) {
  if (metric == OverlapMetric::kIoU) return IoU(window, box);
  const double area = Area(box);
  return area > 0 ? IntersectionArea(window, box) / area : 0.0;
}

bool KeepsBox(const Box& window, const Box& box, double prune_threshold) {
  const double inter = IntersectionArea(window, box);
  if (!(inter > 0)) return false;
  if (prune_threshold >= 0) return inter / Area(box) >= prune_threshold;
  const double cx = 0.5 * (box.l + box.r), cy = 0.5 * (box.t + box.b);
  return cx >= window.l && cx <= window.r && cy >= window.t && cy <= window.b;
}

Box RelativeTo(const Box& window, const Box& box) {
  const double w = window.width(), h = window.height();
  return Box{Clip01((std::max(box.l, window.l) - window.l) / w), Clip01((std::max(box.t, window.t) - window.t) / h),
             Clip01((std::min(box.r, window.r) - window.l) / w), Clip01((std::min(box.b, window.b) - window.t) / h)};
}

BboxCropResult RandomBboxCrop(const std::vector<Box>& boxes, const BboxCropParams& params, Philox& rng) {
  WindowSearch search(boxes, params);
  return search.Run(rng);
}

}  // namespace conveyor::ops
