#include "operators/decoders/formats/jpeg2000.h"

#include <openjpeg-2.5/openjpeg.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace conveyor::ops {
namespace {

constexpr uint8_t kJ2kMagic[4] = {0xFF, 0x4F, 0xFF, 0x51};  // SOC, then SIZ

uint32_t U32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }
uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

// Offset of the codestream: 0 for a raw J2K, inside the "jp2c" box of a JP2 file.
size_t CodestreamStart(const uint8_t* data, size_t size) {
  if (size >= 4 && std::memcmp(data, kJ2kMagic, 4) == 0) return 0;
  size_t pos = 0;
  while (pos + 8 <= size) {
    uint64_t length = U32(data + pos);
    size_t header = 8;
    if (length == 1) {
      if (pos + 16 > size) break;
      length = uint64_t{U32(data + pos + 8)} << 32 | U32(data + pos + 12);
      header = 16;
    } else if (length == 0) {
      length = size - pos;  // the last box runs to the end of the file
    }
    if (std::memcmp(data + pos + 4, "jp2c", 4) == 0) return pos + header;
    if (length < header) throw InvalidArgument("malformed JPEG 2000 file: box at offset " + std::to_string(pos) + " of " +
                                               std::to_string(length) + " bytes");
    if (length > size - pos) break;
    pos += static_cast<size_t>(length);
  }
  throw InvalidArgument("truncated JPEG 2000 file: no codestream box (jp2c) in " + std::to_string(size) + " bytes");
}

// The SIZ marker segment's sizes, checked before OpenJPEG allocates anything for them.
void CheckSiz(const uint8_t* data, size_t size, int64_t max_pixels) {
  const size_t cs = CodestreamStart(data, size);
  if (cs + 42 > size) throw InvalidArgument("truncated JPEG 2000 header: the SIZ marker segment is cut off");
  const uint8_t* siz = data + cs;
  if (std::memcmp(siz, kJ2kMagic, 4) != 0) {
    throw InvalidArgument("malformed JPEG 2000 header: the codestream does not start with SOC and SIZ (FF 4F FF 51)");
  }
  const uint32_t xsiz = U32(siz + 8), ysiz = U32(siz + 12), xo = U32(siz + 16), yo = U32(siz + 20);
  const uint32_t xt = U32(siz + 24), yt = U32(siz + 28), xto = U32(siz + 32), yto = U32(siz + 36);
  const int components = U16(siz + 40);
  if (xsiz <= xo || ysiz <= yo || xt == 0 || yt == 0 || xto > xo || yto > yo) {
    throw InvalidArgument("malformed JPEG 2000 header: SIZ image " + std::to_string(xsiz) + "x" + std::to_string(ysiz) +
                          " from (" + std::to_string(xo) + ", " + std::to_string(yo) + "), tiles " + std::to_string(xt) +
                          "x" + std::to_string(yt) + " from (" + std::to_string(xto) + ", " + std::to_string(yto) + ")");
  }
  const uint64_t width = xsiz - xo, height = ysiz - yo;
  CheckDeclaredSize("JPEG 2000", width, height, max_pixels);
  if (components < 1 || components > 4) {
    throw InvalidArgument("unsupported JPEG 2000: " + std::to_string(components) + " components (1 to 4 expected)");
  }
  const uint64_t tiles = ((uint64_t{xsiz} - xto + xt - 1) / xt) * ((uint64_t{ysiz} - yto + yt - 1) / yt);
  CheckSizeFitsFile("JPEG 2000", width, height, tiles * 14,
                    std::to_string(tiles) + " tiles, each at least a 14-byte tile-part header", size);
}

struct Source {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  std::string error;
};

OPJ_SIZE_T ReadBytes(void* buffer, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);
  const size_t count = std::min<size_t>(n, s->size - s->pos);
  std::memcpy(buffer, s->data + s->pos, count);
  s->pos += count;
  return count;
}
OPJ_OFF_T SkipBytes(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (n < 0 && static_cast<size_t>(-n) > s->pos) return -1;
  s->pos = n < 0 ? s->pos - static_cast<size_t>(-n) : std::min(s->size, s->pos + static_cast<size_t>(n));
  return n;
}
OPJ_BOOL SeekBytes(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (n < 0 || static_cast<uint64_t>(n) > s->size) return OPJ_FALSE;
  s->pos = static_cast<size_t>(n);
  return OPJ_TRUE;
}
void OnError(const char* message, void* user) {
  auto* s = static_cast<Source*>(user);
  if (!s->error.empty()) return;
  s->error = message;
  while (!s->error.empty() && (s->error.back() == '\n' || s->error.back() == ' ')) s->error.pop_back();
}
void OnMessage(const char*, void*) {}  // warnings and progress

// One OpenJPEG decoder over the bytes, header read.
class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size, int64_t max_pixels) : source_{data, size, 0, {}} {
    const bool jp2 = std::memcmp(data, kJ2kMagic, 4) != 0;
    codec_.reset(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
    stream_.reset(opj_stream_create(1 << 16, OPJ_TRUE));
    if (codec_ == nullptr || stream_ == nullptr) throw InvalidArgument("OpenJPEG: cannot create a decoder");
    opj_stream_set_read_function(stream_.get(), ReadBytes);
    opj_stream_set_skip_function(stream_.get(), SkipBytes);
    opj_stream_set_seek_function(stream_.get(), SeekBytes);
    opj_stream_set_user_data(stream_.get(), &source_, nullptr);
    opj_stream_set_user_data_length(stream_.get(), size);
    opj_set_error_handler(codec_.get(), OnError, &source_);
    opj_set_warning_handler(codec_.get(), OnMessage, &source_);
    opj_set_info_handler(codec_.get(), OnMessage, &source_);
    opj_dparameters_t parameters;
    opj_set_default_decoder_parameters(&parameters);
    // Strict: a codestream that ends early is an error, not an image with missing tiles.
    if (!opj_setup_decoder(codec_.get(), &parameters) || !opj_decoder_set_strict_mode(codec_.get(), OPJ_TRUE)) {
      Fail("cannot set up the decoder");
    }
    opj_image_t* image = nullptr;
    if (!opj_read_header(stream_.get(), codec_.get(), &image)) {
      image_.reset(image);
      Fail("cannot read the header");
    }
    image_.reset(image);
    // OpenJPEG's own read of the size, which its decode allocates from, held to the limit too.
    CheckDeclaredSize("JPEG 2000", image->x1 > image->x0 ? image->x1 - image->x0 : 0,
                      image->y1 > image->y0 ? image->y1 - image->y0 : 0, max_pixels);
  }

  opj_image_t* image() const { return image_.get(); }

  void Decode(const CropWindow& w) {
    opj_image_t* im = image_.get();
    if (!opj_set_decode_area(codec_.get(), im, static_cast<OPJ_INT32>(im->x0 + w.x), static_cast<OPJ_INT32>(im->y0 + w.y),
                             static_cast<OPJ_INT32>(im->x0 + w.x + w.w), static_cast<OPJ_INT32>(im->y0 + w.y + w.h))) {
      Fail("cannot set the decode area");
    }
    if (!opj_decode(codec_.get(), stream_.get(), im) || !opj_end_decompress(codec_.get(), stream_.get())) {
      Fail("cannot decode the image data");
    }
  }

  [[noreturn]] void Fail(const char* fallback) const {
    const std::string& e = source_.error;
    const bool truncated = e.find("too short") != std::string::npos || e.find("truncated") != std::string::npos ||
                           e.find("end of") != std::string::npos || e.find("with stream length") != std::string::npos;
    throw InvalidArgument(std::string(truncated ? "truncated JPEG 2000 data" : "corrupt or unsupported JPEG 2000") +
                          " (OpenJPEG: " + (e.empty() ? fallback : e) + ")");
  }

 private:
  struct CodecFree {
    void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
  };
  struct StreamFree {
    void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
  };
  struct ImageFree {
    void operator()(opj_image_t* i) const { opj_image_destroy(i); }
  };
  Source source_;  // before the stream that reads it
  std::unique_ptr<opj_codec_t, CodecFree> codec_;
  std::unique_ptr<opj_stream_t, StreamFree> stream_;
  std::unique_ptr<opj_image_t, ImageFree> image_;
};

// Throws unless every component is full-size with 1-16 bits and the colour space is one we convert.
void CheckComponents(const opj_image_t* image) {
  if (image->color_space == OPJ_CLRSPC_SYCC || image->color_space == OPJ_CLRSPC_EYCC ||
      image->color_space == OPJ_CLRSPC_CMYK) {
    throw InvalidArgument(std::string("unsupported JPEG 2000: colour space ") +
                          (image->color_space == OPJ_CLRSPC_CMYK ? "CMYK" : "YCC") + " (gray and RGB are decoded)");
  }
  for (OPJ_UINT32 c = 0; c < image->numcomps; ++c) {
    const opj_image_comp_t& comp = image->comps[c];
    if (comp.dx != 1 || comp.dy != 1) {
      throw InvalidArgument("unsupported JPEG 2000: component " + std::to_string(c) + " subsampled " +
                            std::to_string(comp.dx) + "x" + std::to_string(comp.dy));
    }
    if (comp.prec < 1 || comp.prec > 16) {
      throw InvalidArgument("unsupported JPEG 2000: " + std::to_string(comp.prec) + "-bit samples (1 to 16 expected)");
    }
  }
}

}  // namespace

ImageInfo ParseJpeg2000Info(const uint8_t* data, size_t size, int64_t max_pixels) {
  CheckSiz(data, size, max_pixels);
  Decoder decoder(data, size, max_pixels);
  const opj_image_t* image = decoder.image();
  CheckComponents(image);
  ImageInfo info;
  info.format = ImageFormat::kJpeg2000;
  info.width = image->x1 - image->x0;
  info.height = image->y1 - image->y0;
  info.components = static_cast<int>(image->numcomps);
  info.bit_depth = static_cast<int>(image->comps[0].prec);
  info.detail = std::memcmp(data, kJ2kMagic, 4) == 0 ? "J2K codestream" : "JP2";
  return info;
}

void DecodeJpeg2000(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                    const CropWindow& window, uint8_t* out, int64_t max_pixels) {
  CheckSiz(data, size, max_pixels);  // before opj_read_header allocates per-tile state
  Decoder decoder(data, size, max_pixels);
  decoder.Decode(window);
  const opj_image_t* image = decoder.image();
  CheckComponents(image);  // a JP2 palette (pclr) is expanded by the decode
  const int n = static_cast<int>(image->numcomps);
  if (n < 1 || n > 4) throw InvalidArgument("unsupported JPEG 2000: " + std::to_string(n) + " decoded components");
  for (int c = 0; c < n; ++c) {
    if (image->comps[c].w != window.w || image->comps[c].h != window.h || image->comps[c].data == nullptr) {
      throw InvalidArgument("JPEG 2000 decodes component " + std::to_string(c) + " to " +
                            std::to_string(image->comps[c].w) + "x" + std::to_string(image->comps[c].h) + ", not the " +
                            std::to_string(window.w) + "x" + std::to_string(window.h) + " window of " +
                            std::to_string(info.width) + "x" + std::to_string(info.height));
    }
  }
  const int channels = OutputChannels(color);
  std::vector<uint8_t> row(static_cast<size_t>(window.w) * n);
  for (int64_t y = 0; y < window.h; ++y) {
    for (int c = 0; c < n; ++c) {
      const opj_image_comp_t& comp = image->comps[c];
      const int64_t max = (int64_t{1} << comp.prec) - 1;
      const int64_t offset = comp.sgnd ? int64_t{1} << (comp.prec - 1) : 0;
      const OPJ_INT32* src = comp.data + static_cast<size_t>(y) * static_cast<size_t>(window.w);
      for (int64_t x = 0; x < window.w; ++x) {
        const int64_t v = std::clamp<int64_t>(int64_t{src[x]} + offset, 0, max);
        row[static_cast<size_t>(x * n + c)] = static_cast<uint8_t>(max == 255 ? v : (v * 255 + max / 2) / max);
      }
    }
    ConvertRow(row.data(), n, window.w, color, out + static_cast<size_t>(y) * static_cast<size_t>(window.w) * channels);
  }
}

}  // namespace conveyor::ops
