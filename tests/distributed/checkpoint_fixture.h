// Shared by the checkpoint tests: a generated JPEG dataset in class folders (fresh sizes and
// pixels every run), the augmenting training pipeline's YAML, and a run that collects every
// output of every iteration as bytes (shapes included) so two runs compare bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tools/testimages/test_images.h"

namespace conveyor::testing {

// `classes` folders of `per_class` JPEGs of random sizes (24..71 x 20..59); returns the root.
inline std::string MakeJpegTree(int classes, int per_class) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::mt19937 rng(std::random_device{}());
  const std::filesystem::path root =
      std::filesystem::path(base ? base : "/tmp") / ("ckpt_" + std::to_string(rng()));
  for (int c = 0; c < classes; ++c) {
    const std::filesystem::path dir = root / ("class" + std::to_string(c));
    std::filesystem::create_directories(dir);
    for (int i = 0; i < per_class; ++i) {
      const int w = 24 + static_cast<int>(rng() % 48), h = 20 + static_cast<int>(rng() % 40);
      testimages::WriteFile((dir / ("img" + std::to_string(i) + ".jpg")).string(),
                            testimages::MakePhotoJpeg(static_cast<int>(rng() % 1000), w, h, 90));
    }
  }
  return root.string();
}

struct TrainOptions {
  std::string root;
  std::string device = "cpu";  // of the decoder and the augmentations
  int batch = 4;
  int prefetch = 3;
  int64_t seed = 7;
  int shard = 1, shards = 3;
  bool pad = true;
  bool capture = false;
  std::string crop_size = "[16, 12]";
  std::string decode_args = "{}";  // e.g. "{on_error: skip}"
};

// readers.file (shuffled, sharded) → decoders.image → random_resized_crop → flip by coin_flip;
// plus random.uniform: every kind of state a resume must reproduce.
inline std::string TrainYaml(const TrainOptions& o) {
  const std::string dev = o.device;
  return "pipeline: {name: train, batch_size: " + std::to_string(o.batch) + ", device: " +
         (dev == "cpu" ? "cpu" : "gpu") + ", prefetch_depth: " + std::to_string(o.prefetch) +
         ", num_threads: 2, seed: " + std::to_string(o.seed) + ", graph_capture: " + (o.capture ? "true" : "false") +
         "}\n"
         "ops:\n"
         "  - {op: readers.file, name: reader, outputs: [jpegs, labels], args: {file_root: \"" + o.root +
         "\", random_shuffle: true, shard_id: " + std::to_string(o.shard) + ", num_shards: " +
         std::to_string(o.shards) + ", pad_last_batch: " + (o.pad ? "true" : "false") + "}}\n"
         "  - {op: decoders.image, name: decode, device: " + (dev == "cpu" ? "cpu" : "gpu") +
         ", inputs: [jpegs], outputs: [decoded], args: " + o.decode_args + "}\n"
         "  - {op: random_resized_crop, name: rrc, device: " + dev + ", inputs: [decoded], outputs: [cropped], "
         "args: {size: " + o.crop_size + "}}\n"
         "  - {op: random.coin_flip, name: coin, outputs: [mirror]}\n"
         "  - {op: flip, name: flip, device: " + dev + ", inputs: [cropped], outputs: [images], "
         "args: {horizontal: $mirror}}\n"
         "  - {op: random.uniform, name: jitter, outputs: [u], args: {range: [-1.0, 1.0]}}\n"
         "outputs: [images, labels, u]\n";
}

// One iteration's outputs as bytes: per output, per sample, its shape then its data.
using IterationBytes = std::vector<uint8_t>;

inline void Append(IterationBytes& out, const TensorListCPU& list) {
  for (int i = 0; i < list.num_samples(); ++i) {
    const Shape& s = list.shape(i);
    for (int d = 0; d < s.ndim(); ++d) {
      const int64_t e = s[d];
      const auto* p = reinterpret_cast<const uint8_t*>(&e);
      out.insert(out.end(), p, p + sizeof e);
    }
    const auto* data = static_cast<const uint8_t*>(list.raw_sample(i));
    out.insert(out.end(), data, data + s.num_elements() * static_cast<int64_t>(DTypeSize(list.dtype())));
  }
}

// The next iteration's outputs as bytes (GPU outputs copied to the host), then Run() for one more.
inline IterationBytes Take(Pipeline& p) {
  IterationBytes bytes;
  PipelineOutputs out = p.Outputs();
  for (int i = 0; i < out.size(); ++i) {
    if (out.IsGpu(i)) {
      cuda::Stream stream = cuda::Stream::Create();
      TensorListCPU host;
      CopyAsync(host, out.Gpu(i), stream.view());
      stream.Synchronize();
      Append(bytes, host);
    } else {
      Append(bytes, out.Cpu(i));
    }
  }
  out.Release();
  p.Run();
  return bytes;
}

// `n` iterations of a fresh pipeline, resumed from `checkpoint` when it is not empty; the
// checkpoint taken after them goes to `*after` when given.
inline std::vector<IterationBytes> RunFor(const std::string& yaml, int n, const std::string& checkpoint = "",
                                          std::string* after = nullptr) {
  Pipeline p = Pipeline::FromYaml(yaml);
  if (!checkpoint.empty()) p.ResumeFrom(checkpoint);
  p.Build();
  std::vector<IterationBytes> out;
  for (int i = 0; i < n; ++i) out.push_back(Take(p));
  if (after != nullptr) *after = p.Checkpoint();
  return out;
}

}  // namespace conveyor::testing
