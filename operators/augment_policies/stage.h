// One step of a policy for one sample: the chosen operation as the descriptor of the existing
// kernel that applies it (color.h, warp.h, sharpness.h, histogram.h), plus the contrast centre.
// Every step of every sample carries all five descriptors; the ones not chosen have zero size, so
// the GPU launches each kernel once per step for the whole batch with fixed launch parameters
// (capturable) and the empty samples return at once.
//
// | kernel     | operations                                                          |
// |------------|---------------------------------------------------------------------|
// | color      | identity (posterize mask 0xFF), brightness, color (saturation),     |
// |            | contrast, posterize, solarize, invert (solarize at 0)               |
// | warp       | shear_x, shear_y, translate_x, translate_y, rotate (fill, keep size) |
// | sharpness  | sharpness                                                           |
// | histogram  | auto_contrast, equalize                                             |
//
// contrast: out = f * in + (1 - f) * mean luma, the mean over the step's input (PIL, torchvision
// and DALI use the mean of the grey image): Σ(299 R + 587 G + 114 B) summed exactly in int64,
// divided by 1000 * pixels in double; the colour descriptor's offset is set from it (on the GPU by
// ContrastCenterGpu, in device memory, just before the colour launch). CPU and GPU bit-identical.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "operators/augment_policies/policy.h"
#include "operators/color/color.h"
#include "operators/color/histogram.h"
#include "operators/filters/sharpness.h"
#include "operators/geometry/warp.h"

namespace conveyor::ops::augment {

enum class StepKernel : int32_t { kColor = 0, kWarp = 1, kSharpness = 2, kHistogram = 3 };

struct CenterSample {
  const uint8_t* in;
  int64_t pixels;  // 0: not a contrast step
  float factor;
};

struct StepSample {
  StepKernel kernel;
  ColorSample color;
  WarpSample warp;
  SharpnessSample sharpness;
  HistogramSample histogram;
  CenterSample center;
};

// The contrast offset (1 - f) * centre from the exact luma sum; the same float operations on both sides.
CONVEYOR_HOST_DEVICE inline float ContrastOffset(int64_t luma_sum, int64_t pixels, float factor) {
  const float center = static_cast<float>(static_cast<double>(luma_sum) / (1000.0 * static_cast<double>(pixels)));
#if defined(__CUDA_ARCH__)
  return __fmul_rn(center, __fsub_rn(1.f, factor));
#else
  return center * (1.f - factor);
#endif
}
// The contrast centre (mean luma) of an RGB uint8 image, as ContrastOffset reads it.
float ContrastCenter(const uint8_t* rgb, int64_t pixels);

// The step's descriptors for an h x w RGB uint8 image (addresses left null). `fill`: value of
// pixels a geometric step maps from outside the image.
StepSample MakeStep(const OpChoice& choice, int64_t h, int64_t w, float fill);
// Points the step at its input and output.
void SetStepAddresses(StepSample& s, const uint8_t* in, uint8_t* out);

// The CPU reference of one step (in != out).
void RunStepCpu(const StepSample& s, resample::Filter filter);

// One step of the batch on the GPU: the contrast centres (written into `colors`' offsets), then
// the colour, warp, sharpness and histogram kernels, each once over all n samples.
struct StepArrays {
  const CenterSample* centers;
  ColorSample* colors;  // device memory, written by the centre kernel
  const WarpSample* warps;
  const SharpnessSample* sharpness;
  const HistogramSample* histograms;
};
void RunStepGpu(const StepArrays& d, int n, int64_t max_pixels_hint, resample::Filter filter, cuda::StreamView stream);
// The centre kernel alone: for samples with centers[i].pixels > 0, colors[i].offset[c] = ContrastOffset(...).
void ContrastCenterGpu(const CenterSample* centers, ColorSample* colors, int n, cuda::StreamView stream);

}  // namespace conveyor::ops::augment
