// The samples readers.coco serves, from CocoAnnotations and the reader's options: which images,
// and for each the boxes (in the output's format), labels and annotations it keeps.
//
// The box rule, per annotation of an image W x H (bbox [x, y, w, h] in pixels; negative w or h
// was refused when the file was parsed):
//   1. iscrowd annotations are dropped unless include_iscrowd;
//   2. the box is clipped to the image: l = clamp(x, 0, W), t = clamp(y, 0, H),
//      r = clamp(x + w, 0, W), b = clamp(y + h, 0, H);
//   3. it is dropped when r - l < size_threshold or b - t < size_threshold (so with the default
//      0.1 a box wholly outside the image, clipped to nothing, is dropped; with 0 it is kept as a
//      degenerate box on the border);
//   4. output: [l, t, r - l, b - t] (xywh) or [l, t, r, b] (ltrb), divided by W and H with ratio.
// The annotation's masks go with its box (and are dropped with it); polygons are not clipped.
// Labels: the category id, or with remapping (the default) its position among the sorted category
// ids plus one (1..C). An image without kept boxes is dropped with skip_empty.
#pragma once

#include <cstdint>
#include <vector>

#include "operators/readers/coco/coco_annotations.h"

namespace conveyor::ops::coco {

struct CocoOptions {
  bool ltrb = false;
  bool ratio = false;
  bool skip_empty = false;
  float size_threshold = 0.1f;
  bool include_iscrowd = true;
  bool avoid_class_remapping = false;
};

struct CocoSamples {
  std::vector<uint32_t> images;    // per sample: the image (index into CocoAnnotations' images)
  std::vector<uint64_t> box_ends;  // per sample: CSR into boxes (4 floats each), labels, anns
  std::vector<float> boxes;
  std::vector<int32_t> labels;
  std::vector<uint64_t> anns;  // per box: its annotation

  size_t size() const { return images.size(); }
  uint64_t begin(size_t sample) const { return sample == 0 ? 0 : box_ends[sample - 1]; }
  uint64_t count(size_t sample) const { return box_ends[sample] - begin(sample); }
};

// Images in id order (those without kept boxes left out with skip_empty).
CocoSamples SelectSamples(const CocoAnnotations& data, const CocoOptions& options);

}  // namespace conveyor::ops::coco
