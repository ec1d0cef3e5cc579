// Padding a batch of differently shaped samples into one tensor: the C API's
// conveyor_outputs_get_padded. Plain C++ interface (no CUDA syntax), so any file can call it.
//
//   out[i, j0, j1, ...] = sample i at (j0, j1, ...) when inside its shape, else the pad pattern
//
// Samples are contiguous row-major runs of one buffer at byte offsets; the output is contiguous
// [batch, max extents...]; elements are copied as raw bytes (1, 2, 4 or 8 per element).
#pragma once

#include <cstdint>
#include <vector>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor::capi {

inline constexpr int kMaxPadDims = 8;

// One sample's place and shape (ndim of the batch; extents beyond ndim unused).
struct PadSample {
  int64_t offset = 0;  // bytes from the samples' base
  int64_t shape[kMaxPadDims] = {};
};

// The pad value in `dtype`'s bytes (low bytes of the result): ints and bool truncate toward zero
// after a range check (InvalidArgument when it does not fit), floats round to nearest.
uint64_t PadPattern(double value, DType dtype);

// The padded shape: [samples, max extent per dimension...].
Shape PaddedShape(const std::vector<Shape>& shapes);

// Host memory: writes `out` (contiguous, PaddedShape elements) from the samples at `base`.
void PadBatchCpu(void* out, const void* base, const std::vector<PadSample>& samples, const Shape& padded,
                 size_t itemsize, uint64_t pattern);

// Device memory: the same on `stream`; `samples_on_device` holds samples.size() PadSample (already
// copied there, ordered before the launch on `stream`).
void PadBatchGpu(void* out, const void* base, const PadSample* samples_on_device, const Shape& padded,
                 size_t itemsize, uint64_t pattern, cuda::StreamView stream);

}  // namespace conveyor::capi
