// Internal to operators/resample: what the two resampling kernels' files share (tile width, block
// shape, output conversion) and the launcher of the direct two-tap kernel (resample_two_tap_gpu.cu)
// that ResampleGpu (resample_gpu.cu) calls. CUDA only.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "operators/resample/resample.h"

namespace conveyor::ops::resample_detail {

using resample::Axis;
using resample::FAdd;
using resample::Filter;
using resample::FMul;
using resample::MakeTap;
using resample::Tap;
using resample::Weight;

constexpr int kTileW = 32;      // output columns per tile; blockDim.x
constexpr int kRowThreads = 8;  // blockDim.y

// float accumulator -> output element (uint8: resample_math.h's rounding).
template <typename Out>
__device__ __forceinline__ Out Convert(float v) {
  if constexpr (sizeof(Out) == 1) {
    return resample::ToUint8(v);
  } else {
    return v;
  }
}

// The reference starts every sum at 0.f and adds the first product to it. 0 + x == x for every x
// but -0, and with uint8 inputs and non-negative weights (nearest, linear) no product is -0: the
// kernels start from the first product instead, one FADD less per sum, bit for bit the same.
template <typename In, Filter F>
constexpr bool kSkipZeroAdd = std::is_same_v<In, uint8_t> && F != Filter::kCubic;

// The fields only resize_crop_mirror sets (axis origins, mirror) are read from the descriptor in
// global memory where they are used, not from the kernel's copy of it (`d`): a copy holds them in
// registers from the start, and under the kernels' 48-register bound that spilled more (ptxas,
// sm_90: the uint8 linear two-tap kernel 20 -> 32 bytes of spill stores; read at the use, 20 as
// before). `g`: the sample's descriptor in global memory, `d`: the kernel's copy. kCrop false (plain
// resizes, ResampleGpu's crop_mirror): nothing is read, origins are 0 and nothing is mirrored.
template <bool kCrop>
__device__ __forceinline__ Axis WithOrigin(const Axis& a, const int* origin) {
  if constexpr (!kCrop) {
    return a;
  } else {
    Axis r = a;
    r.origin = __ldg(origin);
    return r;
  }
}
template <bool kCrop>
__device__ __forceinline__ int64_t OutPixelOf(const ResampleDesc& d, const ResampleDesc* g, int oy, int ox) {
  if constexpr (!kCrop) return static_cast<int64_t>(oy) * d.out_w + ox;
  return OutPixel(__ldg(&g->mirror), d.out_h, d.out_w, oy, ox);
}

// Linear or nearest without antialiasing, every sample in one launch of grid (blocks, n).
// Instantiated for In, Out in {uint8_t, float}.
template <typename In, typename Out>
void LaunchTwoTap(const ResampleDesc* descs, int n, int blocks, Filter filter, bool crop, cudaStream_t stream);

}  // namespace conveyor::ops::resample_detail
