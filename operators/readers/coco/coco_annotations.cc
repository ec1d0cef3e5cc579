#include "operators/readers/coco/coco_annotations.h"

#include <cmath>

#include "operators/readers/coco/coco_masks.h"

namespace conveyor::ops::coco {
namespace {

// "" when `ends` (one per item) is non-decreasing and ends at most at `target`.
std::string CheckCsr(const std::vector<uint64_t>& ends, uint64_t target, const char* name) {
  uint64_t prev = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] < prev || ends[i] > target) {
      return std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(ends[i]) + " is out of order or past " +
             std::to_string(target);
    }
    prev = ends[i];
  }
  return "";
}

}  // namespace

std::string CocoAnnotations::Validate() const {
  const size_t ni = image_ids.size(), na = ann_ids.size();
  if (image_widths.size() != ni || image_heights.size() != ni || name_ends.size() != ni || image_ann_ends.size() != ni) {
    return "image arrays differ in length";
  }
  if (ann_categories.size() != na || ann_boxes.size() != 4 * na || ann_crowd.size() != na || ann_poly_ends.size() != na ||
      ann_rle_ends.size() != na) {
    return "annotation arrays differ in length";
  }
  std::string bad;
  if (!(bad = CheckCsr(name_ends, names.size(), "name_ends")).empty()) return bad;
  if (!(bad = CheckCsr(image_ann_ends, na, "image_ann_ends")).empty()) return bad;
  if (ni > 0 && image_ann_ends.back() != na) return "image_ann_ends does not cover every annotation";
  if (!(bad = CheckCsr(ann_poly_ends, poly_ends.size(), "ann_poly_ends")).empty()) return bad;
  if (na > 0 && ann_poly_ends.back() != poly_ends.size()) return "ann_poly_ends does not cover every polygon";
  if (!(bad = CheckCsr(poly_ends, coords.size(), "poly_ends")).empty()) return bad;
  if (!(bad = CheckCsr(ann_rle_ends, rle_counts.size(), "ann_rle_ends")).empty()) return bad;
  for (size_t i = 0; i < ni; ++i) {
    if (i > 0 && image_ids[i] <= image_ids[i - 1]) return "image ids are not sorted and unique at image " + std::to_string(i);
    if (image_widths[i] <= 0 || image_heights[i] <= 0) return "image " + std::to_string(i) + " has no size";
    if (name_ends[i] == Begin(name_ends, i)) return "image " + std::to_string(i) + " has no file name";
  }
  for (size_t p = 0; p < poly_ends.size(); ++p) {
    if ((poly_ends[p] - Begin(poly_ends, p)) % 2 != 0) return "polygon " + std::to_string(p) + " has an odd coordinate count";
  }
  for (float c : coords) {
    if (!std::isfinite(c)) return "a polygon coordinate is not finite";
  }
  for (size_t a = 0; a < na; ++a) {
    const float* box = &ann_boxes[4 * a];
    for (int k = 0; k < 4; ++k) {
      if (!std::isfinite(box[k])) return "annotation " + std::to_string(a) + " has a box coordinate that is not finite";
    }
    if (box[2] < 0 || box[3] < 0) return "annotation " + std::to_string(a) + " has a box of negative size";
    if (ann_crowd[a] > 1) return "annotation " + std::to_string(a) + " has iscrowd " + std::to_string(ann_crowd[a]);
  }
  // RLE runs must cover their image exactly (PaintRle relies on it).
  for (size_t i = 0; i < ni; ++i) {
    for (uint64_t a = Begin(image_ann_ends, i); a < image_ann_ends[i]; ++a) {
      const uint64_t b = Begin(ann_rle_ends, a);
      if (b == ann_rle_ends[a]) continue;
      bad = CheckRleSize(rle_counts.data() + b, ann_rle_ends[a] - b, image_heights[i], image_widths[i]);
      if (!bad.empty()) return "annotation " + std::to_string(a) + "'s RLE: " + bad;
    }
  }
  return "";
}

}  // namespace conveyor::ops::coco
