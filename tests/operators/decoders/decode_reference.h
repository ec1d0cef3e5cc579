// Independent references for the CPU decoder tests: TurboJPEG's tjDecompress2 (a second decode
// path into libjpeg-turbo, not our libjpeg calls), PNG pixels computed from the generator's source
// samples, PSNR against the pixels a JPEG was encoded from, and window crops.
#pragma once

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "operators/common/crop_window.h"
#include "operators/decoders/decode_cpu.h"
#include "tools/testimages/test_images.h"

namespace conveyor::testing {

struct Pixels {
  int64_t height = 0, width = 0;
  int channels = 0;
  std::vector<uint8_t> data;  // HWC
};

// tjDecompress2 into RGB/BGR/GRAY (accurate IDCT, fancy upsampling: libjpeg's defaults, as ours).
inline Pixels TurboJpegDecode(const std::vector<uint8_t>& jpeg, ops::OutputColor color) {
  Pixels p;
  tjhandle tj = tjInitDecompress();
  int w = 0, h = 0, sub = 0, space = 0;
  if (tjDecompressHeader3(tj, jpeg.data(), jpeg.size(), &w, &h, &sub, &space) != 0) {
    ADD_FAILURE() << "tjDecompressHeader3: " << tjGetErrorStr2(tj);
    tjDestroy(tj);
    return p;
  }
  p.height = h;
  p.width = w;
  p.channels = ops::OutputChannels(color);
  p.data.assign(static_cast<size_t>(w) * h * p.channels, 0);
  const int format = color == ops::OutputColor::kGray ? TJPF_GRAY : color == ops::OutputColor::kBgr ? TJPF_BGR : TJPF_RGB;
  if (tjDecompress2(tj, jpeg.data(), jpeg.size(), p.data.data(), w, 0, h, format, TJFLAG_ACCURATEDCT) != 0) {
    ADD_FAILURE() << "tjDecompress2: " << tjGetErrorStr2(tj);
  }
  tjDestroy(tj);
  return p;
}

// What a PNG must decode to (decode_cpu.h's table), from the generator's source samples. Gray
// from colour uses Rec. 601 weights in floating point: libpng's fixed-point result may differ by 1.
inline Pixels ExpectedPng(const testimages::PngSource& s, ops::OutputColor color) {
  Pixels p;
  p.height = s.height;
  p.width = s.width;
  p.channels = ops::OutputChannels(color);
  const int max = (1 << s.bit_depth) - 1;
  const auto to8 = [&](uint16_t v) -> double {
    return s.bit_depth == 16 ? std::round(v * 255.0 / 65535.0) : std::round(v * 255.0 / max);
  };
  const int ch = s.channels();
  for (int64_t i = 0; i < static_cast<int64_t>(s.height) * s.width; ++i) {
    const uint16_t* px = &s.samples[static_cast<size_t>(i) * ch];
    double rgb[3];
    if (s.color_type == 3) {
      for (int c = 0; c < 3; ++c) rgb[c] = s.palette[px[0] * 3u + c];
    } else if (ch <= 2) {
      rgb[0] = rgb[1] = rgb[2] = to8(px[0]);
    } else {
      for (int c = 0; c < 3; ++c) rgb[c] = to8(px[c]);
    }
    const bool gray_source = s.color_type == 0 || s.color_type == 4;
    if (color == ops::OutputColor::kGray) {
      p.data.push_back(static_cast<uint8_t>(gray_source ? rgb[0] : std::round(.299 * rgb[0] + .587 * rgb[1] + .114 * rgb[2])));
    } else {
      const bool bgr = color == ops::OutputColor::kBgr;
      for (int c = 0; c < 3; ++c) p.data.push_back(static_cast<uint8_t>(rgb[bgr ? 2 - c : c]));
    }
  }
  return p;
}

inline Pixels Crop(const Pixels& full, const ops::CropWindow& w) {
  Pixels p{w.h, w.w, full.channels, {}};
  for (int64_t y = w.y; y < w.y + w.h; ++y) {
    const auto row = full.data.begin() + static_cast<std::ptrdiff_t>((y * full.width + w.x) * full.channels);
    p.data.insert(p.data.end(), row, row + static_cast<std::ptrdiff_t>(w.w * full.channels));
  }
  return p;
}

inline int MaxAbsDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 256;
  int worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(int{a[i]} - int{b[i]}));
  return worst;
}

inline double Psnr(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  double se = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    se += d * d;
  }
  return se == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 * static_cast<double>(a.size()) / se);
}

// Our decoder on a whole image or a window.
inline Pixels DecodeOurs(const std::vector<uint8_t>& bytes, ops::OutputColor color,
                         const std::optional<ops::CropWindow>& window = std::nullopt) {
  const ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
  const ops::CropWindow w = window.value_or(ops::FullWindow(info));
  Pixels p{w.h, w.w, ops::OutputChannels(color), {}};
  p.data.assign(static_cast<size_t>(w.h * w.w * p.channels), 0xA5);
  ops::DecodeImageCpu(bytes.data(), bytes.size(), info, color, w, p.data.data());
  return p;
}

inline std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

constexpr ops::OutputColor kAllColors[] = {ops::OutputColor::kRgb, ops::OutputColor::kBgr, ops::OutputColor::kGray};
inline const char* ColorName(ops::OutputColor c) {
  return c == ops::OutputColor::kRgb ? "RGB" : c == ops::OutputColor::kBgr ? "BGR" : "GRAY";
}

}  // namespace conveyor::testing
