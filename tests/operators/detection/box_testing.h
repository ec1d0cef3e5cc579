// Test helpers for the box operators: random boxes, batches of per-sample box lists, one-call runs
// of multi-input, multi-output operators through OpHarness, and error capture.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/op/harness.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {

// n random ltrb boxes with positive extent inside [0, 1] (4 floats each).
inline std::vector<float> RandomLtrb(size_t n, float min_size = 0.02f) {
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    const float w = RandomVector<float>(1, min_size, 0.9f)[0], h = RandomVector<float>(1, min_size, 0.9f)[0];
    const float l = RandomVector<float>(1, 0.f, 1.f - w)[0], t = RandomVector<float>(1, 0.f, 1.f - h)[0];
    v.insert(v.end(), {l, t, l + w, t + h});
  }
  return v;
}

// ltrb -> xywh, element-wise over a flat list of boxes.
inline std::vector<float> LtrbToXywh(const std::vector<float>& ltrb) {
  std::vector<float> v = ltrb;
  for (size_t i = 0; i + 3 < v.size(); i += 4) {
    v[i + 2] = ltrb[i + 2] - ltrb[i];
    v[i + 3] = ltrb[i + 3] - ltrb[i + 1];
  }
  return v;
}

// A float32 batch of [N_i, 4] samples.
inline TensorListCPU BoxBatch(const std::vector<std::vector<float>>& samples) {
  std::vector<Shape> shapes;
  for (const auto& s : samples) shapes.push_back(Shape{static_cast<int64_t>(s.size() / 4), 4});
  return MakeBatch<float>(shapes, samples);
}

// An int32 batch of [N_i] label samples.
inline TensorListCPU LabelBatch(const std::vector<std::vector<int32_t>>& samples) {
  std::vector<Shape> shapes;
  for (const auto& s : samples) shapes.push_back(Shape{static_cast<int64_t>(s.size())});
  return MakeBatch<int32_t>(shapes, samples);
}

// Random labels in [1, 90], one per box of each sample of `boxes`.
inline TensorListCPU RandomLabels(const TensorListCPU& boxes) {
  std::vector<std::vector<int32_t>> v;
  for (int s = 0; s < boxes.num_samples(); ++s) {
    v.push_back(RandomVector<int32_t>(static_cast<size_t>(boxes.shape(s)[0]), 1, 90));
  }
  return LabelBatch(v);
}

// Per-sample argument values: sample i is the 1-D float32 tensor values[i].
inline TensorListCPU ArgBatch(const std::vector<std::vector<float>>& values) {
  std::vector<Shape> shapes;
  for (const auto& v : values) shapes.push_back(Shape{static_cast<int64_t>(v.size())});
  return MakeBatch<float>(shapes, values);
}

// Per-sample scalar argument values.
inline TensorListCPU Scalars(const std::vector<float>& v) {
  std::vector<std::vector<float>> values;
  for (float x : v) values.push_back({x});
  return MakeBatch<float>(std::vector<Shape>(v.size(), Shape{}), values);
}

template <typename T>
std::vector<T> Values(const TensorListCPU& list, int sample) {
  const auto* p = static_cast<const T*>(list.raw_sample(sample));
  return std::vector<T>(p, p + list.shape(sample).num_elements());
}

struct BoxRun {
  OpSpec spec;
  std::vector<TensorListCPU> inputs;
  std::vector<std::pair<std::string, TensorListCPU>> arg_inputs = {};
  int64_t iteration = 0;
  uint64_t seed = 1234;
  int num_threads = 2;
};

// Runs the CPU operator once; every output on the host.
inline std::vector<TensorListCPU> RunBoxOp(const BoxRun& r) {
  const int batch = r.inputs.empty() ? 1 : r.inputs[0].num_samples();
  OpHarness h(r.spec, Device::kCpu, batch);
  h.set_num_threads(r.num_threads);
  for (size_t i = 0; i < r.inputs.size(); ++i) h.SetInput(static_cast<int>(i), r.inputs[i]);
  for (const auto& [name, values] : r.arg_inputs) h.SetArgInput(name, values);
  h.set_iteration(r.iteration);
  h.set_seed(r.seed);
  h.Run();
  std::vector<TensorListCPU> out;
  for (size_t o = 0; o < r.spec.outputs().size(); ++o) out.push_back(h.OutputToHost(static_cast<int>(o)));
  return out;
}

// The message `fn` throws, or "no error".
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

inline std::string RunError(const BoxRun& r) {
  return ErrorOf([&] { RunBoxOp(r); });
}

// Equal bytes (shapes, dtypes and sample data), as a message ("" when equal).
inline std::string SameBytes(const TensorListCPU& a, const TensorListCPU& b) {
  if (a.shapes() != b.shapes()) return "shapes differ";
  if (a.dtype() != b.dtype()) return "dtypes differ";
  for (int s = 0; s < a.num_samples(); ++s) {
    const size_t bytes = static_cast<size_t>(a.shape(s).num_elements()) * DTypeSize(a.dtype());
    if (bytes && std::memcmp(a.raw_sample(s), b.raw_sample(s), bytes) != 0) return "sample " + std::to_string(s);
  }
  return "";
}

}  // namespace conveyor::testing
