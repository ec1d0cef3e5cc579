// libFuzzer target: the JPEG and PNG CPU decode path on arbitrary bytes, as the decoders run it.
// The structural check (what `on_error: skip` runs on every file) either refuses the bytes with a
// reason, or they go on to ParseImageInfo (EXIF orientation included) and DecodeImageCpu (full
// image, and a crop window of the EXIF-turned image, in each output colour), which may still throw conveyor::Error (damaged entropy data), never crash.
//
// | input bytes | meaning                                                       |
// |-------------|---------------------------------------------------------------|
// | [0]         | output colour (mod 3) and crop corner seed                    |
// | [1..]       | the encoded file                                              |
//
// kMaxPixels is the decoders' max_pixels here (their default, 2^28, would let one header ask for
// ~0.8 GB, past the fuzzer's memory limit): the check and the header parse refuse larger declared
// sizes, and the decodes hold the libraries' own header reads to it, as the operators do.
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/decoders/decode_cpu.h"
#include "operators/decoders/image_check.h"
#include "operators/decoders/image_info.h"

namespace {
constexpr int64_t kMaxPixels = 4096 * 4096;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conveyor::ops;
  if (size < 1) return 0;
  const uint8_t control = data[0];
  ++data;
  --size;
  const std::string reason = CheckEncodedImage(data, size, kMaxPixels);
  if (!reason.empty()) return 0;  // on_error: skip drops it here; error reports `reason`
  try {
    const ImageInfo info = ParseImageInfo(data, size, kMaxPixels);
    if (info.height <= 0 || info.width <= 0) __builtin_trap();  // the check passed it
    if (info.height * info.width > kMaxPixels) __builtin_trap();  // so did max_pixels
    const OutputColor color = static_cast<OutputColor>(control % 3);
    const int channels = OutputChannels(color);
    std::vector<uint8_t> out(static_cast<size_t>(info.height * info.width * channels));
    DecodeImageCpu(data, size, info, color, FullWindow(info), out.data(), kMaxPixels);
    // A crop window inside the image, corner and size from the control byte; in the image turned
    // by its EXIF orientation (adjust_orientation's default path) when it has one.
    const CropWindow shown = OrientedFullWindow(info, info.orientation);
    CropWindow w;
    w.y = (control >> 2) % shown.h;
    w.x = (control >> 4) % shown.w;
    w.h = 1 + (shown.h - w.y - 1) / (1 + (control & 3));
    w.w = 1 + (shown.w - w.x - 1) / (1 + ((control >> 6) & 3));
    std::vector<uint8_t> crop(static_cast<size_t>(w.h * w.w * channels));
    DecodeOrientedImageCpu(data, size, info, color, info.orientation, w, crop.data(), kMaxPixels);
    // PNG: the crop is the same pixels as the full decode. (JPEG crops may differ at the window's
    // left edge: fancy upsampling there sees the iMCU boundary, not the pixels beyond it.)
    if (info.format == ImageFormat::kPng) for (int64_t y = 0; y < w.h; ++y) {
      const uint8_t* full_row = out.data() + ((w.y + y) * info.width + w.x) * channels;
      const uint8_t* crop_row = crop.data() + y * w.w * channels;
      for (int64_t i = 0; i < w.w * channels; ++i) {
        if (full_row[i] != crop_row[i]) __builtin_trap();
      }
    }
  } catch (const conveyor::Error&) {
  }
  return 0;
}
