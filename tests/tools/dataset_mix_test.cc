// tools/testimages/dataset_mix: the benchmark sets' shares (realistic within tolerances at 4,096
// files, the variants' 5% exact and evenly spread for several counts), the uniform set equal to
// today's --photos bytes, determinism, and real encoded bytes checked with TurboJPEG's header
// parser (size, subsampling), the SOF marker (progressive or baseline) and the PNG signature.
#include "tools/testimages/dataset_mix.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace conveyor::testimages {
namespace {

const std::vector<std::string> kVariants = {"varied_progressive", "varied_422", "varied_444", "varied_gray",
                                            "varied_large"};

std::vector<FileSpec> Specs(const std::string& name, int count) {
  std::vector<FileSpec> out;
  for (int i = 0; i < count; ++i) out.push_back(DatasetFileSpec(name, i, count));
  return out;
}

double Share(const std::vector<FileSpec>& specs, const std::function<bool(const FileSpec&)>& is) {
  return static_cast<double>(std::count_if(specs.begin(), specs.end(), is)) / static_cast<double>(specs.size());
}

int LongSidePercentile(const std::vector<FileSpec>& specs, double q) {
  std::vector<int> v;
  for (const FileSpec& s : specs) v.push_back(s.long_side());
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
}

bool IsLarge(const FileSpec& s) { return s.long_side() >= 3000; }

// Whether `s` is a variant's changed file (kind of set `name`).
bool IsVariantKind(const std::string& name, const FileSpec& s) {
  if (name == "varied_progressive") return s.progressive;
  if (name == "varied_422") return s.subsampling == Subsampling::k422;
  if (name == "varied_444") return s.subsampling == Subsampling::k444;
  if (name == "varied_gray") return s.subsampling == Subsampling::kGray;
  return IsLarge(s);
}

bool HasMarker(const std::vector<uint8_t>& bytes, uint8_t marker) {
  for (size_t i = 0; i + 1 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == marker) return true;
  }
  return false;
}

TEST(DatasetMix, NamesAndUnknownName) {
  EXPECT_EQ(DatasetNames(), (std::vector<std::string>{"uniform", "varied", "varied_progressive", "varied_422",
                                                      "varied_444", "varied_gray", "varied_large", "varied_quality",
                                                      "realistic"}));
  try {
    DatasetFileSpec("imagenet", 0, 10);
    FAIL() << "no exception for an unknown set";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"imagenet\""), std::string::npos) << what;
    for (const std::string& name : DatasetNames()) EXPECT_NE(what.find(name), std::string::npos) << name << ": " << what;
  }
  EXPECT_THROW(DatasetFileSpec("varied", 10, 10), std::invalid_argument);
  EXPECT_THROW(DatasetFileSpec("varied", -1, 10), std::invalid_argument);
  EXPECT_THROW(DatasetFileSpec("varied", 0, 0), std::invalid_argument);
}

TEST(DatasetMix, UniformIsTodaysPhotos) {
  for (const FileSpec& s : Specs("uniform", 2048)) {
    ASSERT_EQ(s.format, FileFormat::kJpeg);
    ASSERT_EQ(s.width, 500);
    ASSERT_EQ(s.height, 375);
    ASSERT_EQ(s.quality, 90);
    ASSERT_EQ(s.subsampling, Subsampling::k420);
    ASSERT_FALSE(s.progressive);
  }
  for (int i : {0, 7, 1999}) {
    EXPECT_EQ(EncodeDatasetFile(DatasetFileSpec("uniform", i, 2048), i), MakePhotoJpeg(i)) << i;
  }
}

TEST(DatasetMix, VariedSizesLikeImageNet) {
  const auto specs = Specs("varied", 4096);
  for (const FileSpec& s : specs) {
    ASSERT_EQ(s.format, FileFormat::kJpeg);
    ASSERT_EQ(s.quality, 90);
    ASSERT_EQ(s.subsampling, Subsampling::k420);
    ASSERT_FALSE(s.progressive);
    ASSERT_GE(std::min(s.width, s.height), 1);
    ASSERT_GE(s.long_side(), 150);
    ASSERT_LT(s.long_side(), 3000);
    const double ratio = static_cast<double>(s.long_side()) / std::min(s.width, s.height);
    ASSERT_GE(ratio, 1.0);
    ASSERT_LE(ratio, 2.02);  // 2:1 after rounding the short side
    ASSERT_GE(s.noise, 3.0);
    ASSERT_LE(s.noise, 8.0);
  }
  EXPECT_NEAR(Share(specs, [](const FileSpec& s) { return s.long_side() == 500; }), 0.55, 0.03);
  EXPECT_GE(Share(specs, [](const FileSpec& s) { return s.long_side() >= 300 && s.long_side() <= 800; }), 0.75);
  EXPECT_GE(LongSidePercentile(specs, 0.05), 250);
  EXPECT_LE(LongSidePercentile(specs, 0.05), 300);
  EXPECT_EQ(LongSidePercentile(specs, 0.50), 500);
  EXPECT_GE(LongSidePercentile(specs, 0.95), 1000);
  EXPECT_LE(LongSidePercentile(specs, 0.95), 1400);
  EXPECT_GT(Share(specs, [](const FileSpec& s) { return s.long_side() >= 2000; }), 0.005);
  // Most at 4:3 and 3:2 (500x375, 500x333), ~70% of the non-square ones landscape.
  EXPECT_NEAR(Share(specs, [](const FileSpec& s) { return s.long_side() == 500 && std::min(s.width, s.height) == 375; }),
              0.55 * 0.50, 0.03);
  EXPECT_NEAR(Share(specs, [](const FileSpec& s) { return s.long_side() == 500 && std::min(s.width, s.height) == 333; }),
              0.55 * 0.25, 0.03);
  const double landscape = Share(specs, [](const FileSpec& s) { return s.width > s.height; });
  const double portrait = Share(specs, [](const FileSpec& s) { return s.width < s.height; });
  EXPECT_NEAR(landscape / (landscape + portrait), 0.70, 0.03);
}

TEST(DatasetMix, RealisticSharesAt4096) {
  const auto specs = Specs("realistic", 4096);
  const auto jpeg = [](Subsampling sub) {
    return [sub](const FileSpec& s) { return s.format == FileFormat::kJpeg && s.subsampling == sub; };
  };
  EXPECT_NEAR(Share(specs, jpeg(Subsampling::k420)), 0.85, 0.02);
  EXPECT_NEAR(Share(specs, jpeg(Subsampling::k444)), 0.08, 0.015);
  EXPECT_NEAR(Share(specs, jpeg(Subsampling::k422)), 0.04, 0.012);
  EXPECT_NEAR(Share(specs, jpeg(Subsampling::kGray)), 0.03, 0.01);
  EXPECT_NEAR(Share(specs, [](const FileSpec& s) { return s.progressive; }), 0.06, 0.015);
  EXPECT_NEAR(Share(specs, IsLarge), 0.01, 0.005);
  EXPECT_EQ(std::count_if(specs.begin(), specs.end(), [](const FileSpec& s) { return s.format == FileFormat::kPng; }), 1);
  EXPECT_EQ(
      std::count_if(specs.begin(), specs.end(), [](const FileSpec& s) { return s.format == FileFormat::kCmykJpeg; }),
      1);
  // Progressive comes with every subsampling, not only 4:2:0.
  EXPECT_GT(Share(specs, [](const FileSpec& s) { return s.progressive && s.subsampling != Subsampling::k420; }), 0.0);
  for (const FileSpec& s : specs) {
    if (s.format == FileFormat::kPng) continue;
    ASSERT_GE(s.quality, 70);
    ASSERT_LE(s.quality, 98);
  }
  EXPECT_GE(Share(specs, [](const FileSpec& s) { return s.quality >= 75 && s.quality <= 95; }), 0.80);
  EXPECT_NEAR(Share(specs, [](const FileSpec& s) { return s.quality == 75; }), 0.15, 0.03);
  EXPECT_GE(LongSidePercentile(specs, 0.05), 250);
  EXPECT_LE(LongSidePercentile(specs, 0.05), 300);
  EXPECT_EQ(LongSidePercentile(specs, 0.50), 500);
  EXPECT_GE(LongSidePercentile(specs, 0.95), 1000);
  EXPECT_LE(LongSidePercentile(specs, 0.95), 1400);
  for (const FileSpec& s : specs) ASSERT_LE(s.long_side(), 4500);
  // Every non-large realistic file has its varied twin's size: the sets differ in the mix only.
  const auto varied = Specs("varied", 4096);
  for (size_t i = 0; i < specs.size(); ++i) {
    if (IsLarge(specs[i])) continue;
    ASSERT_EQ(specs[i].width, varied[i].width) << i;
    ASSERT_EQ(specs[i].height, varied[i].height) << i;
  }
}

TEST(DatasetMix, OnePngPer4096) {
  const auto pngs = [](int count) {
    int n = 0;
    for (const FileSpec& s : Specs("realistic", count)) {
      if (s.format != FileFormat::kPng) continue;
      ++n;
      EXPECT_LT(s.long_side(), 3000);
      EXPECT_EQ(s.quality, 0);
      EXPECT_FALSE(s.progressive);
    }
    return n;
  };
  EXPECT_EQ(pngs(63), 0);
  EXPECT_EQ(pngs(64), 1);
  EXPECT_EQ(pngs(512), 1);
  EXPECT_EQ(pngs(8192), 2);
  EXPECT_EQ(pngs(12288), 3);
}

// One CMYK JPEG per 4,096 like the PNG, never on the PNG's file; a real CMYK (or YCCK) JPEG at the
// spec's size, as TurboJPEG reads its header.
TEST(DatasetMix, OneCmykJpegPer4096) {
  for (int count : {63, 64, 512, 4096, 8192}) {
    const auto specs = Specs("realistic", count);
    int cmyk = 0, png = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      const FileSpec& s = specs[i];
      png += s.format == FileFormat::kPng;
      if (s.format != FileFormat::kCmykJpeg) continue;
      ++cmyk;
      EXPECT_LT(s.long_side(), 3000);
      EXPECT_FALSE(s.progressive);
      if (count == 64) {
        const std::vector<uint8_t> bytes = EncodeDatasetFile(s, static_cast<int>(i));
        tjhandle tj = tjInitDecompress();
        int w = 0, h = 0, sub = 0, space = -1;
        ASSERT_EQ(tjDecompressHeader3(tj, bytes.data(), bytes.size(), &w, &h, &sub, &space), 0);
        tjDestroy(tj);
        EXPECT_TRUE(space == TJCS_CMYK || space == TJCS_YCCK) << space;
        EXPECT_EQ(h, s.height);
        EXPECT_EQ(w, s.width);
      }
    }
    EXPECT_EQ(cmyk, count < 64 ? 0 : std::max(1, count / 4096)) << count;
    EXPECT_EQ(cmyk, png) << count;
  }
}

TEST(DatasetMix, VariantsChangeExactlyFivePercentOfVaried) {
  for (int count : {1, 10, 37, 400, 1000, 4096}) {
    const auto varied = Specs("varied", count);
    const int expected = static_cast<int>(std::lround(0.05 * count));
    for (const std::string& name : kVariants) {
      const auto specs = Specs(name, count);
      std::vector<int> chosen;
      for (int i = 0; i < count; ++i) {
        const FileSpec& s = specs[static_cast<size_t>(i)];
        const FileSpec& v = varied[static_cast<size_t>(i)];
        if (!IsVariantKind(name, s)) {
          ASSERT_EQ(s, v) << name << " " << i;  // the other 95% are varied's files
          continue;
        }
        chosen.push_back(i);
        FileSpec back = s;  // differs from varied in the one property only
        if (name == "varied_large") {
          EXPECT_GE(s.long_side(), 3000);
          EXPECT_LE(s.long_side(), 4500);
          EXPECT_EQ(s.width > s.height, v.width > v.height) << "orientation kept";
          back.width = v.width, back.height = v.height;
        } else if (name == "varied_progressive") {
          back.progressive = false;
        } else {
          back.subsampling = Subsampling::k420;
        }
        EXPECT_EQ(back, v) << name << " " << i;
      }
      ASSERT_EQ(static_cast<int>(chosen.size()), expected) << name << " N=" << count;
      // Spread evenly: the gaps are N/K rounded down or up.
      for (size_t k = 1; k < chosen.size(); ++k) {
        const int gap = chosen[k] - chosen[k - 1];
        EXPECT_GE(gap, count / expected) << name;
        EXPECT_LE(gap, (count + expected - 1) / expected) << name;
      }
    }
  }
}

TEST(DatasetMix, VariedQualityIsRealisticsQualityDraw) {
  const auto specs = Specs("varied_quality", 4096);
  const auto varied = Specs("varied", 4096);
  const auto realistic = Specs("realistic", 4096);
  for (size_t i = 0; i < specs.size(); ++i) {
    ASSERT_GE(specs[i].quality, 70);
    ASSERT_LE(specs[i].quality, 98);
    FileSpec back = specs[i];
    back.quality = 90;
    ASSERT_EQ(back, varied[i]) << i;
    if (realistic[i].format == FileFormat::kJpeg) {
      ASSERT_EQ(specs[i].quality, realistic[i].quality) << i;
    }
  }
  EXPECT_GE(Share(specs, [](const FileSpec& s) { return s.quality >= 75 && s.quality <= 95; }), 0.80);
  EXPECT_GT(Share(specs, [](const FileSpec& s) { return s.quality < 75; }), 0.02);
  EXPECT_GT(Share(specs, [](const FileSpec& s) { return s.quality > 95; }), 0.05);
}

TEST(DatasetMix, Deterministic) {
  for (const std::string& name : DatasetNames()) {
    for (int i : {0, 1, 19, 255, 4095}) EXPECT_EQ(DatasetFileSpec(name, i, 4096), DatasetFileSpec(name, i, 4096));
  }
  for (int i : {1, 2, 3}) {
    const FileSpec s = DatasetFileSpec("realistic", i, 4096);
    EXPECT_EQ(EncodeDatasetFile(s, i), EncodeDatasetFile(s, i)) << i;
  }
}

// Encodes the smallest file of each kind (the smallest large one) and checks the bytes.
TEST(DatasetMix, EncodedFilesAreWhatTheSpecSays) {
  struct Kind {
    const char* what;
    std::string set;
    std::function<bool(const FileSpec&)> is;
  };
  const auto jpeg = [](Subsampling sub) {
    return [sub](const FileSpec& s) { return s.format == FileFormat::kJpeg && s.subsampling == sub; };
  };
  const std::vector<Kind> kinds = {
      {"4:2:0 baseline", "realistic", [&](const FileSpec& s) { return jpeg(Subsampling::k420)(s) && !s.progressive; }},
      {"4:2:2", "realistic", jpeg(Subsampling::k422)},
      {"4:4:4", "realistic", jpeg(Subsampling::k444)},
      {"gray", "realistic", [](const FileSpec& s) { return s.subsampling == Subsampling::kGray; }},
      {"progressive 4:2:0", "varied_progressive", [](const FileSpec& s) { return s.progressive; }},
      {"progressive non-4:2:0", "realistic",
       [](const FileSpec& s) { return s.progressive && s.subsampling != Subsampling::k420; }},
      {"png", "realistic", [](const FileSpec& s) { return s.format == FileFormat::kPng; }},
      {"large", "varied_large", IsLarge},
      {"quality 70..74", "varied_quality", [](const FileSpec& s) { return s.quality < 75; }},
  };
  tjhandle tj = tjInitDecompress();
  ASSERT_NE(tj, nullptr);
  for (const Kind& kind : kinds) {
    const auto specs = Specs(kind.set, 4096);
    int best = -1;
    for (int i = 0; i < 4096; ++i) {
      const FileSpec& s = specs[static_cast<size_t>(i)];
      if (kind.is(s) && (best < 0 || int64_t{s.width} * s.height < int64_t{specs[static_cast<size_t>(best)].width} *
                                                                         specs[static_cast<size_t>(best)].height)) {
        best = i;
      }
    }
    ASSERT_GE(best, 0) << kind.what;
    const FileSpec& s = specs[static_cast<size_t>(best)];
    SCOPED_TRACE(std::string(kind.what) + ": " + kind.set + " #" + std::to_string(best) + " " + std::to_string(s.width) +
                 "x" + std::to_string(s.height));
    const std::vector<uint8_t> bytes = EncodeDatasetFile(s, best);
    if (s.format == FileFormat::kPng) {
      const uint8_t signature[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
      ASSERT_GT(bytes.size(), 33u);
      EXPECT_TRUE(std::equal(signature, signature + 8, bytes.begin()));
      const auto be32 = [&](size_t at) {
        return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) | (uint32_t{bytes[at + 2]} << 8) |
               bytes[at + 3];
      };
      EXPECT_EQ(be32(16), static_cast<uint32_t>(s.width));
      EXPECT_EQ(be32(20), static_cast<uint32_t>(s.height));
      EXPECT_EQ(bytes[24], 8);  // bit depth
      EXPECT_EQ(bytes[25], 2);  // RGB
      continue;
    }
    int width = 0, height = 0, subsampling = -1, colorspace = -1;
    ASSERT_EQ(tjDecompressHeader3(tj, bytes.data(), bytes.size(), &width, &height, &subsampling, &colorspace), 0)
        << tjGetErrorStr2(tj);
    EXPECT_EQ(width, s.width);
    EXPECT_EQ(height, s.height);
    const int expected_subsampling = s.subsampling == Subsampling::k420   ? TJSAMP_420
                                     : s.subsampling == Subsampling::k422 ? TJSAMP_422
                                     : s.subsampling == Subsampling::k444 ? TJSAMP_444
                                                                          : TJSAMP_GRAY;
    EXPECT_EQ(subsampling, expected_subsampling);
    EXPECT_EQ(colorspace, s.subsampling == Subsampling::kGray ? TJCS_GRAY : TJCS_YCbCr);
    EXPECT_EQ(HasMarker(bytes, 0xC2), s.progressive) << "SOF2";
    EXPECT_EQ(HasMarker(bytes, 0xC0), !s.progressive) << "SOF0";
  }
  tjDestroy(tj);
}

TEST(DatasetMix, ManifestAndSummary) {
  EXPECT_EQ(ManifestHeader(), "name\tformat\twidth\theight\tsubsampling\tprogressive\tquality\tbytes");
  FileSpec png;
  png.format = FileFormat::kPng;
  png.subsampling = Subsampling::k444;
  png.quality = 0;
  EXPECT_EQ(ManifestLine("img_00007.jpg", png, 1234), "img_00007.jpg\tpng\t500\t375\t444\t0\t0\t1234");
  FileSpec prog;
  prog.width = 333, prog.height = 500, prog.progressive = true, prog.subsampling = Subsampling::kGray, prog.quality = 75;
  EXPECT_EQ(ManifestLine("img_00001.jpg", prog, 99), "img_00001.jpg\tjpeg\t333\t500\tgray\t1\t75\t99");
  FileSpec large;
  large.width = 4000, large.height = 3000;
  const std::string summary = DatasetSummary("mine", {FileSpec{}, prog, png, large}, {1024, 2048, 3072, 4096});
  EXPECT_NE(summary.find("mine: 4 files, mean 2.5 KB"), std::string::npos) << summary;
  EXPECT_NE(summary.find("4:2:0 50.0%"), std::string::npos) << summary;
  EXPECT_NE(summary.find("gray 25.0%"), std::string::npos) << summary;
  EXPECT_NE(summary.find("progressive 25.0% (1)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("large (long side >= 3000) 25.0% (1)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("png 25.0% (1)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("p5/p50/p95 500/500/4000 px"), std::string::npos) << summary;
}

TEST(DatasetMix, ExactShareHelpers) {
  EXPECT_EQ(ExactShareCount(0.05, 4096), 205);
  EXPECT_EQ(ExactShareCount(0.05, 10), 1);  // 0.5 rounds away from zero
  EXPECT_EQ(ExactShareCount(0.05, 9), 0);
  for (int count : {1, 2, 7, 64, 1001}) {
    for (int k : {0, 1, count / 3, count}) {
      int n = 0;
      for (int i = 0; i < count; ++i) n += InEvenSubset(i, k, count);
      EXPECT_EQ(n, k) << k << " of " << count;
    }
  }
}

}  // namespace
}  // namespace conveyor::testimages
