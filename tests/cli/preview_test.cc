// `conveyor preview` on CPU pipelines over generated .npy images: the PNG is decoded back with
// libpng and its tiles compared with the batch's pixels (uint8 HWC as they are, float CHW
// min/max-scaled, crop_mirror_normalize undone), captions drawn from the label output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "cli/image_grid.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/png_testing.h"

namespace conveyor::cli_test {
namespace {

using cli::RgbImage;
using ::testing::HasSubstr;

// Per-sample images (HWC uint8, heights 5 + i, width 7) and labels (int32 scalars) in two folders
// read in the same order by two readers.
struct ImageSet {
  std::string dir;
  std::vector<std::vector<uint8_t>> images;
  std::vector<int> heights, labels;
};

ImageSet MakeImages(const std::string& name, int count) {
  ImageSet s;
  s.dir = MakeTempDir(name);
  std::mt19937 rng(42);
  for (int i = 0; i < count; ++i) {
    s.heights.push_back(5 + i);
    s.images.push_back(RandomBytes(static_cast<size_t>(s.heights[i]) * 7 * 3, 7 + i));
    s.labels.push_back(static_cast<int>(rng() % 1000));
    const std::string file = "/s" + std::to_string(i) + ".npy";
    WriteNpy(s.dir + "/images" + file, DType::kUInt8, Shape{s.heights[i], 7, 3}, s.images[i]);
    std::vector<uint8_t> label(4);
    std::memcpy(label.data(), &s.labels[i], 4);
    WriteNpy(s.dir + "/labels" + file, DType::kInt32, Shape{}, label);
  }
  return s;
}

std::string ImagePipeline(int batch, const std::string& extra_ops, const std::string& outputs) {
  return "pipeline: {name: preview_test, batch_size: " + std::to_string(batch) + R"(, device: cpu}
ops:
  - {op: readers.numpy, name: images, args: {file_root: images}, outputs: [images]}
  - {op: readers.numpy, name: labels, args: {file_root: labels}, outputs: [labels]}
)" + extra_ops + "outputs: [" + outputs + "]\n";
}

// The tiles of `grid` at the CLI's layout for tiles of these sizes.
cli::GridPlacement Placement(const std::vector<std::pair<int, int>>& sizes_wh) {
  std::vector<RgbImage> tiles;
  for (auto [w, h] : sizes_wh) tiles.emplace_back(w, h);
  return cli::PlaceGrid(tiles);
}

TEST(CliPreview, Uint8HwcTilesAndLabelCaptions) {
  const ImageSet s = MakeImages("preview_u8", 6);
  WriteText(s.dir + "/p.yaml", ImagePipeline(6, "", "images, labels"));
  const std::string png = s.dir + "/grid.png";
  const CliResult r = RunConveyor({"preview", s.dir + "/p.yaml", "-o", png, "--samples", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 samples of \"images\" (uint8), captions from \"labels\""));
  const RgbImage grid = ReadPng(png);
  const cli::GridPlacement p = Placement({{7, 5}, {7, 6}, {7, 7}, {7, 8}});
  ASSERT_EQ(p.columns, 2);
  const int caption_h = cli::CaptionHeight(p.cell_w);
  EXPECT_EQ(grid.width, cli::kGridPad + 2 * (p.cell_w + cli::kGridPad));
  EXPECT_EQ(grid.height, cli::kGridPad + 2 * (8 + caption_h + cli::kGridPad));
  for (int i = 0; i < 4; ++i) {
    for (int y = 0; y < s.heights[i]; ++y) {
      for (int x = 0; x < 7; ++x) {
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(grid.at(p.TileX(i) + x, p.TileY(i) + y)[c], s.images[i][(y * 7 + x) * 3 + c])
              << "tile " << i << " at " << x << "," << y;
        }
      }
    }
    // The caption band holds exactly the text "labels N" drawn in white on the background.
    RgbImage want(p.cell_w, caption_h, cli::kBackground);
    const uint8_t white[3] = {255, 255, 255};
    cli::DrawText(want, 0, 2, "labels " + std::to_string(s.labels[i]), cli::CaptionScale(p.cell_w), white);
    int ink = 0;
    for (int y = 0; y < caption_h; ++y) {
      for (int x = 0; x < p.cell_w; ++x) {
        ASSERT_EQ(std::memcmp(grid.at(p.TileX(i) + x, p.TileY(i) - caption_h + y), want.at(x, y), 3), 0)
            << "caption of tile " << i << " at " << x << "," << y;
        ink += want.at(x, y)[0] == 255;
      }
    }
    EXPECT_GT(ink, 20);
  }
}

// Video clips (FHWC uint8, here 3 and 12 frames of 4x5): one strip per clip, the frames left to right
// — all 3 of the short one, 8 of the 12 of the long one (frames 0, 1, 3, 4, 6, 7, 9, 10: k * 12 / 8).
TEST(CliPreview, ClipsAreStripsOfEvenlySpacedFrames) {
  const std::string dir = MakeTempDir("preview_clips");
  const int h = 4, w = 5;
  const std::vector<int64_t> frames = {3, 12};
  std::vector<std::vector<uint8_t>> clips;
  for (size_t i = 0; i < frames.size(); ++i) {
    clips.push_back(RandomBytes(static_cast<size_t>(frames[i] * h * w * 3), 31 + static_cast<int>(i)));
    WriteNpy(dir + "/clips/c" + std::to_string(i) + ".npy", DType::kUInt8, Shape{frames[i], h, w, 3}, clips[i]);
  }
  WriteText(dir + "/p.yaml", R"(pipeline: {name: preview_clips, batch_size: 2, device: cpu}
ops:
  - {op: readers.numpy, name: clips, args: {file_root: clips, layout: FHWC}, outputs: [clips]}
outputs: [clips]
)");
  const std::string png = dir + "/grid.png";
  const CliResult r = RunConveyor({"preview", dir + "/p.yaml", "-o", png});
  ASSERT_EQ(r.status, 0) << r.err;
  const RgbImage grid = ReadPng(png);
  const cli::GridPlacement p = Placement({{3 * w, h}, {8 * w, h}});
  for (int i = 0; i < 2; ++i) {
    const int64_t shown = std::min<int64_t>(frames[static_cast<size_t>(i)], 8);
    for (int64_t k = 0; k < shown; ++k) {
      const int64_t f = k * frames[static_cast<size_t>(i)] / shown;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          for (int c = 0; c < 3; ++c) {
            ASSERT_EQ(grid.at(p.TileX(i) + static_cast<int>(k) * w + x, p.TileY(i) + y)[c],
                      clips[static_cast<size_t>(i)][static_cast<size_t>(((f * h + y) * w + x) * 3 + c)])
                << "clip " << i << " strip frame " << k << " (frame " << f << ") at " << x << "," << y;
          }
        }
      }
    }
  }
}

TEST(CliPreview, FloatChwIsMinMaxScaledPerImage) {
  const ImageSet s = MakeImages("preview_f32", 2);
  // CHW float32 arrays of arbitrary range, no layout on the reader's output: 3-D with 3 channels first.
  std::vector<std::vector<float>> planes;
  for (int i = 0; i < 2; ++i) {
    const int h = s.heights[i];
    std::vector<float> v(static_cast<size_t>(3 * h * 7));
    std::mt19937 rng(99 + i);
    std::uniform_real_distribution<float> u(-3.0f + i, 5.0f * (i + 1));
    for (float& f : v) f = u(rng);
    planes.push_back(v);
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    WriteNpy(s.dir + "/images/s" + std::to_string(i) + ".npy", DType::kFloat32, Shape{3, h, 7}, bytes);
  }
  WriteText(s.dir + "/p.yaml", ImagePipeline(2, "", "images"));
  const std::string png = s.dir + "/grid.png";
  const CliResult r = RunConveyor({"preview", s.dir + "/p.yaml", "-o", png});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(float32), min/max scaled per image, captions: sample index"));
  const RgbImage grid = ReadPng(png);
  const cli::GridPlacement p = Placement({{7, 5}, {7, 6}});
  for (int i = 0; i < 2; ++i) {
    const std::vector<float>& v = planes[i];
    const double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    const int h = s.heights[i];
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < 7; ++x) {
        for (int c = 0; c < 3; ++c) {
          const double want = (v[(c * h + y) * 7 + x] - lo) * 255.0 / (hi - lo);
          ASSERT_NEAR(grid.at(p.TileX(i) + x, p.TileY(i) + y)[c], want, 0.5 + 1e-3) << i << " " << x << "," << y;
        }
      }
    }
  }
}

TEST(CliPreview, CropMirrorNormalizeIsUndone) {
  // PNG files (lossless) in class folders: readers.file → decoders.image (HWC uint8) →
  // crop_mirror_normalize to float16 CHW; the preview must show the original pixels again.
  const ImageSet s = MakeImages("preview_cmn", 3);
  for (int i = 0; i < 3; ++i) {
    RgbImage image(7, s.heights[i]);
    image.pixels = s.images[i];
    std::filesystem::create_directories(s.dir + "/png/class" + std::to_string(i));
    cli::WritePng(s.dir + "/png/class" + std::to_string(i) + "/img.png", image);
  }
  WriteText(s.dir + "/p.yaml", R"(pipeline: {name: preview_cmn, batch_size: 3, device: cpu}
ops:
  - {op: readers.file, name: reader, args: {file_root: png}, outputs: [encoded, labels]}
  - {op: decoders.image, inputs: [encoded], outputs: [decoded]}
  - op: crop_mirror_normalize
    name: cmn
    inputs: [decoded]
    args: {mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375], dtype: float16, output_layout: CHW}
    outputs: [normalized]
outputs: [normalized, labels]
)");
  const std::string png = s.dir + "/grid.png";
  const CliResult r = RunConveyor({"preview", s.dir + "/p.yaml", "-o", png});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(float16), normalization undone from crop_mirror_normalize, captions from \"labels\""));
  const RgbImage grid = ReadPng(png);
  const cli::GridPlacement p = Placement({{7, 5}, {7, 6}, {7, 7}});
  for (int i = 0; i < 3; ++i) {
    for (int y = 0; y < s.heights[i]; ++y) {
      for (int x = 0; x < 7; ++x) {
        for (int c = 0; c < 3; ++c) {
          // float16 keeps about 3 decimal digits of (x - mean) / std: within 1 of the original.
          ASSERT_NEAR(grid.at(p.TileX(i) + x, p.TileY(i) + y)[c], s.images[i][(y * 7 + x) * 3 + c], 1.0)
              << i << " " << x << "," << y << " " << c;
        }
      }
    }
  }
}

// The grid's tile at `p`'s cell `i`, `w` x `h` pixels.
RgbImage TileAt(const RgbImage& grid, const cli::GridPlacement& p, int i, int w, int h) {
  RgbImage t(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) std::memcpy(t.at(x, y), grid.at(p.TileX(i) + x, p.TileY(i) + y), 3);
  }
  return t;
}

TEST(CliPreview, InputsBesideOutputsAndTileSize) {
  // PNG files (lossless) in class folders: readers.file → decoders.image ("images", HWC uint8) →
  // crop_mirror_normalize to float32 CHW.
  const ImageSet s = MakeImages("preview_inputs", 3);
  for (int i = 0; i < 3; ++i) {
    RgbImage image(7, s.heights[i]);
    image.pixels = s.images[i];
    std::filesystem::create_directories(s.dir + "/png/class" + std::to_string(i));
    cli::WritePng(s.dir + "/png/class" + std::to_string(i) + "/img.png", image);
  }
  WriteText(s.dir + "/p.yaml", R"(pipeline: {name: preview_inputs, batch_size: 3, device: cpu}
ops:
  - {op: readers.file, name: reader, args: {file_root: png}, outputs: [encoded, labels]}
  - {op: decoders.image, inputs: [encoded], outputs: [images]}
  - op: crop_mirror_normalize
    name: cmn
    inputs: [images]
    args: {mean: [120, 110, 100], std: [60, 50, 40], dtype: float32, output_layout: CHW}
    outputs: [normalized]
outputs: [normalized, labels]
)");
  for (const int tile_size : {0, 3}) {
    SCOPED_TRACE("tile size " + std::to_string(tile_size));
    const std::string png = s.dir + "/grid" + std::to_string(tile_size) + ".png";
    std::vector<std::string> args = {"preview", s.dir + "/p.yaml", "-o", png, "--inputs", "images"};
    if (tile_size > 0) args.insert(args.end(), {"--tile-size", std::to_string(tile_size)});
    const CliResult r = RunConveyor(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("3 samples of \"normalized\" (float32), normalization undone from crop_mirror_normalize, "
                                 "captions from \"labels\", \"images\" beside them"));
    const RgbImage grid = ReadPng(png);
    std::vector<RgbImage> expected;
    std::vector<std::pair<int, int>> sizes;
    for (int i = 0; i < 3; ++i) {
      RgbImage source(7, s.heights[i]);
      source.pixels = s.images[i];
      expected.push_back(tile_size > 0 ? cli::ShrinkToFit(source, tile_size, tile_size) : source);
      sizes.insert(sizes.end(), 2, {expected.back().width, expected.back().height});
    }
    // Pairs [input | output]: 2 * ceil(sqrt(3 / 2)) = 4 columns.
    std::vector<RgbImage> placed;
    for (auto [w, h] : sizes) placed.emplace_back(w, h);
    const cli::GridPlacement p = cli::PlaceGrid(placed, 4);
    EXPECT_EQ(grid.width, cli::kGridPad + 4 * (p.cell_w + cli::kGridPad));
    for (int i = 0; i < 3; ++i) {
      const RgbImage& e = expected[i];
      const RgbImage in = TileAt(grid, p, 2 * i, e.width, e.height);
      const RgbImage out = TileAt(grid, p, 2 * i + 1, e.width, e.height);
      EXPECT_EQ(in.pixels, e.pixels) << "input tile " << i;
      for (size_t k = 0; k < e.pixels.size(); ++k) {
        // float32 normalization undone and rounded, then (tile size 3) box-averaged: within 1.
        ASSERT_NEAR(out.pixels[k], e.pixels[k], 1.0) << "output tile " << i << " byte " << k;
      }
    }
  }
  const CliResult typo = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/g.png", "--inputs", "imagse"});
  EXPECT_EQ(typo.status, 1);
  EXPECT_THAT(typo.err, HasSubstr("--inputs imagse: no node of " + s.dir + "/p.yaml outputs \"imagse\"; did you mean "
                                  "\"images\"? (node outputs: encoded, labels, images, normalized)"));
  const CliResult labels = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/g.png", "--inputs", "labels"});
  EXPECT_EQ(labels.status, 1);
  EXPECT_THAT(labels.err, HasSubstr("--inputs labels: sample 0 has shape (1,) and layout \"\"; expected HWC, CHW or HW"));
  const CliResult zero = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/g.png", "--tile-size", "0"});
  EXPECT_EQ(zero.status, 2) << "a bad option value is a usage error";
}

TEST(ImageGrid, ShrinkToFitAveragesBoxesAndKeepsTheAspectRatio) {
  RgbImage image(4, 2);
  for (int i = 0; i < 24; ++i) image.pixels[static_cast<size_t>(i)] = static_cast<uint8_t>(10 * i + 1);
  const RgbImage half = cli::ShrinkToFit(image, 2, 5);
  ASSERT_EQ(half.width, 2);
  ASSERT_EQ(half.height, 1);
  for (int x = 0; x < 2; ++x) {
    for (int c = 0; c < 3; ++c) {
      int sum = 0;
      for (int y = 0; y < 2; ++y) sum += image.at(2 * x, y)[c] + image.at(2 * x + 1, y)[c];
      EXPECT_EQ(half.at(x, 0)[c], (sum + 2) / 4) << x << " " << c;
    }
  }
  EXPECT_EQ(cli::ShrinkToFit(image, 4, 2).pixels, image.pixels) << "fits: unchanged";
  const RgbImage thin = cli::ShrinkToFit(RgbImage(100, 3), 10, 10);
  EXPECT_EQ(thin.width, 10);
  EXPECT_EQ(thin.height, 1) << "sides stay at least 1";
}

TEST(CliPreview, Errors) {
  const ImageSet s = MakeImages("preview_errors", 2);
  WriteText(s.dir + "/p.yaml", ImagePipeline(2, "", "images, labels"));
  const CliResult unknown = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/g.png", "--output", "imagse"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("--output imagse: the pipeline has no output \"imagse\"; did you mean \"images\"? "
                                     "(outputs: images, labels)"));
  const CliResult labels = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/g.png", "--output", "labels"});
  EXPECT_EQ(labels.status, 1);
  EXPECT_THAT(labels.err, HasSubstr("--output labels: sample 0 has shape () and layout \"\"; expected HWC, CHW or HW images"));
  WriteText(s.dir + "/l.yaml", ImagePipeline(2, "", "labels"));
  const CliResult none = RunConveyor({"preview", s.dir + "/l.yaml", "-o", s.dir + "/g.png"});
  EXPECT_EQ(none.status, 1);
  EXPECT_THAT(none.err, HasSubstr("no output looks like images"));
  const CliResult unwritable = RunConveyor({"preview", s.dir + "/p.yaml", "-o", s.dir + "/no/such/dir/g.png"});
  EXPECT_EQ(unwritable.status, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("cannot write the PNG file \"" + s.dir + "/no/such/dir/g.png\""));
}

}  // namespace
}  // namespace conveyor::cli_test
