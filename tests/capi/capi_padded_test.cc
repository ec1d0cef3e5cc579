// conveyor_outputs_get_padded on host outputs (CPU pipelines: runs in CI). Samples of different
// lengths (boxes [N, 4], N = 0 included) come back as one contiguous [n, max N, 4] tensor holding
// each sample at its start and the pad value after it, with their lengths and shapes; a pad value
// the dtype cannot hold is refused naming the output, the dtype and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/capi/conveyor.h"
#include "tests/capi/capi_handles.h"
#include "tests/util/gpu_test.h"

namespace conveyor::capi {
namespace {

using ::testing::HasSubstr;
using testing::OutputsHandle;
using testing::PipelineHandle;
using testing::TensorHandle;

const char* kYaml =
    "pipeline: {name: padded, batch_size: 3, device: cpu, num_threads: 2, seed: 5}\n"
    "ops:\n"
    "  - {op: external_source, name: src, args: {dtype: DTYPE, ndim: 2}, outputs: [boxes]}\n"
    "outputs: [boxes]\n";

PipelineHandle Build(const std::string& dtype) {
  std::string yaml = kYaml;
  yaml.replace(yaml.find("DTYPE"), 5, dtype);
  PipelineHandle p;
  EXPECT_EQ(conveyor_pipeline_create_from_string(yaml.c_str(), nullptr, &p.h), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  return p;
}

TensorHandle Host(const std::vector<int64_t>& shape, conveyor_dtype_t dtype, const void* values, size_t bytes) {
  TensorHandle t;
  EXPECT_EQ(conveyor_tensor_empty(static_cast<int32_t>(shape.size()), shape.data(), dtype, CONVEYOR_DEVICE_CPU, 0, -1,
                                  &t.h),
            CONVEYOR_OK)
      << conveyor_last_error();
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t.h, &info), CONVEYOR_OK);
  if (bytes > 0) std::memcpy(info.data, values, bytes);
  return t;
}

conveyor_tensor_info_t Info(const TensorHandle& t) {
  conveyor_tensor_info_t info{};
  EXPECT_EQ(conveyor_tensor_info(t.h, &info), CONVEYOR_OK) << conveyor_last_error();
  return info;
}

std::vector<int64_t> Shape(const conveyor_tensor_info_t& info) { return {info.shape, info.shape + info.ndim}; }

TEST(CApiPadded, RaggedHostOutputIsPaddedWithLengthsAndShapes) {
  PipelineHandle p = Build("float32");
  const std::vector<int64_t> counts = {2, 0, 3};
  std::vector<std::vector<float>> boxes;
  std::vector<TensorHandle> fed;
  for (int64_t n : counts) {
    boxes.push_back(conveyor::testing::RandomVector<float>(static_cast<size_t>(n * 4), 0.f, 1.f));
    fed.push_back(Host({n, 4}, CONVEYOR_DTYPE_FLOAT32, boxes.back().data(), boxes.back().size() * sizeof(float)));
  }
  const conveyor_tensor_t list[] = {fed[0].h, fed[1].h, fed[2].h};
  ASSERT_EQ(conveyor_pipeline_feed_samples(p.h, "src", list, 3), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
  TensorHandle data, lengths, shapes;
  ASSERT_EQ(conveyor_outputs_get_padded(o.h, 0, -1.0, -1, &data.h, &lengths.h, &shapes.h), CONVEYOR_OK)
      << conveyor_last_error();
  const conveyor_tensor_info_t d = Info(data), l = Info(lengths), s = Info(shapes);
  ASSERT_EQ(Shape(d), (std::vector<int64_t>{3, 3, 4}));
  ASSERT_EQ(Shape(l), (std::vector<int64_t>{3}));
  ASSERT_EQ(Shape(s), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(d.dtype, CONVEYOR_DTYPE_FLOAT32);
  EXPECT_EQ(l.dtype, CONVEYOR_DTYPE_INT64);
  const float* v = static_cast<const float*>(d.data);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(static_cast<const int64_t*>(l.data)[i], counts[static_cast<size_t>(i)]) << "sample " << i;
    EXPECT_EQ(static_cast<const int64_t*>(s.data)[2 * i], counts[static_cast<size_t>(i)]);
    EXPECT_EQ(static_cast<const int64_t*>(s.data)[2 * i + 1], 4);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) {
        const float got = v[(i * 3 + r) * 4 + c];
        const float want = r < counts[static_cast<size_t>(i)] ? boxes[static_cast<size_t>(i)][static_cast<size_t>(r * 4 + c)]
                                                               : -1.f;
        EXPECT_EQ(got, want) << "sample " << i << " row " << r << " col " << c;
      }
    }
  }
  // Shapes are optional; the padded copy does not hold the slot (released outputs, data intact).
  TensorHandle data2, lengths2;
  ASSERT_EQ(conveyor_outputs_get_padded(o.h, 0, 0.0, -1, &data2.h, &lengths2.h, nullptr), CONVEYOR_OK);
  conveyor_outputs_release(o.h);
  o.h = nullptr;
  EXPECT_EQ(static_cast<const float*>(Info(data2).data)[0], boxes[0][0]);
  EXPECT_EQ(static_cast<const float*>(Info(data2).data)[3 * 4], 0.f) << "sample 1 (no boxes) is all padding";
}

TEST(CApiPadded, PadValueTheDTypeCannotHoldIsRefused) {
  PipelineHandle p = Build("int32");
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {5, 6, 7, 8, 9, 10, 11, 12};
  TensorHandle t0 = Host({1, 4}, CONVEYOR_DTYPE_INT32, a.data(), a.size() * 4);
  TensorHandle t1 = Host({2, 4}, CONVEYOR_DTYPE_INT32, b.data(), b.size() * 4);
  TensorHandle t2 = Host({0, 4}, CONVEYOR_DTYPE_INT32, nullptr, 0);
  const conveyor_tensor_t list[] = {t0.h, t1.h, t2.h};
  ASSERT_EQ(conveyor_pipeline_feed_samples(p.h, "src", list, 3), CONVEYOR_OK) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_run(p.h), CONVEYOR_OK) << conveyor_last_error();
  OutputsHandle o;
  ASSERT_EQ(conveyor_pipeline_outputs(p.h, &o.h), CONVEYOR_OK) << conveyor_last_error();
  TensorHandle data, lengths;
  EXPECT_EQ(conveyor_outputs_get_padded(o.h, 0, 3e9, -1, &data.h, &lengths.h, nullptr),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("output \"boxes\": pad_value: expected a value that int32 holds, got 3000000000"));
  ASSERT_EQ(conveyor_outputs_get_padded(o.h, 0, -7.0, -1, &data.h, &lengths.h, nullptr), CONVEYOR_OK)
      << conveyor_last_error();
  const int32_t* v = static_cast<const int32_t*>(Info(data).data);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[4], -7) << "sample 0's second row is padding";
  EXPECT_EQ(v[8], 5);
  EXPECT_EQ(v[16], -7) << "sample 2 is all padding";
}

}  // namespace
}  // namespace conveyor::capi
