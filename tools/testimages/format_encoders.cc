// The formats' own encoders, writing to memory: libjpeg (CMYK), libtiff, libwebp, libnetpbm,
// stb_image_write, OpenJPEG. Inputs are always valid here; an encoder's failure throws.
// jpeglib.h needs FILE and size_t declared first.
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>
#include <netpbm/pnm.h>
#include <openjpeg-2.5/openjpeg.h>
#include <stb/stb_image_write.h>
#include <tiffio.h>
#include <webp/encode.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "tools/testimages/format_images.h"

namespace conveyor::testimages {
namespace {

// A growable in-memory file with a position (libtiff and OpenJPEG seek back to patch headers).
struct MemoryOut {
  std::vector<uint8_t> bytes;
  size_t pos = 0;
  size_t Write(const void* data, size_t n) {
    if (pos + n > bytes.size()) bytes.resize(pos + n);
    std::memcpy(bytes.data() + pos, data, n);
    pos += n;
    return n;
  }
};

tmsize_t TiffRead(thandle_t h, void* data, tmsize_t n) {  // libtiff reads back what it wrote to link pages
  auto* m = static_cast<MemoryOut*>(h);
  const size_t count = m->pos < m->bytes.size() ? std::min(static_cast<size_t>(n), m->bytes.size() - m->pos) : 0;
  std::memcpy(data, m->bytes.data() + m->pos, count);
  m->pos += count;
  return static_cast<tmsize_t>(count);
}
tmsize_t TiffWrite(thandle_t h, void* data, tmsize_t n) {
  return static_cast<tmsize_t>(static_cast<MemoryOut*>(h)->Write(data, static_cast<size_t>(n)));
}
toff_t TiffSeek(thandle_t h, toff_t offset, int whence) {
  auto* m = static_cast<MemoryOut*>(h);
  m->pos = static_cast<size_t>((whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->bytes.size() : 0) + offset);
  return m->pos;
}
int TiffClose(thandle_t) { return 0; }
toff_t TiffSize(thandle_t h) { return static_cast<MemoryOut*>(h)->bytes.size(); }
int TiffMap(thandle_t, void**, toff_t*) { return 0; }
void TiffUnmap(thandle_t, void*, toff_t) {}

void WriteTiffPage(TIFF* tif, const TiffSource& s) {
  const int spp = s.palette.empty() ? s.channels : 1;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(s.width));
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(s.height));
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(spp));
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(s.bits));
  TIFFSetField(tif, TIFFTAG_COMPRESSION, static_cast<uint16_t>(s.compression));
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, s.planar ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
  if (s.orientation != 0) TIFFSetField(tif, TIFFTAG_ORIENTATION, static_cast<uint16_t>(s.orientation));
  const uint16_t photometric = !s.palette.empty() ? PHOTOMETRIC_PALETTE
                               : s.channels <= 2  ? PHOTOMETRIC_MINISBLACK
                                                  : PHOTOMETRIC_RGB;
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric);
  if (s.channels == 2 || s.channels == 4) {
    const uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  if (!s.palette.empty()) {
    std::vector<uint16_t> r(256), g(256), b(256);
    for (size_t i = 0; i < 256 && 3 * i + 2 < s.palette.size(); ++i) {
      r[i] = static_cast<uint16_t>(s.palette[3 * i] * 257);
      g[i] = static_cast<uint16_t>(s.palette[3 * i + 1] * 257);
      b[i] = static_cast<uint16_t>(s.palette[3 * i + 2] * 257);
    }
    TIFFSetField(tif, TIFFTAG_COLORMAP, r.data(), g.data(), b.data());
  }
  if (s.compression == COMPRESSION_JPEG) TIFFSetField(tif, TIFFTAG_JPEGQUALITY, 95);
  if (s.tile > 0) {
    TIFFSetField(tif, TIFFTAG_TILEWIDTH, static_cast<uint32_t>(s.tile));
    TIFFSetField(tif, TIFFTAG_TILELENGTH, static_cast<uint32_t>(s.tile));
  } else {
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, static_cast<uint32_t>(s.rows_per_strip));
  }
  // Samples as stored (one byte or one uint16 each); scanlines or tiles per plane.
  const int bytes = s.bits == 16 ? 2 : 1;
  const int planes = s.planar ? spp : 1, per_plane = s.planar ? 1 : spp;
  const auto sample = [&](int y, int x, int c) -> uint16_t {
    return s.samples[(static_cast<size_t>(y) * s.width + x) * spp + c];
  };
  const auto pack = [&](uint8_t* dst, int y, int x0, int n, int plane) {
    // 1-bit rows are packed MSB first; others one sample per byte or uint16.
    if (s.bits == 1) {
      std::memset(dst, 0, static_cast<size_t>(n + 7) / 8);
      for (int i = 0; i < n; ++i) {
        if (x0 + i < s.width && sample(y, x0 + i, 0)) dst[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
      }
      return;
    }
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < per_plane; ++c) {
        const uint16_t v = x0 + i < s.width && y < s.height ? sample(y, x0 + i, plane + c) : 0;
        const size_t k = static_cast<size_t>(i) * per_plane + c;
        if (bytes == 2) {
          std::memcpy(dst + 2 * k, &v, 2);  // native order: libtiff swaps as the file needs
        } else {
          dst[k] = static_cast<uint8_t>(v);
        }
      }
    }
  };
  if (s.tile > 0) {
    std::vector<uint8_t> tile(static_cast<size_t>(TIFFTileSize(tif)));
    const size_t row_bytes = static_cast<size_t>(s.tile) * per_plane * bytes;
    for (int plane = 0; plane < planes; ++plane) {
      for (int ty = 0; ty < s.height; ty += s.tile) {
        for (int tx = 0; tx < s.width; tx += s.tile) {
          for (int r = 0; r < s.tile; ++r) pack(tile.data() + r * row_bytes, ty + r, tx, s.tile, plane);
          if (TIFFWriteTile(tif, tile.data(), tx, ty, 0, static_cast<uint16_t>(plane)) < 0) {
            throw std::runtime_error("TIFFWriteTile failed");
          }
        }
      }
    }
  } else {
    std::vector<uint8_t> row(static_cast<size_t>(TIFFScanlineSize(tif)));
    for (int plane = 0; plane < planes; ++plane) {
      for (int y = 0; y < s.height; ++y) {
        pack(row.data(), y, 0, s.width, plane);
        if (TIFFWriteScanline(tif, row.data(), static_cast<uint32_t>(y), static_cast<uint16_t>(plane)) < 0) {
          throw std::runtime_error("TIFFWriteScanline failed");
        }
      }
    }
  }
  if (!TIFFWriteDirectory(tif)) throw std::runtime_error("TIFFWriteDirectory failed");
}

void StbWrite(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<uint8_t>*>(context);
  out->insert(out->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
}

OPJ_SIZE_T OpjWrite(void* data, OPJ_SIZE_T n, void* user) { return static_cast<MemoryOut*>(user)->Write(data, n); }
OPJ_OFF_T OpjSkip(OPJ_OFF_T n, void* user) {
  auto* m = static_cast<MemoryOut*>(user);
  m->pos += static_cast<size_t>(n);
  if (m->pos > m->bytes.size()) m->bytes.resize(m->pos);
  return n;
}
OPJ_BOOL OpjSeek(OPJ_OFF_T n, void* user) {
  static_cast<MemoryOut*>(user)->pos = static_cast<size_t>(n);
  return OPJ_TRUE;
}

}  // namespace

std::vector<uint8_t> EncodeCmykJpegLibjpeg(const Image8& cmyk, int quality, bool adobe_marker) {
  if (cmyk.channels != 4) throw std::runtime_error("EncodeCmykJpegLibjpeg: 4 channels expected");
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(cmyk.width);
  c.image_height = static_cast<JDIMENSION>(cmyk.height);
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, JCS_CMYK);  // stored as CMYK (no YCCK transform)
  c.write_Adobe_marker = adobe_marker ? TRUE : FALSE;
  jpeg_set_quality(&c, quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(cmyk.pixels.data()) + static_cast<size_t>(c.next_scanline) * cmyk.width * 4;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  std::vector<uint8_t> out(buf, buf + size);
  jpeg_destroy_compress(&c);
  std::free(buf);
  return out;
}

std::vector<uint8_t> EncodeTiff(const std::vector<TiffSource>& pages) {
  MemoryOut out;
  TIFF* tif = TIFFClientOpen("test.tif", "w", &out, TiffRead, TiffWrite, TiffSeek, TiffClose, TiffSize, TiffMap,
                             TiffUnmap);
  if (tif == nullptr) throw std::runtime_error("TIFFClientOpen failed");
  try {
    for (const TiffSource& page : pages) WriteTiffPage(tif, page);
  } catch (...) {
    TIFFClose(tif);
    throw;
  }
  TIFFClose(tif);
  return out.bytes;
}

std::vector<uint8_t> EncodeWebp(const Image8& image, bool lossless, float quality) {
  uint8_t* buf = nullptr;
  const int stride = image.width * image.channels;
  size_t size = 0;
  const uint8_t* px = image.pixels.data();
  if (image.channels == 3) {
    size = lossless ? WebPEncodeLosslessRGB(px, image.width, image.height, stride, &buf)
                    : WebPEncodeRGB(px, image.width, image.height, stride, quality, &buf);
  } else if (image.channels == 4) {
    size = lossless ? WebPEncodeLosslessRGBA(px, image.width, image.height, stride, &buf)
                    : WebPEncodeRGBA(px, image.width, image.height, stride, quality, &buf);
  }
  if (size == 0) throw std::runtime_error("libwebp failed to encode");
  std::vector<uint8_t> out(buf, buf + size);
  WebPFree(buf);
  return out;
}

std::vector<uint8_t> EncodePnm(const PnmSource& s) {
  char* buf = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buf, &size);
  if (f == nullptr) throw std::runtime_error("open_memstream failed");
  const int format = s.kind == 1 ? PBM_FORMAT : s.kind == 2 ? PGM_FORMAT : PPM_FORMAT;
  const int raw_format = s.kind == 1 ? RPBM_FORMAT : s.kind == 2 ? RPGM_FORMAT : RPPM_FORMAT;
  const int fmt = s.plain ? format : raw_format;
  const unsigned maxval = s.kind == 1 ? 1 : s.maxval;
  pnm_writepnminit(f, s.width, s.height, maxval, fmt, s.plain ? 1 : 0);
  std::vector<xel> row(static_cast<size_t>(s.width));
  const int ch = s.kind == 3 ? 3 : 1;
  for (int y = 0; y < s.height; ++y) {
    for (int x = 0; x < s.width; ++x) {
      const uint16_t* v = &s.samples[(static_cast<size_t>(y) * s.width + x) * ch];
      if (ch == 3) {
        PPM_ASSIGN(row[x], v[0], v[1], v[2]);
      } else {
        PNM_ASSIGN1(row[x], v[0]);
      }
    }
    pnm_writepnmrow(f, row.data(), s.width, maxval, fmt, s.plain ? 1 : 0);
  }
  std::fclose(f);
  std::vector<uint8_t> out(buf, buf + size);
  std::free(buf);
  return out;
}

std::vector<uint8_t> EncodeBmp(const Image8& image) {
  std::vector<uint8_t> out;
  if (!stbi_write_bmp_to_func(StbWrite, &out, image.width, image.height, image.channels, image.pixels.data())) {
    throw std::runtime_error("stbi_write_bmp_to_func failed");
  }
  return out;
}

std::vector<uint8_t> EncodeJpeg2000(const std::vector<uint16_t>& samples, int height, int width, int channels,
                                    int bits, const Jpeg2000Options& options) {
  std::vector<opj_image_cmptparm_t> params(static_cast<size_t>(channels));
  for (opj_image_cmptparm_t& p : params) {
    std::memset(&p, 0, sizeof(p));
    p.dx = p.dy = 1;
    p.w = static_cast<OPJ_UINT32>(width);
    p.h = static_cast<OPJ_UINT32>(height);
    p.prec = static_cast<OPJ_UINT32>(bits);
  }
  opj_image_t* image = opj_image_create(static_cast<OPJ_UINT32>(channels), params.data(),
                                        channels >= 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
  image->x1 = static_cast<OPJ_UINT32>(width);
  image->y1 = static_cast<OPJ_UINT32>(height);
  for (int c = 0; c < channels; ++c) {
    for (size_t i = 0; i < static_cast<size_t>(width) * height; ++i) image->comps[c].data[i] = samples[i * channels + c];
  }
  opj_cparameters_t p;
  opj_set_default_encoder_parameters(&p);
  p.tcp_numlayers = 1;
  p.cp_disto_alloc = 1;
  p.tcp_rates[0] = options.lossless ? 0 : options.rate;
  p.irreversible = options.lossless ? 0 : 1;
  p.tcp_mct = channels >= 3 ? 1 : 0;
  p.numresolution = options.resolutions;
  if (options.tile > 0) {
    p.tile_size_on = OPJ_TRUE;
    p.cp_tdx = p.cp_tdy = options.tile;
  }
  opj_codec_t* codec = opj_create_compress(options.jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  MemoryOut out;
  opj_stream_t* stream = opj_stream_create(1 << 16, OPJ_FALSE);
  opj_stream_set_write_function(stream, OpjWrite);
  opj_stream_set_skip_function(stream, OpjSkip);
  opj_stream_set_seek_function(stream, OpjSeek);
  opj_stream_set_user_data(stream, &out, nullptr);
  const bool ok = opj_setup_encoder(codec, &p, image) && opj_start_compress(codec, image, stream) &&
                  opj_encode(codec, stream) && opj_end_compress(codec, stream);
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(image);
  if (!ok) throw std::runtime_error("OpenJPEG failed to encode");
  return out.bytes;
}

}  // namespace conveyor::testimages
