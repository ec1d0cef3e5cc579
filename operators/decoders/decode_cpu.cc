// The libjpeg and libpng calls live in functions that own no C++ objects with destructors: their
// error handlers longjmp back to a setjmp in the same function, which must not skip destructors.
// The C++ wrappers allocate scratch buffers before and throw after.
#include "operators/decoders/decode_cpu.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#include "core/error.h"
#include "operators/decoders/formats/bmp.h"
#include "operators/decoders/formats/jpeg2000.h"
#include "operators/decoders/formats/pnm.h"
#include "operators/decoders/formats/tiff.h"
#include "operators/decoders/formats/webp.h"
#include "operators/decoders/orientation.h"

namespace conveyor::ops {

OutputColor ParseOutputColor(std::string_view name) {
  if (name == "RGB") return OutputColor::kRgb;
  if (name == "BGR") return OutputColor::kBgr;
  if (name == "GRAY") return OutputColor::kGray;
  throw InvalidArgument("output_type: expected one of RGB, BGR, GRAY, got \"" + std::string(name) + "\"");
}

namespace {

constexpr size_t kMessageSize = 256;

// ---------------------------------------------------------------- JPEG

struct JpegError {
  jpeg_error_mgr mgr;  // first: libjpeg hands back a pointer to it
  jmp_buf jump;
  char message[kMessageSize];
};

void SetJpegMessage(j_common_ptr cinfo, const char* prefix) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  char text[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, text);
  std::snprintf(err->message, kMessageSize, "%s%s)", prefix, text);
}

[[noreturn]] void OnJpegError(j_common_ptr cinfo) {
  SetJpegMessage(cinfo, "corrupt or unsupported JPEG (libjpeg: ");
  std::longjmp(reinterpret_cast<JpegError*>(cinfo->err)->jump, 1);
}

// level -1: a warning; >= 0: trace messages (ignored).
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
      std::snprintf(err->message, kMessageSize, "truncated JPEG data (libjpeg: Premature end of JPEG file)");
      std::longjmp(err->jump, 1);
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_NOT_SEQUENTIAL:
      SetJpegMessage(cinfo, "corrupt JPEG data (libjpeg: ");
      std::longjmp(err->jump, 1);
    default:
      return;  // benign: extraneous bytes before a marker, JFIF version, ...
  }
}

// Returns false with err->message set. `row` has room for one full-width decoded row (4 samples
// per pixel for CMYK, which is converted from there; otherwise OutputChannels(color)).
// `info` sized the buffers: libjpeg's own read of the frame header must agree before it allocates.
bool DecodeJpeg(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, bool cmyk,
                const CropWindow& win, uint8_t* out, uint8_t* row, JpegError* err) {
  jpeg_decompress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));  // jpeg_destroy_decompress is safe on a zeroed struct
  cinfo.err = jpeg_std_error(&err->mgr);
  err->mgr.error_exit = OnJpegError;
  err->mgr.emit_message = OnJpegMessage;
  if (setjmp(err->jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (static_cast<int64_t>(cinfo.image_width) != info.width || static_cast<int64_t>(cinfo.image_height) != info.height) {
    std::snprintf(err->message, kMessageSize, "JPEG header reads %ux%u, not the %lldx%lld planned", cinfo.image_width,
                  cinfo.image_height, static_cast<long long>(info.width), static_cast<long long>(info.height));
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  const int channels = cmyk ? 4 : OutputChannels(color);  // decoded samples per pixel
  // CMYK and YCCK both come out as CMYK (libjpeg converts YCCK); an Adobe APP14 marker means the
  // samples are inverted (Photoshop's convention, which PIL, OpenCV and DALI also assume).
  cinfo.out_color_space = cmyk                           ? JCS_CMYK
                          : color == OutputColor::kGray  ? JCS_GRAYSCALE
                          : color == OutputColor::kBgr   ? JCS_EXT_BGR
                                                         : JCS_EXT_RGB;
  const bool inverted = cinfo.saw_Adobe_marker;
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_components != channels || static_cast<int64_t>(cinfo.output_width) < win.x + win.w ||
      static_cast<int64_t>(cinfo.output_height) < win.y + win.h) {
    std::snprintf(err->message, kMessageSize, "JPEG decodes to %ux%u with %d channels, the header said otherwise",
                  cinfo.output_width, cinfo.output_height, cinfo.output_components);
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  const size_t out_stride = static_cast<size_t>(win.w) * static_cast<size_t>(OutputChannels(color));
  // Columns: libjpeg widens the window to whole iMCUs; we copy our part out of each row.
  size_t skip_pixels = 0;
  const bool cropped_x = win.x != 0 || win.w != static_cast<int64_t>(cinfo.output_width);
  if (cropped_x) {
    // Fancy upsampling replicates chroma at the cropped region's edges; a column of context on the
    // left and two on the right keep the window's own pixels identical to a full decode.
    const int64_t left = win.x > 0 ? win.x - 1 : 0;
    const int64_t right = std::min<int64_t>(cinfo.output_width, win.x + win.w + 2);
    JDIMENSION x = static_cast<JDIMENSION>(left), w = static_cast<JDIMENSION>(right - left);
    jpeg_crop_scanline(&cinfo, &x, &w);
    skip_pixels = static_cast<size_t>(win.x - x);
  }
  if (win.y > 0) {
    const JDIMENSION skipped = jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(win.y));
    if (skipped != static_cast<JDIMENSION>(win.y)) {
      std::snprintf(err->message, kMessageSize, "truncated JPEG data (skipped %u of %lld rows)", skipped,
                    static_cast<long long>(win.y));
      jpeg_destroy_decompress(&cinfo);
      return false;
    }
  }
  const bool via_row = cropped_x || cmyk;
  for (int64_t r = 0; r < win.h;) {
    uint8_t* dst = out + static_cast<size_t>(r) * out_stride;
    JSAMPROW rows[1] = {via_row ? row : dst};
    if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) {
      std::snprintf(err->message, kMessageSize, "truncated JPEG data (no row %lld)", static_cast<long long>(win.y + r));
      jpeg_destroy_decompress(&cinfo);
      return false;
    }
    const uint8_t* src = row + skip_pixels * static_cast<size_t>(channels);
    if (cmyk) {
      CmykRowToColor(src, win.w, inverted, color, dst);
    } else if (cropped_x) {
      std::memcpy(dst, src, out_stride);
    }
    ++r;
  }
  // Rows below the window are never decoded; destroying aborts the decompression.
  jpeg_destroy_decompress(&cinfo);
  return true;
}

void DecodeJpegOrThrow(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                       const CropWindow& win, uint8_t* out) {
  const bool cmyk = info.components == 4;
  const size_t channels = cmyk ? 4 : static_cast<size_t>(OutputChannels(color));
  const bool cropped_x = win.x != 0 || win.w != info.width;
  // jpeg_crop_scanline widens to iMCU boundaries (at most 32 columns each side) within the width.
  std::vector<uint8_t> row(cropped_x || cmyk ? static_cast<size_t>(info.width) * channels : 0);
  JpegError err;
  err.message[0] = '\0';
  if (!DecodeJpeg(data, size, info, color, cmyk, win, out, row.data(), &err)) throw InvalidArgument(err.message);
}

// ---------------------------------------------------------------- PNG

struct PngSource {
  const uint8_t* data;
  size_t size;
  size_t pos;
  jmp_buf jump;
  char message[kMessageSize];
};

[[noreturn]] void OnPngError(png_structp png, png_const_charp message) {
  auto* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, kMessageSize, "corrupt or unsupported PNG (libpng: %s)", message);
  std::longjmp(src->jump, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}  // benign (bad ancillary chunks); pixels are fine

void ReadPngBytes(png_structp png, png_bytep dst, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) {
    std::snprintf(src->message, kMessageSize, "truncated PNG data (%zu bytes, more needed)", src->size);
    std::longjmp(src->jump, 1);
  }
  std::memcpy(dst, src->data + src->pos, n);
  src->pos += n;
}

// `scratch`: one full row (non-interlaced) or the whole image (interlaced), output channels.
bool DecodePng(PngSource* src, const ImageInfo& info, OutputColor color, const CropWindow& win, uint8_t* out,
               uint8_t* scratch, int64_t max_pixels) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, src, OnPngError, OnPngWarning);
  png_infop pinfo = png ? png_create_info_struct(png) : nullptr;  // both before setjmp: not changed after it
  if (pinfo == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(src->message, kMessageSize, "libpng: out of memory");
    return false;
  }
  if (setjmp(src->jump)) {
    png_destroy_read_struct(&png, &pinfo, nullptr);
    return false;
  }
  png_set_read_fn(png, src, ReadPngBytes);
  // libpng's own per-side limit (its default, 1000000, kept unless max_pixels is lower), then its
  // read of IHDR against `info` (held to max_pixels), before any row buffer is allocated from it.
  png_set_user_limits(png, static_cast<uint32_t>(std::min<int64_t>(max_pixels, PNG_USER_WIDTH_MAX)),
                      static_cast<uint32_t>(std::min<int64_t>(max_pixels, PNG_USER_HEIGHT_MAX)));
  png_read_info(png, pinfo);
  if (static_cast<int64_t>(png_get_image_width(png, pinfo)) != info.width ||
      static_cast<int64_t>(png_get_image_height(png, pinfo)) != info.height) {
    std::snprintf(src->message, kMessageSize, "PNG header reads %ux%u, not the %lldx%lld planned",
                  png_get_image_width(png, pinfo), png_get_image_height(png, pinfo),
                  static_cast<long long>(info.width), static_cast<long long>(info.height));
    png_destroy_read_struct(&png, &pinfo, nullptr);
    return false;
  }
  const int type = png_get_color_type(png, pinfo);
  if (png_get_bit_depth(png, pinfo) == 16) png_set_scale_16(png);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY) png_set_expand_gray_1_2_4_to_8(png);
  // Expanding a palette also turns its tRNS into an alpha channel, which goes like any other.
  if ((type & PNG_COLOR_MASK_ALPHA) || (type == PNG_COLOR_TYPE_PALETTE && png_get_valid(png, pinfo, PNG_INFO_tRNS))) {
    png_set_strip_alpha(png);
  }
  const bool source_gray = (type & PNG_COLOR_MASK_COLOR) == 0;
  if (color == OutputColor::kGray && !source_gray) {
    png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);  // Rec. 601 weights, like JPEG's Y
  } else if (color != OutputColor::kGray && source_gray) {
    png_set_gray_to_rgb(png);
  }
  if (color == OutputColor::kBgr) png_set_bgr(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, pinfo);
  const size_t channels = static_cast<size_t>(OutputChannels(color));
  const size_t row_bytes = static_cast<size_t>(info.width) * channels;
  if (png_get_channels(png, pinfo) != channels || png_get_rowbytes(png, pinfo) != row_bytes) {
    std::snprintf(src->message, kMessageSize, "libpng converts to %d channels, %zu bytes per row; %zu, %zu expected",
                  png_get_channels(png, pinfo), png_get_rowbytes(png, pinfo), channels, row_bytes);
    png_destroy_read_struct(&png, &pinfo, nullptr);
    return false;
  }
  const size_t out_stride = static_cast<size_t>(win.w) * channels;
  const size_t skip_bytes = static_cast<size_t>(win.x) * channels;
  const bool full_rows = win.x == 0 && win.w == info.width;
  if (passes > 1) {
    // Adam7 spreads every row over seven passes: the whole image goes through `scratch`.
    for (int p = 0; p < passes; ++p) {
      for (int64_t r = 0; r < info.height; ++r) png_read_row(png, scratch + static_cast<size_t>(r) * row_bytes, nullptr);
    }
    for (int64_t r = 0; r < win.h; ++r) {
      std::memcpy(out + static_cast<size_t>(r) * out_stride,
                  scratch + static_cast<size_t>(win.y + r) * row_bytes + skip_bytes, out_stride);
    }
  } else {
    for (int64_t r = 0; r < win.y + win.h; ++r) {
      uint8_t* dst = r >= win.y && full_rows ? out + static_cast<size_t>(r - win.y) * out_stride : scratch;
      png_read_row(png, dst, nullptr);
      if (r >= win.y && !full_rows) {
        std::memcpy(out + static_cast<size_t>(r - win.y) * out_stride, scratch + skip_bytes, out_stride);
      }
    }
  }
  // Rows below the window and the chunks after IDAT are not read.
  png_destroy_read_struct(&png, &pinfo, nullptr);
  return true;
}

void DecodePngOrThrow(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                      const CropWindow& win, uint8_t* out, int64_t max_pixels) {
  const size_t row_bytes = static_cast<size_t>(info.width) * static_cast<size_t>(OutputChannels(color));
  std::vector<uint8_t> scratch(info.interlaced ? row_bytes * static_cast<size_t>(info.height) : row_bytes);
  PngSource src;
  src.data = data;
  src.size = size;
  src.pos = 0;
  src.message[0] = '\0';
  if (!DecodePng(&src, info, color, win, out, scratch.data(), max_pixels)) throw InvalidArgument(src.message);
}

}  // namespace

void DecodeImageCpu(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                    const CropWindow& window, uint8_t* out, int64_t max_pixels) {
  // Scratch rows and images below are sized from `info`: held to the limit first.
  CheckDeclaredSize(ImageFormatName(info.format), static_cast<uint64_t>(std::max<int64_t>(info.width, 0)),
                    static_cast<uint64_t>(std::max<int64_t>(info.height, 0)), max_pixels);
  if (window.y < 0 || window.x < 0 || window.h < 0 || window.w < 0 || window.y + window.h > info.height ||
      window.x + window.w > info.width) {
    throw InvalidArgument("crop window (y " + std::to_string(window.y) + ", x " + std::to_string(window.x) + ", h " +
                          std::to_string(window.h) + ", w " + std::to_string(window.w) + ") outside the " +
                          std::to_string(info.width) + "x" + std::to_string(info.height) + " image");
  }
  if (window.h == 0 || window.w == 0) return;
  switch (info.format) {
    case ImageFormat::kJpeg: return DecodeJpegOrThrow(data, size, info, color, window, out);
    case ImageFormat::kPng: return DecodePngOrThrow(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kTiff: return DecodeTiff(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kWebp: return DecodeWebp(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kPnm: return DecodePnm(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kBmp: return DecodeBmp(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kJpeg2000: return DecodeJpeg2000(data, size, info, color, window, out, max_pixels);
    case ImageFormat::kUnknown: break;
  }
  throw InvalidArgument(NotAnImage(data, size));
}

CropWindow OrientedFullWindow(const ImageInfo& info, int orientation) {
  return SwapsAxes(orientation) ? CropWindow{0, 0, info.width, info.height} : FullWindow(info);
}

void DecodeOrientedImageCpu(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                            int orientation, const CropWindow& window, uint8_t* out, int64_t max_pixels) {
  if (orientation == 1) return DecodeImageCpu(data, size, info, color, window, out, max_pixels);
  const CropWindow shown = OrientedFullWindow(info, orientation);
  if (window.y < 0 || window.x < 0 || window.h < 0 || window.w < 0 || window.y + window.h > shown.h ||
      window.x + window.w > shown.w) {
    throw InvalidArgument("crop window (y " + std::to_string(window.y) + ", x " + std::to_string(window.x) + ", h " +
                          std::to_string(window.h) + ", w " + std::to_string(window.w) + ") outside the " +
                          std::to_string(shown.w) + "x" + std::to_string(shown.h) + " image (EXIF orientation " +
                          std::to_string(orientation) + ")");
  }
  if (window.h == 0 || window.w == 0) return;
  CheckDeclaredSize(ImageFormatName(info.format), static_cast<uint64_t>(std::max<int64_t>(info.width, 0)),
                    static_cast<uint64_t>(std::max<int64_t>(info.height, 0)), max_pixels);  // before the scratch
  const CropWindow stored = StoredWindow(window, info.height, info.width, orientation);
  const int channels = OutputChannels(color);
  std::vector<uint8_t> scratch(static_cast<size_t>(stored.h) * static_cast<size_t>(stored.w) *
                               static_cast<size_t>(channels));
  DecodeImageCpu(data, size, info, color, stored, scratch.data(), max_pixels);
  OrientPixels(scratch.data(), stored.h, stored.w, channels, orientation, out);
}

}  // namespace conveyor::ops
