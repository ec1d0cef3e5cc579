#include "operators/readers/coco/coco_samples.h"

#include <algorithm>
#include <unordered_map>

namespace conveyor::ops::coco {

CocoSamples SelectSamples(const CocoAnnotations& data, const CocoOptions& options) {
  std::vector<int32_t> sorted = data.category_ids;
  std::sort(sorted.begin(), sorted.end());
  std::unordered_map<int32_t, int32_t> label_of;
  for (size_t k = 0; k < sorted.size(); ++k) label_of[sorted[k]] = static_cast<int32_t>(k + 1);
  CocoSamples out;
  out.images.reserve(data.num_images());
  out.box_ends.reserve(data.num_images());
  out.boxes.reserve(data.ann_boxes.size());
  for (size_t image = 0; image < data.num_images(); ++image) {
    const auto width = static_cast<float>(data.image_widths[image]);
    const auto height = static_cast<float>(data.image_heights[image]);
    const size_t first_box = out.labels.size();
    for (uint64_t a = CocoAnnotations::Begin(data.image_ann_ends, image); a < data.image_ann_ends[image]; ++a) {
      if (data.ann_crowd[a] != 0 && !options.include_iscrowd) continue;
      const float* box = &data.ann_boxes[4 * a];
      const float l = std::clamp(box[0], 0.0f, width), t = std::clamp(box[1], 0.0f, height);
      const float r = std::clamp(box[0] + box[2], 0.0f, width), b = std::clamp(box[1] + box[3], 0.0f, height);
      if (r - l < options.size_threshold || b - t < options.size_threshold) continue;
      float v[4] = {l, t, options.ltrb ? r : r - l, options.ltrb ? b : b - t};
      if (options.ratio) {
        v[0] /= width, v[1] /= height, v[2] /= width, v[3] /= height;
      }
      out.boxes.insert(out.boxes.end(), v, v + 4);
      const int32_t category = data.ann_categories[a];
      auto it = label_of.find(category);
      // A category the index lacks (a damaged index passes Validate with it) labels 0.
      out.labels.push_back(options.avoid_class_remapping ? category : (it == label_of.end() ? 0 : it->second));
      out.anns.push_back(a);
    }
    if (options.skip_empty && out.labels.size() == first_box) continue;
    out.images.push_back(static_cast<uint32_t>(image));
    out.box_ends.push_back(out.labels.size());
  }
  return out;
}

}  // namespace conveyor::ops::coco
