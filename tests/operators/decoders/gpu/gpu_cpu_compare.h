// GPU vs CPU outputs of the decoders.* operators: the tolerance of one sample, chosen from its
// header, and the comparison of one decoded sample against the CPU backend's.
//
// | sample                                   | max |diff| | mean |diff| | why                         |
// |------------------------------------------|------------|-------------|-----------------------------|
// | PNG (and anything else on the CPU path)  | 0          | 0           | same code on both backends  |
// | JPEG 4:4:4 or grayscale, or GRAY output  | 6          | 1.0         | IDCT / colour rounding      |
// | JPEG 4:2:2, 4:2:0 (others) to RGB / BGR  | 40         | 2.0         | + chroma upsampling filters |
// | the same, ROI decode, 2 px at the border | 120 (4:2:2)|             | window edge taken as an     |
// |                                          | 204 (other)|             | image edge (see below)      |
// | JPEG 2000 lossless (5/3), nvJPEG2000     | 0          | 0           | integer wavelet and RCT     |
// | JPEG 2000 lossy (9/7), nvJPEG2000        | 2          | 0.02        | float wavelet + ICT, each   |
// |                                          |            |             | library its own order       |
//
// ROI decoding (decoders.image_random_crop): nvJPEG upsamples the chroma of a window as if the
// window's edge were the image's (it replicates the last chroma sample), while libjpeg-turbo
// interpolates across it ("fancy" upsampling). At an inner window edge the two differ by the
// weight of the chroma sample beyond the edge times the chroma step there: 1/4 across one cut
// edge (4:2:2's horizontal 3/4 + 1/4 filter), up to 7/16 at a cut corner of 4:2:0 (9, 3, 3, 1
// sixteenths). A chroma step is at most 255 and YCbCr -> RGB multiplies Cb by at most 1.772, so
// the RGB difference is at most 113 (4:2:2) or 198 (4:2:0 and the rest), plus 6 for IDCT and
// colour rounding: RoiEdgeBound. Measured on the H100: 57-67, and 100 on a 4:2:2 progressive photo
// whose window cut a strong colour edge (2026-11-25), always within 2 px of the window border.
// The inside of the window keeps the 40 bound.
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
  int edge_max_abs = 0;  // within kDecodeEdge pixels of the output's border
};

inline constexpr int kDecodeEdge = 2;

// JPEG 2000 (irreversible 9/7 wavelet) on nvJPEG2000 against OpenJPEG: both dequantise and run the
// wavelet and the colour transform in floating point, in their own orders, then round, so a value
// near .5 may round apart. Measured on the H200 (nvJPEG2000 0.11, 2026-11-27, jpeg2000_gpu_test):
// max 1, mean < 1e-4 over whole images and windows; the bound leaves one unit more. Lossless files
// (reversible 5/3 wavelet and colour transform, integer) must be equal.
inline constexpr DecodeTolerance kJpeg2000Lossy{2, 0.02, 2};

// The largest RGB difference within kDecodeEdge pixels of an inner ROI window edge (see above).
inline int RoiEdgeBound(ops::ChromaSubsampling s) { return s == ops::ChromaSubsampling::k422 ? 113 + 6 + 1 : 198 + 6; }

// `roi`: the output is a window decoded by itself (decoders.image_random_crop).
inline DecodeTolerance ToleranceFor(const uint8_t* encoded, size_t size, bool gray_output, bool roi = false) {
  const ops::ImageInfo info = ops::ParseImageInfo(encoded, size);
  if (info.format != ops::ImageFormat::kJpeg || info.arithmetic) return {0, 0, 0};
  const bool full = gray_output || info.subsampling == ops::ChromaSubsampling::k444 ||
                    info.subsampling == ops::ChromaSubsampling::kGray;
  return full ? DecodeTolerance{6, 1.0, 6} : DecodeTolerance{40, 2.0, roi ? RoiEdgeBound(info.subsampling) : 40};
}

inline DecodeTolerance ToleranceFor(const TensorListCPU& encoded, int sample, bool gray_output, bool roi = false) {
  return ToleranceFor(static_cast<const uint8_t*>(encoded.raw_sample(sample)),
                      static_cast<size_t>(encoded.shape(sample).num_elements()), gray_output, roi);
}

// Sample `i` of `gpu` (uint8) against sample `i` of `cpu`: equal shapes, every element within
// `tol.max_abs`, mean within `tol.mean_abs`. Prints the figures.
inline void ExpectDecodedClose(const TensorListCPU& gpu, const TensorListCPU& cpu, int i, DecodeTolerance tol,
                               const std::string& what) {
  ASSERT_EQ(gpu.shape(i), cpu.shape(i)) << what;
  const auto* g = static_cast<const uint8_t*>(gpu.raw_sample(i));
  const auto* c = static_cast<const uint8_t*>(cpu.raw_sample(i));
  const Shape& shape = cpu.shape(i);  // H, W, C
  const int64_t n = shape.num_elements();
  const int64_t H = shape.ndim() == 3 ? shape[0] : 1, W = shape.ndim() == 3 ? shape[1] : n, C = shape.ndim() == 3 ? shape[2] : 1;
  int worst = 0, worst_edge = 0;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int d = std::abs(int{g[k]} - int{c[k]});
    const int64_t y = k / C / W, x = k / C % W;
    const bool edge = y < kDecodeEdge || x < kDecodeEdge || y >= H - kDecodeEdge || x >= W - kDecodeEdge;
    int& w = edge ? worst_edge : worst;
    w = std::max(w, d);
    sum += d;
  }
  const double mean = n == 0 ? 0 : sum / static_cast<double>(n);
  std::cout << what << " " << shape.ToString() << ": max |diff| " << worst << " inside, " << worst_edge
            << " at the border, mean " << mean << "\n";
  EXPECT_LE(worst, tol.max_abs) << what;
  EXPECT_LE(worst_edge, std::max(tol.max_abs, tol.edge_max_abs)) << what << " (border)";
  EXPECT_LE(mean, tol.mean_abs) << what;
}

}  // namespace conveyor::testing
