// make_test_images OUTDIR [--photos N] [--width 500] [--height 375] [--quality 90]
// make_test_images OUTDIR --dataset NAME --count N
//
// Without --photos: writes the decoder test set (tools/testimages/test_images.h: every JPEG and
// PNG variant, broken files; format_images.h: CMYK JPEG, TIFF, WebP, PNM, BMP, JPEG 2000;
// exif_images.h: JPEGs tagged with each EXIF orientation 1-8, exif_orientation_<o>.jpg) into
// OUTDIR. With --photos N: writes N photo-like JPEGs photo_00000.jpg ... for the decode benchmarks and prints their mean size. With --dataset NAME
// --count N: writes benchmark set NAME (tools/testimages/dataset_mix.h: uniform, varied, the
// one-property varied_* variants, realistic) as img_00000.jpg ... (all named .jpg, the PNG too),
// plus MANIFEST.tsv (name, format, width, height, subsampling, progressive, quality, bytes), and
// prints a one-paragraph summary (mean size, the share of each kind made, long-side percentiles).
// Deterministic: file i depends on (set, i) only, so the files are made on every core (the
// benchmarks' 2,048 photos took a minute on one) and are the same whatever the number of threads.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tools/testimages/dataset_mix.h"
#include "tools/testimages/exif_images.h"
#include "tools/testimages/format_images.h"
#include "tools/testimages/test_images.h"

namespace {

using namespace conveyor::testimages;

int Usage() {
  std::fprintf(stderr,
               "usage: make_test_images OUTDIR [--photos N] [--width W] [--height H] [--quality Q]\n"
               "       make_test_images OUTDIR --dataset NAME --count N\n");
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "make_test_images: %s\n", message.c_str());
  return 2;
}

int Threads(int n) { return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::max(n, 1)); }

// Runs make(i) for i in [0, n) on Threads(n) threads, each index once; returns the sizes make
// returned, by index. The first failure (by index) is rethrown once every thread has stopped.
template <class Make>
std::vector<size_t> ParallelFor(int n, const Make& make) {
  std::vector<size_t> sizes(static_cast<size_t>(std::max(n, 0)));
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  int first_failure = n;
  std::exception_ptr error;
  const auto work = [&] {
    for (int i = next++; i < n && !failed; i = next++) {
      try {
        sizes[static_cast<size_t>(i)] = make(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < first_failure) first_failure = i, error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < Threads(n); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return sizes;
}

std::string FileName(const char* prefix, int i) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s_%05d.jpg", prefix, i);
  return name;
}

// Writes photo_00000.jpg ... photo_{n-1}.jpg into dir; returns their total size.
double WritePhotos(const std::string& dir, int n, int width, int height, int quality) {
  const std::vector<size_t> sizes = ParallelFor(n, [&](int i) {
    const auto bytes = MakePhotoJpeg(i, width, height, quality);
    WriteFile(dir + "/" + FileName("photo", i), bytes);
    return bytes.size();
  });
  return static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), size_t{0}));
}

// Writes set `name`'s img_00000.jpg ... and MANIFEST.tsv into dir; prints the summary.
void WriteDataset(const std::string& dir, const std::string& name, int count) {
  std::vector<FileSpec> specs;
  for (int i = 0; i < count; ++i) specs.push_back(DatasetFileSpec(name, i, count));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<size_t> sizes = ParallelFor(count, [&](int i) {
    const auto bytes = EncodeDatasetFile(specs[static_cast<size_t>(i)], i);
    WriteFile(dir + "/" + FileName("img", i), bytes);
    return bytes.size();
  });
  std::string manifest = ManifestHeader() + "\n";
  for (int i = 0; i < count; ++i) {
    manifest += ManifestLine(FileName("img", i), specs[static_cast<size_t>(i)], sizes[static_cast<size_t>(i)]) + "\n";
  }
  WriteFile(dir + "/MANIFEST.tsv", std::vector<uint8_t>(manifest.begin(), manifest.end()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s Written to %s in %.1f s on %d threads.\n", DatasetSummary(name, specs, sizes).c_str(), dir.c_str(),
              seconds, Threads(count));
}

// A whole positive decimal int, or -1.
int ParseCount(const char* text) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return (errno == 0 && end != text && *end == '\0' && v >= 1 && v <= INT_MAX) ? static_cast<int>(v) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return Usage();
  const std::string dir = argv[1];
  int photos = -1, width = 500, height = 375, quality = 90;
  const char* dataset = nullptr;
  const char* count = nullptr;
  bool photo_options = false;
  for (int i = 2; i < argc; ++i) {
    const bool is_dataset = std::strcmp(argv[i], "--dataset") == 0, is_count = std::strcmp(argv[i], "--count") == 0;
    if (i + 1 >= argc) {
      if (is_dataset) return Fail("--dataset expects a set name, got nothing");
      if (is_count) return Fail("--count expects a positive number of files, got nothing");
      return Usage();
    }
    const int value = std::atoi(argv[i + 1]);
    if (is_dataset) dataset = argv[i + 1];
    else if (is_count) count = argv[i + 1];
    else if (std::strcmp(argv[i], "--photos") == 0) photos = value;
    else if (std::strcmp(argv[i], "--width") == 0) width = value, photo_options = true;
    else if (std::strcmp(argv[i], "--height") == 0) height = value, photo_options = true;
    else if (std::strcmp(argv[i], "--quality") == 0) quality = value, photo_options = true;
    else return Usage();
    ++i;
  }
  if (width < 1 || height < 1 || quality < 1 || quality > 100) return Usage();
  int dataset_count = 0;
  if (dataset != nullptr || count != nullptr) {
    if (dataset == nullptr) return Fail("--count goes with --dataset NAME, which is missing");
    if (photos >= 0 || photo_options) {
      return Fail("--dataset takes --count only (--photos/--width/--height/--quality are the --photos mode's)");
    }
    try {
      DatasetFileSpec(dataset, 0, 1);
    } catch (const std::invalid_argument& e) {
      return Fail(e.what());
    }
    if (count == nullptr) {
      return Fail(std::string("--dataset ") + dataset + " needs --count N (a positive number of files), got none");
    }
    dataset_count = ParseCount(count);
    if (dataset_count < 1) return Fail(std::string("--count expects a positive number of files, got \"") + count + "\"");
  }
  mkdir(dir.c_str(), 0755);  // an existing folder is fine; WriteFile reports real failures
  try {
    if (dataset != nullptr) {
      WriteDataset(dir, dataset, dataset_count);
    } else if (photos >= 0) {
      const double total = WritePhotos(dir, photos, width, height, quality);
      std::printf("%d photo-like JPEGs (%dx%d, q%d, 4:2:0) in %s, mean %.1f KB\n", photos, width, height, quality,
                  dir.c_str(), photos > 0 ? total / photos / 1024 : 0.0);
    } else {
      const auto files = MakeTestSet();
      for (const TestFile& f : files) WriteFile(dir + "/" + f.name, f.bytes);
      const auto formats = MakeFormatTestSet();  // CMYK JPEG, TIFF, WebP, PNM, BMP, JPEG 2000
      for (const FormatFile& f : formats) WriteFile(dir + "/" + f.name, f.bytes);
      // Stored 48 high and 64 wide; shown 64 x 48 for orientations 5-8.
      for (int o = 1; o <= 8; ++o) {
        WriteFile(dir + "/exif_orientation_" + std::to_string(o) + ".jpg", MakeOrientedJpeg(48, 64, o, 11));
      }
      std::printf("%zu test images in %s\n", files.size() + formats.size() + 8, dir.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_test_images: %s\n", e.what());
    return 1;
  }
  return 0;
}
