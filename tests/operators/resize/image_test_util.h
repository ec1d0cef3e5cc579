// Test helpers for the geometric image operators: random HWC batches, one-call CPU/GPU runs,
// element access. Used by the resize, random_resized_crop, crop and flip tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {

// Fresh random pixels (uint8 in [0, 255], float32 in [-20, 300)) for every sample of `shapes`.
inline TensorListCPU RandomImages(const std::vector<Shape>& shapes, DType dtype, Layout layout = "HWC") {
  TensorListCPU list;
  list.Resize(shapes, dtype);
  list.set_layout(std::move(layout));
  for (int s = 0; s < list.num_samples(); ++s) {
    const size_t n = static_cast<size_t>(shapes[static_cast<size_t>(s)].num_elements());
    if (dtype == DType::kUInt8) {
      auto v = RandomVector<uint8_t>(n, 0, 255);
      if (n) std::memcpy(list.raw_sample(s), v.data(), n);
    } else if (dtype == DType::kFloat32) {
      auto v = RandomVector<float>(n, -20.f, 300.f);
      if (n) std::memcpy(list.raw_sample(s), v.data(), n * 4);
    } else {
      auto v = RandomVector<uint8_t>(n * DTypeSize(dtype), 0, 255);
      if (n) std::memcpy(list.raw_sample(s), v.data(), v.size());
    }
  }
  return list;
}

// Per-sample argument values: one 1-D float32 tensor (or scalar when `scalar`) per sample.
inline TensorListCPU ArgValues(const std::vector<std::vector<float>>& values, bool scalar = false) {
  std::vector<Shape> shapes;
  for (const auto& v : values) shapes.push_back(scalar ? Shape{} : Shape{static_cast<int64_t>(v.size())});
  return MakeBatch<float>(shapes, values);
}

struct OpRun {
  OpSpec spec;
  TensorListCPU input;
  std::vector<std::pair<std::string, TensorListCPU>> arg_inputs = {};
  int64_t iteration = 0;
};

// Runs the operator once on `device` (GPU: on a fresh stream) and returns output 0 on the host.
inline TensorListCPU RunOp(const OpRun& r, Device device) {
  OpHarness h(r.spec, device, r.input.num_samples());
  h.SetInput(0, r.input);
  for (const auto& [name, values] : r.arg_inputs) h.SetArgInput(name, values);
  h.set_iteration(r.iteration);
  if (device == Device::kGpu) {
    cuda::Stream stream = cuda::Stream::Create();
    h.Run(stream.view());
    return h.OutputToHost(0);
  }
  h.Run();
  return h.OutputToHost(0);
}

// The first differing byte of two batches, or "" when their shapes, dtypes and bytes agree.
inline std::string CompareExact(const TensorListCPU& got, const TensorListCPU& want) {
  if (got.shapes() != want.shapes()) return "shapes differ";
  if (got.dtype() != want.dtype()) return "dtypes differ";
  for (int s = 0; s < want.num_samples(); ++s) {
    const size_t bytes = static_cast<size_t>(want.shape(s).num_elements()) * DTypeSize(want.dtype());
    const auto* g = static_cast<const uint8_t*>(got.raw_sample(s));
    const auto* w = static_cast<const uint8_t*>(want.raw_sample(s));
    for (size_t i = 0; i < bytes; ++i) {
      if (g[i] != w[i]) {
        return "sample " + std::to_string(s) + " " + want.shape(s).ToString() + ": byte " + std::to_string(i) +
               " is " + std::to_string(g[i]) + ", want " + std::to_string(w[i]);
      }
    }
  }
  return "";
}

// Sample i of `list` as a batch of one.
inline TensorListCPU SampleOf(const TensorListCPU& list, int i) {
  TensorListCPU one;
  one.Resize({list.shape(i)}, list.dtype());
  one.set_layout(list.layout());
  const size_t bytes = static_cast<size_t>(list.shape(i).num_elements()) * DTypeSize(list.dtype());
  if (bytes) std::memcpy(one.raw_sample(0), list.raw_sample(i), bytes);
  return one;
}

template <typename T>
T At(const TensorListCPU& list, int sample, int64_t index) {
  return static_cast<const T*>(list.raw_sample(sample))[index];
}

// n random HWC shapes of 1..max_h x 1..max_w x channels.
inline std::vector<Shape> VaryingShapes(int n, int max_h, int max_w, int channels) {
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(Shape{RandomVector<int>(1, 1, max_h)[0], RandomVector<int>(1, 1, max_w)[0], channels});
  }
  return shapes;
}

// Iteration k's uint8 HWC batch for the captured-pipeline tests: the largest sizes (64x64) during
// warm-up (k < 2, so capacities are reached at once), then random sizes below them, then larger
// ones from `grow_at` (96x96 at grow_at itself: 2.25x the warm-up's bytes, so the growth does not
// depend on random sizes — buffers keep headroom beyond the bytes they were sized for).
inline TensorListCPU GrowingImages(int k, int batch, int grow_at) {
  std::vector<Shape> shapes;
  for (int s = 0; s < batch; ++s) {
    if (k < 2) {
      shapes.push_back(Shape{64, 64, 3});
    } else if (k == grow_at) {
      shapes.push_back(Shape{96, 96, 3});
    } else {
      const int hi = k >= grow_at ? 96 : 64;
      shapes.push_back(Shape{RandomVector<int>(1, 8, hi)[0], RandomVector<int>(1, 8, hi)[0], 3});
    }
  }
  return RandomImages(shapes, DType::kUInt8);
}

}  // namespace conveyor::testing
