// The pipeline C API with CPU-only pipelines (they run in CI): create, build, feed, run, outputs
// and their lifetime (the slot lease), every error path with its message, and the shared
// library finding its operators.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/capi/conveyor.h"
#include "tests/capi/shared_library.h"
#include "tests/core/interop/dlpack_producer.h"
#include "tests/capi/capi_handles.h"
#include "tests/util/gpu_test.h"

namespace conveyor::capi {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using conveyor::testing::RandomVector;

using testing::OutputsHandle;
using testing::PipelineHandle;
using testing::TensorHandle;

std::string Yaml(const std::string& ops, const std::string& outputs, int prefetch = 2, int batch = 4) {
  return "pipeline: {name: capi_cpu, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 2, prefetch_depth: " + std::to_string(prefetch) + ", seed: 11}\nops:\n" + ops +
         "outputs: [" + outputs + "]\n";
}

const std::string kRandomOps =
    "  - {op: random.uniform, name: noise, args: {range: [2.0, 3.0], shape: [3, 5]}, outputs: [noise]}\n"
    "  - {op: cast, name: quantize, inputs: [noise], args: {dtype: int32}, outputs: [quantized]}\n";
const std::string kExternalOps =
    "  - {op: external_source, name: src, args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
    "  - {op: copy, name: dup, inputs: [x], outputs: [y]}\n";

PipelineHandle FromString(const std::string& yaml) {
  PipelineHandle h;
  EXPECT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &h.h), CONVEYOR_OK) << conveyor_last_error();
  return h;
}

conveyor_tensor_info_t Info(conveyor_tensor_t t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t, &info), CONVEYOR_OK) << conveyor_last_error();
  return info;
}

TensorHandle Get(conveyor_outputs_t o, int32_t index, int32_t sample) {
  TensorHandle t;
  EXPECT_EQ(conveyor_outputs_get(o, index, sample, &t.h), CONVEYOR_OK) << conveyor_last_error();
  return t;
}

// A host float32 tensor with `values`, shape `shape` (row-major).
TensorHandle HostTensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  TensorHandle t;
  EXPECT_EQ(conveyor_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), CONVEYOR_DTYPE_FLOAT32,
                                  CONVEYOR_DEVICE_CPU, 0, -1, &t.h),
            CONVEYOR_OK)
      << conveyor_last_error();
  std::memcpy(Info(t.h).data, values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> Floats(conveyor_tensor_t t) {
  const conveyor_tensor_info_t info = Info(t);
  std::vector<float> out;
  std::vector<int64_t> index(static_cast<size_t>(info.ndim), 0);
  int64_t n = 1;
  for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (int d = 0; d < info.ndim; ++d) offset += index[d] * info.strides[d];
    out.push_back(static_cast<const float*>(info.data)[offset]);
    for (int d = info.ndim - 1; d >= 0; --d) {
      if (++index[d] < info.shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

TEST(CApiPipeline, RandomPipelineIteratesWithUniformBatchesAndSamples) {
  PipelineHandle p = FromString(Yaml(kRandomOps, "noise, quantized"));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  for (int64_t k = 0; k < 6; ++k) {
    OutputsHandle o;
    ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
    int64_t iteration = -1;
    int32_t count = 0, samples = 0, uniform = 0, index = -1;
    ASSERT_EQ(conveyor_outputs_iteration(o.h, &iteration), CONVEYOR_OK);
    EXPECT_EQ(iteration, k);
    ASSERT_EQ(conveyor_outputs_count(o.h, &count), CONVEYOR_OK);
    ASSERT_EQ(count, 2);
    const char* name = nullptr;
    ASSERT_EQ(conveyor_outputs_name(o.h, 1, &name), CONVEYOR_OK);
    EXPECT_STREQ(name, "quantized");
    ASSERT_EQ(conveyor_outputs_index(o.h, "noise", &index), CONVEYOR_OK);
    EXPECT_EQ(index, 0);
    ASSERT_EQ(conveyor_outputs_num_samples(o.h, 0, &samples), CONVEYOR_OK);
    EXPECT_EQ(samples, 4);
    ASSERT_EQ(conveyor_outputs_is_uniform(o.h, 0, &uniform), CONVEYOR_OK);
    EXPECT_EQ(uniform, 1);
    ASSERT_EQ(conveyor_outputs_wait(o.h, -1), CONVEYOR_OK) << conveyor_last_error();

    TensorHandle batch = Get(o.h, 0, -1);
    const conveyor_tensor_info_t info = Info(batch.h);
    ASSERT_EQ(info.ndim, 3);
    EXPECT_EQ(info.shape[0], 4);
    EXPECT_EQ(info.shape[1], 3);
    EXPECT_EQ(info.shape[2], 5);
    EXPECT_EQ(info.dtype, CONVEYOR_DTYPE_FLOAT32);
    EXPECT_EQ(info.device_type, CONVEYOR_DEVICE_CPU);
    // 60-byte samples start 16-byte aligned: 64 bytes apart.
    EXPECT_EQ(info.strides[0], 16);
    const std::vector<float> noise = Floats(batch.h);
    TensorHandle quantized = Get(o.h, 1, -1);
    const conveyor_tensor_info_t qinfo = Info(quantized.h);
    ASSERT_EQ(qinfo.dtype, CONVEYOR_DTYPE_INT32);
    for (size_t i = 0; i < noise.size(); ++i) {
      ASSERT_GE(noise[i], 2.f);
      ASSERT_LT(noise[i], 3.f);
    }
    // Sample views agree with the batch view; the cast output is the reference conversion.
    for (int s = 0; s < 4; ++s) {
      TensorHandle sample = Get(o.h, 0, s);
      TensorHandle q = Get(o.h, 1, s);
      const std::vector<float> values = Floats(sample.h);
      ASSERT_EQ(values, std::vector<float>(noise.begin() + s * 15, noise.begin() + (s + 1) * 15));
      const int32_t* qv = static_cast<const int32_t*>(Info(q.h).data);
      for (int i = 0; i < 15; ++i) ASSERT_EQ(qv[i], static_cast<int32_t>(values[i]));
    }
    conveyor_outputs_release(o.h);
    o.h = nullptr;
    // The batch tensor outlives its outputs handle (it holds the slot).
    EXPECT_EQ(Floats(batch.h), noise);
    batch = {};
    quantized = {};
    ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
  }
}

// conveyor_pipeline_next gives what outputs + get + info + run give, in one call: two pipelines
// with the same seed, one iterated each way, yield the same values; a non-uniform output comes
// back through the outputs handle; too small a capacity consumes nothing.
TEST(CApiPipeline, NextEqualsOutputsGetAndRun) {
  PipelineHandle a = FromString(Yaml(kRandomOps, "noise, quantized"));
  PipelineHandle b = FromString(Yaml(kRandomOps, "noise, quantized"));
  ASSERT_EQ(conveyor_pipeline_build(a.h), CONVEYOR_OK);
  ASSERT_EQ(conveyor_pipeline_build(b.h), CONVEYOR_OK);
  conveyor_tensor_t tensors[2] = {nullptr, nullptr};
  conveyor_tensor_info_t infos[2];
  int32_t count = -1;
  conveyor_outputs_t rest = nullptr;
  EXPECT_EQ(conveyor_pipeline_next(a.h, 1, tensors, infos, &count, &rest), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("capacity: expected at least the pipeline's 2 outputs, got 1"));
  for (int64_t k = 0; k < 5; ++k) {
    ASSERT_EQ(conveyor_pipeline_next(a.h, 2, tensors, infos, &count, &rest), CONVEYOR_OK) << conveyor_last_error();
    ASSERT_EQ(count, 2);
    EXPECT_EQ(rest, nullptr) << "every output is uniform";
    TensorHandle noise, quantized;
    noise.h = tensors[0];
    quantized.h = tensors[1];
    ASSERT_NE(noise.h, nullptr);
    EXPECT_EQ(infos[0].ndim, 3);
    EXPECT_EQ(infos[0].shape[0], 4);
    EXPECT_EQ(infos[1].dtype, CONVEYOR_DTYPE_INT32);
    EXPECT_EQ(infos[0].data, Info(noise.h).data);

    OutputsHandle o;
    ASSERT_EQ(conveyor_pipeline_outputs(b.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
    TensorHandle want = Get(o.h, 0, -1);
    EXPECT_EQ(Floats(noise.h), Floats(want.h)) << "iteration " << k;
    conveyor_outputs_release(o.h);
    o.h = nullptr;
    ASSERT_EQ(conveyor_pipeline_run(b.h), CONVEYOR_OK);
  }
  // Per-sample shapes differ: the tensor is NULL and the handle carries the samples.
  PipelineHandle fed = FromString(Yaml(kExternalOps, "y", 2, 2));
  ASSERT_EQ(conveyor_pipeline_build(fed.h), CONVEYOR_OK);
  TensorHandle s0 = HostTensor({2}, {1.f, 2.f}), s1 = HostTensor({3}, {3.f, 4.f, 5.f});
  for (int k = 0; k < 3; ++k) {
    conveyor_tensor_t pair[2] = {s0.h, s1.h};
    ASSERT_EQ(conveyor_pipeline_feed_samples(fed.h, "src", pair, 2), CONVEYOR_OK) << conveyor_last_error();
  }
  ASSERT_EQ(conveyor_pipeline_run(fed.h), CONVEYOR_OK) << conveyor_last_error();  // fed pipelines run on demand
  conveyor_tensor_t one[1] = {nullptr};
  conveyor_tensor_info_t one_info[1];
  ASSERT_EQ(conveyor_pipeline_next(fed.h, 1, one, one_info, &count, &rest), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(one[0], nullptr);
  ASSERT_NE(rest, nullptr);
  OutputsHandle held;
  held.h = rest;
  EXPECT_EQ(Floats(Get(held.h, 0, 1).h), (std::vector<float>{3.f, 4.f, 5.f}));
}

TEST(CApiPipeline, SameSeedSameValuesAndDLPackExportIsZeroCopy) {
  PipelineHandle a = FromString(Yaml(kRandomOps, "noise"));
  PipelineHandle b = FromString(Yaml(kRandomOps, "noise"));
  ASSERT_EQ(conveyor_pipeline_build(a.h), CONVEYOR_OK);
  ASSERT_EQ(conveyor_pipeline_build(b.h), CONVEYOR_OK);
  OutputsHandle oa, ob;
  ASSERT_EQ(conveyor_pipeline_outputs(a.h, &oa.h), CONVEYOR_OK);
  ASSERT_EQ(conveyor_pipeline_outputs(b.h, &ob.h), CONVEYOR_OK);
  TensorHandle ta = Get(oa.h, 0, -1), tb = Get(ob.h, 0, -1);
  EXPECT_EQ(Floats(ta.h), Floats(tb.h));

  DLManagedTensorVersioned* managed = nullptr;
  ASSERT_EQ(conveyor_tensor_to_dlpack_versioned(ta.h, -1, &managed), CONVEYOR_OK) << conveyor_last_error();
  auto* m = reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed);
  EXPECT_EQ(m->dl_tensor.data, Info(ta.h).data);
  EXPECT_EQ(m->dl_tensor.ndim, 3);
  EXPECT_EQ(m->dl_tensor.strides[0], 16);
  // The export alone holds the slot now: everything else let go, data intact.
  const std::vector<float> expected = Floats(ta.h);
  ta = {};
  conveyor_outputs_release(oa.h);
  oa.h = nullptr;
  EXPECT_EQ(std::memcmp(m->dl_tensor.data, expected.data(), 15 * sizeof(float)), 0);
  conveyor_dlpack_versioned_delete(managed);
}

TEST(CApiPipeline, HeldTensorHoldsItsSlotUntilReleased) {
  PipelineHandle p = FromString(Yaml(kRandomOps, "noise", /*prefetch=*/1));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK);
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK);
  TensorHandle held = Get(o.h, 0, 2);
  const std::vector<float> before = Floats(held.h);
  conveyor_outputs_release(o.h);
  o.h = nullptr;
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK);
  OutputsHandle next;
  EXPECT_EQ(conveyor_pipeline_outputs(p.h, &next.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_pipeline_outputs: "));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("iteration 1 needs prefetch slot 0, still held by the outputs of "
                                               "iteration 0; release them first (prefetch_depth 1)"));
  EXPECT_EQ(next.h, nullptr) << "out parameters are written only on success";
  EXPECT_EQ(Floats(held.h), before) << "a held slot is not rewritten";
  held = {};
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &next.h), CONVEYOR_OK) << conveyor_last_error();
  int64_t iteration = -1;
  ASSERT_EQ(conveyor_outputs_iteration(next.h, &iteration), CONVEYOR_OK);
  EXPECT_EQ(iteration, 1);
}

TEST(CApiPipeline, OutputsOutliveTheirPipeline) {
  PipelineHandle p = FromString(Yaml(kRandomOps, "quantized"));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK);
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK);
  TensorHandle t = Get(o.h, 0, -1);
  conveyor_pipeline_destroy(p.h);
  p.h = nullptr;
  const conveyor_tensor_info_t info = Info(t.h);
  const int32_t* v = static_cast<const int32_t*>(info.data);
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 15; ++i) ASSERT_EQ(v[s * info.strides[0] + i], 2);
  }
  TensorHandle again = Get(o.h, 0, 0);
  EXPECT_EQ(Info(again.h).shape[0], 3);
}

TEST(CApiPipeline, FeedsBatchesInPlaceCopiedStridedAndPerSample) {
  PipelineHandle p = FromString(Yaml(kExternalOps, "y", 2, 4));
  int32_t count = 0;
  ASSERT_EQ(conveyor_pipeline_external_source_count(p.h, &count), CONVEYOR_OK);
  ASSERT_EQ(count, 1);
  const char* name = nullptr;
  ASSERT_EQ(conveyor_pipeline_external_source_name(p.h, 0, &name), CONVEYOR_OK);
  EXPECT_STREQ(name, "src");

  // Iteration 0, fed before build: 8 floats per sample (32 bytes: used in place).
  const std::vector<float> a = RandomVector<float>(4 * 8, -5.f, 5.f);
  {
    TensorHandle t = HostTensor({4, 8}, a);
    ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", t.h), CONVEYOR_OK) << conveyor_last_error();
  }  // the caller's handle goes; the pipeline keeps the data alive
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  // Iteration 1: 5 floats per sample (20 bytes: copied).
  const std::vector<float> b = RandomVector<float>(3 * 5, -5.f, 5.f);
  TensorHandle tb = HostTensor({3, 5}, b);
  ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", tb.h), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK);
  // Iteration 2: a transposed (strided) view through DLPack: sample i is column i.
  std::vector<float> c = RandomVector<float>(6 * 2, -5.f, 5.f);
  interop::testing::DLPackProducer producer;
  producer.data = c.data();
  producer.shape = {2, 6};
  producer.strides = {1, 2};
  TensorHandle tc;
  ASSERT_EQ(conveyor_tensor_from_dlpack_versioned(reinterpret_cast<DLManagedTensorVersioned*>(producer.Versioned()),
                                                  -1, &tc.h),
            CONVEYOR_OK);
  ASSERT_EQ(conveyor_pipeline_feed_batch(p.h, "src", tc.h), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK);
  // Iteration 3: per-sample tensors of different lengths.
  const std::vector<float> s0 = RandomVector<float>(3, -5.f, 5.f), s1 = RandomVector<float>(7, -5.f, 5.f);
  TensorHandle t0 = HostTensor({3}, s0), t1 = HostTensor({7}, s1);
  const conveyor_tensor_t list[] = {t0.h, t1.h};
  ASSERT_EQ(conveyor_pipeline_feed_samples(p.h, "src", list, 2), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK);

  auto next = [&](OutputsHandle& o) {
    ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
  };
  {
    OutputsHandle o;
    next(o);
    TensorHandle y = Get(o.h, 0, -1);
    EXPECT_EQ(Info(y.h).shape[0], 4);
    EXPECT_EQ(Floats(y.h), a);
  }
  {
    OutputsHandle o;
    next(o);
    TensorHandle y = Get(o.h, 0, -1);
    EXPECT_EQ(Info(y.h).shape[1], 5);
    EXPECT_EQ(Floats(y.h), b);
  }
  {
    OutputsHandle o;
    next(o);
    TensorHandle y = Get(o.h, 0, -1);
    std::vector<float> transposed;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 6; ++j) transposed.push_back(c[static_cast<size_t>(j * 2 + i)]);
    }
    EXPECT_EQ(Floats(y.h), transposed);
  }
  {
    OutputsHandle o;
    next(o);
    int32_t uniform = 1;
    ASSERT_EQ(conveyor_outputs_is_uniform(o.h, 0, &uniform), CONVEYOR_OK);
    EXPECT_EQ(uniform, 0);
    TensorHandle whole;
    EXPECT_EQ(conveyor_outputs_get(o.h, 0, -1, &whole.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(conveyor_last_error(),
                HasSubstr("sample -1: expected output \"y\" to be a uniform batch, got sample 0 of shape (3,) and "
                          "sample 1 of shape (7,); take its samples one by one (0 to 1)"));
    EXPECT_EQ(Floats(Get(o.h, 0, 0).h), s0);
    EXPECT_EQ(Floats(Get(o.h, 0, 1).h), s1);
  }
  EXPECT_EQ(producer.deleter_calls, 0) << "tc still holds the producer's data";
}

TEST(CApiPipeline, EmptyBatchHasShapeZero) {
  PipelineHandle p = FromString(Yaml(kExternalOps, "y"));
  ASSERT_EQ(conveyor_pipeline_feed_samples(p.h, "src", nullptr, 0), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
  TensorHandle t = Get(o.h, 0, -1);
  const conveyor_tensor_info_t info = Info(t.h);
  EXPECT_EQ(info.ndim, 1);
  EXPECT_EQ(info.shape[0], 0);
}

// ---- errors ------------------------------------------------------------------------------------

std::string WriteFile(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CApiPipelineErrors, BadFileNamesFileLineAndColumn) {
  // Line 4, column 51: the misspelt key.
  const std::string path = WriteFile("bad.yaml",
                                     "pipeline: {name: bad, batch_size: 2, device: cpu}\n"
                                     "ops:\n"
                                     "  - {op: random.uniform, name: noise, outputs: [n],\n"
                                     "     args: {range: [0.0, 1.0], shape: [2], seeed: 3}}\n"
                                     "outputs: [n]\n");
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_file(path.c_str(), &p.h), CONVEYOR_ERROR_CONFIG);
  EXPECT_EQ(p.h, nullptr);
  EXPECT_THAT(conveyor_last_error(), StartsWith("conveyor_pipeline_create_from_file: " + path + ":4:"));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("unknown argument \"seeed\""));
}

TEST(CApiPipelineErrors, BadStringNamesLineAndColumn) {
  PipelineHandle p;
  const std::string yaml = Yaml("  - {op: random.unifrom, name: noise, outputs: [n]}\n", "n");
  ASSERT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &p.h), CONVEYOR_ERROR_CONFIG);
  EXPECT_THAT(conveyor_last_error(), StartsWith("conveyor_pipeline_create_from_string: <string>:3:"));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("random.unifrom"));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("did you mean \"random.uniform\""));
  // Malformed YAML, too.
  ASSERT_EQ(conveyor_pipeline_create_from_string("pipeline: {name: x\nops: [\n", nullptr, &p.h),
            CONVEYOR_ERROR_CONFIG);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("<string>:"));
}

TEST(CApiPipelineErrors, MissingFileIsNamed) {
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_file("/nonexistent/train.yaml", &p.h), CONVEYOR_ERROR_CONFIG);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("/nonexistent/train.yaml: cannot open the pipeline file"));
}

TEST(CApiPipelineErrors, FeedNamesTheNodeAndWhatIsWrong) {
  PipelineHandle p = FromString(Yaml(kExternalOps, "y"));
  TensorHandle t = HostTensor({2, 4}, std::vector<float>(8, 1.f));
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, "scr", t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("conveyor_pipeline_feed_batch: node: expected an external_source node of pipeline "
                        "\"capi_cpu\" (external sources: src), got \"scr\", which is no node of it; did you mean "
                        "\"src\"?"));
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, "dup", t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("node \"dup\" of pipeline \"capi_cpu\" runs op \"copy\"; only "
                                               "external_source nodes can be fed"));
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, nullptr, t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("node: expected a non-NULL pointer, got NULL"));

  // Rank 0 is no batch.
  TensorHandle scalar = HostTensor({}, {1.f});
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, "src", scalar.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("batch: expected a tensor of at least 1 dimension whose first is "
                                               "the batch, got shape ()"));
  // Samples of mixed dtypes.
  TensorHandle i32;
  const int64_t shape[] = {4};
  ASSERT_EQ(conveyor_tensor_empty(1, shape, CONVEYOR_DTYPE_INT32, CONVEYOR_DEVICE_CPU, 0, -1, &i32.h), CONVEYOR_OK);
  TensorHandle f32 = HostTensor({4}, std::vector<float>(4, 0.f));
  const conveyor_tensor_t mixed[] = {f32.h, i32.h};
  EXPECT_EQ(conveyor_pipeline_feed_samples(p.h, "src", mixed, 2), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("node \"src\": expected every sample of dtype float32, got sample 1 of dtype int32"));
  const conveyor_tensor_t with_null[] = {f32.h, nullptr};
  EXPECT_EQ(conveyor_pipeline_feed_samples(p.h, "src", with_null, 2), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("samples[1]: expected a tensor handle, got NULL"));
  EXPECT_EQ(conveyor_pipeline_feed_samples(p.h, "src", mixed, -1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("count: expected >= 0, got -1"));

  // The node's dtype and rank are checked once built (the executor knows the node then).
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  const conveyor_tensor_t ints[] = {i32.h};
  EXPECT_EQ(conveyor_pipeline_feed_samples(p.h, "src", ints, 1), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("node \"src\" expects dtype float32, got int32"));
  EXPECT_EQ(conveyor_pipeline_feed_batch(p.h, "src", HostTensor({2, 2, 2}, std::vector<float>(8, 0.f)).h),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("node \"src\" expects 1-D samples, sample 0 has shape (2, 2)"));
}

TEST(CApiPipeline, ReaderEpochSize) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string root = std::string(dir != nullptr ? dir : "/tmp") + "/capi_reader";
  std::filesystem::create_directories(root + "/cls");
  for (int i = 0; i < 7; ++i) std::ofstream(root + "/cls/" + std::to_string(i) + ".jpg") << "bytes" << i;
  PipelineHandle p = FromString(Yaml("  - {op: readers.file, name: reader, args: {file_root: \"" + root +
                                         "\", pad_last_batch: true}, outputs: [data, labels]}\n",
                                     "data, labels", 2, 4));
  int64_t size = -1;
  EXPECT_EQ(conveyor_pipeline_epoch_size(p.h, "reader", &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("EpochSize() before Build()"));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_epoch_size(p.h, "reader", &size), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(size, 8) << "7 files padded to 2 batches of 4";
  EXPECT_EQ(conveyor_pipeline_epoch_size(p.h, "nope", &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("no node named \"nope\""));
  EXPECT_EQ(conveyor_pipeline_epoch_size(p.h, "reader", nullptr), CONVEYOR_ERROR_INVALID_ARGUMENT);
}

TEST(CApiPipelineErrors, RunAndOutputsOutOfOrder) {
  PipelineHandle p = FromString(Yaml(kExternalOps, "y"));
  EXPECT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_pipeline_run: pipeline \"capi_cpu\": Run() before Build()"));
  OutputsHandle o;
  EXPECT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("Outputs() before Build()"));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("Build() called twice"));
  // Nothing fed, so nothing was primed or can be scheduled.
  EXPECT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("no iteration is scheduled; call Run() first"));
  EXPECT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("external_source node \"src\" has no batch for iteration 0; call Feed() first"));
  EXPECT_EQ(o.h, nullptr);
}

TEST(CApiPipelineErrors, OutputIndexAndSampleAreChecked) {
  PipelineHandle p = FromString(Yaml(kRandomOps, "noise, quantized"));
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK);
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK);
  TensorHandle t;
  EXPECT_EQ(conveyor_outputs_get(o.h, 2, 0, &t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(),
              HasSubstr("conveyor_outputs_get: index: expected 0 to 1 (outputs: noise, quantized), got 2"));
  EXPECT_EQ(conveyor_outputs_get(o.h, 0, 4, &t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("sample: expected -1 (the whole batch) or 0 to 3 for output "
                                               "\"noise\" of 4 samples, got 4"));
  EXPECT_EQ(conveyor_outputs_get(o.h, 0, -2, &t.h), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(t.h, nullptr);
  int32_t index = 0;
  EXPECT_EQ(conveyor_outputs_index(o.h, "nosie", &index), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("no output \"nosie\" (outputs: noise, quantized)"));
  const char* name = nullptr;
  EXPECT_EQ(conveyor_outputs_name(o.h, -1, &name), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_outputs_name: index: expected 0 to 1"));
  EXPECT_EQ(conveyor_outputs_wait(o.h, 0), CONVEYOR_ERROR_INTEROP);
  const char* source = nullptr;
  EXPECT_EQ(conveyor_pipeline_external_source_name(p.h, 0, &source), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("index: expected 0 to -1 (external sources: none), got 0"));
}

TEST(CApiPipelineErrors, NullHandlesAreRejectedByName) {
  const std::string yaml = Yaml(kRandomOps, "noise");
  conveyor_pipeline_t p = nullptr;
  conveyor_outputs_t o = nullptr;
  conveyor_tensor_t t = nullptr;
  int32_t i32 = 0;
  int64_t i64 = 0;
  const char* s = nullptr;
  struct Case {
    std::function<conveyor_status_t()> call;
    const char* message;
  };
  const Case cases[] = {
      {[&] { return conveyor_pipeline_create_from_file(nullptr, &p); },
       "conveyor_pipeline_create_from_file: path: expected"},
      {[&] { return conveyor_pipeline_create_from_file("x.yaml", nullptr); },
       "conveyor_pipeline_create_from_file: out: expected"},
      {[&] { return conveyor_pipeline_create_from_string(nullptr, nullptr, &p); },
       "conveyor_pipeline_create_from_string: yaml:"},
      {[&] { return conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, nullptr); },
       "conveyor_pipeline_create_from_string: out:"},
      {[&] { return conveyor_pipeline_build(nullptr); },
       "conveyor_pipeline_build: pipeline: expected a non-NULL pointer, got NULL"},
      {[&] { return conveyor_pipeline_run(nullptr); }, "conveyor_pipeline_run: pipeline: expected"},
      {[&] { return conveyor_pipeline_outputs(nullptr, &o); }, "conveyor_pipeline_outputs: pipeline: expected"},
      {[&] { return conveyor_pipeline_epoch_size(nullptr, "r", &i64); }, "conveyor_pipeline_epoch_size: pipeline:"},
      {[&] { return conveyor_pipeline_external_source_count(nullptr, &i32); },
       "conveyor_pipeline_external_source_count: pipeline:"},
      {[&] { return conveyor_pipeline_external_source_name(nullptr, 0, &s); },
       "conveyor_pipeline_external_source_name: pipeline:"},
      {[&] { return conveyor_pipeline_feed_batch(nullptr, "src", t); },
       "conveyor_pipeline_feed_batch: pipeline: expected"},
      {[&] { return conveyor_pipeline_feed_samples(nullptr, "src", &t, 1); },
       "conveyor_pipeline_feed_samples: pipeline: expected"},
      {[&] { return conveyor_outputs_count(nullptr, &i32); },
       "conveyor_outputs_count: outputs: expected a non-NULL pointer"},
      {[&] { return conveyor_outputs_name(nullptr, 0, &s); }, "conveyor_outputs_name: outputs:"},
      {[&] { return conveyor_outputs_index(nullptr, "x", &i32); }, "conveyor_outputs_index: outputs:"},
      {[&] { return conveyor_outputs_iteration(nullptr, &i64); }, "conveyor_outputs_iteration: outputs:"},
      {[&] { return conveyor_outputs_num_samples(nullptr, 0, &i32); }, "conveyor_outputs_num_samples: outputs:"},
      {[&] { return conveyor_outputs_is_uniform(nullptr, 0, &i32); }, "conveyor_outputs_is_uniform: outputs:"},
      {[&] { return conveyor_outputs_get(nullptr, 0, 0, &t); }, "conveyor_outputs_get: outputs:"},
      {[&] { return conveyor_outputs_wait(nullptr, -1); }, "conveyor_outputs_wait: outputs:"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.call(), CONVEYOR_ERROR_INVALID_ARGUMENT) << c.message;
    EXPECT_THAT(conveyor_last_error(), HasSubstr(c.message));
    EXPECT_THAT(conveyor_last_error(), HasSubstr("expected a non-NULL pointer, got NULL"));
  }
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(o, nullptr);
  EXPECT_EQ(t, nullptr);
  // Freeing NULL is a no-op.
  conveyor_pipeline_destroy(nullptr);
  conveyor_outputs_release(nullptr);
}

// ---- the shared library ------------------------------------------------------------------------

TEST(CApiPipelineSharedLibrary, ExportsThePipelineApiAndFindsItsOperators) {
  std::string tried;
  void* lib = testing::OpenConveyorLibrary(tried);
  ASSERT_EQ(tried.find(" ("), std::string::npos) << "the library exists but does not open:" << tried;
  if (lib == nullptr) GTEST_SKIP() << "libconveyor_c.so is not beside this test; tried" << tried;
  for (const char* name :
       {"conveyor_pipeline_create_from_file", "conveyor_pipeline_create_from_string", "conveyor_pipeline_destroy",
        "conveyor_pipeline_build", "conveyor_pipeline_run", "conveyor_pipeline_outputs",
        "conveyor_pipeline_external_source_count", "conveyor_pipeline_external_source_name",
        "conveyor_pipeline_feed_batch", "conveyor_pipeline_feed_samples", "conveyor_outputs_count",
        "conveyor_outputs_name", "conveyor_outputs_index", "conveyor_outputs_iteration",
        "conveyor_outputs_num_samples", "conveyor_outputs_is_uniform", "conveyor_outputs_get",
        "conveyor_outputs_wait", "conveyor_outputs_release"}) {
    EXPECT_NE(dlsym(lib, name), nullptr) << name;
  }
  // The library's own registry (not this test's) must know the operators: run a pipeline through it.
  using Create = conveyor_status_t (*)(const char*, const char*, conveyor_pipeline_t*);
  using Build = conveyor_status_t (*)(conveyor_pipeline_t);
  using Outputs = conveyor_status_t (*)(conveyor_pipeline_t, conveyor_outputs_t*);
  using Error = const char* (*)();
  auto create = reinterpret_cast<Create>(dlsym(lib, "conveyor_pipeline_create_from_string"));
  auto build = reinterpret_cast<Build>(dlsym(lib, "conveyor_pipeline_build"));
  auto outputs = reinterpret_cast<Outputs>(dlsym(lib, "conveyor_pipeline_outputs"));
  auto release = reinterpret_cast<void (*)(conveyor_outputs_t)>(dlsym(lib, "conveyor_outputs_release"));
  auto destroy = reinterpret_cast<void (*)(conveyor_pipeline_t)>(dlsym(lib, "conveyor_pipeline_destroy"));
  auto error = reinterpret_cast<Error>(dlsym(lib, "conveyor_last_error"));
  conveyor_pipeline_t p = nullptr;
  ASSERT_EQ(create(Yaml(kRandomOps + kExternalOps, "quantized, y").c_str(), nullptr, &p), CONVEYOR_OK) << error();
  EXPECT_EQ(build(p), CONVEYOR_OK) << error();
  conveyor_outputs_t o = nullptr;
  // Nothing fed: nothing primed, but the graph (every op) was built.
  EXPECT_NE(outputs(p, &o), CONVEYOR_OK);
  EXPECT_THAT(error(), HasSubstr("no iteration is scheduled"));
  release(o);
  destroy(p);
  dlclose(lib);
}

}  // namespace
}  // namespace conveyor::capi
