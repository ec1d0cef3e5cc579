// A CPU pipeline readers.file → decoders.image over a generated folder of JPEGs and PNGs: every
// decoded sample equals the reference decode of the bytes the reader delivered with it; and
// decoders.image_random_crop draws the same windows in two pipelines with the same seed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/pipeline/pipeline.h"
#include "tests/operators/decoders/decode_reference.h"

namespace conveyor::testing {
namespace {

using ops::OutputColor;

struct Folder {
  std::string root;
  std::map<std::vector<uint8_t>, testimages::PngSource> pngs;  // PNG bytes → source samples
  int files = 0;
};

// Two class folders of photo-like JPEGs of varying sizes and subsamplings, and a few PNGs.
Folder MakeFolder() {
  Folder f;
  f.root = TempDir("decode_pipeline");
  const testimages::Subsampling subs[] = {testimages::Subsampling::k420, testimages::Subsampling::k444,
                                          testimages::Subsampling::k422, testimages::Subsampling::kGray};
  for (int i = 0; i < 10; ++i) {
    const std::string dir = f.root + (i % 2 ? "/dogs" : "/cats");
    std::filesystem::create_directories(dir);
    const int h = 40 + 13 * i, w = 90 - 5 * i;
    const auto sub = subs[i % 4];
    const auto img = testimages::MakePhotoLike(h, w, sub == testimages::Subsampling::kGray ? 1 : 3, 500 + i);
    testimages::WriteFile(dir + "/img" + std::to_string(i) + ".jpg", testimages::EncodeJpeg(img, sub, 85, i % 3 == 0));
    ++f.files;
  }
  for (int i = 0; i < 3; ++i) {
    const testimages::PngSource s = testimages::MakePngSource(20 + i, 30 - i, i == 0 ? 2 : i == 1 ? 6 : 0, 8, 600 + i);
    const auto bytes = testimages::EncodePng(s);
    testimages::WriteFile(f.root + "/cats/pic" + std::to_string(i) + ".png", bytes);
    f.pngs[bytes] = s;
    ++f.files;
  }
  return f;
}

std::string Yaml(const std::string& root, const std::string& decoder, int batch) {
  return "pipeline: {name: decode, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 3, prefetch_depth: 2, seed: 7}\n"
         "ops:\n"
         "  - op: readers.file\n    name: reader\n    args: {file_root: \"" + root + "\", random_shuffle: true}\n"
         "    outputs: [jpegs, labels]\n"
         "  - op: " + decoder + "\n    name: dec\n    inputs: [jpegs]\n    args: {output_type: BGR}\n"
         "    outputs: [images]\n"
         "outputs: [jpegs, images]\n";
}

std::vector<uint8_t> Bytes(const TensorListCPU& list, int i) {
  const auto* p = static_cast<const uint8_t*>(list.raw_sample(i));
  return std::vector<uint8_t>(p, p + list.shape(i).num_elements());
}

TEST(DecodePipeline, ReaderThenDecoderMatchesTheReferenceForEveryFile) {
  const Folder folder = MakeFolder();
  Pipeline p = Pipeline::FromYaml(Yaml(folder.root, "decoders.image", 4));
  p.Build();
  std::set<std::vector<uint8_t>> seen;
  for (int it = 0; it < 8; ++it) {  // 32 samples: more than two epochs of 13
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& jpegs = out.Cpu(out.Index("jpegs"));
    const TensorListCPU& images = out.Cpu(out.Index("images"));
    ASSERT_EQ(images.num_samples(), 4);
    EXPECT_EQ(images.layout(), Layout("HWC"));
    for (int i = 0; i < images.num_samples(); ++i) {
      const std::vector<uint8_t> encoded = Bytes(jpegs, i);
      seen.insert(encoded);
      const auto png = folder.pngs.find(encoded);
      const Pixels want = png != folder.pngs.end() ? ExpectedPng(png->second, OutputColor::kBgr)
                                                   : TurboJpegDecode(encoded, OutputColor::kBgr);
      ASSERT_EQ(images.shape(i), (Shape{want.height, want.width, 3})) << "iteration " << it << " sample " << i;
      EXPECT_EQ(Bytes(images, i), want.data) << "iteration " << it << " sample " << i;
    }
    out.Release();
    p.Run();
  }
  EXPECT_EQ(static_cast<int>(seen.size()), folder.files);
}

TEST(DecodePipeline, RandomCropWindowsAreReproducibleFromTheSeed) {
  const Folder folder = MakeFolder();
  std::vector<std::vector<Shape>> shapes[2];
  for (int run = 0; run < 2; ++run) {
    Pipeline p = Pipeline::FromYaml(Yaml(folder.root, "decoders.image_random_crop", 5));
    p.Build();
    for (int it = 0; it < 4; ++it) {
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& jpegs = out.Cpu(out.Index("jpegs"));
      const TensorListCPU& images = out.Cpu(out.Index("images"));
      for (int i = 0; i < images.num_samples(); ++i) {
        const auto encoded = Bytes(jpegs, i);
        const ops::ImageInfo info = ops::ParseImageInfo(encoded.data(), encoded.size());
        EXPECT_LE(images.shape(i)[0], info.height);
        EXPECT_LE(images.shape(i)[1], info.width);
      }
      shapes[run].push_back(images.shapes());
      out.Release();
      p.Run();
    }
  }
  EXPECT_EQ(shapes[0], shapes[1]);
}

}  // namespace
}  // namespace conveyor::testing
