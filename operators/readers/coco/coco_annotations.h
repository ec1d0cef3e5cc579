// CocoAnnotations: what readers.coco keeps of a COCO annotation file — the images, categories and
// annotations, as flat arrays (one allocation per field, written to and read from the index file
// as they are). Nothing here depends on the reader's options: filtering, clipping, remapping and
// coordinate formats happen after (coco_samples.h), so one index serves every configuration.
//
// | field group  | indexed by                   | content                                           |
// |--------------|------------------------------|---------------------------------------------------|
// | image_*      | image, sorted by id          | id, width, height, file name (names[name_ends])   |
// | image_ann_ends | image                      | CSR: annotations of image k are [ends[k-1], ends[k]) |
// | ann_*        | annotation, grouped by image | id, category id, bbox (x, y, w, h), iscrowd       |
// |              | (file order within an image) | polygons (CSR into poly_ends) or RLE (CSR into rle_counts) |
// | poly_ends    | polygon                      | CSR into coords (floats: x0, y0, x1, y1, ...)     |
// | rle_counts   | run                          | uncompressed COCO RLE runs (column-major, 0s first) |
//
// Compressed (string) RLE is decoded to runs when the JSON is parsed. Validate() checks the
// structure (sizes, CSR monotonicity, ranges) so that a damaged index never indexes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor::ops::coco {

struct CocoAnnotations {
  // Images.
  std::vector<int32_t> image_ids;
  std::vector<int32_t> image_widths;
  std::vector<int32_t> image_heights;
  std::vector<uint64_t> name_ends;  // CSR into names
  std::string names;
  std::vector<uint64_t> image_ann_ends;  // CSR into ann_*
  // Categories, in the file's order.
  std::vector<int32_t> category_ids;
  // Annotations.
  std::vector<int64_t> ann_ids;
  std::vector<int32_t> ann_categories;  // raw category id
  std::vector<float> ann_boxes;         // 4 per annotation: x, y, w, h as in the file
  std::vector<uint8_t> ann_crowd;       // iscrowd (0 or 1)
  std::vector<uint64_t> ann_poly_ends;  // CSR into poly_ends
  std::vector<uint64_t> poly_ends;      // CSR into coords (in floats)
  std::vector<float> coords;
  std::vector<uint64_t> ann_rle_ends;   // CSR into rle_counts (empty range: no RLE)
  std::vector<uint32_t> rle_counts;

  size_t num_images() const { return image_ids.size(); }
  size_t num_annotations() const { return ann_ids.size(); }

  static uint64_t Begin(const std::vector<uint64_t>& ends, size_t i) { return i == 0 ? 0 : ends[i - 1]; }
  std::string_view file_name(size_t image) const {
    const uint64_t b = Begin(name_ends, image);
    return std::string_view(names).substr(b, name_ends[image] - b);
  }

  // "" when every array has its expected size and every CSR range lies inside its target (and
  // images are sorted by id, ids unique); else what is wrong. O(size).
  std::string Validate() const;
};

// Parses a COCO instances file (nlohmann-json, streaming element by element so that a large file
// never becomes one DOM). Throws InvalidArgument naming `where`, the file and the JSON path
// ("annotations[12] (id 345): \"bbox\": ...") for every missing, mistyped or out-of-range field,
// an annotation whose image or category does not exist, duplicate image or category ids, and
// segmentation that is not polygons or RLE of its image's size.
CocoAnnotations ParseCocoJson(const std::string& path, const std::string& where);

}  // namespace conveyor::ops::coco
