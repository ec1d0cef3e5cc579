// mosaic (YOLO-style; DALI has none): four images of the batch into one canvas around a random
// centre, with their boxes moved, clipped and filtered. Plain functions; no CUDA syntax.
//
// | what     | contract                                                                          |
// |----------|-----------------------------------------------------------------------------------|
// | images   | HWC, same channel count for the four; dtypes of window.h (values moved as bits)    |
// | canvas   | out_h x out_w, split at the centre (cy, cx) into four quadrants                   |
// | tiles    | quadrant k (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right) shows image k |
// |          | with its corner at the centre: its origin (oy, ox) is (cy - h, cx - w),            |
// |          | (cy - h, cx), (cy, cx - w), (cy, cx); what it leaves of the quadrant is fill       |
// | boxes    | normalized [0, 1]: box of image k -> ((x * w + ox) / out_w, (y * h + oy) / out_h), |
// |          | then the clipping rule of detection/boxes.h; boxes without area are dropped        |
// | GPU      | MosaicGpu: one launch per batch, blockIdx.y = sample, blocks along x take canvas   |
// |          | rows (grid-stride), grid from the output capacity; descriptors in device memory;   |
// |          | equal to MosaicCpu bit for bit (draws and boxes stay on the host: same plan)       |
#pragma once

#include <cstdint>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/philox.h"
#include "core/tensor/dtype.h"
#include "operators/pad_paste/window.h"

namespace conveyor::ops {

struct MosaicTile {
  const void* in;
  int64_t h, w;    // the image
  int64_t oy, ox;  // its top-left pixel on the canvas (may be negative)
};

struct MosaicDesc {
  void* out;
  int64_t out_h, out_w, channels;
  int64_t cy, cx;  // the centre: quadrant rows [0, cy) and [cy, out_h), columns likewise
  MosaicTile tiles[4];
  uint32_t fill[kMaxWindowFill];
  int32_t fill_count;
};

// The random part of one sample's mosaic, drawn from its stream in this order: the centre's x and
// y fractions (uniform in [center_lo, center_hi)), then the three partner samples (U32 % n).
struct MosaicDraw {
  int64_t cy, cx;
  int sources[4];  // sample i, then the three partners (may repeat, may be i)
};
MosaicDraw DrawMosaic(Philox rng, int sample, int num_samples, int64_t out_h, int64_t out_w, double center_lo,
                      double center_hi);

// The tile origins of a draw for images of the given heights and widths (no pointers).
void PlaceTiles(const MosaicDraw& draw, const int64_t h[4], const int64_t w[4], MosaicDesc& d);

void MosaicCpu(const MosaicDesc& d, DType dtype);

// `descs`: device-readable array of `num_samples` descriptors with device pointers (out and the
// four tiles' in). `capacity_bytes`: the output buffer's size (sizes the grid, so a captured launch
// stays valid for any batch that fits it). Throws InvalidArgument for an element size not 1, 2, 4.
void MosaicGpu(const MosaicDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream);

}  // namespace conveyor::ops
