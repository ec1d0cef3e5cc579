// Boxes for the detection operators (bb_flip, bbox_paste, box_encoder, random_bbox_crop): one box
// in normalized image coordinates ([0, 1] spans the image), how its 4 numbers are laid out, the
// clipping rule every operator applies, overlap measures, and the input checks with their messages.
//
// The clipping rule (docs/operators_detection.md, "Out-of-bounds and degenerate boxes"):
//   1. a box with a NaN coordinate (also x + w = NaN, e.g. inf - inf) becomes the empty box
//      (0, 0, 0, 0);
//   2. every coordinate is clipped to [0, 1] (infinities included);
//   3. a negative extent collapses: r < l gives r = l, b < t gives b = t.
// The result is always a well-formed box inside the image, possibly of zero area. Operators that
// keep the box count (bb_flip, bbox_paste) keep such boxes, so a labels tensor stays aligned;
// operators that select boxes (random_bbox_crop, box_encoder) drop boxes of zero area with their
// labels. Nothing asserts on data.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/op/workspace.h"

namespace conveyor::ops {

// Left, top, right, bottom; x grows rightwards and y downwards.
struct Box {
  double l = 0, t = 0, r = 0, b = 0;
  double width() const { return r - l; }
  double height() const { return b - t; }
  friend bool operator==(const Box&, const Box&) = default;
};

// Applies the clipping rule above.
Box ClipBox(const Box& box);
// Positive width and height.
bool HasArea(const Box& box);
double Area(const Box& box);  // 0 for a box without area
double IntersectionArea(const Box& a, const Box& b);
// Intersection over union; 0 when the union is empty.
double IoU(const Box& a, const Box& b);

// The meaning of a box's 4 numbers, as DALI's `bbox_layout`: a permutation of "xyXY" (start and
// end: ltrb) or of "xyWH" (start and extent: xywh).
class BoxLayout {
 public:
  // ltrb true: "xyXY"; false: "xyWH".
  static BoxLayout FromLtrb(bool ltrb);
  // Throws InvalidArgument "<where>: bbox_layout must be a permutation of xyXY or xyWH, got \"..\"".
  static BoxLayout Parse(const std::string& text, const std::string& where);

  Box Read(const float* v) const;
  void Write(const Box& box, float* v) const;
  const std::string& name() const { return name_; }

 private:
  explicit BoxLayout(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

// Checks input `input` ("boxes") of the node: float32 samples of shape [N, 4], N >= 0. Throws
// InvalidArgument naming the node, the input, the sample, what was expected and what arrived:
//   op "bb_flip" (f): input 0 ("boxes"), sample 2: expected a [N, 4] tensor of boxes, got shape (3, 5)
void CheckBoxesInput(const Workspace& ws, int input, const char* name);
// Checks input `input` ("labels"): int32 or int64 samples of shape [N] or [N, 1] whose N equals
// the box count of input `boxes_input` in the same sample.
void CheckLabelsInput(const Workspace& ws, int input, int boxes_input, const char* name);

// The boxes of one sample, read with `layout` and clipped.
std::vector<Box> ReadClippedBoxes(const TensorListCPU& boxes, int sample, const BoxLayout& layout);
// Label `i` of one sample as int64 (int32 or int64 labels).
int64_t ReadLabel(const TensorListCPU& labels, int sample, int64_t i);
// Stores `value` as label `i` of one sample of `labels` (its dtype: int32 or int64).
void WriteLabel(TensorListCPU& labels, int sample, int64_t i, int64_t value);
// The shape of a labels sample holding `n` labels, with the rank of the input's labels ([n] or
// [n, 1]).
Shape LabelShape(const Shape& input_shape, int64_t n);

// A number for messages: shortest form that reads back ("0.5", "1e-07", "nan").
std::string NumberText(double value);

}  // namespace conveyor::ops
