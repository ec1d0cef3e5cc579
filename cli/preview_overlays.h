// What `conveyor preview` draws over its output tiles: the boxes and the mask outlines of each
// sample (image_grid.h draws them). This file decides which outputs hold them and how their
// values are read.
//
// | overlay | output samples                                 | picked                                          |
// |---------|------------------------------------------------|-------------------------------------------------|
// | boxes   | float [N, 4] (N may differ per sample, be 0)   | --boxes NAME, else an output named boxes/bboxes |
// | classes | integer [N] or [N, 1], N as the boxes' sample  | the first other output matching every sample    |
// | mask    | integer [H, W], [H, W, 1] (or [1, H, W] in CHW) | --mask NAME, else an output named mask/masks    |
//
// Box layout: the producing node's `ltrb` argument when its operator has one (readers.coco,
// bb_flip, bbox_paste, random_bbox_crop — whose `bbox_layout`, any permutation of xyXY or xyWH,
// wins when set), else ltrb. Units: fractions of the image when every finite coordinate of the batch lies in [-1, 2]
// (normalized boxes, clipped or not: a box in pixels that small would be under 2 pixels), else
// pixels of the output image (its H x W before any --tile-size shrink). A box's colour is its
// class's (ClassColour; class 0 without a classes output); a mask region's is its label's. The
// mask is mapped onto the tile by nearest neighbour (pixel centres), so it may differ in size from
// the image.
//
// A named output that is missing, or whose samples have the wrong shape or dtype, is an error
// naming the option, the output, the sample and what was expected; an auto-picked name whose
// samples do not fit is ignored.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/image_grid.h"
#include "core/pipeline/graph.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::cli {

// Element `i` of a sample's data of `dtype`, as a double (the preview's one reader of any dtype).
double SampleElement(const void* data, DType dtype, int64_t i);

struct PreviewOverlays {
  int boxes = -1;          // output index; -1: none
  int box_classes = -1;    // output index of the boxes' classes; -1: none
  std::string layout = "xyXY";  // DALI's bbox_layout notation: xyXY is ltrb, xyWH is xywh
  bool normalized = true;  // else pixels of the output image
  int mask = -1;           // output index; -1: none

  // `boxes from "boxes" (ltrb, normalized, colours by "labels"), mask outlines from "masks"`, or "".
  std::string Describe(const std::vector<std::string>& names) const;
  // Draws sample i's mask outlines, then its boxes, on `tile`: an image of image_h x image_w
  // pixels, possibly shrunk to the tile's size.
  void Draw(const std::vector<TensorListCPU>& host, int i, int64_t image_h, int64_t image_w, RgbImage& tile) const;
};

// The overlays of `host` (the pipeline's outputs, named `names`) by the rules above.
PreviewOverlays FindOverlays(const Graph& graph, const std::vector<std::string>& names,
                             const std::vector<TensorListCPU>& host, const PreviewOptions& options);

}  // namespace conveyor::cli
