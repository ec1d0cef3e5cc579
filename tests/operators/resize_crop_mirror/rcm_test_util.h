// The reference of the resize_crop_mirror tests: the `resize` operator's CPU run on each sample
// alone, then the window cut and mirrored by hand (DALI documents resize_crop_mirror as resize,
// then crop, then flip; the fused pass must give the same bytes).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {

inline OpSpec ResizeCropMirror() { return OpSpec("resize_crop_mirror", "rcm").AddInput("x").AddOutput("y"); }

// One sample's window and mirror, as the test gives them to the operator.
struct Window {
  int64_t h = 0, w = 0;
  double pos_y = 0.5, pos_x = 0.5;
  int mirror = 0;
};

// `resize_spec` (a `resize` OpSpec with the size arguments under test, interp_type, antialias,
// dtype) run on sample i of the HWC batch `in`, then windows[i] cut at round(pos * (resized -
// crop)) and mirrored. The output batch has `in`'s layout.
inline TensorListCPU ResizeThenCropThenMirror(const OpSpec& resize_spec, const TensorListCPU& in,
                                              const std::vector<Window>& windows) {
  std::vector<TensorListCPU> resized;
  std::vector<Shape> shapes;
  for (int i = 0; i < in.num_samples(); ++i) {
    resized.push_back(RunOp({resize_spec, SampleOf(in, i)}, Device::kCpu));
    const Window& win = windows[static_cast<size_t>(i)];
    shapes.push_back(in.shape(i).num_elements() == 0 ? Shape{0, 0, in.shape(i)[2]}
                                                     : Shape{win.h, win.w, in.shape(i)[2]});
  }
  TensorListCPU out;
  out.Resize(shapes, resized.empty() ? in.dtype() : resized[0].dtype());
  out.set_layout(in.layout());
  for (int i = 0; i < in.num_samples(); ++i) {
    if (shapes[static_cast<size_t>(i)].num_elements() == 0) continue;
    const Window& win = windows[static_cast<size_t>(i)];
    const TensorListCPU& r = resized[static_cast<size_t>(i)];
    const int64_t rh = r.shape(0)[0], rw = r.shape(0)[1], c = r.shape(0)[2];
    const int64_t y0 = std::llround(win.pos_y * static_cast<double>(rh - win.h));
    const int64_t x0 = std::llround(win.pos_x * static_cast<double>(rw - win.w));
    const size_t px = static_cast<size_t>(c) * DTypeSize(r.dtype());
    const auto* src = static_cast<const char*>(r.raw_sample(0));
    auto* dst = static_cast<char*>(out.raw_sample(i));
    for (int64_t y = 0; y < win.h; ++y) {
      for (int64_t x = 0; x < win.w; ++x) {
        const int64_t sy = y0 + ((win.mirror & 2) ? win.h - 1 - y : y);
        const int64_t sx = x0 + ((win.mirror & 1) ? win.w - 1 - x : x);
        std::memcpy(dst + static_cast<size_t>(y * win.w + x) * px, src + static_cast<size_t>(sy * rw + sx) * px, px);
      }
    }
  }
  return out;
}

// The per-sample argument inputs that give the operator `windows`: crop [h, w], crop_pos_x,
// crop_pos_y and mirror.
inline std::vector<std::pair<std::string, TensorListCPU>> WindowArgs(const std::vector<Window>& windows) {
  std::vector<std::vector<float>> crop, px, py;
  std::vector<std::vector<int64_t>> mirror;
  for (const Window& w : windows) {
    crop.push_back({static_cast<float>(w.h), static_cast<float>(w.w)});
    px.push_back({static_cast<float>(w.pos_x)});
    py.push_back({static_cast<float>(w.pos_y)});
    mirror.push_back({w.mirror});
  }
  return {{"crop", ArgValues(crop)},
          {"crop_pos_x", ArgValues(px, true)},
          {"crop_pos_y", ArgValues(py, true)},
          {"mirror", MakeBatch<int64_t>(std::vector<Shape>(windows.size(), Shape{}), mirror)}};
}

// The spec with those arguments fed per sample (names as WindowArgs).
inline OpSpec WithWindowInputs(OpSpec spec) {
  return spec.SetArgInput("crop", "crop").SetArgInput("crop_pos_x", "px").SetArgInput("crop_pos_y", "py")
      .SetArgInput("mirror", "mirror");
}

// The resized (h, w) of every sample of `in` under `resize_spec` (the resize operator's shapes).
inline std::vector<std::pair<int64_t, int64_t>> ResizedSizes(const OpSpec& resize_spec, const TensorListCPU& in) {
  const TensorListCPU r = RunOp({resize_spec, in}, Device::kCpu);
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int i = 0; i < r.num_samples(); ++i) sizes.emplace_back(r.shape(i)[0], r.shape(i)[1]);
  return sizes;
}

// Random windows inside the given resized sizes (per sample; at least 1x1 each), at random
// positions (the ends and the middle among them) with random mirrors. Positions are float32
// values, as the per-sample argument inputs carry them.
inline std::vector<Window> RandomWindows(const std::vector<std::pair<int64_t, int64_t>>& resized) {
  std::vector<Window> w;
  for (const auto& [rh, rw] : resized) {
    Window win;
    win.h = RandomVector<int64_t>(1, 1, std::max<int64_t>(rh, 1))[0];
    win.w = RandomVector<int64_t>(1, 1, std::max<int64_t>(rw, 1))[0];
    const int pick = RandomVector<int>(1, 0, 3)[0];
    win.pos_y = pick == 0 ? 0.0 : pick == 1 ? 1.0 : static_cast<float>(RandomVector<double>(1, 0.0, 1.0)[0]);
    win.pos_x = pick == 2 ? 0.5 : static_cast<float>(RandomVector<double>(1, 0.0, 1.0)[0]);
    win.mirror = RandomVector<int>(1, 0, 3)[0];
    w.push_back(win);
  }
  return w;
}

}  // namespace conveyor::testing
