// What GpuDecoder's paths share (private to the gpu_decoder library: listed in its srcs, so
// nothing else can include it): nvJPEG's names, the output format, whole-image checks, times.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

namespace conveyor::ops {

using namespace nvjpeg;  // NOLINT: the nvJPEG names read best unqualified; this header is private
using Clock = std::chrono::steady_clock;

inline constexpr unsigned kFlagsUpsamplingWithInterpolation = 32;  // NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION
inline constexpr unsigned kFlagsHwDecodeNoPipeline = 1;            // NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
inline constexpr unsigned kFlagsEnableMemoryPools = 2;             // NVJPEG_FLAGS_ENABLE_MEMORY_POOLS
// nvjpegChromaSubsampling_t values (a C enum) the engines' buffers are preallocated for.
inline constexpr int kCss444 = 0, kCss422 = 1, kCss420 = 2, kCssGray = 6;

inline nvjpegOutputFormat_t FormatOf(DecodeColor c) {
  switch (c) {
    case DecodeColor::kRgb: return NVJPEG_OUTPUT_RGBI;
    case DecodeColor::kBgr: return NVJPEG_OUTPUT_BGRI;
    case DecodeColor::kGray: return NVJPEG_OUTPUT_Y;
  }
  return NVJPEG_OUTPUT_RGBI;
}

inline bool IsWhole(const GpuDecodeSample& s) {
  return s.roi.y == 0 && s.roi.x == 0 && s.roi.h == s.height && s.roi.w == s.width;
}

inline int64_t Pixels(const GpuDecodeSample& s) { return s.height * s.width; }

inline RouteFacts FactsOf(const GpuDecodeSample& s) {
  RouteFacts f;
  f.jpeg = s.is_jpeg;
  f.jpeg2000 = s.is_jpeg2000;
  f.progressive = s.progressive;
  f.subsampling = s.subsampling;
  f.empty = s.roi.h == 0 || s.roi.w == 0;
  f.pixels = Pixels(s);
  return f;
}

inline nvjpegImage_t ImageOf(const GpuDecodeSample& s, int channels) {
  nvjpegImage_t img{};
  img.channel[0] = s.out;
  img.pitch[0] = static_cast<size_t>(s.roi.w) * channels;
  return img;
}

// The window (or the whole image) into an image's decode parameters.
inline void SetRoi(const NvjpegApi& a, nvjpegDecodeParams_t p, const GpuDecodeSample& s, const std::string& where) {
  if (IsWhole(s)) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(p, 0, 0, -1, -1), where);
  } else {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(p, static_cast<int>(s.roi.x), static_cast<int>(s.roi.y),
                                                     static_cast<int>(s.roi.w), static_cast<int>(s.roi.h)),
                          where);
  }
}

inline int64_t NsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}
inline double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline void StoreMax(std::atomic<int64_t>& to, int64_t v) {
  int64_t prev = to.load();
  while (prev < v && !to.compare_exchange_weak(prev, v)) {
  }
}

// What nvJPEG says of damaged data that the structure check before it passed: the CPU path then
// decodes the image, or names the damage.
inline bool IsDamage(nvjpegStatus_t s) {
  return s == NVJPEG_STATUS_BAD_JPEG || s == NVJPEG_STATUS_INCOMPLETE_BITSTREAM;
}

// A status with which nvJPEG declines an image it cannot decode (the next path takes it).
inline bool IsRefusal(nvjpegStatus_t s) {
  return s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || s == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED ||
         s == NVJPEG_STATUS_ARCH_MISMATCH;
}

}  // namespace conveyor::ops
