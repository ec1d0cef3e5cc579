// Benchmark data sets shaped like a real training set (ImageNet's), for the decode benchmarks'
// robustness sweep: a pure, GPU-free description of file i of set NAME (its format, size,
// subsampling, progressive, quality) and its encoder (real TurboJPEG / libpng, through
// test_images.h). make_test_images OUTDIR --dataset NAME --count N writes them; see
// docs/benchmark_data.md for the sets, their shares and why.
//
// | set                 | files                                                                   |
// |---------------------|-------------------------------------------------------------------------|
// | uniform             | MakePhotoJpeg(i): 500x375 q90 baseline 4:2:0, the old --photos figures  |
// | varied              | sizes spread like ImageNet's (no long side >= 3000), q90 baseline 4:2:0 |
// | varied_progressive  | varied, exactly round(5% of N) files progressive 4:2:0                  |
// | varied_422          | varied, exactly round(5% of N) files baseline 4:2:2                     |
// | varied_444          | varied, exactly round(5% of N) files baseline 4:4:4                     |
// | varied_gray         | varied, exactly round(5% of N) files baseline grayscale                 |
// | varied_large        | varied, exactly round(5% of N) files with a long side of 3000-4500 px   |
// | varied_quality      | varied, every file's quality drawn from 70..98 (realistic's draw)       |
// | realistic           | every property drawn per file (the mix), one PNG and one CMYK JPEG per  |
// |                     | 4,096 files                                                             |
//
// Every property of file i is drawn from its own hash of i (never from the set name), so a variant
// is `varied` with one property changed on the same files: file i of varied_444 is file i of
// varied (same pixels, same size) unless it is one of the 5%, which differ only in subsampling.
// The 5% are the same indices in every variant, spread evenly (Bresenham), so the count is exact.
// File i depends on (NAME, i) only — and on N for which indices carry an exact share (the 5%, the
// PNGs) — so the files are the same whatever the number of threads making them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/testimages/test_images.h"

namespace conveyor::testimages {

enum class FileFormat { kJpeg, kPng, kCmykJpeg };
const char* FileFormatName(FileFormat f);  // "jpeg", "png", "cmyk_jpeg"

struct FileSpec {
  FileFormat format = FileFormat::kJpeg;
  int width = 500, height = 375;
  // PNG: RGB 8-bit at full resolution, written as k444 (progressive false, quality 0).
  Subsampling subsampling = Subsampling::k420;
  bool progressive = false;
  int quality = 90;
  // MakePhotoLike's texture amplitude: 5 is the uniform photos' (~41 KB at 500x375 q90); the
  // varied sets draw 3..8 per file (~34-51 KB there) so bits per pixel spread as photos' do.
  double noise = 5.0;
  bool operator==(const FileSpec&) const = default;
  int long_side() const { return width > height ? width : height; }
};

// The set names, in the table's order.
const std::vector<std::string>& DatasetNames();

// File `index` (0 <= index < count) of set `name` in a set of `count` files. Throws
// std::invalid_argument naming an unknown set and listing the valid ones, or for a bad index/count.
FileSpec DatasetFileSpec(const std::string& name, int index, int count);

// The encoded file: MakePhotoLike(height, width, 3, seed 1000 + index, spec.noise) through
// TurboJPEG (EncodeJpeg) or libpng (RGB 8-bit). The uniform spec gives MakePhotoJpeg(index).
std::vector<uint8_t> EncodeDatasetFile(const FileSpec& spec, int index);

// The exact-share helpers: round(share * count) (half away from zero), and whether `index` is
// one of `selected` indices spread evenly over [0, count) (exactly `selected` of them are).
int ExactShareCount(double share, int count);
bool InEvenSubset(int index, int selected, int count);

// MANIFEST.tsv: the header line and one line per file (both without the newline).
std::string ManifestHeader();
std::string ManifestLine(const std::string& file_name, const FileSpec& spec, size_t bytes);

// One paragraph (no trailing newline): count, mean KB, the share of each kind among `specs`
// (4:2:0 / 4:2:2 / 4:4:4 / gray / progressive / large / png) and long-side p5/p50/p95.
// `bytes[i]` is file i's size.
std::string DatasetSummary(const std::string& name, const std::vector<FileSpec>& specs,
                           const std::vector<size_t>& bytes);

}  // namespace conveyor::testimages
