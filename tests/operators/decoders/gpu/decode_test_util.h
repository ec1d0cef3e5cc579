// Test images for the GPU decoder tests: photo-like content (smooth gradients plus noise) encoded
// with libjpeg-turbo (a real encoder), the libjpeg-turbo decode as the reference, comparisons.
#pragma once

#include <turbojpeg.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "operators/common/crop_window.h"
#include "operators/decoders/gpu_decoder.h"

namespace conveyor::ops::testing {

struct TestJpeg {
  std::string name;
  std::vector<uint8_t> bytes;
  int64_t height = 0, width = 0;
};

// Smooth, photo-like RGB (JPEG's errors and the decoders' differences stay representative).
inline std::vector<uint8_t> PhotoLike(int64_t h, int64_t w, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> phase(0, 6.28), freq(0.02, 0.2);
  std::uniform_int_distribution<int> noise(-6, 6);
  std::vector<uint8_t> rgb(static_cast<size_t>(h * w * 3));
  double ph[3], fx[3], fy[3];
  for (int c = 0; c < 3; ++c) ph[c] = phase(rng), fx[c] = freq(rng), fy[c] = freq(rng);
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        const double v = 128 + 70 * std::sin(x * fx[c] + ph[c]) * std::cos(y * fy[c] - ph[c]) + noise(rng);
        rgb[static_cast<size_t>((y * w + x) * 3 + c)] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return rgb;
}

// subsampling: TJSAMP_444 / 422 / 420 / GRAY.
inline TestJpeg EncodeJpeg(int64_t h, int64_t w, int subsampling, bool progressive, std::mt19937_64& rng,
                           int quality = 90) {
  const std::vector<uint8_t> rgb = PhotoLike(h, w, rng);
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int flags = TJFLAG_ACCURATEDCT | (progressive ? TJFLAG_PROGRESSIVE : 0);
  if (tjCompress2(tj, rgb.data(), static_cast<int>(w), 0, static_cast<int>(h), TJPF_RGB, &out, &size, subsampling,
                  quality, flags) != 0) {
    const std::string why = tjGetErrorStr2(tj);
    tjDestroy(tj);
    throw std::runtime_error("tjCompress2: " + why);
  }
  TestJpeg j;
  j.bytes.assign(out, out + size);
  j.height = h;
  j.width = w;
  static const char* kSamp[] = {"444", "422", "420", "gray", "440", "411"};
  j.name = std::to_string(h) + "x" + std::to_string(w) + "_" + kSamp[subsampling] + (progressive ? "_prog" : "") + ".jpg";
  tjFree(out);
  tjDestroy(tj);
  return j;
}

// libjpeg-turbo's decode of `window` (accurate IDCT, fancy upsampling): the reference.
inline std::vector<uint8_t> ReferenceDecode(const TestJpeg& j, DecodeColor color, const CropWindow& window) {
  const int c = DecodeChannels(color);
  const int pf = color == DecodeColor::kRgb ? TJPF_RGB : color == DecodeColor::kBgr ? TJPF_BGR : TJPF_GRAY;
  std::vector<uint8_t> full(static_cast<size_t>(j.height * j.width * c));
  tjhandle tj = tjInitDecompress();
  const int rc = tjDecompress2(tj, j.bytes.data(), j.bytes.size(), full.data(), static_cast<int>(j.width), 0,
                               static_cast<int>(j.height), pf, TJFLAG_ACCURATEDCT);
  tjDestroy(tj);
  if (rc != 0) throw std::runtime_error("tjDecompress2 failed on " + j.name);
  std::vector<uint8_t> out(static_cast<size_t>(window.h * window.w * c));
  for (int64_t y = 0; y < window.h; ++y) {
    std::copy_n(&full[static_cast<size_t>(((window.y + y) * j.width + window.x) * c)], window.w * c,
                &out[static_cast<size_t>(y * window.w * c)]);
  }
  return out;
}

struct DiffStats {
  int max_abs = 0;
  double mean_abs = 0;
  size_t max_at = 0;  // element index of the first largest difference
};

inline DiffStats Compare(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  DiffStats s;
  if (a.size() != b.size()) return {256, 256};
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const int d = std::abs(int(a[i]) - int(b[i]));
    if (d > s.max_abs) {
      s.max_abs = d;
      s.max_at = i;
    }
    sum += d;
  }
  s.mean_abs = a.empty() ? 0 : sum / static_cast<double>(a.size());
  return s;
}

}  // namespace conveyor::ops::testing
