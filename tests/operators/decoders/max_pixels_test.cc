// The decoders' max_pixels (issue 35, "limits before allocation") on every format, through the
// operators on the CPU backend: a real file written by the format's own encoder is refused when
// max_pixels is one below its pixel count and decodes at exactly its count; a header forged to
// claim 20000x20000 is refused at the default (2^28) in Setup, with the node, sample, file,
// declared size and limit named; the on_error: skip check gives the same reason; and the CPU
// decode holds the libraries' own header reads to the limit and to the plan when the header
// reader is bypassed. The GPU backend shares Setup (gpu/decoders_op_gpu_test.cc checks it there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/decoders/decode_cpu.h"
#include "operators/decoders/image_check.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ops::OutputColor;

// One real file per format, small, and how its header reader names it in messages.
struct FormatCase {
  std::string name;    // as the test-image tools name it
  std::string header;  // "TIFF" in "TIFF header claims ..."
  std::vector<uint8_t> bytes;
  int64_t height = 0, width = 0;
};

std::vector<uint8_t> Named(const std::string& name) {
  for (testimages::TestFile& f : testimages::MakeTestSet()) {
    if (f.name == name) return std::move(f.bytes);
  }
  for (testimages::FormatFile& f : testimages::MakeFormatTestSet()) {
    if (f.name == name) return std::move(f.bytes);
  }
  ADD_FAILURE() << "no test file " << name;
  return {};
}

const std::vector<FormatCase>& Cases() {
  static const std::vector<FormatCase> cases = [] {
    std::vector<FormatCase> out = {
        {"jpeg_420_baseline_q95_101x75.jpg", "JPEG frame", {}, 75, 101},
        {"png_rgb_8bit_37x40.png", "PNG", {}, 40, 37},
        {"tiff_rgb_8bit_lzw_strips_37x40.tif", "TIFF", {}, 40, 37},
        {"webp_lossy_q90_37x40.webp", "WebP", {}, 40, 37},
        {"pnm_p6_maxval255_37x40.ppm", "PNM", {}, 40, 37},
        {"bmp_rgb_24bit_37x40.bmp", "BMP", {}, 40, 37},
        {"jpeg2000_rgb_lossless_8bit_37x40.j2k", "JPEG 2000", {}, 40, 37},
        {"jpeg2000_gray_lossless_8bit_37x40.jp2", "JPEG 2000", {}, 40, 37},
    };
    for (FormatCase& c : out) c.bytes = Named(c.name);
    return out;
  }();
  return cases;
}

// Sample 0 a 1x1 JPEG, sample 1 `bytes`, both with their files named (as readers set them).
TensorListCPU BatchOf(const std::vector<uint8_t>& bytes, const std::string& name) {
  static const std::vector<uint8_t> tiny = Named("jpeg_420_baseline_q90_1x1.jpg");
  TensorListCPU batch = MakeBatch<uint8_t>({Shape{static_cast<int64_t>(tiny.size())}, Shape{static_cast<int64_t>(bytes.size())}},
                                           {tiny, bytes});
  batch.set_sources({SampleSource{"/d/tiny.jpg", 3}, SampleSource{"/d/" + name, -1}});
  return batch;
}

OpSpec Decoder(const std::string& op, std::optional<int64_t> max_pixels) {
  OpSpec spec = OpSpec(op, "dec").AddInput("encoded").AddOutput("images").SetArg("output_type", std::string("RGB"));
  if (max_pixels) spec.SetArg("max_pixels", *max_pixels);
  return spec;
}

std::string Refusal(const std::string& header, int64_t width, int64_t height, int64_t limit) {
  return header + " header claims " + std::to_string(width) + "x" + std::to_string(height) + " (" +
         std::to_string(width * height) + " pixels), more than max_pixels (" + std::to_string(limit) +
         "): a forged or damaged header, or raise max_pixels";
}

// The message Run throws (InvalidArgument), or "" when it decodes; `out` gets the output then.
std::string RunError(const OpSpec& spec, const TensorListCPU& input, TensorListCPU* out = nullptr) {
  try {
    OpHarness h(spec, Device::kCpu);
    h.set_num_threads(2);
    h.SetInput(0, input);
    h.Run();
    if (out) *out = h.OutputToHost(0);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(MaxPixels, EveryFormatIsRefusedJustOverTheLimitAndDecodedAtIt) {
  for (const FormatCase& c : Cases()) {
    const int64_t pixels = c.height * c.width;
    for (const std::string op : {"decoders.image", "decoders.image_random_crop"}) {
      SCOPED_TRACE(c.name + " " + op);
      EXPECT_EQ(RunError(Decoder(op, pixels - 1), BatchOf(c.bytes, c.name)),
                "op \"" + op + "\" (dec): sample 1 of 2 (file \"/d/" + c.name + "\"): " +
                    Refusal(c.header, c.width, c.height, pixels - 1));
      TensorListCPU out;
      ASSERT_EQ(RunError(Decoder(op, pixels), BatchOf(c.bytes, c.name), &out), "");
      ASSERT_EQ(out.num_samples(), 2);
      if (op != "decoders.image") continue;
      const Pixels want = DecodeOurs(c.bytes, OutputColor::kRgb);
      ASSERT_EQ(out.shape(1), (Shape{c.height, c.width, 3}));
      const auto* p = static_cast<const uint8_t*>(out.raw_sample(1));
      EXPECT_EQ(std::vector<uint8_t>(p, p + want.data.size()), want.data);
    }
  }
}

// A header forged to claim 20000x20000 (1.2 GB of RGB) is refused in Setup at the default limit,
// by both operators, before the output is allocated; the skip check gives the same reason.
TEST(MaxPixels, ForgedHeadersOverTheDefaultAreRefusedInSetup) {
  for (const FormatCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> forged = testimages::ForgeDeclaredSize(c.bytes, 20000, 20000);
    const std::string reason = Refusal(c.header, 20000, 20000, int64_t{1} << 28);
    EXPECT_THAT(reason, HasSubstr("(400000000 pixels), more than max_pixels (268435456)"));
    for (const std::string op : {"decoders.image", "decoders.image_random_crop"}) {
      EXPECT_EQ(RunError(Decoder(op, std::nullopt), BatchOf(forged, c.name)),
                "op \"" + op + "\" (dec): sample 1 of 2 (file \"/d/" + c.name + "\"): " + reason);
    }
    EXPECT_EQ(ops::CheckEncodedImage(forged.data(), forged.size()), reason);
    EXPECT_EQ(ops::CheckEncodedImage(c.bytes.data(), c.bytes.size(), c.height * c.width - 1),
              Refusal(c.header, c.width, c.height, c.height * c.width - 1));
    EXPECT_EQ(ops::CheckEncodedImage(c.bytes.data(), c.bytes.size(), c.height * c.width), "");
  }
}

// The default admits 16384x16384 exactly: an uncompressed TIFF claiming it passes the limit (and
// fails the size-against-file check), one more row does not.
TEST(MaxPixels, TheDefaultAdmits16384Squared) {
  const std::vector<uint8_t> none = Named("tiff_gray_8bit_none_strips_37x40.tif");
  EXPECT_THAT(RunError(Decoder("decoders.image", std::nullopt),
                       BatchOf(testimages::ForgeDeclaredSize(none, 16384, 16384), "t.tif")),
              HasSubstr("TIFF header claims 16384x16384 (at least 268435456 bytes of uncompressed samples), but the "
                        "file has "));
  EXPECT_THAT(RunError(Decoder("decoders.image", std::nullopt),
                       BatchOf(testimages::ForgeDeclaredSize(none, 16384, 16385), "t.tif")),
              HasSubstr(Refusal("TIFF", 16384, 16385, int64_t{1} << 28)));
}

TEST(MaxPixels, ArgumentBelowOneIsRejected) {
  EXPECT_THAT([] { OpHarness h(Decoder("decoders.image", 0), Device::kCpu); },
              ::testing::Throws<Error>(::testing::Property(&Error::what, HasSubstr("max_pixels"))));
}

// Bytes whose header reader was bypassed (an ImageInfo from elsewhere): the decode holds `info`
// to max_pixels before sizing anything from it, and each library's own header read to `info`.
TEST(MaxPixels, TheCpuDecodeHoldsTheLimitWithoutTheHeaderReader) {
  for (const FormatCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ops::ImageInfo info = ops::ParseImageInfo(c.bytes.data(), c.bytes.size());
    std::vector<uint8_t> out(static_cast<size_t>(c.height * c.width * 3));
    const std::string name = c.header == "JPEG frame" ? "JPEG" : c.header == "JPEG 2000" ? "JPEG2000" : c.header;
    EXPECT_THAT([&] {
      ops::DecodeImageCpu(c.bytes.data(), c.bytes.size(), info, OutputColor::kRgb, ops::FullWindow(info), out.data(),
                          c.height * c.width - 1);
    }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(Refusal(name, c.width, c.height, c.height * c.width - 1))));
    EXPECT_NO_THROW(ops::DecodeImageCpu(c.bytes.data(), c.bytes.size(), info, OutputColor::kRgb,
                                        ops::FullWindow(info), out.data(), c.height * c.width));
  }
  // An info narrower than the file (36x40 of a 37x40 image): the library's own read of the header
  // is held to max_pixels (1440, the narrow info's count: where libtiff, libwebp, stb_image and
  // libnetpbm read it themselves) and to the info (the default limit: every library) before it
  // allocates. libjpeg and libpng are compared with the info, which was held to the limit first.
  const std::string over = "header claims 37x40 (1480 pixels), more than max_pixels (1440)";
  const std::string disagree[][3] = {
      {"jpeg_420_baseline_q95_101x75.jpg", "JPEG header reads 101x75, not the 100x75 planned", ""},
      {"png_rgb_8bit_37x40.png", "PNG header reads 37x40, not the 36x40 planned", ""},
      {"webp_lossy_q90_37x40.webp", "WebP " + over, "WebP header reads 37x40, not the 36x40 planned"},
      {"bmp_rgb_24bit_37x40.bmp", "BMP " + over, "BMP header reads 37x40, not the 36x40 planned"},
      {"tiff_rgb_8bit_lzw_strips_37x40.tif", "TIFF " + over, "TIFF decodes to 37x40, the header said otherwise"},
      {"pnm_p6_maxval255_37x40.ppm", "PNM " + over, "PNM header changed between reads"},
  };
  for (const auto& [name, at_info, at_default] : disagree) {
    SCOPED_TRACE(name);
    const std::vector<uint8_t> bytes = Named(name);
    ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
    info.width -= 1;
    std::vector<uint8_t> out(static_cast<size_t>(info.height * info.width * 3));
    const auto decode = [&](int64_t max_pixels) {
      ops::DecodeImageCpu(bytes.data(), bytes.size(), info, OutputColor::kRgb, ops::FullWindow(info), out.data(),
                          max_pixels);
    };
    EXPECT_THAT([&] { decode(info.height * info.width); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(at_info)));
    EXPECT_THAT([&] { decode(ops::kDefaultMaxPixels); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(at_default.empty() ? at_info : at_default)));
  }
}

}  // namespace
}  // namespace conveyor::testing
