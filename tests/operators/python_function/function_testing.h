// C callbacks for python_function tests, registered through the C API as an application would,
// and random host batches to feed them.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/capi/conveyor.h"
#include "core/op/harness.h"

namespace conveyor::testing {

// Registers a function for one test and removes the registration at its end.
class ScopedFunction {
 public:
  ScopedFunction(std::string name, conveyor_function_fn fn, void* user_data = nullptr,
                 conveyor_function_destroy_fn destroy = nullptr)
      : name_(std::move(name)) {
    EXPECT_EQ(conveyor_register_function(name_.c_str(), fn, user_data, destroy), CONVEYOR_OK) << conveyor_last_error();
  }
  ~ScopedFunction() { conveyor_unregister_function(name_.c_str()); }
  ScopedFunction(const ScopedFunction&) = delete;
  ScopedFunction& operator=(const ScopedFunction&) = delete;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// What the functions below record about their calls (user_data).
struct CallLog {
  std::vector<conveyor_function_call_desc_t> calls;
  std::vector<std::string> input_layouts;  // input 0's, per call
  std::atomic<int> destroyed{0};           // CountDestroy's count
};

inline conveyor_function_call_desc_t Describe(conveyor_function_call_t call, void* user_data) {
  conveyor_function_call_desc_t d{};
  EXPECT_EQ(conveyor_function_call_describe(call, &d), CONVEYOR_OK) << conveyor_last_error();
  if (user_data != nullptr) {
    auto* log = static_cast<CallLog*>(user_data);
    log->calls.push_back(d);
    const char* layout = nullptr;
    EXPECT_EQ(conveyor_function_call_input_layout(call, 0, &layout), CONVEYOR_OK) << conveyor_last_error();
    log->input_layouts.emplace_back(layout == nullptr ? "(null)" : layout);
  }
  return d;
}

inline std::vector<conveyor_tensor_info_t> Inputs(conveyor_function_call_t call, int input, int num_samples) {
  std::vector<conveyor_tensor_info_t> infos(static_cast<size_t>(num_samples));
  EXPECT_EQ(conveyor_function_call_inputs(call, input, infos.data()), CONVEYOR_OK) << conveyor_last_error();
  return infos;
}

inline int64_t Elements(const conveyor_tensor_info_t& info) {
  int64_t n = 1;
  for (int d = 0; d < info.ndim; ++d) n *= info.shape[d];
  return n;
}

// Output 0 = 2 * input 0 (float32 in, float32 out, same shape), for every sample of the call.
inline int32_t DoubleFloats(conveyor_function_call_t call, void* user_data) {
  const conveyor_function_call_desc_t d = Describe(call, user_data);
  const std::vector<conveyor_tensor_info_t> in = Inputs(call, 0, d.num_samples);
  for (int s = 0; s < d.num_samples; ++s) {
    void* out = nullptr;
    if (conveyor_function_call_output(call, 0, s, in[s].ndim, in[s].shape, CONVEYOR_DTYPE_FLOAT32, nullptr, &out) !=
        CONVEYOR_OK) {
      return 1;
    }
    const float* src = static_cast<const float*>(in[s].data);
    for (int64_t i = 0; i < Elements(in[s]); ++i) static_cast<float*>(out)[i] = 2.0f * src[i];
  }
  return 0;
}

// Two float32 inputs of equal shapes: output 0 = a + b, output 1 = a - b.
inline int32_t SumAndDifference(conveyor_function_call_t call, void* user_data) {
  const conveyor_function_call_desc_t d = Describe(call, user_data);
  const std::vector<conveyor_tensor_info_t> a = Inputs(call, 0, d.num_samples);
  const std::vector<conveyor_tensor_info_t> b = Inputs(call, 1, d.num_samples);
  for (int s = 0; s < d.num_samples; ++s) {
    void* sum = nullptr;
    void* diff = nullptr;
    if (conveyor_function_call_output(call, 0, s, a[s].ndim, a[s].shape, CONVEYOR_DTYPE_FLOAT32, nullptr, &sum) ||
        conveyor_function_call_output(call, 1, s, a[s].ndim, a[s].shape, CONVEYOR_DTYPE_FLOAT32, nullptr, &diff)) {
      return 1;
    }
    const float* x = static_cast<const float*>(a[s].data);
    const float* y = static_cast<const float*>(b[s].data);
    for (int64_t i = 0; i < Elements(a[s]); ++i) {
      static_cast<float*>(sum)[i] = x[i] + y[i];
      static_cast<float*>(diff)[i] = x[i] - y[i];
    }
  }
  return 0;
}

// Output 0: the input's shape as int64 [ndim] with layout "C" (another dtype, rank and layout
// than the input's: the function decides).
inline int32_t ShapeOf(conveyor_function_call_t call, void* user_data) {
  const conveyor_function_call_desc_t d = Describe(call, user_data);
  const std::vector<conveyor_tensor_info_t> in = Inputs(call, 0, d.num_samples);
  for (int s = 0; s < d.num_samples; ++s) {
    const int64_t n = in[s].ndim;
    void* out = nullptr;
    if (conveyor_function_call_output(call, 0, s, 1, &n, CONVEYOR_DTYPE_INT64, "C", &out) != CONVEYOR_OK) return 1;
    std::memcpy(out, in[s].shape, sizeof(int64_t) * static_cast<size_t>(n));
  }
  return 0;
}

// Fails with the message in user_data (a const char*), setting no output.
inline int32_t FailWithMessage(conveyor_function_call_t call, void* user_data) {
  conveyor_function_call_set_error(call, static_cast<const char*>(user_data));
  return 7;
}

// Counts destroy calls (user_data: CallLog*).
inline void CountDestroy(void* user_data) { ++static_cast<CallLog*>(user_data)->destroyed; }

// Float32 samples of the given lengths, uniform in [0.5, 100) (never zero), and layout "W".
inline TensorListCPU RandomFloats(const std::vector<int64_t>& lengths, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.5f, 100.0f);
  std::vector<Shape> shapes;
  for (int64_t n : lengths) shapes.push_back(Shape{n});
  TensorListCPU list;
  list.Resize(shapes, DType::kFloat32);
  list.set_layout("W");
  for (int s = 0; s < list.num_samples(); ++s) {
    float* p = static_cast<float*>(list.raw_sample(s));
    for (int64_t i = 0; i < lengths[static_cast<size_t>(s)]; ++i) p[i] = value(rng);
  }
  return list;
}

inline const float* Floats(const TensorListCPU& list, int sample) {
  return static_cast<const float*>(list.raw_sample(sample));
}

}  // namespace conveyor::testing
