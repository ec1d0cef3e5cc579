// Resampling of an image window to an output size: the engine behind `resize` and
// `random_resized_crop`. Plain functions; no CUDA syntax. The arithmetic (filters, taps, weights,
// rounding) is in resample_math.h and identical on CPU and GPU: GPU outputs equal the CPU's bit
// for bit.
//
// | what      | contract                                                                      |
// |-----------|-------------------------------------------------------------------------------|
// | layout    | HWC, interleaved channels (1..kMaxResampleChannels), row-major, dense           |
// | dtypes    | in: uint8 or float32; out: uint8 (round half up, clamp) or float32             |
// | window    | [y0, y0 + win_h) x [x0, x0 + win_w) inside the image; only it is read          |
// | frames    | a sample may be F frames of the image's shape (FHWC), back to back in and out: |
// |           | each frame is resampled with the sample's window and filter (one descriptor;  |
// |           | the kernels' tiles run over frames x tiles of a frame)                        |
// | order     | horizontal pass into float, then vertical pass over those floats, taps in     |
// |           | increasing index order (the CPU reference and the kernel alike)               |
// | crop      | axis origin (resample_math.h): the output is a crop of a larger resampling of  |
// |           | the window, starting at that output index (resize_crop_mirror)                 |
// | mirror    | bit 0: output columns reversed, bit 1: output rows reversed (the values are    |
// |           | computed as without it; only where they are written changes)                  |
// | GPU       | linear and nearest without antialiasing: one launch (TwoTapKernel,            |
// |           | resample_two_tap_gpu.cu); otherwise two (tiled two-pass ResampleKernel:       |
// |           | 3-channel samples, the rest; resample_gpu.cu); descriptors in device memory;  |
// |           | grid from the output buffer's capacity and the sample count, tiles visited    |
// |           | with grid-stride loops                                                        |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"
#include "operators/resample/resample_math.h"

namespace conveyor::ops {

inline constexpr int kMaxResampleChannels = 8;

// One sample. Written on the host (PrepareGpu / RunCpu) and read as is by the kernel.
struct ResampleDesc {
  const void* in;   // the image (not the window)
  void* out;        // out_h x out_w x channels
  int64_t in_row_stride;  // elements per input row (image width * channels)
  int64_t in_rows;        // rows of the image (not the window): what may be read around the window
  int y0, x0;       // window origin in the image
  int out_h, out_w;
  int channels;
  resample::Axis axis_y, axis_x;  // extents are the window's
  // Frames of the sample (FHWC), each in_rows x in_row_stride elements in and out_h x out_w x
  // channels out, all with the window and taps above. 1 for an image; 0 for an empty clip.
  int frames = 1;
  int mirror = 0;  // kMirrorX | kMirrorY: where output pixels are written (OutPixel)
};

inline constexpr int kMirrorX = 1, kMirrorY = 2;  // DALI's mirror bits: 1 horizontal, 2 vertical

// The element offset / channels of output pixel (oy, ox) in the sample's output: mirrored axes
// reversed. Shared by the CPU reference and the kernels.
CONVEYOR_HD int64_t OutPixel(int mirror, int out_h, int out_w, int oy, int ox) {
  const int y = (mirror & kMirrorY) ? out_h - 1 - oy : oy;
  const int x = (mirror & kMirrorX) ? out_w - 1 - ox : ox;
  return static_cast<int64_t>(y) * out_w + x;
}
CONVEYOR_HD int64_t OutPixel(const ResampleDesc& d, int oy, int ox) { return OutPixel(d.mirror, d.out_h, d.out_w, oy, ox); }

// The descriptor of one sample: the window [y0, y0 + win_h) x [x0, x0 + win_w) of the HWC image
// `in` (shape `in_shape`) resampled into `out` of shape (out_h, out_w, channels); all extents >= 1.
// `antialias` stretches the filter on axes that are downscaled (scale > 1); nearest never is.
// `frames`: the sample is that many such images back to back (in and out), all resampled alike.
ResampleDesc MakeResampleDesc(const void* in, const Shape& in_shape, int64_t y0, int64_t x0, int64_t win_h,
                              int64_t win_w, void* out, const Shape& out_shape, resample::Filter filter,
                              bool antialias, int64_t frames = 1);

// A crop of a resize, mirrored: the image `in` (shape `in_shape`, HWC) resampled as a whole to
// resized_h x resized_w, of which the out_h x out_w window at (crop_y, crop_x) is computed into
// `out` (shape `out_shape`), its axes reversed as `mirror` says (kMirrorX | kMirrorY). Equal, bit
// for bit, to resizing with MakeResampleDesc and then cropping and flipping: same scale, same
// centres, same taps. The window must lie inside the resized image (the caller checks).
ResampleDesc MakeResizeCropDesc(const void* in, const Shape& in_shape, int64_t resized_h, int64_t resized_w,
                                int64_t crop_y, int64_t crop_x, void* out, const Shape& out_shape,
                                resample::Filter filter, bool antialias, int mirror, int64_t frames = 1);

// `interp_type` names: nearest | linear | cubic, and DALI's INTERP_NN | INTERP_LINEAR | INTERP_CUBIC.
inline const std::vector<std::string>& InterpTypeNames() {
  static const std::vector<std::string> names = {"nearest", "linear", "cubic", "INTERP_NN", "INTERP_LINEAR",
                                                 "INTERP_CUBIC"};
  return names;
}
resample::Filter ParseInterpType(const std::string& name);  // one of InterpTypeNames()

// The CPU reference for one sample (host pointers), frame after frame.
void ResampleCpu(const ResampleDesc& d, resample::Filter filter, DType in_dtype, DType out_dtype);

// All samples at once (one or two launches, see the table). `descs`: device-readable array of
// `num_samples` descriptors (device pointers), made with the same `filter` and `antialias`.
// `capacity_bytes`: the output buffer's size (sizes the grid, so a captured launch covers any
// batch that fits). Samples with out_h or out_w 0 are skipped. Linear and nearest without
// antialiasing (at most two taps per axis) take a direct kernel; the rest the tiled two-pass one.
// `crop_mirror`: the descriptors may have axis origins or a mirror mask (MakeResizeCropDesc); the
// kernels then read them (a separate instantiation: plain resizes, false, read neither, and ran
// 1.5-6% slower when every kernel did — geometry_bench, H200, 2026-11-27).
void ResampleGpu(const ResampleDesc* descs, int num_samples, int64_t capacity_bytes, resample::Filter filter,
                 bool antialias, DType in_dtype, DType out_dtype, cuda::StreamView stream, bool crop_mirror = false);

}  // namespace conveyor::ops
