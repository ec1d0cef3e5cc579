// make_test_images OUTDIR [--photos N] [--width 500] [--height 375] [--quality 90]
//
// Without --photos: writes the decoder test set (tools/testimages/test_images.h: every JPEG and
// PNG variant, broken files) into OUTDIR. With --photos N: writes N photo-like JPEGs
// photo_00000.jpg ... for the decode benchmarks and prints their mean size. Deterministic.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "tools/testimages/test_images.h"

namespace {

int Usage() {
  std::fprintf(stderr, "usage: make_test_images OUTDIR [--photos N] [--width W] [--height H] [--quality Q]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace conveyor::testimages;
  if (argc < 2 || argv[1][0] == '-') return Usage();
  const std::string dir = argv[1];
  int photos = -1, width = 500, height = 375, quality = 90;
  for (int i = 2; i < argc; ++i) {
    if (i + 1 >= argc) return Usage();
    const int value = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--photos") == 0) photos = value;
    else if (std::strcmp(argv[i], "--width") == 0) width = value;
    else if (std::strcmp(argv[i], "--height") == 0) height = value;
    else if (std::strcmp(argv[i], "--quality") == 0) quality = value;
    else return Usage();
    ++i;
  }
  if (width < 1 || height < 1 || quality < 1 || quality > 100) return Usage();
  mkdir(dir.c_str(), 0755);  // an existing folder is fine; WriteFile reports real failures
  try {
    if (photos >= 0) {
      double total = 0;
      for (int i = 0; i < photos; ++i) {
        char name[32];
        std::snprintf(name, sizeof(name), "photo_%05d.jpg", i);
        const auto bytes = MakePhotoJpeg(i, width, height, quality);
        total += static_cast<double>(bytes.size());
        WriteFile(dir + "/" + name, bytes);
      }
      std::printf("%d photo-like JPEGs (%dx%d, q%d, 4:2:0) in %s, mean %.1f KB\n", photos, width, height, quality,
                  dir.c_str(), photos > 0 ? total / photos / 1024 : 0.0);
    } else {
      const auto files = MakeTestSet();
      for (const TestFile& f : files) WriteFile(dir + "/" + f.name, f.bytes);
      std::printf("%zu test images in %s\n", files.size(), dir.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_test_images: %s\n", e.what());
    return 1;
  }
  return 0;
}
