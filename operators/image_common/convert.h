// Element conversions shared by the per-pixel operators' CPU references (.cc) and kernels (.cu),
// bit-identical on host and device. Plain header: CUDA types appear only under __CUDACC__.
//
// | to        | from float32 v                                    | host                 |
// |-----------|---------------------------------------------------|----------------------|
// | float32   | v                                                 | same                 |
// | float16   | round to nearest even (__float2half_rn)           | core/tensor/half.h   |
// | bfloat16  | round to nearest even (__float2bfloat16_rn)       | core/tensor/half.h   |
// | uint8     | clamp to [0, 255] (NaN → 0), round to nearest even | same (rintf)        |
//
// Half types travel as their bits (Float16Bits / BFloat16Bits) so host code needs no CUDA header.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"
#include "core/tensor/half.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace conveyor::ops {

struct Float16Bits {
  uint16_t bits;
};
struct BFloat16Bits {
  uint16_t bits;
};

CONVEYOR_HOST_DEVICE inline uint16_t FloatToHalf(float v) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(v));
#else
  return FloatToHalfBits(v);
#endif
}
CONVEYOR_HOST_DEVICE inline float HalfToFloat(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return HalfBitsToFloat(h);
#endif
}
CONVEYOR_HOST_DEVICE inline uint16_t FloatToBf16(float v) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
  return FloatToBFloat16Bits(v);
#endif
}
CONVEYOR_HOST_DEVICE inline float Bf16ToFloat(uint16_t b) {
#if defined(__CUDA_ARCH__)
  return __bfloat162float(__ushort_as_bfloat16(b));
#else
  return BFloat16BitsToFloat(b);
#endif
}

// Byte i (0 = least significant) of w as float32, exact. Device: one byte permute puts the byte
// under the exponent of 2^23 and an FADD takes 2^23 away — where a shift, a mask and an I2F would
// use the H100's conversion pipe (16 per clock per SM, a quarter of the integer ALU's rate).
CONVEYOR_HOST_DEVICE inline float ByteAsFloat(uint32_t w, int i) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__uint_as_float(__byte_perm(w, 0x4B000000u, 0x7650u | static_cast<unsigned>(i))), -8388608.f);
#else
  return static_cast<float>((w >> (8 * i)) & 0xFFu);
#endif
}

// A value as float32 (exact for uint8/int16/half types; ints beyond 2^24 round).
template <typename T>
CONVEYOR_HOST_DEVICE inline float LoadAsFloat(T v) {
  if constexpr (std::is_same_v<T, Float16Bits>) {
    return HalfToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16Bits>) {
    return Bf16ToFloat(v.bits);
  } else {
    return static_cast<float>(v);
  }
}

// float32 → Out with the rounding of the table above.
template <typename Out>
CONVEYOR_HOST_DEVICE inline Out StoreFromFloat(float v) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else if constexpr (std::is_same_v<Out, Float16Bits>) {
    return Float16Bits{FloatToHalf(v)};
  } else if constexpr (std::is_same_v<Out, BFloat16Bits>) {
    return BFloat16Bits{FloatToBf16(v)};
  } else {
    static_assert(std::is_same_v<Out, uint8_t>, "StoreFromFloat: float32, float16, bfloat16 or uint8");
#if defined(__CUDA_ARCH__)
    // Round to nearest even by adding 2^23 (exact on the clamped range): the sum's low byte.
    return static_cast<uint8_t>(__float_as_uint(__fadd_rn(fminf(fmaxf(v, 0.f), 255.f), 8388608.f)) & 0xFFu);
#else
    return static_cast<uint8_t>(rintf(fminf(fmaxf(v, 0.f), 255.f)));
#endif
  }
}

// Calls f(T{}) with the element type of an image dtype: uint8, float16, bfloat16, float32.
// Returns false for any other dtype.
template <typename F>
bool DispatchImageType(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kFloat16: f(Float16Bits{}); return true;
    case DType::kBFloat16: f(BFloat16Bits{}); return true;
    case DType::kFloat32: f(float{}); return true;
    default: return false;
  }
}

}  // namespace conveyor::ops
