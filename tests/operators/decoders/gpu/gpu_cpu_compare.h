// GPU vs CPU outputs of the decoders.* operators: the tolerance of one sample, chosen from its
// header, and the comparison of one decoded sample against the CPU backend's.
//
// | sample                                   | max |diff| | mean |diff| | why                         |
// |------------------------------------------|------------|-------------|-----------------------------|
// | PNG (and anything else on the CPU path)  | 0          | 0           | same code on both backends  |
// | JPEG 4:4:4 or grayscale, or GRAY output  | 6          | 1.0         | IDCT / colour rounding      |
// | JPEG 4:2:2, 4:2:0 (others) to RGB / BGR  | 40         | 2.0         | + chroma upsampling filters |
//
// The JPEG figures are gpu_decoder_gpu_test.cc's (justified there, provisional until measured on
// the device; keep both in step). Every comparison prints its measured figures for that purpose.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "core/tensor/tensor_list.h"
#include "operators/decoders/image_info.h"

namespace conveyor::testing {

struct DecodeTolerance {
  int max_abs = 0;
  double mean_abs = 0;
};

inline DecodeTolerance ToleranceFor(const uint8_t* encoded, size_t size, bool gray_output) {
  const ops::ImageInfo info = ops::ParseImageInfo(encoded, size);
  if (info.format != ops::ImageFormat::kJpeg || info.arithmetic) return {0, 0};
  const bool full = gray_output || info.subsampling == ops::ChromaSubsampling::k444 ||
                    info.subsampling == ops::ChromaSubsampling::kGray;
  return full ? DecodeTolerance{6, 1.0} : DecodeTolerance{40, 2.0};
}

inline DecodeTolerance ToleranceFor(const TensorListCPU& encoded, int sample, bool gray_output) {
  return ToleranceFor(static_cast<const uint8_t*>(encoded.raw_sample(sample)),
                      static_cast<size_t>(encoded.shape(sample).num_elements()), gray_output);
}

// Sample `i` of `gpu` (uint8) against sample `i` of `cpu`: equal shapes, every element within
// `tol.max_abs`, mean within `tol.mean_abs`. Prints the figures.
inline void ExpectDecodedClose(const TensorListCPU& gpu, const TensorListCPU& cpu, int i, DecodeTolerance tol,
                               const std::string& what) {
  ASSERT_EQ(gpu.shape(i), cpu.shape(i)) << what;
  const auto* g = static_cast<const uint8_t*>(gpu.raw_sample(i));
  const auto* c = static_cast<const uint8_t*>(cpu.raw_sample(i));
  const int64_t n = cpu.shape(i).num_elements();
  int worst = 0;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int d = std::abs(int{g[k]} - int{c[k]});
    worst = std::max(worst, d);
    sum += d;
  }
  const double mean = n == 0 ? 0 : sum / static_cast<double>(n);
  std::cout << what << " " << cpu.shape(i).ToString() << ": max |diff| " << worst << ", mean " << mean << "\n";
  EXPECT_LE(worst, tol.max_abs) << what;
  EXPECT_LE(mean, tol.mean_abs) << what;
}

}  // namespace conveyor::testing
