// adjust_orientation through decoders.image and decoders.image_random_crop (OpHarness, CPU): output
// shapes of the turned image (5-8 swapped), pixels = TurboJPEG's stored decode turned by the
// independent reference, random windows drawn in the turned image, `false` giving the stored
// pixels, malformed EXIF decoded as stored without an error, a TIFF's tag in the same batch.
#include <gtest/gtest.h>

#include <random>

#include "core/op/harness.h"
#include "operators/common/crop_window.h"
#include "tests/operators/decoders/orientation_reference.h"
#include "tools/testimages/exif_images.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ops::CropWindow;
using ops::OutputColor;

struct OrientedFile {
  std::vector<uint8_t> bytes;
  int orientation;  // what the tag says (1 when there is none)
  Pixels stored;    // the pixels as stored, RGB
};

// JPEGs tagged 1-8 and untagged, at two sizes, and a TIFF tagged 6.
std::vector<OrientedFile> Files() {
  std::vector<OrientedFile> out;
  for (const auto& [h, w] : {std::pair{37, 53}, std::pair{64, 30}}) {
    for (int o = 0; o <= 8; ++o) {
      std::vector<uint8_t> jpeg = testimages::MakeOrientedJpeg(h, w, o, /*seed=*/o + h);
      Pixels stored = TurboJpegDecode(jpeg, OutputColor::kRgb);
      out.push_back({std::move(jpeg), o == 0 ? 1 : o, std::move(stored)});
    }
  }
  testimages::TiffSource s;
  s.height = 19;
  s.width = 12;
  s.orientation = 6;
  std::mt19937 gen(3);
  for (int i = 0; i < s.height * s.width * 3; ++i) s.samples.push_back(static_cast<uint16_t>(gen() & 255));
  out.push_back({testimages::EncodeTiff({s}), 6, Pixels{19, 12, 3, std::vector<uint8_t>(s.samples.begin(), s.samples.end())}});
  return out;
}

TensorListCPU Batch(const std::vector<OrientedFile>& files) {
  std::vector<Shape> shapes;
  std::vector<std::vector<uint8_t>> bytes;
  for (const OrientedFile& f : files) {
    shapes.push_back(Shape{static_cast<int64_t>(f.bytes.size())});
    bytes.push_back(f.bytes);
  }
  return MakeBatch<uint8_t>(shapes, bytes);
}

std::vector<uint8_t> SampleBytes(const TensorListCPU& list, int i) {
  const auto* p = static_cast<const uint8_t*>(list.raw_sample(i));
  return std::vector<uint8_t>(p, p + list.shape(i).num_elements());
}

OpSpec Decoder(const std::string& op) {
  return OpSpec(op, "dec").AddInput("encoded").AddOutput("images").SetArg("output_type", std::string("RGB"));
}

TEST(AdjustOrientation, DefaultTurnsEveryImageAndSwapsShapesFor5To8) {
  const std::vector<OrientedFile> files = Files();
  OpHarness h(Decoder("decoders.image"), Device::kCpu);  // adjust_orientation defaults to true
  h.set_num_threads(3);
  h.SetInput(0, Batch(files));
  h.Run();
  const TensorListCPU out = h.OutputToHost(0);
  for (int i = 0; i < out.num_samples(); ++i) {
    const OrientedFile& f = files[static_cast<size_t>(i)];
    SCOPED_TRACE("sample " + std::to_string(i) + ", orientation " + std::to_string(f.orientation));
    const Pixels want = ReferenceOrient(f.stored, f.orientation);
    const bool swapped = f.orientation >= 5;
    ASSERT_EQ(out.shape(i), (Shape{swapped ? f.stored.width : f.stored.height,
                                   swapped ? f.stored.height : f.stored.width, 3}));
    EXPECT_EQ(MaxAbsDiff(SampleBytes(out, i), want.data), 0);
  }
}

TEST(AdjustOrientation, FalseGivesTheStoredPixels) {
  const std::vector<OrientedFile> files = Files();
  for (const char* op : {"decoders.image", "decoders.image_random_crop"}) {
    OpSpec spec = Decoder(op).SetArg("adjust_orientation", false);
    if (std::string(op) == "decoders.image_random_crop") {
      spec.SetArg("random_area", std::vector<double>{1.0, 1.0}).SetArg("random_aspect_ratio", std::vector<double>{0.01, 100.0});
    }
    OpHarness h(spec, Device::kCpu);
    h.SetInput(0, Batch(files));
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    for (int i = 0; i < out.num_samples(); ++i) {
      const Pixels& stored = files[static_cast<size_t>(i)].stored;
      ASSERT_EQ(out.shape(i), (Shape{stored.height, stored.width, 3})) << op << " sample " << i;
      EXPECT_EQ(MaxAbsDiff(SampleBytes(out, i), stored.data), 0) << op << " sample " << i;
    }
  }
}

TEST(AdjustOrientation, RandomCropWindowsAreDrawnInTheTurnedImage) {
  const std::vector<OrientedFile> files = Files();
  OpHarness h(Decoder("decoders.image_random_crop"), Device::kCpu);
  h.set_num_threads(2);
  h.SetInput(0, Batch(files));
  const ops::RandomCropParams params;  // the schema's defaults
  for (int64_t it = 0; it < 3; ++it) {
    h.set_iteration(it);
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    for (int i = 0; i < out.num_samples(); ++i) {
      const OrientedFile& f = files[static_cast<size_t>(i)];
      const Pixels shown = ReferenceOrient(f.stored, f.orientation);
      Philox rng = h.workspace().Rng(i);
      const CropWindow w = ops::DrawRandomCropWindow(rng, shown.height, shown.width, params);
      const std::string what = "iteration " + std::to_string(it) + " sample " + std::to_string(i);
      ASSERT_EQ(out.shape(i), (Shape{w.h, w.w, 3})) << what;
      EXPECT_EQ(MaxAbsDiff(SampleBytes(out, i), Crop(shown, w).data), 0) << what;
    }
  }
}

TEST(AdjustOrientation, MalformedExifDecodesAsStoredWithoutAnError) {
  const std::vector<uint8_t> plain = testimages::MakeOrientedJpeg(21, 34, 0);
  std::vector<OrientedFile> files;
  for (const std::vector<uint8_t>& block :
       {testimages::ExifWithBogusIfdOffset(), testimages::ExifWithBogusEntryCount(), testimages::ExifWithBadByteOrder(),
        testimages::TruncatedExif(12), testimages::MakeExifBlock(0), testimages::MakeExifBlock(9)}) {
    files.push_back({testimages::InsertApp1(plain, block), 1, TurboJpegDecode(plain, OutputColor::kRgb)});
  }
  OpHarness h(Decoder("decoders.image"), Device::kCpu);
  h.SetInput(0, Batch(files));
  h.Run();
  const TensorListCPU out = h.OutputToHost(0);
  for (int i = 0; i < out.num_samples(); ++i) {
    ASSERT_EQ(out.shape(i), (Shape{21, 34, 3})) << i;
    EXPECT_EQ(MaxAbsDiff(SampleBytes(out, i), files[static_cast<size_t>(i)].stored.data), 0) << i;
  }
}

}  // namespace
}  // namespace conveyor::testing
