// Helpers for the image operators' sequence tests: random FHWC clips, and the reference a clip is
// checked against — the operator run on HWC batches of single frames, with the same arguments,
// seed and iteration, so sample i of every frame batch is frame j of clip i and takes clip i's
// parameters (per-sample argument inputs and random draws are keyed by the sample index).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "core/tensor/tensor_list.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {

// `elements` fresh random elements of `dtype` at `dst` (uint8: 0..255; float32: [-20, 300);
// other types: random bytes — the operators that take them only move them).
inline void FillRandom(void* dst, int64_t elements, DType dtype) {
  if (elements == 0) return;
  const size_t n = static_cast<size_t>(elements);
  if (dtype == DType::kFloat32) {
    const std::vector<float> v = RandomVector<float>(n, -20.f, 300.f);
    std::memcpy(dst, v.data(), n * sizeof(float));
    return;
  }
  const std::vector<uint8_t> v = RandomVector<uint8_t>(n * DTypeSize(dtype), 0, 255);
  std::memcpy(dst, v.data(), v.size());
}

// A batch of FHWC clips: clip i has frames[i] random frames of frame_shapes[i] (H, W, C).
inline TensorListCPU RandomClips(const std::vector<int64_t>& frames, const std::vector<Shape>& frame_shapes,
                                 DType dtype, Layout layout = "FHWC") {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < frames.size(); ++i) {
    Shape s{frames[i]};
    for (int64_t e : frame_shapes[i]) s.push_back(e);
    shapes.push_back(s);
  }
  TensorListCPU clips;
  clips.Resize(shapes, dtype);
  clips.set_layout(std::move(layout));
  for (int i = 0; i < clips.num_samples(); ++i) FillRandom(clips.raw_sample(i), shapes[i].num_elements(), dtype);
  return clips;
}

// The shape of one frame of `clip_shape` (its first axis dropped).
inline Shape FrameShape(const Shape& clip_shape) { return Shape(clip_shape.begin() + 1, clip_shape.end()); }

// Sample i: frame j of clip i, or its last frame when it has fewer (a clip of no frames: a random
// frame of its frame shape). Those stand-ins keep the sample indices; their outputs are not used.
inline TensorListCPU FrameBatch(const TensorListCPU& clips, int64_t j, Layout frame_layout) {
  std::vector<Shape> shapes;
  for (int i = 0; i < clips.num_samples(); ++i) shapes.push_back(FrameShape(clips.shape(i)));
  TensorListCPU batch;
  batch.Resize(shapes, clips.dtype());
  batch.set_layout(std::move(frame_layout));
  for (int i = 0; i < clips.num_samples(); ++i) {
    const int64_t frames = clips.shape(i)[0];
    const size_t bytes = static_cast<size_t>(shapes[static_cast<size_t>(i)].num_elements()) * DTypeSize(clips.dtype());
    if (frames == 0) {
      FillRandom(batch.raw_sample(i), shapes[static_cast<size_t>(i)].num_elements(), clips.dtype());
    } else if (bytes > 0) {
      const int64_t f = j < frames ? j : frames - 1;
      std::memcpy(batch.raw_sample(i), static_cast<const char*>(clips.raw_sample(i)) + f * bytes, bytes);
    }
  }
  return batch;
}

// Checks that `got` (the operator's output for `clips`) is, clip by clip, the operator's output for
// each frame alone: `run_frames` runs it on an HWC batch (FrameBatch) with the clips' arguments.
// Returns "" or the first difference. `frame_layout`: the frames' input layout (HWC); the clips'
// output layout must be "F" + the frames' output layout.
inline std::string CompareWithFrameByFrame(const TensorListCPU& got, const TensorListCPU& clips,
                                           const std::function<TensorListCPU(const TensorListCPU&)>& run_frames,
                                           const Layout& frame_layout = "HWC") {
  int64_t max_frames = 1;  // at least one frame batch: it gives the output shape of empty clips
  for (int i = 0; i < clips.num_samples(); ++i) max_frames = std::max(max_frames, clips.shape(i)[0]);
  std::vector<TensorListCPU> per_frame;
  for (int64_t j = 0; j < max_frames; ++j) per_frame.push_back(run_frames(FrameBatch(clips, j, frame_layout)));
  const TensorListCPU& first = per_frame[0];
  if (got.num_samples() != clips.num_samples()) return "sample count differs";
  if (got.dtype() != first.dtype()) return "dtype differs from the frames' output";
  if (got.layout() != Layout("F" + std::string(first.layout().str()))) {
    return "layout " + std::string(got.layout().str()) + ", want F" + std::string(first.layout().str());
  }
  const size_t element = DTypeSize(first.dtype());
  for (int i = 0; i < clips.num_samples(); ++i) {
    const int64_t frames = clips.shape(i)[0];
    Shape want{frames};
    for (int64_t e : first.shape(i)) want.push_back(e);
    if (!(got.shape(i) == want)) {
      return "clip " + std::to_string(i) + ": shape " + got.shape(i).ToString() + ", want " + want.ToString();
    }
    const size_t frame_bytes = static_cast<size_t>(first.shape(i).num_elements()) * element;
    for (int64_t j = 0; j < frames; ++j) {
      const TensorListCPU& frame_out = per_frame[static_cast<size_t>(j)];
      if (!(frame_out.shape(i) == first.shape(i))) {
        return "clip " + std::to_string(i) + ": frame " + std::to_string(j) + " alone gives shape " +
               frame_out.shape(i).ToString() + ", frame 0 " + first.shape(i).ToString();
      }
      const auto* g = static_cast<const uint8_t*>(got.raw_sample(i)) + static_cast<size_t>(j) * frame_bytes;
      const auto* w = static_cast<const uint8_t*>(frame_out.raw_sample(i));
      for (size_t b = 0; b < frame_bytes; ++b) {
        if (g[b] != w[b]) {
          return "clip " + std::to_string(i) + " " + clips.shape(i).ToString() + ": frame " + std::to_string(j) +
                 ": byte " + std::to_string(b) + " is " + std::to_string(g[b]) + ", want " + std::to_string(w[b]);
        }
      }
    }
  }
  return "";
}

// `n` random frame shapes (H, W, C), H and W in [min_hw, max_hw].
inline std::vector<Shape> RandomFrameShapes(int n, int64_t min_hw, int64_t max_hw, int64_t channels) {
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(
        Shape{RandomVector<int64_t>(1, min_hw, max_hw)[0], RandomVector<int64_t>(1, min_hw, max_hw)[0], channels});
  }
  return shapes;
}

// A batch of random clips with mixed frame counts (0 and 1 included) and frame sizes.
inline TensorListCPU MixedClips(DType dtype, int64_t channels, int64_t min_hw = 8, int64_t max_hw = 40) {
  return RandomClips({3, 1, 5, 0, 2}, RandomFrameShapes(5, min_hw, max_hw, channels), dtype);
}

// Runs `spec` on `device` (GPU: on a fresh stream) with the given seed, iteration and per-sample
// argument inputs; returns output 0 on the host.
inline TensorListCPU RunWith(const OpSpec& spec, Device device, const TensorListCPU& input,
                             const std::vector<std::pair<std::string, TensorListCPU>>& args = {}, int64_t iteration = 0,
                             uint64_t seed = 1234) {
  OpHarness h(spec, device, input.num_samples());
  h.SetInput(0, input);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  h.set_iteration(iteration);
  h.set_seed(seed);
  if (device == Device::kGpu) {
    cuda::Stream stream = cuda::Stream::Create();
    h.Run(stream.view());
    return h.OutputToHost(0);
  }
  h.Run();
  return h.OutputToHost(0);
}

}  // namespace conveyor::testing
