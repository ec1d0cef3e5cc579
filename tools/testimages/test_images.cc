#include "tools/testimages/test_images.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace conveyor::testimages {
namespace {

// splitmix64: a tiny deterministic generator (std distributions differ between libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  int Int(int lo, int hi) { return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1)); }
  // Roughly normal (Irwin-Hall of 4), mean 0, standard deviation 1.
  double Normal() { return (Uniform(0, 1) + Uniform(0, 1) + Uniform(0, 1) + Uniform(0, 1) - 2.0) * std::sqrt(3.0); }

 private:
  uint64_t state_;
};

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); }

// Value noise: a random lattice every `cell` pixels, bilinearly interpolated (texture, not speckle).
class ValueNoise {
 public:
  ValueNoise(int height, int width, int cell, Rng& rng)
      : cell_(cell), gw_(width / cell + 2), gh_(height / cell + 2), grid_(static_cast<size_t>(gw_ * gh_)) {
    for (double& v : grid_) v = rng.Normal();
  }
  double At(int y, int x) const {
    const double fy = static_cast<double>(y) / cell_, fx = static_cast<double>(x) / cell_;
    const int y0 = static_cast<int>(fy), x0 = static_cast<int>(fx);
    const double ty = fy - y0, tx = fx - x0;
    const auto g = [&](int yy, int xx) { return grid_[static_cast<size_t>(yy * gw_ + xx)]; };
    return (1 - ty) * ((1 - tx) * g(y0, x0) + tx * g(y0, x0 + 1)) + ty * ((1 - tx) * g(y0 + 1, x0) + tx * g(y0 + 1, x0 + 1));
  }

 private:
  int cell_, gw_, gh_;
  std::vector<double> grid_;
};

int TjSubsampling(Subsampling s) {
  switch (s) {
    case Subsampling::k444: return TJSAMP_444;
    case Subsampling::k422: return TJSAMP_422;
    case Subsampling::k420: return TJSAMP_420;
    case Subsampling::kGray: return TJSAMP_GRAY;
  }
  return TJSAMP_444;
}

std::vector<uint8_t> TjEncode(const uint8_t* pixels, int width, int height, int pixel_format, int subsampling,
                              int quality, int flags) {
  tjhandle tj = tjInitCompress();
  if (tj == nullptr) throw std::runtime_error("tjInitCompress failed");
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(tj, pixels, width, 0, height, pixel_format, &buf, &size, subsampling, quality,
                             flags | TJFLAG_ACCURATEDCT);
  const std::string err = rc != 0 ? tjGetErrorStr2(tj) : "";
  std::vector<uint8_t> out;
  if (rc == 0) out.assign(buf, buf + size);
  tjFree(buf);
  tjDestroy(tj);
  if (rc != 0) throw std::runtime_error("tjCompress2: " + err);
  return out;
}

// Offset of the first byte after the first SOS segment's header, and of the marker ending its data.
std::pair<size_t, size_t> FirstScan(const std::vector<uint8_t>& jpeg) {
  for (size_t i = 2; i + 3 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) {
      const size_t start = i + 2 + ((static_cast<size_t>(jpeg[i + 2]) << 8) | jpeg[i + 3]);
      size_t end = start;
      while (end + 1 < jpeg.size() &&
             !(jpeg[end] == 0xFF && jpeg[end + 1] != 0x00 && (jpeg[end + 1] < 0xD0 || jpeg[end + 1] > 0xD7))) {
        ++end;
      }
      return {start, end};
    }
  }
  throw std::runtime_error("no SOS marker in the JPEG");
}

struct PngSink {
  std::vector<uint8_t>* out;
  jmp_buf jump;
};

void PngWrite(png_structp png, png_bytep data, size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->out->insert(sink->out->end(), data, data + n);
}
void PngFlush(png_structp) {}
[[noreturn]] void PngError(png_structp png, png_const_charp) {
  std::longjmp(static_cast<PngSink*>(png_get_error_ptr(png))->jump, 1);
}

// No C++ objects with destructors in this frame (libpng's errors longjmp here).
bool PngEncodeRows(const PngSource& s, png_bytep* rows, PngSink* sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, PngError, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return false;
  }
  if (setjmp(sink->jump)) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, PngWrite, PngFlush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(s.width), static_cast<png_uint_32>(s.height), s.bit_depth,
               s.color_type, s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (s.color_type == PNG_COLOR_TYPE_PALETTE) {
    png_color palette[256];
    const int n = static_cast<int>(s.palette.size() / 3);
    for (int i = 0; i < n; ++i) palette[i] = {s.palette[3 * i], s.palette[3 * i + 1], s.palette[3 * i + 2]};
    png_set_PLTE(png, info, palette, n);
    if (!s.trns.empty()) png_set_tRNS(png, info, s.trns.data(), static_cast<int>(s.trns.size()), nullptr);
  }
  png_write_info(png, info);
  if (s.bit_depth < 8) png_set_packing(png);  // rows hold one sample per byte
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

const char* SubsamplingName(Subsampling s) {
  switch (s) {
    case Subsampling::k444: return "444";
    case Subsampling::k422: return "422";
    case Subsampling::k420: return "420";
    case Subsampling::kGray: return "gray";
  }
  return "?";
}

Image8 MakePhotoLike(int height, int width, int channels, uint64_t seed, double noise) {
  Rng rng(seed);
  Image8 img{height, width, channels, std::vector<uint8_t>(static_cast<size_t>(height) * width * channels)};
  std::vector<double> plane(static_cast<size_t>(height) * width * channels);
  // Background: a gradient per channel plus two slow waves.
  for (int c = 0; c < channels; ++c) {
    const double base = rng.Uniform(40, 200), gy = rng.Uniform(-90, 90), gx = rng.Uniform(-90, 90);
    const double f1 = rng.Uniform(1, 4), f2 = rng.Uniform(1, 4), a = rng.Uniform(10, 30), p = rng.Uniform(0, 6.28);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double u = height > 1 ? static_cast<double>(y) / (height - 1) : 0;
        const double v = width > 1 ? static_cast<double>(x) / (width - 1) : 0;
        plane[(static_cast<size_t>(y) * width + x) * channels + c] =
            base + gy * (u - 0.5) + gx * (v - 0.5) + a * std::sin(6.28 * f1 * u + p) * std::cos(6.28 * f2 * v);
      }
    }
  }
  // Shapes: ellipses and rectangles of flat-ish colour with their own shading.
  const int shapes = 6 + static_cast<int>(static_cast<int64_t>(height) * width / 20000);
  for (int k = 0; k < shapes; ++k) {
    const double cy = rng.Uniform(0, height), cx = rng.Uniform(0, width);
    const double ry = rng.Uniform(3, std::max(4.0, height / 4.0)), rx = rng.Uniform(3, std::max(4.0, width / 4.0));
    const bool ellipse = rng.Uniform(0, 1) < 0.6;
    double color[4];
    for (int c = 0; c < channels; ++c) color[c] = rng.Uniform(0, 255);
    const double shade = rng.Uniform(-40, 40);
    for (int y = std::max(0, static_cast<int>(cy - ry)); y < std::min(height, static_cast<int>(cy + ry) + 1); ++y) {
      for (int x = std::max(0, static_cast<int>(cx - rx)); x < std::min(width, static_cast<int>(cx + rx) + 1); ++x) {
        const double dy = (y - cy) / ry, dx = (x - cx) / rx;
        if (ellipse && dy * dy + dx * dx > 1) continue;
        for (int c = 0; c < channels; ++c) {
          plane[(static_cast<size_t>(y) * width + x) * channels + c] = color[c] + shade * dy;
        }
      }
    }
  }
  // Texture: value noise at two scales (shared across channels, like luminance detail) + grain.
  ValueNoise coarse(height, width, 8, rng), fine(height, width, 2, rng);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double t = noise * (1.2 * coarse.At(y, x) + 0.8 * fine.At(y, x));
      for (int c = 0; c < channels; ++c) {
        const size_t i = (static_cast<size_t>(y) * width + x) * channels + c;
        img.pixels[i] = Clamp8(plane[i] + t + 0.5 * noise * rng.Normal());
      }
    }
  }
  return img;
}

std::vector<uint8_t> EncodeJpeg(const Image8& image, Subsampling subsampling, int quality, bool progressive) {
  const int flags = progressive ? TJFLAG_PROGRESSIVE : 0;
  if (subsampling == Subsampling::kGray && image.channels == 1) {
    return TjEncode(image.pixels.data(), image.width, image.height, TJPF_GRAY, TJSAMP_GRAY, quality, flags);
  }
  if (image.channels != 3) throw std::runtime_error("EncodeJpeg: 3 channels expected");
  return TjEncode(image.pixels.data(), image.width, image.height, TJPF_RGB, TjSubsampling(subsampling), quality, flags);
}

std::vector<uint8_t> EncodeCmykJpeg(const Image8& cmyk, int quality) {
  if (cmyk.channels != 4) throw std::runtime_error("EncodeCmykJpeg: 4 channels expected");
  return TjEncode(cmyk.pixels.data(), cmyk.width, cmyk.height, TJPF_CMYK, TJSAMP_444, quality, 0);
}

int PngSource::channels() const {
  switch (color_type) {
    case 0: case 3: return 1;
    case 4: return 2;
    case 2: return 3;
    case 6: return 4;
    default: return 0;
  }
}

PngSource MakePngSource(int height, int width, int color_type, int bit_depth, uint64_t seed) {
  PngSource s;
  s.height = height;
  s.width = width;
  s.color_type = color_type;
  s.bit_depth = bit_depth;
  const int ch = s.channels();
  const int max = (1 << bit_depth) - 1;
  Rng rng(seed);
  if (color_type == 3) {
    const int entries = std::min(256, max + 1);
    for (int i = 0; i < 3 * entries; ++i) s.palette.push_back(static_cast<uint8_t>(rng.Int(0, 255)));
    for (int i = 0; i < entries / 2; ++i) s.trns.push_back(static_cast<uint8_t>(rng.Int(0, 255)));
  }
  // Smooth ramps plus noise over the full range, so every bit of every sample varies.
  const Image8 base = MakePhotoLike(height, width, ch, seed ^ 0x5EEDull, 4.0);
  s.samples.resize(static_cast<size_t>(height) * width * ch);
  for (size_t i = 0; i < s.samples.size(); ++i) {
    const double v = base.pixels[i] / 255.0 * max + rng.Uniform(-0.02, 0.02) * max;
    s.samples[i] = static_cast<uint16_t>(std::clamp<long>(std::lround(v), 0, max));
  }
  return s;
}

std::vector<uint8_t> EncodePng(const PngSource& s) {
  const size_t row_samples = static_cast<size_t>(s.width) * s.channels();
  const size_t bytes_per_sample = s.bit_depth == 16 ? 2 : 1;
  std::vector<uint8_t> raw(static_cast<size_t>(s.height) * row_samples * bytes_per_sample);
  for (size_t i = 0; i < s.samples.size(); ++i) {
    if (bytes_per_sample == 2) {
      raw[2 * i] = static_cast<uint8_t>(s.samples[i] >> 8);  // PNG is big-endian
      raw[2 * i + 1] = static_cast<uint8_t>(s.samples[i] & 0xFF);
    } else {
      raw[i] = static_cast<uint8_t>(s.samples[i]);
    }
  }
  std::vector<png_bytep> rows(static_cast<size_t>(s.height));
  for (int y = 0; y < s.height; ++y) rows[static_cast<size_t>(y)] = raw.data() + y * row_samples * bytes_per_sample;
  std::vector<uint8_t> out;
  PngSink sink{&out, {}};
  if (!PngEncodeRows(s, rows.data(), &sink)) throw std::runtime_error("libpng failed to encode a PNG");
  return out;
}

std::vector<uint8_t> Truncate(const std::vector<uint8_t>& bytes, double keep_fraction) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() * keep_fraction));
}

std::vector<uint8_t> FlipEntropyBytes(const std::vector<uint8_t>& jpeg, int count) {
  const auto [start, end] = FirstScan(jpeg);
  std::vector<uint8_t> out = jpeg;
  const size_t mid = start + (end - start) / 2;
  for (size_t i = mid; i < std::min(end, mid + static_cast<size_t>(count)); ++i) out[i] ^= 0x5A;
  return out;
}

std::vector<uint8_t> MarkerInEntropyData(const std::vector<uint8_t>& jpeg, int count) {
  const auto [start, end] = FirstScan(jpeg);
  std::vector<uint8_t> out = jpeg;
  const size_t mid = start + (end - start) / 2;
  const size_t stop = std::min(end, mid + static_cast<size_t>(std::max(count, 2)));
  for (size_t i = mid; i < stop; ++i) out[i] = 0xFF;
  out[stop - 1] = 0xD5;
  return out;
}

std::vector<uint8_t> BreakJpegMarker(const std::vector<uint8_t>& jpeg) {
  std::vector<uint8_t> out = jpeg;
  for (size_t i = 2; i + 1 < out.size(); ++i) {
    if (out[i] == 0xFF && out[i + 1] == 0xDB) {
      out[i + 1] = 0x02;
      return out;
    }
  }
  throw std::runtime_error("no DQT marker in the JPEG");
}

std::vector<uint8_t> ForgeJpegPrecision(const std::vector<uint8_t>& jpeg, int bits) {
  std::vector<uint8_t> out = jpeg;
  for (size_t i = 2; i + 4 < out.size(); ++i) {
    if (out[i] == 0xFF && out[i + 1] >= 0xC0 && out[i + 1] <= 0xC2) {
      out[i + 4] = static_cast<uint8_t>(bits);
      return out;
    }
  }
  throw std::runtime_error("no SOF marker in the JPEG");
}

std::vector<uint8_t> CorruptPngData(const std::vector<uint8_t>& png) {
  std::vector<uint8_t> out = png;
  for (size_t i = 8; i + 8 < out.size(); ++i) {
    if (std::memcmp(&out[i + 4], "IDAT", 4) == 0) {
      const size_t length = (size_t{out[i]} << 24) | (size_t{out[i + 1]} << 16) | (size_t{out[i + 2]} << 8) | out[i + 3];
      out[i + 8 + length / 2] ^= 0x55;
      return out;
    }
  }
  throw std::runtime_error("no IDAT chunk in the PNG");
}

std::vector<uint8_t> MakePhotoJpeg(int index, int width, int height, int quality) {
  const Image8 img = MakePhotoLike(height, width, 3, 1000 + static_cast<uint64_t>(index), 5.0);
  return EncodeJpeg(img, Subsampling::k420, quality, false);
}

std::vector<TestFile> MakeTestSet() {
  std::vector<TestFile> files;
  uint64_t seed = 1;
  const auto jpeg = [&](int h, int w, Subsampling sub, bool progressive, int quality) {
    TestFile f;
    f.kind = TestFile::Kind::kJpeg;
    f.image = MakePhotoLike(h, w, sub == Subsampling::kGray ? 1 : 3, seed++);
    f.subsampling = sub;
    f.progressive = progressive;
    f.quality = quality;
    f.bytes = EncodeJpeg(f.image, sub, quality, progressive);
    f.name = std::string("jpeg_") + SubsamplingName(sub) + (progressive ? "_progressive" : "_baseline") + "_q" +
             std::to_string(quality) + "_" + std::to_string(w) + "x" + std::to_string(h) + ".jpg";
    files.push_back(std::move(f));
  };
  for (Subsampling sub : {Subsampling::k444, Subsampling::k422, Subsampling::k420, Subsampling::kGray}) {
    for (bool progressive : {false, true}) jpeg(75, 101, sub, progressive, 95);
  }
  for (auto [h, w] : {std::pair{1, 1}, std::pair{9, 17}, std::pair{3, 4000}}) {
    jpeg(h, w, Subsampling::k420, false, 90);
    jpeg(h, w, Subsampling::k444, true, 90);
  }
  const auto png = [&](int h, int w, int type, int depth, bool interlaced, const std::string& what) {
    TestFile f;
    f.kind = TestFile::Kind::kPng;
    f.png = MakePngSource(h, w, type, depth, seed++);
    f.png.interlaced = interlaced;
    f.bytes = EncodePng(f.png);
    f.name = "png_" + what + "_" + std::to_string(depth) + "bit_" + std::to_string(w) + "x" + std::to_string(h) +
             (interlaced ? "_adam7" : "") + ".png";
    files.push_back(std::move(f));
  };
  png(40, 37, 0, 8, false, "gray");
  png(40, 37, 0, 16, false, "gray");
  png(13, 21, 0, 1, false, "gray");
  png(13, 21, 0, 2, false, "gray");
  png(13, 21, 0, 4, false, "gray");
  png(40, 37, 4, 8, false, "gray_alpha");
  png(40, 37, 2, 8, false, "rgb");
  png(40, 37, 2, 16, false, "rgb");
  png(40, 37, 6, 8, false, "rgba");
  png(40, 37, 6, 16, false, "rgba");
  png(40, 37, 3, 8, false, "palette");
  png(13, 21, 3, 4, false, "palette");
  png(40, 37, 2, 8, true, "rgb");
  png(1, 1, 2, 8, false, "rgb");
  png(3, 4000, 0, 8, false, "gray");

  const auto broken = [&](std::string name, std::vector<uint8_t> bytes) {
    TestFile f;
    f.kind = TestFile::Kind::kBroken;
    f.name = std::move(name);
    f.bytes = std::move(bytes);
    files.push_back(std::move(f));
  };
  const std::vector<uint8_t> base = EncodeJpeg(MakePhotoLike(64, 96, 3, 777), Subsampling::k420, 90, false);
  const std::vector<uint8_t> prog = EncodeJpeg(MakePhotoLike(64, 96, 3, 778), Subsampling::k420, 90, true);
  const std::vector<uint8_t> png_rgb = EncodePng(MakePngSource(32, 32, 2, 8, 779));
  broken("broken_jpeg_truncated.jpg", Truncate(base, 0.5));
  broken("broken_jpeg_progressive_truncated.jpg", Truncate(prog, 0.6));
  broken("broken_jpeg_header_truncated.jpg", Truncate(base, 0.05));
  broken("broken_jpeg_flipped_entropy.jpg", FlipEntropyBytes(base, 64));
  broken("broken_jpeg_marker_in_entropy.jpg", MarkerInEntropyData(base, 16));
  broken("broken_jpeg_bad_marker.jpg", BreakJpegMarker(base));
  broken("broken_jpeg_12bit.jpg", ForgeJpegPrecision(base, 12));
  broken("broken_png_truncated.png", Truncate(png_rgb, 0.5));
  broken("broken_png_corrupt_idat.png", CorruptPngData(png_rgb));
  const std::string html = "<html><body>not an image</body></html>\n";
  broken("broken_not_an_image.jpg", std::vector<uint8_t>(html.begin(), html.end()));
  return files;
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot create \"" + path + "\"");
  // An empty file (a test case) has no data pointer; fwrite(NULL, ...) is undefined even for 0 bytes.
  const size_t written = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int closed = std::fclose(f);
  if (written != bytes.size() || closed != 0) throw std::runtime_error("cannot write \"" + path + "\"");
}

}  // namespace conveyor::testimages
