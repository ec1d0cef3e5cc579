// `conveyor preview` drawing boxes and mask outlines (cli/preview_overlays.h) on CPU pipelines over
// generated .npy files. The images' channels lie in [50, 200] and every class colour has a channel
// at 255 and one at 0, so a class colour in the PNG can only be drawn; the expected outlines come
// from how the boxes and mask regions were built (the pixel columns and rows a box was made to
// start and end in, the border pixels of a region), and each tile is compared whole: outline
// pixels in their class's colour, every other pixel the image's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "cli/image_grid.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/png_testing.h"

namespace conveyor::cli_test {
namespace {

using cli::RgbImage;
using ::testing::HasSubstr;
using ::testing::Not;

// A random image with channels in [50, 200].
RgbImage MutedImage(int w, int h, uint32_t seed) {
  RgbImage image(w, h);
  image.pixels = RandomBytes(image.pixels.size(), seed);
  for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(50 + v % 151);
  return image;
}

template <typename T>
void WriteArray(const std::string& path, DType dtype, const Shape& shape, const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  WriteNpy(path, dtype, shape, bytes);
}

void WriteImage(const std::string& dir, int i, const RgbImage& image) {
  WriteNpy(dir + "/s" + std::to_string(i) + ".npy", DType::kUInt8, Shape{image.height, image.width, 3}, image.pixels);
}

std::string Reader(const std::string& folder) {
  return "  - {op: readers.numpy, name: " + folder + "_reader, args: {file_root: " + folder + "}, outputs: [" + folder +
         "]}\n";
}

std::string Pipeline(int batch, const std::string& ops, const std::string& outputs) {
  return "pipeline: {name: overlays, batch_size: " + std::to_string(batch) + ", device: cpu}\nops:\n" + ops +
         "outputs: [" + outputs + "]\n";
}

RgbImage TileAt(const RgbImage& grid, const cli::GridPlacement& p, int i, int w, int h) {
  RgbImage t(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) std::memcpy(t.at(x, y), grid.at(p.TileX(i) + x, p.TileY(i) + y), 3);
  }
  return t;
}

// The first pixel where `got` and `want` differ, "" when none.
std::string FirstDifference(const RgbImage& got, const RgbImage& want) {
  for (int y = 0; y < want.height; ++y) {
    for (int x = 0; x < want.width; ++x) {
      if (std::memcmp(got.at(x, y), want.at(x, y), 3) != 0) {
        return "(" + std::to_string(x) + ", " + std::to_string(y) + "): got " + std::to_string(got.at(x, y)[0]) + "," +
               std::to_string(got.at(x, y)[1]) + "," + std::to_string(got.at(x, y)[2]) + ", want " +
               std::to_string(want.at(x, y)[0]) + "," + std::to_string(want.at(x, y)[1]) + "," +
               std::to_string(want.at(x, y)[2]);
      }
    }
  }
  return "";
}

// Pixels of `image` in exactly `rgb`.
int CountColour(const RgbImage& image, const uint8_t rgb[3]) {
  int n = 0;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) n += std::memcmp(image.at(x, y), rgb, 3) == 0;
  }
  return n;
}

// A box outline meant to land on columns x0, x1 and rows y0, y1 (inclusive).
struct PixelBox {
  int x0, y0, x1, y1;
  int64_t label;
};

void PaintOutline(RgbImage& image, const PixelBox& b, const uint8_t rgb[3]) {
  for (int x = b.x0; x <= b.x1; ++x) {
    std::memcpy(image.at(x, b.y0), rgb, 3);
    std::memcpy(image.at(x, b.y1), rgb, 3);
  }
  for (int y = b.y0; y <= b.y1; ++y) {
    std::memcpy(image.at(b.x0, y), rgb, 3);
    std::memcpy(image.at(b.x1, y), rgb, 3);
  }
}

TEST(PreviewOverlays, ClassColoursAreSaturatedDistinctAndFixed) {
  std::set<std::vector<uint8_t>> seen;
  for (int64_t label = -3; label < 64; ++label) {
    uint8_t a[3], b[3];
    cli::ClassColour(label, a);
    cli::ClassColour(label, b);
    EXPECT_EQ(std::memcmp(a, b, 3), 0) << label;
    EXPECT_EQ(*std::max_element(a, a + 3), 255) << label;
    EXPECT_EQ(*std::min_element(a, a + 3), 0) << label;
    seen.insert({a[0], a[1], a[2]});
  }
  EXPECT_EQ(seen.size(), 67u) << "every class its own colour";
}

// Normalized ltrb boxes with their classes: edges inside pixels, on pixel borders (float32's
// rounding forgiven) and beyond the image (drawn at its border); a sample without boxes.
TEST(PreviewOverlays, NormalizedBoxesOnTheirEdgesInTheirClassColours) {
  const std::string dir = MakeTempDir("overlay_boxes");
  const std::vector<std::pair<int, int>> sizes = {{56, 40}, {40, 48}, {36, 36}};
  std::mt19937 rng(2024);
  auto fraction = [&] { return 0.05 + 0.9 * std::uniform_real_distribution<double>(0, 1)(rng); };
  std::vector<RgbImage> want;
  int64_t first_label = -1;
  for (int i = 0; i < 3; ++i) {
    const auto [w, h] = sizes[i];
    const RgbImage image = MutedImage(w, h, 100 + i);
    WriteImage(dir + "/images", i, image);
    std::vector<PixelBox> boxes;
    std::vector<float> values;
    std::vector<int32_t> labels;
    const int count = i == 1 ? 0 : 3;
    for (int k = 0; k < count; ++k) {
      PixelBox b;
      b.x0 = static_cast<int>(rng() % (w / 2)), b.x1 = b.x0 + 2 + static_cast<int>(rng() % (w / 2 - 2));
      b.y0 = static_cast<int>(rng() % (h / 2)), b.y1 = b.y0 + 2 + static_cast<int>(rng() % (h / 2 - 2));
      b.label = 1 + static_cast<int>(rng() % 30);
      double l = (b.x0 + fraction()) / w, t = (b.y0 + fraction()) / h;
      double r = (b.x1 + fraction()) / w, bottom = (b.y1 + fraction()) / h;
      if (k == 1) {  // on pixel borders: covers columns x0..x1 exactly
        l = static_cast<double>(b.x0) / w, t = static_cast<double>(b.y0) / h;
        r = (b.x1 + 1.0) / w, bottom = (b.y1 + 1.0) / h;
      }
      if (k == 2 && i == 2) {  // leaves the image on the left and at the bottom
        l = -0.2, b.x0 = 0;
        bottom = 1.3, b.y1 = h - 1;
      }
      values.insert(values.end(), {static_cast<float>(l), static_cast<float>(t), static_cast<float>(r),
                                   static_cast<float>(bottom)});
      labels.push_back(static_cast<int32_t>(b.label));
      boxes.push_back(b);
      if (first_label < 0) first_label = b.label;
    }
    WriteArray(dir + "/boxes/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{count, 4}, values);
    WriteArray(dir + "/labels/s" + std::to_string(i) + ".npy", DType::kInt32, Shape{count}, labels);
    RgbImage expected = image;
    for (const PixelBox& b : boxes) {
      uint8_t rgb[3];
      cli::ClassColour(b.label, rgb);
      PaintOutline(expected, b, rgb);
    }
    want.push_back(expected);
  }
  WriteText(dir + "/p.yaml", Pipeline(3, Reader("images") + Reader("boxes") + Reader("labels"), "images, boxes, labels"));
  const std::string png = dir + "/grid.png";
  const CliResult r = RunConveyor({"preview", dir + "/p.yaml", "-o", png});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("captions: sample index, boxes from \"boxes\" (ltrb, normalized, colours by \"labels\")"));
  const RgbImage grid = ReadPng(png);
  std::vector<RgbImage> placed;
  for (auto [w, h] : sizes) placed.emplace_back(w, h);
  const cli::GridPlacement p = cli::PlaceGrid(placed);
  for (int i = 0; i < 3; ++i) {
    const RgbImage tile = TileAt(grid, p, i, want[i].width, want[i].height);
    EXPECT_EQ(FirstDifference(tile, want[i]), "") << "tile " << i;
  }
  // Not vacuous: the outlines are there (the first box of the first sample in its class's colour).
  uint8_t rgb[3];
  cli::ClassColour(first_label, rgb);
  EXPECT_GT(CountColour(TileAt(grid, p, 0, 56, 40), rgb), 8);
}

// Boxes in pixels (coordinates above 2) without classes, shown on tiles shrunk to half size; and
// xywh boxes from a node whose `ltrb` is false (bb_flip), picked with --boxes.
TEST(PreviewOverlays, PixelBoxesOnShrunkTilesAndXywhFromTheProducer) {
  const std::string dir = MakeTempDir("overlay_pixels");
  const int w = 64, h = 48;
  std::vector<RgbImage> images;
  std::vector<std::vector<PixelBox>> boxes(2);
  std::mt19937 rng(77);
  for (int i = 0; i < 2; ++i) {
    images.push_back(MutedImage(w, h, 300 + i));
    WriteImage(dir + "/images", i, images[i]);
    std::vector<float> pixels, xywh;
    for (int k = 0; k < 2; ++k) {
      // Even starts and odd ends: the half-size tile's outline lands on x0 / 2 .. (x1 + 1) / 2 - 1.
      PixelBox b;
      b.x0 = 2 * static_cast<int>(rng() % 12), b.x1 = b.x0 + 2 * (3 + static_cast<int>(rng() % 12)) + 1;
      b.y0 = 2 * static_cast<int>(rng() % 8), b.y1 = b.y0 + 2 * (3 + static_cast<int>(rng() % 8)) + 1;
      b.label = 0;
      boxes[i].push_back(b);
      pixels.insert(pixels.end(), {static_cast<float>(b.x0), static_cast<float>(b.y0), static_cast<float>(b.x1 + 1),
                                   static_cast<float>(b.y1 + 1)});
      xywh.insert(xywh.end(), {static_cast<float>(b.x0) / w, static_cast<float>(b.y0) / h,
                               static_cast<float>(b.x1 + 1 - b.x0) / w, static_cast<float>(b.y1 + 1 - b.y0) / h});
    }
    WriteArray(dir + "/pixel_boxes/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{2, 4}, pixels);
    WriteArray(dir + "/xywh/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{2, 4}, xywh);
  }
  const std::string flip = "  - {op: bb_flip, name: same, inputs: [xywh], args: {ltrb: false, horizontal: 0}, "
                           "outputs: [xywh_boxes]}\n";
  WriteText(dir + "/p.yaml", Pipeline(2, Reader("images") + Reader("pixel_boxes") + Reader("xywh") + flip,
                                      "images, pixel_boxes, xywh_boxes"));
  uint8_t rgb[3];
  cli::ClassColour(0, rgb);
  for (const char* output : {"pixel_boxes", "xywh_boxes"}) {
    SCOPED_TRACE(output);
    const std::string png = dir + "/" + output + ".png";
    const CliResult r = RunConveyor({"preview", dir + "/p.yaml", "-o", png, "--boxes", output, "--tile-size", "32"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string(output) == "pixel_boxes"
                                     ? "boxes from \"pixel_boxes\" (ltrb, pixels, one colour)"
                                     : "boxes from \"xywh_boxes\" (xywh, normalized, one colour)"));
    const RgbImage grid = ReadPng(png);
    const cli::GridPlacement p = cli::PlaceGrid({RgbImage(32, 24), RgbImage(32, 24)});
    for (int i = 0; i < 2; ++i) {
      RgbImage expected = cli::ShrinkToFit(images[i], 32, 32);
      ASSERT_EQ(expected.width, 32);
      for (PixelBox b : boxes[i]) {
        b = {b.x0 / 2, b.y0 / 2, (b.x1 + 1) / 2 - 1, (b.y1 + 1) / 2 - 1, 0};
        PaintOutline(expected, b, rgb);
      }
      EXPECT_EQ(FirstDifference(TileAt(grid, p, i, 32, 24), expected), "") << "tile " << i;
    }
  }
}

// A label map's region: the rectangle [x0, x1] x [y0, y1] (inclusive) of one label.
struct Region {
  int x0, y0, x1, y1;
  int32_t label;
};

// Regions' outlines as built: a region's border pixels, except along the image's edge (no
// neighbour there), at `scale` tile pixels per mask pixel.
void PaintRegionOutlines(RgbImage& image, const std::vector<Region>& regions, int scale) {
  for (const Region& g : regions) {
    uint8_t rgb[3];
    cli::ClassColour(g.label, rgb);
    const int x0 = g.x0 * scale, x1 = (g.x1 + 1) * scale - 1, y0 = g.y0 * scale, y1 = (g.y1 + 1) * scale - 1;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const bool edge = (x == x0 && x0 > 0) || (x == x1 && x1 < image.width - 1) || (y == y0 && y0 > 0) ||
                          (y == y1 && y1 < image.height - 1);
        if (edge) std::memcpy(image.at(x, y), rgb, 3);
      }
    }
  }
}

// Masks (int32 [H, W, 1]) of rectangular regions — apart, touching each other, touching the image's
// edge — listed before the images (the image is still the one shown), the first as large as its
// image, the second half its image's size (mapped by nearest).
TEST(PreviewOverlays, MaskRegionsOutlinedInTheirLabelsColours) {
  const std::string dir = MakeTempDir("overlay_masks");
  std::mt19937 rng(31);
  const std::vector<std::vector<Region>> regions = {
      {{3, 4, 20, 15, static_cast<int32_t>(1 + rng() % 50)},
       {21, 4, 30, 15, static_cast<int32_t>(51 + rng() % 50)},  // touches the first
       {0, 20, 12, 29, static_cast<int32_t>(101 + rng() % 50)}},  // on the left and bottom edges
      {{2, 2, 9, 7, static_cast<int32_t>(1 + rng() % 50)}, {12, 5, 19, 11, static_cast<int32_t>(51 + rng() % 50)}}};
  const std::vector<std::pair<int, int>> mask_sizes = {{40, 30}, {20, 12}};
  const std::vector<int> scale = {1, 2};
  std::vector<RgbImage> want;
  for (int i = 0; i < 2; ++i) {
    const auto [mw, mh] = mask_sizes[i];
    const RgbImage image = MutedImage(mw * scale[i], mh * scale[i], 500 + i);
    WriteImage(dir + "/images", i, image);
    std::vector<int32_t> mask(static_cast<size_t>(mw) * mh, 0);
    for (const Region& g : regions[i]) {
      for (int y = g.y0; y <= g.y1; ++y) {
        for (int x = g.x0; x <= g.x1; ++x) mask[static_cast<size_t>(y) * mw + x] = g.label;
      }
    }
    WriteArray(dir + "/masks/s" + std::to_string(i) + ".npy", DType::kInt32, Shape{mh, mw, 1}, mask);
    WriteArray(dir + "/seg/s" + std::to_string(i) + ".npy", DType::kInt32, Shape{mh, mw}, mask);
    RgbImage expected = image;
    PaintRegionOutlines(expected, regions[i], scale[i]);
    want.push_back(expected);
  }
  WriteText(dir + "/p.yaml", Pipeline(2, Reader("masks") + Reader("images") + Reader("seg"), "masks, images, seg"));
  for (const std::string picked : {"", "seg"}) {
    SCOPED_TRACE("--mask " + picked);
    const std::string png = dir + "/grid" + picked + ".png";
    std::vector<std::string> args = {"preview", dir + "/p.yaml", "-o", png};
    if (!picked.empty()) args.insert(args.end(), {"--mask", picked});
    const CliResult r = RunConveyor(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("2 samples of \"images\" (uint8)"));
    EXPECT_THAT(r.out, HasSubstr("mask outlines from \"" + (picked.empty() ? std::string("masks") : picked) + "\""));
    const RgbImage grid = ReadPng(png);
    const cli::GridPlacement p = cli::PlaceGrid({RgbImage(40, 30), RgbImage(40, 24)});
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(FirstDifference(TileAt(grid, p, i, want[i].width, want[i].height), want[i]), "") << "tile " << i;
    }
  }
}

TEST(PreviewOverlays, Errors) {
  const std::string dir = MakeTempDir("overlay_errors");
  for (int i = 0; i < 2; ++i) {
    WriteImage(dir + "/images", i, MutedImage(8, 6, 900 + i));
    WriteArray(dir + "/boxes/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{2, 4},
               std::vector<float>{0.1f, 0.1f, 0.5f, 0.5f, 0.2f, 0.3f, 0.9f, 0.8f});
    WriteArray(dir + "/labels/s" + std::to_string(i) + ".npy", DType::kInt32, Shape{2}, std::vector<int32_t>{1, 2});
    WriteArray(dir + "/bboxes/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{1, 5},
               std::vector<float>{0.1f, 0.1f, 0.5f, 0.5f, 0.0f});
  }
  WriteText(dir + "/p.yaml", Pipeline(2, Reader("images") + Reader("boxes") + Reader("labels") + Reader("bboxes"),
                                      "images, boxes, labels, bboxes"));
  auto preview = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"preview", dir + "/p.yaml", "-o", dir + "/g.png"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunConveyor(args);
  };
  const CliResult missing = preview({"--boxes", "boxs"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("--boxes boxs: the pipeline has no output \"boxs\"; did you mean \"boxes\"? "
                                     "(outputs: images, boxes, labels, bboxes)"));
  const CliResult not_boxes = preview({"--boxes", "labels"});
  EXPECT_EQ(not_boxes.status, 1);
  EXPECT_THAT(not_boxes.err, HasSubstr("--boxes labels: sample 0 is int32 of shape (2,); expected [N, 4] "
                                       "floating-point boxes (ltrb or xywh)"));
  const CliResult five = preview({"--boxes", "bboxes"});
  EXPECT_EQ(five.status, 1);
  EXPECT_THAT(five.err, HasSubstr("--boxes bboxes: sample 0 is float32 of shape (1, 5); expected [N, 4]"));
  const CliResult no_mask = preview({"--mask", "mask"});
  EXPECT_EQ(no_mask.status, 1);
  EXPECT_THAT(no_mask.err, HasSubstr("--mask mask: the pipeline has no output \"mask\""));
  const CliResult not_mask = preview({"--mask", "boxes"});
  EXPECT_EQ(not_mask.status, 1);
  EXPECT_THAT(not_mask.err, HasSubstr("--mask boxes: sample 0 is float32 of shape (2, 4) (layout \"\"); expected "
                                      "integer label maps [H, W], [H, W, 1] or [1, H, W] (CHW)"));
  // Unnamed: "boxes" fits and is drawn; "bboxes" ([1, 5]) would not fit and is passed over.
  const CliResult automatic = preview({});
  ASSERT_EQ(automatic.status, 0) << automatic.err;
  EXPECT_THAT(automatic.out, HasSubstr("boxes from \"boxes\" (ltrb, normalized, colours by \"labels\")"));
  const std::string only_five = dir + "/five.yaml";
  WriteText(only_five, Pipeline(2, Reader("images") + Reader("bboxes"), "images, bboxes"));
  const CliResult passed_over = RunConveyor({"preview", only_five, "-o", dir + "/g.png"});
  ASSERT_EQ(passed_over.status, 0) << passed_over.err;
  EXPECT_THAT(passed_over.out, Not(HasSubstr("boxes from")));
}

}  // namespace
}  // namespace conveyor::cli_test
