// The pipeline C API with GPU pipelines: outputs against the CPU pipeline's (same seed, same
// draws), DLPack export ordered on the consumer's stream, slot reuse ordered after the consumer's
// work, and external sources fed from device memory. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/interop/dlpack_abi.h"
#include "tests/capi/capi_handles.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::capi {
namespace {

using ::testing::HasSubstr;
using conveyor::testing::RandomVector;
using conveyor::testing::SpinGpu;
using cuda::Stream;

using testing::OutputsHandle;
using testing::PipelineHandle;
using testing::TensorHandle;

int64_t Code(const Stream& s) { return cuda::EncodeInteropStream(s.view()); }

std::string RandomYaml(const std::string& device, int prefetch) {
  return "pipeline: {name: capi_gpu, batch_size: 8, device: " + device +
         ", num_threads: 2, prefetch_depth: " + std::to_string(prefetch) +
         ", seed: 99, graph_capture: true}\n"
         "ops:\n"
         "  - {op: random.uniform, name: noise, device: " + device +
         ", args: {range: [-10.0, 10.0], shape: [64, 3]}, outputs: [noise]}\n"
         "  - {op: cast, name: quantize, device: " + device +
         ", inputs: [noise], args: {dtype: int32}, outputs: [quantized]}\n"
         "outputs: [noise, quantized]\n";
}

PipelineHandle Built(const std::string& yaml) {
  PipelineHandle p;
  EXPECT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &p.h), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  return p;
}

OutputsHandle Next(conveyor_pipeline_t p) {
  OutputsHandle o;
  EXPECT_EQ(conveyor_pipeline_outputs(p, &o.h), CONVEYOR_OK) << conveyor_last_error();
  return o;
}

TensorHandle Get(conveyor_outputs_t o, int32_t index, int32_t sample) {
  TensorHandle t;
  EXPECT_EQ(conveyor_outputs_get(o, index, sample, &t.h), CONVEYOR_OK) << conveyor_last_error();
  return t;
}

conveyor_tensor_info_t Info(conveyor_tensor_t t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t, &info), CONVEYOR_OK) << conveyor_last_error();
  return info;
}

// The bytes of a batch tensor (host or device), batch stride included, read after the work queued
// on `stream` (device data is copied there).
std::vector<char> Bytes(conveyor_tensor_t t, const Stream& stream) {
  const conveyor_tensor_info_t info = Info(t);
  const size_t bytes = static_cast<size_t>(info.shape[0] * info.strides[0]) * 4;  // 4-byte dtypes only
  std::vector<char> out(bytes);
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(out.data(), info.data, bytes, cudaMemcpyDefault, stream.get()));
  stream.Synchronize();
  return out;
}

TEST(CApiPipelineGpu, GpuOutputsEqualTheCpuPipelinesThroughDLPack) {
  CONVEYOR_REQUIRE_GPU();
  PipelineHandle gpu = Built(RandomYaml("gpu", 2));
  PipelineHandle cpu = Built(RandomYaml("cpu", 2));
  const Stream consumer = Stream::Create();
  for (int k = 0; k < 8; ++k) {
    OutputsHandle og = Next(gpu.h), oc = Next(cpu.h);
    for (int32_t out = 0; out < 2; ++out) {
      TensorHandle g = Get(og.h, out, -1), c = Get(oc.h, out, -1);
      ASSERT_EQ(Info(g.h).device_type, CONVEYOR_DEVICE_CUDA);
      testing::DLPackExport managed;
      ASSERT_EQ(conveyor_tensor_to_dlpack_versioned(g.h, Code(consumer), &managed.h), CONVEYOR_OK)
          << conveyor_last_error();
      auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed.h);
      ASSERT_EQ(m->dl_tensor.device.device_type, dlpack::kDLCUDA);
      ASSERT_EQ(m->dl_tensor.shape[0], 8);
      // The consumer's stream was ordered after the iteration: a copy there sees the results.
      EXPECT_EQ(Bytes(g.h, consumer), Bytes(c.h, consumer)) << "iteration " << k << " output " << out;
    }
    og = {};
    oc = {};
    ASSERT_EQ(conveyor_pipeline_run(gpu.h), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(conveyor_pipeline_run(cpu.h), CONVEYOR_OK) << conveyor_last_error();
  }
}

TEST(CApiPipelineGpu, SlotIsRewrittenOnlyAfterTheConsumersStreamWork) {
  CONVEYOR_REQUIRE_GPU();
  CONVEYOR_SKIP_UNDER_SANITIZER();
  PipelineHandle gpu = Built(RandomYaml("gpu", 1));
  PipelineHandle cpu = Built(RandomYaml("cpu", 1));
  const Stream consumer = Stream::Create();
  OutputsHandle reference = Next(cpu.h);
  TensorHandle expected = Get(reference.h, 0, -1);
  const std::vector<char> want = Bytes(expected.h, consumer);

  OutputsHandle o = Next(gpu.h);
  TensorHandle t = Get(o.h, 0, -1);
  const conveyor_tensor_info_t info = Info(t.h);
  testing::DLPackExport managed;
  ASSERT_EQ(conveyor_tensor_to_dlpack_versioned(t.h, Code(consumer), &managed.h), CONVEYOR_OK);
  // The consumer reads late (after a long spin) and lets go at once.
  std::vector<char> got(want.size());
  SpinGpu(200, consumer.view());
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(got.data(), info.data, got.size(), cudaMemcpyDefault, consumer.get()));
  managed = {};
  t = {};
  o = {};
  // Iteration 1 reuses the only slot: its GPU work must wait for the consumer's copy.
  ASSERT_EQ(conveyor_pipeline_run(gpu.h), CONVEYOR_OK) << conveyor_last_error();
  OutputsHandle next = Next(gpu.h);
  ASSERT_EQ(conveyor_outputs_wait(next.h, -1), CONVEYOR_OK);
  consumer.Synchronize();
  EXPECT_EQ(got, want) << "iteration 1 overwrote the slot while the consumer still read iteration 0";
}

std::string ExternalYaml(const std::string& src_device) {
  return "pipeline: {name: capi_gpu_ext, batch_size: 4, device: gpu, prefetch_depth: 2, graph_capture: true}\n"
         "ops:\n"
         "  - {op: external_source, name: src, device: " + src_device +
         ", args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
         "  - {op: copy, name: dup, device: gpu, inputs: [x], outputs: [y]}\n"
         "  - {op: to_host, name: back, inputs: [y], outputs: [h]}\n"
         "outputs: [y, h]\n";
}

TensorHandle Device(const std::vector<int64_t>& shape, const std::vector<float>& values, const Stream& stream) {
  TensorHandle t;
  EXPECT_EQ(conveyor_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), CONVEYOR_DTYPE_FLOAT32,
                                  CONVEYOR_DEVICE_CUDA, cuda::CurrentDevice(), Code(stream), &t.h),
            CONVEYOR_OK)
      << conveyor_last_error();
  // Written on `stream`: the pipeline must wait for it through the tensor's ready event.
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(Info(t.h).data, values.data(), values.size() * sizeof(float),
                                      cudaMemcpyDefault, stream.get()));
  stream.Synchronize();  // `values` is pageable; keep the test about the pipeline, not the copy
  return t;
}

std::vector<float> HostSample(conveyor_outputs_t o, int sample) {
  TensorHandle t = Get(o, 1, sample);
  const conveyor_tensor_info_t info = Info(t.h);
  const float* p = static_cast<const float*>(info.data);
  return std::vector<float>(p, p + info.shape[0]);
}

TEST(CApiPipelineGpu, ExternalSourceFedFromDeviceBatchesAndSamples) {
  CONVEYOR_REQUIRE_GPU();
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_string(ExternalYaml("gpu").c_str(), nullptr, &p.h), CONVEYOR_OK)
      << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  const Stream producer = Stream::Create();
  const std::vector<float> a = RandomVector<float>(4 * 8, -1.f, 1.f);   // 32-byte samples: in place
  const std::vector<float> b = RandomVector<float>(3 * 5, -1.f, 1.f);   // 20-byte samples: copied
  const std::vector<float> s0 = RandomVector<float>(2, -1.f, 1.f), s1 = RandomVector<float>(9, -1.f, 1.f);
  {
    TensorHandle ta = Device({4, 8}, a, producer), tb = Device({3, 5}, b, producer);
    ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", ta.h), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", tb.h), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
    TensorHandle t0 = Device({2}, s0, producer), t1 = Device({9}, s1, producer);
    const conveyor_tensor_t samples[] = {t0.h, t1.h};
    ASSERT_EQ(conveyor_pipeline_feed_samples(p.h, "src", samples, 2), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
  }  // the caller's handles go at once; the pipeline keeps what it needs
  const std::vector<std::vector<float>> batches = {a, b};
  const int widths[] = {8, 5};
  for (int k = 0; k < 2; ++k) {
    OutputsHandle o = Next(p.h);
    ASSERT_EQ(conveyor_outputs_wait(o.h, -1), CONVEYOR_OK);
    int32_t n = 0;
    ASSERT_EQ(conveyor_outputs_num_samples(o.h, 1, &n), CONVEYOR_OK);
    ASSERT_EQ(n, k == 0 ? 4 : 3);
    for (int s = 0; s < n; ++s) {
      const std::vector<float>& src = batches[static_cast<size_t>(k)];
      EXPECT_EQ(HostSample(o.h, s),
                std::vector<float>(src.begin() + s * widths[k], src.begin() + (s + 1) * widths[k]))
          << "iteration " << k << " sample " << s;
    }
    EXPECT_EQ(Info(Get(o.h, 0, 0).h).device_type, CONVEYOR_DEVICE_CUDA);
  }
  OutputsHandle o = Next(p.h);
  ASSERT_EQ(conveyor_outputs_wait(o.h, -1), CONVEYOR_OK);
  EXPECT_EQ(HostSample(o.h, 0), s0);
  EXPECT_EQ(HostSample(o.h, 1), s1);
}

TEST(CApiPipelineGpu, HostBatchesFeedAGpuSourceAndDeviceDataIsRefusedByACpuSource) {
  CONVEYOR_REQUIRE_GPU();
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_string(ExternalYaml("cpu").c_str(), nullptr, &p.h), CONVEYOR_OK)
      << conveyor_last_error();
  const Stream producer = Stream::Create();
  TensorHandle device = Device({2, 4}, RandomVector<float>(8, -1.f, 1.f), producer);
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, "src", device.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("node \"src\": runs on the CPU: expected host data (CPU or pinned "
                                               "memory), got device memory"));
  // Host data goes through the CPU source, is staged to the GPU and comes back.
  const std::vector<float> values = RandomVector<float>(2 * 4, -1.f, 1.f);
  TensorHandle host;
  const int64_t shape[] = {2, 4};
  ASSERT_EQ(conveyor_tensor_empty(2, shape, CONVEYOR_DTYPE_FLOAT32, CONVEYOR_DEVICE_CPU, 0, -1, &host.h),
            CONVEYOR_OK);
  std::memcpy(Info(host.h).data, values.data(), values.size() * sizeof(float));
  ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", host.h), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  OutputsHandle o = Next(p.h);
  ASSERT_EQ(conveyor_outputs_wait(o.h, -1), CONVEYOR_OK);
  EXPECT_EQ(HostSample(o.h, 0), std::vector<float>(values.begin(), values.begin() + 4));
  EXPECT_EQ(HostSample(o.h, 1), std::vector<float>(values.begin() + 4, values.end()));
}

}  // namespace
}  // namespace conveyor::capi
