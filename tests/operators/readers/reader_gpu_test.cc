// Readers feeding the GPU: readers.file's bytes and readers.numpy's arrays staged to the device
// through the executor (pinned staging, H2D copy), eager and captured, checked byte for byte.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/readers/dataset_fixture.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

TensorListCPU ToHost(const TensorListGPU& list) {
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, list, stream.view());
  stream.Synchronize();
  return host;
}

std::string Yaml(const std::string& reader, bool capture) {
  return "pipeline: {name: read_gpu, batch_size: 8, device: gpu, num_threads: 4, prefetch_depth: 3, seed: 5, "
         "graph_capture: " +
         std::string(capture ? "true" : "false") + "}\nops:\n" + reader +
         "  - {op: copy, name: up, device: gpu, inputs: [data], outputs: [gpu_data]}\n"
         "outputs: [gpu_data, labels]\n";
}

TEST(ReaderGpu, FilesReachTheGpuIntactEpochAfterEpoch) {
  CONVEYOR_REQUIRE_GPU();
  const testing::FileDataset d = testing::MakeFileDataset(3, 10);  // 30 files, 8 per batch
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "captured" : "eager");
    Pipeline p = Pipeline::FromYaml(Yaml("  - {op: readers.file, name: reader, args: {file_root: \"" + d.root +
                                             "\", random_shuffle: true, pad_last_batch: true}, outputs: [data, labels]}\n",
                                         capture));
    p.Build();
    ASSERT_EQ(p.EpochSize("reader"), 32);
    for (int epoch = 0; epoch < 3; ++epoch) {
      std::set<std::string> seen;
      for (int b = 0; b < 4; ++b) {
        PipelineOutputs out = p.Outputs();
        ASSERT_TRUE(out.IsGpu(out.Index("gpu_data")));
        const TensorListCPU data = ToHost(out.Gpu(out.Index("gpu_data")));
        const TensorListCPU& labels = out.Cpu(out.Index("labels"));
        ASSERT_EQ(data.num_samples(), 8);
        for (int i = 0; i < 8; ++i) {
          const auto* bytes = static_cast<const uint8_t*>(data.raw_sample(i));
          const std::vector<uint8_t> got(bytes, bytes + data.shape(i).num_elements());
          bool found = false;
          for (const auto& [path, content] : d.bytes) {
            if (content == got) {
              found = true;
              seen.insert(path);
              EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), d.labels.at(path));
            }
          }
          EXPECT_TRUE(found) << "epoch " << epoch << " batch " << b << " sample " << i << " matches no file";
        }
        out.Release();
        p.Run();
      }
      EXPECT_EQ(seen.size(), 30u) << "epoch " << epoch;
    }
  }
}

TEST(ReaderGpu, NumpyArraysReachTheGpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::string dir = "tests/operators/readers/testdata/";
  Pipeline p = Pipeline::FromYaml(
      "pipeline: {name: npy_gpu, batch_size: 2, device: gpu, prefetch_depth: 2}\nops:\n"
      "  - {op: readers.numpy, name: reader, args: {files: [\"" + dir + "float32_c.npy\", \"" + dir +
      "float32_f.npy\"]}, outputs: [data]}\n"
      "  - {op: copy, name: up, device: gpu, inputs: [data], outputs: [gpu_data]}\noutputs: [gpu_data]\n");
  p.Build();
  PipelineOutputs out = p.Outputs();
  const TensorListCPU data = ToHost(out.Gpu(0));
  ASSERT_EQ(data.shape(0), (Shape{3, 4, 2}));
  ASSERT_EQ(data.dtype(), DType::kFloat32);
  for (int s = 0; s < 2; ++s) {  // both C order on the device, Fortran transposed on the host
    const float* v = static_cast<const float*>(data.raw_sample(s));
    for (int i = 0; i < 24; ++i) EXPECT_EQ(v[i], static_cast<float>((i * 7 + 3) % 11 - 5) / 4.0f) << s << " " << i;
  }
}

}  // namespace
}  // namespace conveyor
