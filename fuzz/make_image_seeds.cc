// Writes the image_decode seed corpus: small JPEGs (libjpeg-turbo: every subsampling, baseline and
// progressive, CMYK) and PNGs (libpng: every colour type at 8 bits, 16-bit, palette) from the
// test-image generator, each prefixed by the target's control byte. Run once; the output is
// committed (fuzz/image_decode/corpus). Usage: make_image_seeds DIR
#include <string>
#include <vector>

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
  return 0;
}
