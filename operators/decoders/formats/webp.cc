#include "operators/decoders/formats/webp.h"

#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "operators/decoders/orientation.h"

namespace conveyor::ops {
namespace {

const char* StatusName(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data";
  }
  return "unknown status";
}

// The EXIF chunk's orientation (libwebpdemux finds the chunk, libexif reads it); 1 when the file
// has none or its RIFF structure does not parse (a truncated file: the decode reports that).
int WebpExifOrientation(const uint8_t* data, size_t size) {
  const WebPData webp = {data, size};
  std::unique_ptr<WebPDemuxer, void (*)(WebPDemuxer*)> demux(WebPDemux(&webp), WebPDemuxDelete);
  if (demux == nullptr || (WebPDemuxGetI(demux.get(), WEBP_FF_FORMAT_FLAGS) & EXIF_FLAG) == 0) return 1;
  WebPChunkIterator chunk;
  if (!WebPDemuxGetChunk(demux.get(), "EXIF", 1, &chunk)) return 1;
  // The chunk holds the TIFF header and IFDs; some writers keep JPEG's "Exif\0\0" in front of it.
  const uint8_t* bytes = chunk.chunk.bytes;
  const size_t n = chunk.chunk.size;
  int orientation = 1;
  if (n >= 6 && std::memcmp(bytes, "Exif\0\0", 6) == 0) {
    orientation = ExifOrientation(bytes, n);
  } else {
    std::vector<uint8_t> exif(6 + n);
    std::memcpy(exif.data(), "Exif\0\0", 6);
    if (n > 0) std::memcpy(exif.data() + 6, bytes, n);
    orientation = ExifOrientation(exif.data(), exif.size());
  }
  WebPDemuxReleaseChunkIterator(&chunk);
  return orientation;
}

}  // namespace

ImageInfo ParseWebpInfo(const uint8_t* data, size_t size, int64_t max_pixels) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(data, size, &features);
  if (status == VP8_STATUS_NOT_ENOUGH_DATA) {
    throw InvalidArgument("truncated WebP header: " + std::to_string(size) + " bytes (libwebp: not enough data)");
  }
  if (status != VP8_STATUS_OK) {
    throw InvalidArgument(std::string("malformed WebP header (libwebp: ") + StatusName(status) + ")");
  }
  // First: an extended (VP8X) header's canvas, up to 2^24 a side, is the size an animation claims.
  CheckDeclaredSize("WebP", static_cast<uint64_t>(features.width), static_cast<uint64_t>(features.height), max_pixels);
  if (features.has_animation) throw InvalidArgument("unsupported WebP: animated (only still images are decoded)");
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  info.width = features.width;
  info.height = features.height;
  info.components = features.has_alpha ? 4 : 3;
  info.detail = features.format == 2 ? "lossless" : features.format == 1 ? "lossy" : "mixed";
  if (features.has_alpha) info.detail += ", alpha";
  info.orientation = WebpExifOrientation(data, size);
  return info;
}

void DecodeWebp(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
                uint8_t* out, int64_t max_pixels) {
  const bool whole = window.x == 0 && window.y == 0 && window.w == info.width && window.h == info.height;
  const bool direct = whole && color != OutputColor::kGray;  // straight into the output
  const size_t stride = static_cast<size_t>(info.width) * 3;
  std::vector<uint8_t> scratch(direct ? 0 : stride * static_cast<size_t>(info.height));
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw InvalidArgument("libwebp: version mismatch");
  // libwebp's own header read, held to the limit before WebPDecode allocates (lossless: a whole
  // ARGB image) and checked against `info`, which sized the buffers.
  const VP8StatusCode header = WebPGetFeatures(data, size, &config.input);
  if (header == VP8_STATUS_OK) {
    CheckDeclaredSize("WebP", static_cast<uint64_t>(config.input.width), static_cast<uint64_t>(config.input.height),
                      max_pixels);
    if (config.input.width != info.width || config.input.height != info.height) {
      throw InvalidArgument("WebP header reads " + std::to_string(config.input.width) + "x" +
                            std::to_string(config.input.height) + ", not the " + std::to_string(info.width) + "x" +
                            std::to_string(info.height) + " planned");
    }
  }
  config.output.colorspace = color == OutputColor::kBgr ? MODE_BGR : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = direct ? out : scratch.data();
  config.output.u.RGBA.stride = static_cast<int>(stride);
  config.output.u.RGBA.size = stride * static_cast<size_t>(info.height);
  const VP8StatusCode status = WebPDecode(data, size, &config);
  WebPFreeDecBuffer(&config.output);  // external memory: frees nothing of ours
  if (status == VP8_STATUS_NOT_ENOUGH_DATA) {
    throw InvalidArgument("truncated WebP data (libwebp: not enough data in " + std::to_string(size) + " bytes)");
  }
  if (status != VP8_STATUS_OK) {
    throw InvalidArgument(std::string("corrupt or unsupported WebP (libwebp: ") + StatusName(status) + ")");
  }
  if (direct) return;
  const int channels = OutputChannels(color);
  for (int64_t r = 0; r < window.h; ++r) {
    const uint8_t* src = scratch.data() + static_cast<size_t>(window.y + r) * stride + static_cast<size_t>(window.x) * 3;
    uint8_t* dst = out + static_cast<size_t>(r) * static_cast<size_t>(window.w) * channels;
    // The scratch is already in the output's channel order (BGR when asked), so copy it as RGB.
    ConvertRow(src, 3, window.w, color == OutputColor::kGray ? OutputColor::kGray : OutputColor::kRgb, dst);
  }
}

}  // namespace conveyor::ops
