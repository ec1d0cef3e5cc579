#include "operators/decoders/formats/tiff.h"

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "operators/decoders/orientation.h"

namespace conveyor::ops {
namespace {

// libtiff's client I/O over the encoded bytes; the first error message is kept.
struct MemoryFile {
  const uint8_t* data;
  size_t size;
  toff_t pos = 0;
  std::string error;
};

tmsize_t ReadProc(thandle_t handle, void* buf, tmsize_t n) {
  auto* f = static_cast<MemoryFile*>(handle);
  if (n <= 0 || f->pos >= f->size) return 0;
  const size_t count = std::min<size_t>(static_cast<size_t>(n), f->size - f->pos);
  std::memcpy(buf, f->data + f->pos, count);
  f->pos += count;
  return static_cast<tmsize_t>(count);
}
tmsize_t WriteProc(thandle_t, void*, tmsize_t) { return 0; }
toff_t SeekProc(thandle_t handle, toff_t offset, int whence) {
  auto* f = static_cast<MemoryFile*>(handle);
  const toff_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  f->pos = base + offset;
  return f->pos;
}
int CloseProc(thandle_t) { return 0; }
toff_t SizeProc(thandle_t handle) { return static_cast<MemoryFile*>(handle)->size; }
// "Mapping" the bytes lets libtiff read strips in place and check their extents against the size.
int MapProc(thandle_t handle, void** base, toff_t* size) {
  auto* f = static_cast<MemoryFile*>(handle);
  *base = const_cast<uint8_t*>(f->data);
  *size = f->size;
  return 1;
}
void UnmapProc(thandle_t, void*, toff_t) {}

int OnError(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* f = static_cast<MemoryFile*>(user);
  if (f->error.empty()) {
    char text[512];
    std::vsnprintf(text, sizeof(text), format, args);
    f->error = module != nullptr && *module ? std::string(module) + ": " + text : text;
  }
  return 1;  // handled: libtiff's global handler (stderr) is not called
}
int OnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }  // unknown tags etc.

struct TiffCloser {
  void operator()(TIFF* tif) const { TIFFClose(tif); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

std::string LibtiffReason(const MemoryFile& f, const char* fallback) {
  return "corrupt or unsupported TIFF (libtiff: " + (f.error.empty() ? std::string(fallback) : f.error) + ")";
}

// Tag arrays and strip or tile buffers: a forged count asks for no more than a whole image of
// max_pixels 16-bit RGBA samples (8 bytes a pixel) in one allocation, and never over 2 GiB.
tmsize_t MaxSingleAlloc(int64_t max_pixels) {
  constexpr int64_t kCeiling = int64_t{1} << 31, kFloor = int64_t{1} << 20;
  return static_cast<tmsize_t>(std::clamp(max_pixels > kCeiling / 8 ? kCeiling : max_pixels * 8, kFloor, kCeiling));
}

TiffPtr Open(MemoryFile* file, int64_t max_pixels) {
  std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> options(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree);
  TIFFOpenOptionsSetErrorHandlerExtR(options.get(), OnError, file);
  TIFFOpenOptionsSetWarningHandlerExtR(options.get(), OnWarning, file);
  TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), MaxSingleAlloc(max_pixels));
  TiffPtr tif(TIFFClientOpenExt("TIFF", "r", file, ReadProc, WriteProc, SeekProc, CloseProc, SizeProc, MapProc,
                                UnmapProc, options.get()));
  if (tif == nullptr) {
    throw InvalidArgument(file->size < 8 ? "truncated TIFF header: " + std::to_string(file->size) + " bytes"
                                         : LibtiffReason(*file, "cannot read the first directory"));
  }
  return tif;
}

const char* CompressionName(uint16_t c) {
  switch (c) {
    case COMPRESSION_NONE: return "uncompressed";
    case COMPRESSION_LZW: return "LZW";
    case COMPRESSION_ADOBE_DEFLATE: case COMPRESSION_DEFLATE: return "deflate";
    case COMPRESSION_PACKBITS: return "PackBits";
    case COMPRESSION_JPEG: return "JPEG";
    case COMPRESSION_CCITTRLE: case COMPRESSION_CCITTFAX3: case COMPRESSION_CCITTFAX4: return "CCITT";
    default: return nullptr;
  }
}

const char* PhotometricName(uint16_t p) {
  switch (p) {
    case PHOTOMETRIC_MINISWHITE: return "min-is-white";
    case PHOTOMETRIC_MINISBLACK: return "gray";
    case PHOTOMETRIC_RGB: return "RGB";
    case PHOTOMETRIC_PALETTE: return "palette";
    case PHOTOMETRIC_SEPARATED: return "CMYK";
    case PHOTOMETRIC_YCBCR: return "YCbCr";
    default: return "other";
  }
}

}  // namespace

ImageInfo ParseTiffInfo(const uint8_t* data, size_t size, int64_t max_pixels) {
  MemoryFile file{data, size, 0, {}};
  TiffPtr tif = Open(&file, max_pixels);
  uint32_t width = 0, height = 0;
  uint16_t spp = 1, bps = 1, photometric = 0, compression = COMPRESSION_NONE;
  if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width) || !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height)) {
    throw InvalidArgument("malformed TIFF header: no image width or length in the first directory");
  }
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_COMPRESSION, &compression);
  if (!TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &photometric)) photometric = spp >= 3 ? PHOTOMETRIC_RGB : 1;
  CheckDeclaredSize("TIFF", width, height, max_pixels);
  if (compression == COMPRESSION_NONE) {
    const uint64_t bits = uint64_t{width} * spp * bps;
    const uint64_t least = (bits + 7) / 8 * height;
    CheckSizeFitsFile("TIFF", width, height, least, "at least " + std::to_string(least) + " bytes of uncompressed samples",
                      size);
  }
  if (!TIFFIsCODECConfigured(compression)) {
    throw InvalidArgument("unsupported TIFF: compression " + std::to_string(compression) +
                          " (this libtiff has no codec for it)");
  }
  // libtiff's RGBA reader steps over the padding of partial tiles by the wrong amount for these
  // layouts (put16bitbwtile, putagreytile), giving wrong pixels: refused rather than misread.
  uint32_t tile_width = 0;
  const bool gray = photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE;
  if (TIFFIsTiled(tif.get()) && gray && (bps == 16 || spp > 1) &&
      TIFFGetField(tif.get(), TIFFTAG_TILEWIDTH, &tile_width) && tile_width > 0 && width % tile_width != 0) {
    throw InvalidArgument("unsupported TIFF: tiled " + std::to_string(bps) + "-bit gray" + (spp > 1 ? "+alpha" : "") +
                          " with partial tiles (width " + std::to_string(width) + ", tiles " +
                          std::to_string(tile_width) + " wide)");
  }
  char reason[1024] = "";
  if (!TIFFRGBAImageOK(tif.get(), reason)) throw InvalidArgument(std::string("unsupported TIFF: ") + reason);
  ImageInfo info;
  info.format = ImageFormat::kTiff;
  info.width = width;
  info.height = height;
  info.bit_depth = bps;
  info.components = photometric == PHOTOMETRIC_PALETTE ? 3 : spp;
  // The tag's values are EXIF's (orientation.h); others are ignored, as in EXIF.
  uint16_t orientation = ORIENTATION_TOPLEFT;
  TIFFGetFieldDefaulted(tif.get(), TIFFTAG_ORIENTATION, &orientation);
  info.orientation = ValidOrientation(orientation);
  const char* codec = CompressionName(compression);
  info.detail = std::string(PhotometricName(photometric)) + ", " +
                (codec ? codec : "compression " + std::to_string(compression)) + ", " +
                (TIFFIsTiled(tif.get()) ? "tiles" : "strips");
  if (TIFFNumberOfDirectories(tif.get()) > 1) info.detail += ", first of " + std::to_string(TIFFNumberOfDirectories(tif.get())) + " pages";
  return info;
}

void DecodeTiff(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
                uint8_t* out, int64_t max_pixels) {
  MemoryFile file{data, size, 0, {}};
  TiffPtr tif = Open(&file, max_pixels);
  // This handle's directory, not only `info`, is held to the limit before TIFFRGBAImageBegin.
  uint32_t stored_width = 0, stored_height = 0;
  if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &stored_width) ||
      !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &stored_height)) {
    throw InvalidArgument("malformed TIFF header: no image width or length in the first directory");
  }
  CheckDeclaredSize("TIFF", stored_width, stored_height, max_pixels);
  // Alpha is dropped, so colour samples are taken as stored: an unassociated alpha is declared
  // associated (in this handle's copy of the directory) and libtiff then does not premultiply.
  uint16_t extra_count = 0;
  uint16_t* extra = nullptr;
  if (TIFFGetField(tif.get(), TIFFTAG_EXTRASAMPLES, &extra_count, &extra) && extra_count > 0) {
    std::vector<uint16_t> kinds(extra, extra + extra_count);
    for (uint16_t& k : kinds) k = k == EXTRASAMPLE_UNASSALPHA ? EXTRASAMPLE_ASSOCALPHA : k;
    TIFFSetField(tif.get(), TIFFTAG_EXTRASAMPLES, extra_count, kinds.data());
  }
  TIFFRGBAImage image;
  char reason[1024] = "";
  if (!TIFFRGBAImageBegin(&image, tif.get(), /*stop_on_error=*/1, reason)) {
    throw InvalidArgument(std::string("unsupported TIFF: ") + reason);
  }
  std::unique_ptr<TIFFRGBAImage, void (*)(TIFFRGBAImage*)> end(&image, TIFFRGBAImageEnd);
  if (image.width != info.width || image.height != info.height) {
    throw InvalidArgument("TIFF decodes to " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                          ", the header said otherwise");
  }
  // Samples as stored, whatever the file's Orientation: TIFFRGBAImage would flip rows and columns
  // (never transpose) towards req_orientation, so it is told the file is top-left already. The
  // decoders apply the tag themselves (orientation.h). Only the strips/tiles under the window are read.
  image.orientation = ORIENTATION_TOPLEFT;
  image.req_orientation = ORIENTATION_TOPLEFT;
  // Full-width rows: TIFFRGBAImage's column offset is wrong for some sample layouts (1-bit,
  // 16-bit, planar), so the columns are cut here.
  image.row_offset = static_cast<int>(window.y);
  const size_t width = static_cast<size_t>(info.width);
  std::vector<uint32_t> raster(static_cast<size_t>(window.h) * width);
  if (!TIFFRGBAImageGet(&image, raster.data(), static_cast<uint32_t>(width), static_cast<uint32_t>(window.h))) {
    const bool truncated = file.error.find("Read error") != std::string::npos ||
                           file.error.find("past end") != std::string::npos;
    throw InvalidArgument(truncated ? "truncated TIFF data (libtiff: " + file.error + ")"
                                    : LibtiffReason(file, "cannot decode the image data"));
  }
  const int channels = OutputChannels(color);
  std::vector<uint8_t> rgb(static_cast<size_t>(window.w) * 3);
  for (int64_t r = 0; r < window.h; ++r) {
    const uint32_t* px = raster.data() + static_cast<size_t>(r) * width + static_cast<size_t>(window.x);
    for (int64_t x = 0; x < window.w; ++x) {
      rgb[3 * x] = static_cast<uint8_t>(TIFFGetR(px[x]));
      rgb[3 * x + 1] = static_cast<uint8_t>(TIFFGetG(px[x]));
      rgb[3 * x + 2] = static_cast<uint8_t>(TIFFGetB(px[x]));
    }
    ConvertRow(rgb.data(), 3, window.w, color, out + static_cast<size_t>(r) * static_cast<size_t>(window.w) * channels);
  }
}

}  // namespace conveyor::ops
