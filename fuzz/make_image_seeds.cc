// Writes the image_decode seed corpus: small JPEGs (libjpeg-turbo: every subsampling, baseline and
// progressive, CMYK), PNGs (libpng: every colour type at 8 bits, 16-bit, palette), EXIF-oriented
// JPEGs (libexif; one with a damaged block), TIFF (libtiff: LZW strips, deflate tiles, 16-bit
// gray), WebP (lossy, lossless, with EXIF), PNM (P6, plain P1), BMP (stb) and JPEG 2000 (OpenJPEG:
// .jp2 and tiled .j2k) from the test-image generators, each prefixed by the target's control
// byte. Run once; the output is committed (fuzz/image_decode/corpus). Usage: make_image_seeds DIR
// Built by hand (no Bazel target):
//   g++ -std=c++20 -I. fuzz/make_image_seeds.cc tools/testimages/{test_images,format_images,
//     format_encoders,exif_images}.cc -lturbojpeg -ljpeg -lpng -ltiff -lwebp -lwebpmux -lopenjp2
//     -lnetpbm -lexif -o /tmp/make_image_seeds
#include <string>
#include <vector>

#include "tools/testimages/exif_images.h"
#include "tools/testimages/format_images.h"
#include "tools/testimages/test_images.h"

using namespace conveyor::testimages;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  int n = 0;
  auto put = [&](const std::string& name, std::vector<uint8_t> bytes) {
    bytes.insert(bytes.begin(), static_cast<uint8_t>(n * 37));
    WriteFile(dir + "/" + std::to_string(n++) + "_" + name, bytes);
  };
  for (Subsampling s : {Subsampling::k444, Subsampling::k422, Subsampling::k420, Subsampling::kGray}) {
    const Image8 img = MakePhotoLike(19, 23, s == Subsampling::kGray ? 1 : 3, 7);
    put(std::string("s") + SubsamplingName(s) + ".jpg", EncodeJpeg(img, s, 80, false));
    put(std::string("s") + SubsamplingName(s) + "_prog.jpg", EncodeJpeg(img, s, 60, true));
  }
  put("cmyk.jpg", EncodeCmykJpeg(MakePhotoLike(9, 13, 4, 3), 70));
  for (int type : {0, 2, 3, 4, 6}) {
    put("t" + std::to_string(type) + ".png", EncodePng(MakePngSource(11, 17, type, 8, 5)));
  }
  put("t2_16.png", EncodePng(MakePngSource(7, 9, 2, 16, 1)));
  put("t0_1.png", EncodePng(MakePngSource(7, 9, 0, 1, 2)));
  // Appended after the first 16 so the old seeds keep their names.
  put("exif_o6.jpg", MakeOrientedJpeg(13, 21, 6, 4));
  put("exif_o3_mm.jpg", InsertApp1(EncodeJpeg(MakePhotoLike(11, 9, 3, 5), Subsampling::k420, 75, false),
                                   MakeExifBlock(3, /*big_endian=*/true, /*with_camera=*/false)));
  put("exif_bogus_ifd.jpg",
      InsertApp1(EncodeJpeg(MakePhotoLike(9, 9, 3, 6), Subsampling::k444, 75, false), ExifWithBogusIfdOffset()));
  const Image8 rgb = MakePhotoLike(10, 14, 3, 8);
  auto samples16 = [](const Image8& img, int bits) {
    std::vector<uint16_t> v(img.pixels.begin(), img.pixels.end());
    if (bits == 16) {
      for (uint16_t& x : v) x = static_cast<uint16_t>(x * 257);
    }
    return v;
  };
  TiffSource strips{10, 14, 3, 8, 5, 0, 4, false, 6, samples16(rgb, 8), {}};
  put("lzw_strips_o6.tif", EncodeTiff({strips}));
  TiffSource tiles{10, 14, 3, 8, 8, 16, 0, false, 0, samples16(rgb, 8), {}};
  put("deflate_tiles.tif", EncodeTiff({tiles}));
  const Image8 gray = MakePhotoLike(9, 11, 1, 9);
  TiffSource gray16{9, 11, 1, 16, 1, 0, 3, false, 0, samples16(gray, 16), {}};
  put("gray16.tif", EncodeTiff({gray16}));
  put("lossy.webp", EncodeWebp(rgb, false, 60));
  put("lossless.webp", EncodeWebp(rgb, true, 100));
  put("exif_o8.webp", EncodeWebpWithExif(rgb, MakeExifBlock(8)));
  PnmSource ppm{3, false, 10, 14, 255, samples16(rgb, 8)};
  put("p6.ppm", EncodePnm(ppm));
  PnmSource pbm{1, true, 5, 7, 1, std::vector<uint16_t>(35, 1)};
  for (size_t i = 0; i < pbm.samples.size(); i += 3) pbm.samples[i] = 0;
  put("p1.pbm", EncodePnm(pbm));
  put("rgb.bmp", EncodeBmp(rgb));
  Jpeg2000Options jp2;
  put("lossless.jp2", EncodeJpeg2000(samples16(rgb, 8), 10, 14, 3, 8, jp2));
  Jpeg2000Options j2k;
  j2k.jp2 = false;
  j2k.lossless = false;
  j2k.tile = 8;
  j2k.resolutions = 2;
  put("tiled_lossy.j2k", EncodeJpeg2000(samples16(rgb, 8), 10, 14, 3, 8, j2k));
  return 0;
}
