#include "tools/testimages/dataset_mix.h"

#include "tools/testimages/format_images.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>

namespace conveyor::testimages {
namespace {

// ---------------------------------------------------------------------------------------------
// The shares. These are ESTIMATES: we cannot ship ImageNet (its licence forbids redistribution,
// and 1.28 M files is not a test fixture), so the numbers below are what is known or measured of
// its training set (~1.28 M JPEGs from Flickr and other photo sites, most of them Flickr's
// "medium" 500-px-long-side 4:2:0 baseline; 22 CMYK JPEGs and one PNG named .JPEG) plus our
// estimates where nothing is published (grayscale, 4:4:4, 4:2:2, progressive, quality).
// docs/benchmark_data.md explains each; change them here and there together.
// ---------------------------------------------------------------------------------------------

// Long side in px: one bucket is drawn, then a log-uniform value inside it (lognormal-ish overall).
// p5 ~260, p50 = 500, p95 ~1200 (realistic; ~1150 without the large bucket), ~1% >= 3000.
struct LongSideRow {
  double share;
  int lo, hi;  // inclusive
  const char* why;
};
constexpr LongSideRow kLongSide[] = {
    {0.55, 500, 500, "Flickr's 'medium' size: ImageNet's dominant long side (500x375, 500x333, ...)"},
    {0.04, 150, 249, "thumbnails and small crops, ImageNet's low tail"},
    {0.08, 250, 349, "small web images; puts p5 at ~260"},
    {0.12, 350, 499, "web-resized photos just under 500"},
    {0.10, 501, 799, "'medium 640'/'800' sizes and other web resizes"},
    {0.06, 800, 1199, "'large 1024' sizes"},
    {0.03, 1200, 1999, "full-HD-ish resizes; with the rows below puts p95 at ~1200"},
    {0.01, 2000, 2999, "camera originals, downscaled"},
    // Must stay the last row: `varied` redraws a file that lands here among the rows above.
    {0.01, 3000, 4500, "camera originals (8-16 MP): 'large', realistic only (varied_large: 5%)"},
};
constexpr double kLargeShare = 0.01;  // the last row's share
constexpr int kLargeLongSide = 3000;
static_assert(kLongSide[std::size(kLongSide) - 1].share == kLargeShare &&
              kLongSide[std::size(kLongSide) - 1].lo == kLargeLongSide);

// Aspect ratio (long / short); ratio 0 = drawn uniformly from 1.0..2.0.
struct AspectRow {
  double share, ratio;
  const char* why;
};
constexpr AspectRow kAspect[] = {
    {0.50, 4.0 / 3, "4:3: compact cameras and phones (500x375)"},
    {0.25, 3.0 / 2, "3:2: DSLRs (500x333)"},
    {0.07, 1.0, "square crops (500x500)"},
    {0.06, 16.0 / 9, "16:9 video-shaped frames"},
    {0.05, 5.0 / 4, "5:4 / 4:5 prints and crops"},
    {0.02, 2.0, "wide crops; ImageNet has few beyond 2:1"},
    {0.05, 0.0, "free crops anywhere from 1:1 to 2:1"},
};
constexpr double kPortraitShare = 0.30;  // ~70% landscape / 30% portrait among non-square photos

// JPEG quality (realistic, varied_quality): a bucket, then uniform inside it. 86% within 75..95.
struct QualityRow {
  double share;
  int lo, hi;
  const char* why;
};
constexpr QualityRow kQuality[] = {
    {0.04, 70, 74, "aggressively recompressed web images"},
    {0.15, 75, 75, "libjpeg's / PIL's default quality"},
    {0.16, 76, 84, "web services' recompression"},
    {0.20, 85, 89, "phones and editors' 'high'"},
    {0.35, 90, 95, "cameras' 'fine' and Flickr's own re-encodes"},
    {0.10, 96, 98, "cameras' 'superfine'"},
};

// Chroma subsampling (realistic).
struct SubsamplingRow {
  double share;
  Subsampling value;
  const char* why;
};
constexpr SubsamplingRow kSubsamplingShares[] = {
    {0.85, Subsampling::k420, "the default of cameras, phones, libjpeg and Flickr's re-encodes"},
    {0.08, Subsampling::k444, "high-quality exports (Photoshop q>=90, GIMP) keep full chroma"},
    {0.04, Subsampling::k422, "some cameras (older Canon/Nikon bodies) write 2x1 chroma"},
    {0.03, Subsampling::kGray, "black-and-white photos and scans"},
};
constexpr double kProgressiveShare = 0.06;  // web-optimised exports (Photoshop "Save for Web", mozjpeg)
constexpr int kFilesPerPng = 4096;          // ImageNet: 1 PNG (named .JPEG) in 1.28 M; here 1 per 4,096
constexpr int kMinCountForPng = 64;         // ... and at least one in any set of >= 64 files
constexpr double kVariantShare = 0.05;      // the one-property variants change exactly round(5%)
// CMYK JPEGs (ImageNet has 22 in 1.28 M, Adobe-inverted as Photoshop writes them): like the PNG, 1
// per 4,096 and at least one in any set of >= 64 files, on the evenly spaced files half a spacing
// away from the PNGs' (so the two never fall on one file and no other file changes).
constexpr int kFilesPerCmyk = 4096;
constexpr int kMinCountForCmyk = 64;

template <class Row, size_t N>
constexpr bool SumsToOne(const Row (&rows)[N]) {
  double sum = 0;
  for (const Row& r : rows) sum += r.share;
  return sum > 0.999999 && sum < 1.000001;
}
static_assert(SumsToOne(kLongSide) && SumsToOne(kAspect) && SumsToOne(kQuality) && SumsToOne(kSubsamplingShares));

constexpr double kNoiseLo = 3.0, kNoiseHi = 8.0;  // MakePhotoLike texture: ~34..51 KB at 500x375 q90
constexpr int kUniformNoiseSeedBase = 1000;       // MakePhotoJpeg's seed: 1000 + index

// ---------------------------------------------------------------------------------------------

enum class Set {
  kUniform, kVaried, kVariedProgressive, kVaried422, kVaried444, kVariedGray, kVariedLarge, kVariedQuality, kRealistic,
};
struct SetName {
  Set set;
  const char* name;
};
constexpr SetName kSets[] = {
    {Set::kUniform, "uniform"},       {Set::kVaried, "varied"},
    {Set::kVariedProgressive, "varied_progressive"}, {Set::kVaried422, "varied_422"},
    {Set::kVaried444, "varied_444"},  {Set::kVariedGray, "varied_gray"},
    {Set::kVariedLarge, "varied_large"}, {Set::kVariedQuality, "varied_quality"},
    {Set::kRealistic, "realistic"},
};

// One independent stream per property: a file's size never moves when its quality draw changes.
enum class Draw : uint64_t {
  kLongSide = 1, kLongSideRedraw, kLongSideInBucket, kAspect, kAspectFree, kPortrait, kQuality, kQualityInBucket,
  kSubsampling, kProgressive, kNoise, kLargeSide, kCmyk,
};

uint64_t Mix64(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A uniform draw in [0, 1) for (index, what): the same on every machine.
double Unit(int index, Draw what) {
  const uint64_t h = Mix64(Mix64(static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull) ^
                           (static_cast<uint64_t>(what) * 0xD1B54A32D192ED03ull));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// The row that u (in [0, total)) lands in, by cumulative share.
template <class Row>
const Row& Pick(std::span<const Row> rows, double u) {
  double cumulative = 0;
  for (const Row& r : rows) {
    cumulative += r.share;
    if (u < cumulative) return r;
  }
  return rows.back();
}

int LogUniform(int lo, int hi, double u) {
  const double v = std::exp(std::log(lo) + u * (std::log(hi + 1.0) - std::log(lo)));
  return std::clamp(static_cast<int>(v), lo, hi);
}

int DrawLongSide(int index, bool allow_large) {
  std::span<const LongSideRow> rows(kLongSide);
  double u = Unit(index, Draw::kLongSide);
  if (!allow_large && u >= 1.0 - kLargeShare) u = Unit(index, Draw::kLongSideRedraw) * (1.0 - kLargeShare);
  const LongSideRow& row = Pick(rows, u);
  return LogUniform(row.lo, row.hi, Unit(index, Draw::kLongSideInBucket));
}

int DrawLargeLongSide(int index) {
  const LongSideRow& row = kLongSide[std::size(kLongSide) - 1];
  return LogUniform(row.lo, row.hi, Unit(index, Draw::kLargeSide));
}

// width x height from the long side and the file's aspect and orientation draws.
void SetShape(FileSpec* s, int long_side, int index) {
  const AspectRow& row = Pick(std::span<const AspectRow>(kAspect), Unit(index, Draw::kAspect));
  const double ratio = row.ratio > 0 ? row.ratio : 1.0 + Unit(index, Draw::kAspectFree);
  const int short_side = std::max(1, static_cast<int>(std::lround(long_side / ratio)));
  const bool portrait = Unit(index, Draw::kPortrait) < kPortraitShare;
  s->width = portrait ? short_side : long_side;
  s->height = portrait ? long_side : short_side;
}

int DrawQuality(int index) {
  const QualityRow& row = Pick(std::span<const QualityRow>(kQuality), Unit(index, Draw::kQuality));
  return row.lo + std::min(row.hi - row.lo, static_cast<int>(Unit(index, Draw::kQualityInBucket) * (row.hi - row.lo + 1)));
}

// `varied`'s file: ImageNet-like size, q90 baseline 4:2:0, photo-like texture.
FileSpec VariedSpec(int index, bool allow_large) {
  FileSpec s;
  s.noise = kNoiseLo + (kNoiseHi - kNoiseLo) * Unit(index, Draw::kNoise);
  SetShape(&s, DrawLongSide(index, allow_large), index);
  return s;
}

Set FindSet(const std::string& name) {
  for (const SetName& s : kSets) {
    if (name == s.name) return s.set;
  }
  std::string valid;
  for (const SetName& s : kSets) valid += (valid.empty() ? "" : ", ") + std::string(s.name);
  throw std::invalid_argument("unknown data set \"" + name + "\" (expected one of: " + valid + ")");
}

std::string Percent(int n, int total) {
  char buf[32];
  const double percent = total > 0 ? 100.0 * n / total : 0.0;
  std::snprintf(buf, sizeof(buf), percent > 0 && percent < 1 ? "%.2f%%" : "%.1f%%", percent);  // 1 PNG in 4,096: 0.02%
  return buf;
}

}  // namespace

const char* FileFormatName(FileFormat f) {
  return f == FileFormat::kPng ? "png" : f == FileFormat::kCmykJpeg ? "cmyk_jpeg" : "jpeg";
}

const std::vector<std::string>& DatasetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const SetName& s : kSets) out.emplace_back(s.name);
    return out;
  }();
  return names;
}

int ExactShareCount(double share, int count) { return static_cast<int>(std::lround(share * count)); }

bool InEvenSubset(int index, int selected, int count) {
  // Bresenham: index is selected where floor((i * k + count / 2) / count) steps up, which it does
  // exactly k times over [0, count); the count/2 phase centres each pick in its stretch.
  const int64_t k = selected, n = count, phase = count / 2;
  return ((index + 1) * k + phase) / n > (index * k + phase) / n;
}

FileSpec DatasetFileSpec(const std::string& name, int index, int count) {
  const Set set = FindSet(name);
  if (count < 1 || index < 0 || index >= count) {
    throw std::invalid_argument("DatasetFileSpec: index " + std::to_string(index) + " outside a set of " +
                                std::to_string(count) + " files");
  }
  if (set == Set::kUniform) return FileSpec{};  // exactly MakePhotoJpeg(index)
  FileSpec s = VariedSpec(index, set == Set::kRealistic);
  const bool variant = InEvenSubset(index, ExactShareCount(kVariantShare, count), count);
  switch (set) {
    case Set::kUniform:
    case Set::kVaried: break;
    case Set::kVariedProgressive: s.progressive = variant; break;
    case Set::kVaried422: if (variant) s.subsampling = Subsampling::k422; break;
    case Set::kVaried444: if (variant) s.subsampling = Subsampling::k444; break;
    case Set::kVariedGray: if (variant) s.subsampling = Subsampling::kGray; break;
    case Set::kVariedLarge: if (variant) SetShape(&s, DrawLargeLongSide(index), index); break;
    case Set::kVariedQuality: s.quality = DrawQuality(index); break;
    case Set::kRealistic: {
      s.quality = DrawQuality(index);
      s.subsampling = Pick(std::span<const SubsamplingRow>(kSubsamplingShares), Unit(index, Draw::kSubsampling)).value;
      s.progressive = Unit(index, Draw::kProgressive) < kProgressiveShare;
      const int pngs = count >= kMinCountForPng ? std::max(1, ExactShareCount(1.0 / kFilesPerPng, count)) : 0;
      if (InEvenSubset(index, pngs, count)) {
        s = VariedSpec(index, /*allow_large=*/false);  // a PNG of a camera original would be ~40 MB
        s.format = FileFormat::kPng;
        s.subsampling = Subsampling::k444;
        s.quality = 0;
      }
      const int cmyks = count >= kMinCountForCmyk ? std::max(1, ExactShareCount(1.0 / kFilesPerCmyk, count)) : 0;
      if (cmyks > 0 && InEvenSubset((index + count / (2 * cmyks)) % count, cmyks, count)) {
        s = VariedSpec(index, /*allow_large=*/false);
        s.format = FileFormat::kCmykJpeg;
        s.subsampling = Subsampling::k444;  // Photoshop's CMYK: full-resolution channels
        s.quality = DrawQuality(index);
      }
      break;
    }
  }
  return s;
}

std::vector<uint8_t> EncodeDatasetFile(const FileSpec& spec, int index) {
  if (spec.width < 1 || spec.height < 1) throw std::invalid_argument("EncodeDatasetFile: empty image");
  Image8 img = MakePhotoLike(spec.height, spec.width, 3, kUniformNoiseSeedBase + static_cast<uint64_t>(index), spec.noise);
  if (spec.format == FileFormat::kJpeg) return EncodeJpeg(img, spec.subsampling, spec.quality, spec.progressive);
  if (spec.format == FileFormat::kCmykJpeg) {  // ink = 255 - RGB, the grey share moved to K
    Image8 cmyk{img.height, img.width, 4, {}};
    cmyk.pixels.resize(static_cast<size_t>(img.height) * static_cast<size_t>(img.width) * 4);
    for (size_t p = 0; p < static_cast<size_t>(img.height) * static_cast<size_t>(img.width); ++p) {
      const int c = 255 - img.pixels[p * 3], m = 255 - img.pixels[p * 3 + 1], y = 255 - img.pixels[p * 3 + 2];
      const int k = std::min({c, m, y});
      const int ink[4] = {c - k, m - k, y - k, k};
      for (int ch = 0; ch < 4; ++ch) cmyk.pixels[p * 4 + static_cast<size_t>(ch)] = static_cast<uint8_t>(ink[ch]);
    }
    return EncodeCmykJpegLibjpeg(cmyk, spec.quality, /*adobe_marker=*/true);
  }
  PngSource png;
  png.height = spec.height;
  png.width = spec.width;
  png.color_type = 2;
  png.bit_depth = 8;
  png.samples.assign(img.pixels.begin(), img.pixels.end());
  return EncodePng(png);
}

std::string ManifestHeader() { return "name\tformat\twidth\theight\tsubsampling\tprogressive\tquality\tbytes"; }

std::string ManifestLine(const std::string& file_name, const FileSpec& s, size_t bytes) {
  return file_name + "\t" + FileFormatName(s.format) + "\t" + std::to_string(s.width) + "\t" + std::to_string(s.height) +
         "\t" + SubsamplingName(s.subsampling) + "\t" + (s.progressive ? "1" : "0") + "\t" + std::to_string(s.quality) +
         "\t" + std::to_string(bytes);
}

std::string DatasetSummary(const std::string& name, const std::vector<FileSpec>& specs, const std::vector<size_t>& bytes) {
  const int n = static_cast<int>(specs.size());
  int s420 = 0, s422 = 0, s444 = 0, gray = 0, progressive = 0, large = 0, png = 0, cmyk = 0;
  double total = 0;
  std::vector<int> long_sides;
  for (int i = 0; i < n; ++i) {
    const FileSpec& s = specs[static_cast<size_t>(i)];
    total += i < static_cast<int>(bytes.size()) ? static_cast<double>(bytes[static_cast<size_t>(i)]) : 0.0;
    long_sides.push_back(s.long_side());
    large += s.long_side() >= kLargeLongSide;
    if (s.format != FileFormat::kJpeg) {
      png += s.format == FileFormat::kPng;
      cmyk += s.format == FileFormat::kCmykJpeg;
      continue;
    }
    progressive += s.progressive;
    s420 += s.subsampling == Subsampling::k420;
    s422 += s.subsampling == Subsampling::k422;
    s444 += s.subsampling == Subsampling::k444;
    gray += s.subsampling == Subsampling::kGray;
  }
  std::sort(long_sides.begin(), long_sides.end());
  const auto pct = [&](double q) {
    return n > 0 ? long_sides[static_cast<size_t>(std::lround(q * (n - 1)))] : 0;
  };
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s: %d files, mean %.1f KB (%.1f MB in all); ", name.c_str(), n,
                n > 0 ? total / n / 1024 : 0.0, total / (1024.0 * 1024.0));
  std::string out = buf;
  out += "JPEG 4:2:0 " + Percent(s420, n) + ", 4:2:2 " + Percent(s422, n) + ", 4:4:4 " + Percent(s444, n) +
         ", gray " + Percent(gray, n) + ", progressive " + Percent(progressive, n) + " (" + std::to_string(progressive) +
         "), large (long side >= 3000) " + Percent(large, n) + " (" + std::to_string(large) + "), png " +
         Percent(png, n) + " (" + std::to_string(png) + "), CMYK JPEG " + Percent(cmyk, n) + " (" +
         std::to_string(cmyk) + ")";
  std::snprintf(buf, sizeof(buf), "; long side p5/p50/p95 %d/%d/%d px.", pct(0.05), pct(0.50), pct(0.95));
  return out + buf;
}

}  // namespace conveyor::testimages
