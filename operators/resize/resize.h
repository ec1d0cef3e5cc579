// resize: output sizes (plain functions). The pixels come from operators/resample.
//
// Exactly one way of giving the size, as in DALI (0 = not given):
//
// | argument             | output (in_h x in_w image)                                         |
// |----------------------|--------------------------------------------------------------------|
// | size [h, w]          | h x w; one of them 0: that one follows the aspect ratio           |
// | resize_y / resize_x  | both: resize_y x resize_x; one: the other follows the aspect ratio |
// | resize_shorter s     | the shorter side becomes s, the other keeps the aspect ratio       |
// | resize_longer l      | the longer side becomes l, the other keeps the aspect ratio        |
// | max_size [h, w] / m  | aspect-keeping modes: the scale shrinks until both sides fit;      |
// |                      | explicit sides are clamped                                         |
//
// Derived sides are round(in * scale), at least 1. A zero-sized input gives a (0, 0, C) output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace conveyor {
class OpSchema;
}

namespace conveyor::ops {

// Declares the size arguments above (size, resize_x, resize_y, resize_shorter, resize_longer,
// max_size; per sample except max_size) on `schema`, as resize and resize_crop_mirror take them.
// `noun` names what they size in the docs ("Output", "Resized").
OpSchema& AddResizeSizeArgs(OpSchema& schema, const std::string& noun);

struct ResizeSizeArgs {
  std::vector<double> size;  // [] or [h, w]
  double resize_x = 0, resize_y = 0, resize_shorter = 0, resize_longer = 0;
  std::vector<double> max_size;  // [], [m] or [h, w]
};

// {out_h, out_w} for an in_h x in_w image (both >= 1). Throws InvalidArgument prefixed with
// where() ("op \"r\" (resize): sample 3"; called only to build the message) when the arguments
// give no size, or several, or a negative one.
std::pair<int64_t, int64_t> ResizeOutputSize(int64_t in_h, int64_t in_w, const ResizeSizeArgs& args,
                                             const std::function<std::string()>& where);

}  // namespace conveyor::ops
