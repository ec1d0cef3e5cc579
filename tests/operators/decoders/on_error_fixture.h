// Datasets with damaged files for the decoders' on_error tests (CPU: on_error_test.cc, GPU:
// gpu/on_error_gpu_test.cc): real JPEGs and PNGs written by the project's encoders into class
// folders c0..c3 (labels 0..3), some of them replaced by damaged copies of themselves, and the
// checks of one delivered batch (every sample a good file, its label the file's folder, the image
// the file's decode).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/tensor/tensor_list.h"
#include "operators/decoders/decode_cpu.h"
#include "operators/decoders/image_info.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tools/testimages/format_images.h"
#include "tools/testimages/test_images.h"

namespace conveyor::testing {

enum class Damage {
  kTruncatedJpeg,      // the first 60% of a JPEG
  kFlippedJpegMarker,  // the SOS marker's second byte XOR 0x5A (FF DA -> FF 80)
  kFlippedPngByte,     // one byte in the middle of the first IDAT chunk XOR 0x5A
  kTruncatedPng,       // the first half of a PNG
  kNotAnImage,         // HTML named .jpg
  kMarkerInEntropy,    // fill bytes + RST inside the scan: sound structure, libjpeg finds it
  kHugeFrameHeader,    // a JPEG whose frame header claims 20000x20000, over the default max_pixels
  kDeflateInPng,       // kFlippedPngByte with the chunk's CRC made right again: sound structure, zlib finds it
};

// What the error or skip reason of each damage says.
inline std::string ReasonOf(Damage d) {
  switch (d) {
    case Damage::kTruncatedJpeg:
      return "truncated JPEG data: the file ends after ";
    case Damage::kFlippedJpegMarker:
      return "corrupt JPEG data: FF 80 at offset ";
    case Damage::kFlippedPngByte:
      return "corrupt PNG data: CRC mismatch in chunk \"IDAT\"";
    case Damage::kTruncatedPng:
      return "truncated PNG data: the file ends after ";
    case Damage::kNotAnImage:
      return "not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D";
    case Damage::kMarkerInEntropy:
      return "corrupt JPEG data (libjpeg: Corrupt JPEG data: ";
    case Damage::kDeflateInPng:
      return "corrupt or unsupported PNG (libpng: ";
    case Damage::kHugeFrameHeader:
      return "JPEG frame header claims 20000x20000 (400000000 pixels), more than max_pixels (268435456): a forged or "
             "damaged header, or raise max_pixels";
  }
  return "";
}

struct OnErrorDataset {
  std::string root;
  std::map<std::string, int> label;                   // file name → class (folder index)
  std::map<std::string, std::vector<uint8_t>> bytes;  // file name → content as written
  std::map<std::string, Damage> bad;                  // damaged file name → damage
  std::string Path(const std::string& name) const { return root + "/c" + std::to_string(label.at(name)) + "/" + name; }
  std::set<std::string> BadNames() const {
    std::set<std::string> s;
    for (const auto& [name, d] : bad) s.insert(name);
    return s;
  }
};

inline std::vector<uint8_t> ApplyDamage(std::vector<uint8_t> b, Damage d) {
  const auto find = [&](uint8_t x, uint8_t y, size_t from) {
    for (size_t i = from; i + 1 < b.size(); ++i) {
      if (b[i] == x && b[i + 1] == y) return i;
    }
    ADD_FAILURE() << "marker not found";
    return size_t{0};
  };
  switch (d) {
    case Damage::kTruncatedJpeg:
      return testimages::Truncate(b, 0.6);
    case Damage::kTruncatedPng:
      return testimages::Truncate(b, 0.5);
    case Damage::kFlippedJpegMarker:
      b[find(0xFF, 0xDA, 2) + 1] ^= 0x5A;
      return b;
    case Damage::kFlippedPngByte: {
      const size_t idat = find('I', 'D', 8) - 4;  // chunk start: length, "IDAT", data, CRC
      const size_t length =
          (size_t{b[idat]} << 24) | (size_t{b[idat + 1]} << 16) | (size_t{b[idat + 2]} << 8) | b[idat + 3];
      b[idat + 8 + length / 2] ^= 0x5A;
      return b;
    }
    case Damage::kDeflateInPng: {
      const size_t idat = find('I', 'D', 8) - 4;
      const size_t length =
          (size_t{b[idat]} << 24) | (size_t{b[idat + 1]} << 16) | (size_t{b[idat + 2]} << 8) | b[idat + 3];
      b[idat + 8 + length / 2] ^= 0x5A;
      // The chunk's CRC-32 (type and data; ISO 3309, as the PNG specification defines it) again.
      uint32_t crc = 0xFFFFFFFFu;
      for (size_t i = idat + 4; i < idat + 8 + length; ++i) {
        crc ^= b[i];
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
      }
      crc ^= 0xFFFFFFFFu;
      for (int k = 0; k < 4; ++k) b[idat + 8 + length + k] = static_cast<uint8_t>(crc >> (24 - 8 * k));
      return b;
    }
    case Damage::kNotAnImage: {
      const std::string html = "<html><body>not an image</body></html>\n";
      return std::vector<uint8_t>(html.begin(), html.end());
    }
    case Damage::kMarkerInEntropy:
      return testimages::MarkerInEntropyData(b, 16);
    case Damage::kHugeFrameHeader:
      return testimages::ForgeDeclaredSize(b, 20000, 20000);
  }
  return b;
}

// `files` real images f00.jpg, f01.jpg, ... in c0..c3 (file i in class i % 4): JPEGs of every
// subsampling, baseline and progressive, of varying sizes; every fifth a PNG (one 16-bit); then
// file `at` of each (at, damage) replaced by its damaged copy (PNG damages need a PNG: at % 5 == 4).
inline OnErrorDataset MakeOnErrorDataset(int files, const std::vector<std::pair<int, Damage>>& damaged,
                                         const std::string& name = "on_error") {
  OnErrorDataset ds;
  ds.root = TempDir(name);
  const testimages::Subsampling subs[] = {testimages::Subsampling::k420, testimages::Subsampling::k444,
                                          testimages::Subsampling::k422, testimages::Subsampling::kGray};
  std::map<int, Damage> damage_at(damaged.begin(), damaged.end());
  for (int i = 0; i < files; ++i) {
    const int h = 16 + (i * 37) % 90, w = 20 + (i * 53) % 110;
    const bool png = i % 5 == 4;
    char file[32];
    std::snprintf(file, sizeof(file), "f%02d.%s", i, png ? "png" : "jpg");
    std::vector<uint8_t> bytes;
    if (png) {
      bytes = testimages::EncodePng(testimages::MakePngSource(h, w, i % 2 ? 2 : 6, i == 9 ? 16 : 8, 900 + i));
    } else {
      const auto sub = subs[(i / 2) % 4];
      const auto img = testimages::MakePhotoLike(h, w, sub == testimages::Subsampling::kGray ? 1 : 3, 700 + i);
      bytes = testimages::EncodeJpeg(img, sub, 80 + i % 15, i % 3 == 0);
    }
    if (const auto it = damage_at.find(i); it != damage_at.end()) {
      bytes = ApplyDamage(bytes, it->second);
      ds.bad[file] = it->second;
    }
    ds.label[file] = i % 4;
    ds.bytes[file] = bytes;
    std::filesystem::create_directories(ds.root + "/c" + std::to_string(i % 4));
    testimages::WriteFile(ds.Path(file), bytes);
  }
  return ds;
}

inline std::string FileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// One delivered batch: `images` (on the host; `image_sources` the decoder output's sources) and
// `labels`. Every sample: a good file of `ds` named by both lists' sources, label = its folder,
// image = our CPU decode of the file (exactly; with `gpu` the shape only: the GPU test compares
// the pixels within gpu/gpu_cpu_compare.h's tolerance), or for random crops (`crop`) a window no
// larger than the image. Adds the files seen.
inline void CheckBatch(const OnErrorDataset& ds, const TensorListCPU& images,
                       const std::vector<SampleSource>& image_sources, const TensorListCPU& labels, int batch,
                       bool crop, bool gpu, std::multiset<std::string>* seen) {
  ASSERT_EQ(images.num_samples(), batch) << "the batch is refilled to batch_size";
  ASSERT_EQ(labels.num_samples(), batch);
  ASSERT_EQ(image_sources.size(), static_cast<size_t>(batch)) << "the decoder's output carries the sources";
  ASSERT_EQ(labels.sources().size(), static_cast<size_t>(batch));
  for (int i = 0; i < batch; ++i) {
    const SampleSource& source = labels.sources()[static_cast<size_t>(i)];
    const std::string name = FileName(source.file);
    SCOPED_TRACE("sample " + std::to_string(i) + ": " + source.file);
    ASSERT_EQ(image_sources[static_cast<size_t>(i)], source) << "image and label of one sample name one file";
    ASSERT_EQ(ds.bad.count(name), 0u) << "a damaged file was delivered";
    ASSERT_EQ(ds.label.count(name), 1u);
    EXPECT_EQ(source.file, ds.Path(name));
    EXPECT_GE(source.index, 0);
    EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), ds.label.at(name)) << "label of another file";
    const std::vector<uint8_t>& bytes = ds.bytes.at(name);
    const Pixels want = DecodeOurs(bytes, ops::OutputColor::kRgb);
    const Shape& got = images.shape(i);
    if (crop) {
      ASSERT_EQ(got.ndim(), 3);
      EXPECT_LE(got[0], want.height);
      EXPECT_LE(got[1], want.width);
    } else {
      ASSERT_EQ(got, (Shape{want.height, want.width, 3}));
      const auto* p = static_cast<const uint8_t*>(images.raw_sample(i));
      const std::vector<uint8_t> have(p, p + got.num_elements());
      // On the GPU the test compares pixels itself (gpu_cpu_compare.h); the shape says which file.
      if (!gpu) {
        EXPECT_EQ(have, want.data) << "the image is not this file's decode";
      }
    }
    if (seen) seen->insert(name);
  }
}

}  // namespace conveyor::testing
