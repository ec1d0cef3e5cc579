// make_test_images OUTDIR [--photos N] [--width 500] [--height 375] [--quality 90]
//
// Without --photos: writes the decoder test set (tools/testimages/test_images.h: every JPEG and
// PNG variant, broken files) into OUTDIR. With --photos N: writes N photo-like JPEGs
// photo_00000.jpg ... for the decode benchmarks and prints their mean size. Deterministic: photo i
// depends on i only, so the photos are made on every core (the benchmarks' 2,048 took a minute on
// one) and the files are the same whatever the number of threads.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/testimages/test_images.h"

namespace {

int Usage() {
  std::fprintf(stderr, "usage: make_test_images OUTDIR [--photos N] [--width W] [--height H] [--quality Q]\n");
  return 2;
}

// Writes photo_00000.jpg ... photo_{n-1}.jpg into dir on up to hardware_concurrency threads; returns
// their total size. The first failure (by photo index) is rethrown once every thread has stopped.
double WritePhotos(const std::string& dir, int n, int width, int height, int quality) {
  using namespace conveyor::testimages;
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  double total = 0;
  int first_failure = n;
  std::exception_ptr error;
  const auto work = [&] {
    double mine = 0;
    for (int i = next++; i < n && !failed; i = next++) {
      try {
        char name[32];
        std::snprintf(name, sizeof(name), "photo_%05d.jpg", i);
        const auto bytes = MakePhotoJpeg(i, width, height, quality);
        WriteFile(dir + "/" + name, bytes);
        mine += static_cast<double>(bytes.size());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < first_failure) first_failure = i, error = std::current_exception();
        failed = true;
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    total += mine;
  };
  const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::max(n, 1));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return total;
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
      const double total = WritePhotos(dir, photos, width, height, quality);
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
