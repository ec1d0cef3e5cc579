// Helpers for the per-pixel image operator tests: random batches, running an op on the CPU or
// GPU through OpHarness, per-sample argument batches, reading elements back, error text.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "core/tensor/half.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {

// Fresh random samples of `dtype` (uint8 over 0..255, floats over [lo, hi), half types rounded).
inline TensorListCPU RandomBatch(const std::vector<Shape>& shapes, DType dtype, Layout layout, float lo = -50.f,
                                 float hi = 50.f) {
  TensorListCPU list;
  list.Resize(shapes, dtype);
  list.set_layout(std::move(layout));
  for (int s = 0; s < list.num_samples(); ++s) {
    const size_t n = static_cast<size_t>(list.shape(s).num_elements());
    if (n == 0) continue;  // memcpy from an empty vector's null data(): UBSan
    void* dst = list.raw_sample(s);
    if (dtype == DType::kUInt8) {
      auto v = RandomVector<uint8_t>(n, 0, 255);
      std::memcpy(dst, v.data(), n);
    } else {
      auto v = RandomVector<float>(n, lo, hi);
      for (size_t j = 0; j < n; ++j) {
        switch (dtype) {
          case DType::kFloat32: static_cast<float*>(dst)[j] = v[j]; break;
          case DType::kFloat64: static_cast<double*>(dst)[j] = v[j]; break;
          case DType::kFloat16: static_cast<uint16_t*>(dst)[j] = FloatToHalfBits(v[j]); break;
          case DType::kBFloat16: static_cast<uint16_t*>(dst)[j] = FloatToBFloat16Bits(v[j]); break;
          case DType::kInt32: static_cast<int32_t*>(dst)[j] = static_cast<int32_t>(v[j] * 100); break;
          case DType::kInt16: static_cast<int16_t*>(dst)[j] = static_cast<int16_t>(v[j] * 100); break;
          case DType::kInt64: static_cast<int64_t*>(dst)[j] = static_cast<int64_t>(v[j] * 1e6); break;
          case DType::kInt8: static_cast<int8_t*>(dst)[j] = static_cast<int8_t>(v[j]); break;
          case DType::kUInt16: static_cast<uint16_t*>(dst)[j] = static_cast<uint16_t>(v[j] * 100 + 6000); break;
          case DType::kBool: static_cast<bool*>(dst)[j] = v[j] > 0; break;
          default: ADD_FAILURE() << "RandomBatch: no data for " << DTypeName(dtype);
        }
      }
    }
  }
  return list;
}

// One scalar per sample, for SetArgInput.
template <typename T>
TensorListCPU PerSampleScalars(const std::vector<T>& values) {
  std::vector<Shape> shapes(values.size(), Shape{});
  std::vector<std::vector<T>> v;
  for (const T& x : values) v.push_back({x});
  return MakeBatch<T>(shapes, v);
}

// One 1-D list per sample, for SetArgInput of list arguments.
template <typename T>
TensorListCPU PerSampleLists(const std::vector<std::vector<T>>& values) {
  std::vector<Shape> shapes;
  for (const auto& v : values) shapes.push_back(Shape{static_cast<int64_t>(v.size())});
  return MakeBatch<T>(shapes, values);
}

using ArgInputs = std::map<std::string, TensorListCPU>;

// Runs `spec` on `device` over `input` (and per-sample `args`); returns output 0 on the host.
inline TensorListCPU RunOp(const OpSpec& spec, Device device, const TensorListCPU& input, const ArgInputs& args = {}) {
  OpHarness h(spec, device, input.num_samples());
  h.SetInput(0, input);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  if (device == Device::kGpu) {
    cuda::Stream stream = cuda::Stream::Create();
    h.Run(stream.view());
    return h.OutputToHost(0);
  }
  h.Run();
  return h.OutputToHost(0);
}

// Element j of sample s as float (uint8, float16, bfloat16, float32).
inline float At(const TensorListCPU& t, int s, int64_t j) {
  const void* p = t.raw_sample(s);
  switch (t.dtype()) {
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[j];
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(p)[j]);
    case DType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[j]);
    case DType::kFloat32: return static_cast<const float*>(p)[j];
    case DType::kFloat64: return static_cast<float>(static_cast<const double*>(p)[j]);
    default: ADD_FAILURE() << "At: " << DTypeName(t.dtype()); return 0;
  }
}

inline std::vector<float> SampleValues(const TensorListCPU& t, int s) {
  std::vector<float> v;
  for (int64_t j = 0; j < t.shape(s).num_elements(); ++j) v.push_back(At(t, s, j));
  return v;
}

// Same shapes, dtype, layout, and bit-identical sample bytes.
inline void ExpectSameBytes(const TensorListCPU& got, const TensorListCPU& want, const std::string& what) {
  ASSERT_EQ(got.shapes(), want.shapes()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(got.layout(), want.layout()) << what;
  for (int s = 0; s < want.num_samples(); ++s) {
    const size_t bytes = static_cast<size_t>(want.shape(s).num_elements()) * DTypeSize(want.dtype());
    EXPECT_EQ(std::memcmp(got.raw_sample(s), want.raw_sample(s), bytes), 0) << what << ": sample " << s;
  }
}

// The message of the exception `fn` throws (failing the test when it throws none).
template <typename E = std::exception>
std::string ErrorText(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// Runs `spec` on the CPU over `input` and returns the error text.
inline std::string RunError(const OpSpec& spec, const TensorListCPU& input, const ArgInputs& args = {}) {
  return ErrorText([&] { RunOp(spec, Device::kCpu, input, args); });
}

// Random sample shapes {h, w, c} with h in [1, max_h], w in [1, max_w].
inline std::vector<Shape> RandomHwcShapes(int n, int64_t min_hw, int64_t max_h, int64_t max_w, int64_t c) {
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(Shape{RandomVector<int64_t>(1, min_hw, max_h)[0], RandomVector<int64_t>(1, min_hw, max_w)[0], c});
  }
  return shapes;
}

}  // namespace conveyor::testing
