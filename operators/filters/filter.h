// 2-D filter of HWC images with a kernel per sample (DALI's experimental.filter, mode "same").
// Plain functions, no CUDA syntax.
//
// | input                        | output                         | per sample                     |
// |------------------------------|--------------------------------|--------------------------------|
// | HWC (1..4 channels) or HW;   | the input's shape; dtype the   | filter (fh x fw ≤ 31 x 31),    |
// | uint8 or float32             | input's or float32             | anchor, fill_value             |
//
// As DALI, a correlation (the filter is not flipped):
//   out(y, x, c) = Σ_i Σ_j w[i][j] · in(y + i − ay, x + j − ax, c),   i < fh, j < fw
// with (ay, ax) the anchor and taps outside the image read through the border rule (FilterBorder).
// Each output is one fmaf chain in (i, j) row-major order from 0, in float32; the kernel does the
// same operations in the same order, so CPU and GPU are bit-identical. uint8 outputs are rounded
// to nearest even and clamped to [0, 255] (convert.h).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"

namespace conveyor::ops {

// The largest filter extent (each axis). The GPU kernel's shared memory holds one channel of an
// output tile plus its halo and the weights, sized at compile time for this extent: the launch then
// depends on nothing that changes per iteration (capturable) and takes 15 KiB of shared memory per
// block. Both backends enforce it, so a pipeline behaves the same on either.
inline constexpr int kMaxFilterExtent = 31;
inline constexpr int kMaxFilterChannels = 4;

// DALI's border names: reflect_101 (…2 1 | 0 1 2 … n−1 | n−2 …), reflect_1001 (…1 0 | 0 1 …
// n−1 | n−1 n−2 …), wrap (periodic), clamp (edge repeated), constant (fill_value).
enum class FilterBorder : int32_t { kReflect101, kReflect1001, kWrap, kClamp, kConstant };

struct FilterSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  int32_t filter_h, filter_w;  // extents, 1..kMaxFilterExtent
  int32_t anchor_y, anchor_x;  // in [0, extent)
  int32_t weights_offset;      // the sample's first weight in the batch's weight array (row-major)
  FilterBorder border;
  float fill;  // the constant border's value (as the input's type holds it)
};

// Index i (any integer) mapped into [0, n) by `border`; −1 for kConstant outside the image.
CONVEYOR_HOST_DEVICE inline int FilterBorderIndex(int i, int n, FilterBorder border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case FilterBorder::kReflect101: {
      if (n == 1) return 0;
      const int period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
    case FilterBorder::kReflect1001: {
      const int period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
    case FilterBorder::kWrap:
      i %= n;
      return i < 0 ? i + n : i;
    case FilterBorder::kClamp:
      return i < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

// `weights`: the batch's weight array (the sample reads from s.weights_offset). `in_type`: uint8
// or float32; `out_type`: the same or float32. Throws InvalidArgument for other dtypes.
void FilterCpu(const FilterSample& s, const float* weights, DType in_type, DType out_type);
// `samples`: n device-readable descriptors, `weights` the device-readable weight array;
// `max_pixels_hint` (from capacities) sizes the grid.
void FilterGpu(const FilterSample* samples, const float* weights, int n, int64_t max_pixels_hint, DType in_type,
               DType out_type, cuda::StreamView stream);

}  // namespace conveyor::ops
