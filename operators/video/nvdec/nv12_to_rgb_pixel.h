// One pixel of the NV12 → RGB conversion (nv12_to_rgb.h), shared by the CUDA kernel and its CPU
// reference so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/video/nvdec/nv12_to_rgb.h"

#if defined(__CUDACC__)
#define CONVEYOR_HD __host__ __device__ __forceinline__
#else
#define CONVEYOR_HD inline
#endif

namespace conveyor::ops::video::nv12 {

CONVEYOR_HD float Sample(const uint8_t* row, int x, int bytes_per_sample) {
  if (bytes_per_sample == 1) return static_cast<float>(row[x]);
  const uint16_t v = reinterpret_cast<const uint16_t*>(row)[x];
  return static_cast<float>(v) * (1.0f / 256.0f);
}

CONVEYOR_HD uint8_t Clamp8(float v) {
  v = v < 0.f ? 0.f : (v > 255.f ? 255.f : v);
  return static_cast<uint8_t>(v + 0.5f);
}

CONVEYOR_HD void Pixel(const Nv12Planes& p, const YuvToRgb& m, int x, int y, uint8_t* rgb) {
  const uint8_t* luma_row = p.luma + static_cast<size_t>(y) * p.pitch;
  const uint8_t* chroma_row = p.chroma + static_cast<size_t>(y / 2) * p.pitch;
  const int cx = (x / 2) * 2;
  const float Y = m.y_scale * (Sample(luma_row, x, p.bytes_per_sample) - m.y_offset);
  const float U = Sample(chroma_row, cx, p.bytes_per_sample) - 128.f;
  const float V = Sample(chroma_row, cx + 1, p.bytes_per_sample) - 128.f;
  rgb[0] = Clamp8(Y + m.crv * V);
  rgb[1] = Clamp8(Y - m.cgu * U - m.cgv * V);
  rgb[2] = Clamp8(Y + m.cbu * U);
}

}  // namespace conveyor::ops::video::nv12
