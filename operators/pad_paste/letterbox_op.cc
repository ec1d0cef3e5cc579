// letterbox: each HWC image resized keeping its aspect ratio to fit a size [H, W] canvas, then
// placed on it (centred, or at the top-left corner); the rest of the canvas takes fill_value.
// Outputs the per-sample box map too (letterbox.h), for coord_transform.
//
// | input   | dtypes          | layouts          | outputs                                      |
// |---------|-----------------|------------------|----------------------------------------------|
// | images  | uint8, float32  | HWC, 1..8 chans  | letterboxed [H, W, C] (input dtype);          |
// |         |                 |                  | transform float32 [4] = [sx, sy, ox, oy];     |
// |         |                 |                  | mt float32 [4, 5] (output_mt): coord_transform|
// |         |                 |                  | MT for [N, 4] boxes (ltrb or xywh)            |
//
// The pixels are the resample engine's (resize's filters, antialiasing, bit-exact CPU/GPU) into a
// scratch image, then the window engine's (pad/paste's) canvas:
//
//   image ──ResampleCpu/Gpu──> fitted [h', w', C] (scratch) ──WindowCpu/Gpu──> canvas [H, W, C]
//
// GPU: two launches per batch (resample, window) plus one device copy of the maps; descriptors
// from PrepareGpu, the scratch buffer per slot sized as the output's capacity (each fitted image
// is at most its canvas, so sample i's scratch sits at the offset of its canvas): capturable.
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "core/cuda/check.h"
#include "core/error.h"
#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/pad_paste/letterbox.h"
#include "operators/pad_paste/window_op.h"
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"

namespace conveyor::ops {
namespace {

const OpSchema kLetterboxSchema =
    OpSchema("letterbox")
        .Doc("Resizes each HWC image keeping its aspect ratio to fit a size [h, w] canvas and pads it to exactly that "
             "size with fill_value (centred, or top_left). Second output: the per-sample box map [sx, sy, ox, oy] "
             "(normalized: x' = x * sx + ox, y' = y * sy + oy); with output_mt also coord_transform's MT for boxes.")
        .Input("images", {"HWC"}, {DType::kUInt8, DType::kFloat32})
        .Output("letterboxed", "[size_h, size_w, C] per sample, the input's dtype.")
        .Output("transform", "float32 [4] per sample: [sx, sy, ox, oy] in normalized coordinates.")
        .OptionalOutput("mt", "output_mt",
                        "float32 [4, 5] per sample: coord_transform's MT moving [N, 4] boxes (layout by ltrb).")
        .RequiredArg<std::vector<int64_t>>("size", "Canvas [h, w] in pixels.")
        .Min(1)
        .Arg<std::vector<double>>("fill_value", std::vector<double>{0.0}, "Canvas value: one, or one per channel.")
        .Arg<std::string>("align", "center", "Where the fitted image sits: center or top_left.")
        .Choices({"center", "top_left"})
        .Arg<std::string>("interp_type", "linear",
                          "nearest (label maps), linear or cubic; DALI's INTERP_NN / INTERP_LINEAR / INTERP_CUBIC "
                          "are accepted.")
        .Choices(InterpTypeNames())
        .Arg<bool>("antialias", true, "When downscaling an axis by s > 1, stretch the linear/cubic filter by s.")
        .Arg<bool>("output_mt", false, "Add the output mt (coord_transform's MT for [N, 4] boxes).")
        .Arg<bool>("ltrb", false, "The boxes mt moves are [l, t, r, b] (else [x, y, w, h], DALI's default).")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

using Transform = std::array<float, 4>;
using BoxMT = std::array<float, 20>;

class LetterboxOp final : public Operator {
 public:
  explicit LetterboxOp(const OpSpec& spec)
      : Operator(spec),
        fill_(spec.Arg<std::vector<double>>("fill_value")),
        align_(spec.Arg<std::string>("align") == "top_left" ? LetterboxAlign::kTopLeft : LetterboxAlign::kCenter),
        filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))),
        antialias_(spec.Arg<bool>("antialias")),
        ltrb_(spec.Arg<bool>("ltrb")),
        mt_slot_(spec.OutputSlot("mt")) {
    const std::vector<int64_t> size = spec.Arg<std::vector<int64_t>>("size");
    if (size.size() != 2) {
      throw InvalidArgument(spec.Describe() + ": size must be [h, w], got " + std::to_string(size.size()) + " values");
    }
    canvas_h_ = size[0];
    canvas_w_ = size[1];
  }

  OutputDescs Setup(const Workspace& ws) override {
    CheckImageInput(ws, 0, {"HWC"}, {DType::kUInt8, DType::kFloat32}, kMaxResampleChannels);
    const TensorListDesc in = ws.InputDesc(0);
    dtype_ = in.dtype;
    const int n = static_cast<int>(in.shapes.size());
    OutputDesc image{{}, in.dtype, "HWC"}, transform{{}, DType::kFloat32, {}}, mt{{}, DType::kFloat32, {}};
    fits_.resize(static_cast<size_t>(n));
    windows_.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Shape& s = in.shapes[static_cast<size_t>(i)];
      const LetterboxFit& f = fits_[static_cast<size_t>(i)] = FitLetterbox(s[0], s[1], canvas_h_, canvas_w_, align_);
      WindowDesc& d = windows_[static_cast<size_t>(i)];
      d = WindowDesc{};
      d.in_h = f.h;
      d.in_w = f.w;
      d.in_c = d.out_c = s[2];
      d.out_h = canvas_h_;
      d.out_w = canvas_w_;
      d.y0 = -f.oy;
      d.x0 = -f.ox;
      if (i == 0 || fill_.size() != 1) {
        MakeFill(fill_, "fill_value", dtype_, s[2], ws.spec().Describe() + ": sample " + std::to_string(i), d.fill,
                 &d.fill_count);
      } else {
        std::memcpy(d.fill, windows_[0].fill, sizeof(d.fill));
        d.fill_count = 1;
      }
      image.shapes.push_back(Shape{canvas_h_, canvas_w_, s[2]});
      transform.shapes.push_back(Shape{4});
      mt.shapes.push_back(Shape{4, 5});
    }
    OutputDescs out = {image, transform};
    if (mt_slot_ >= 0) out.push_back(mt);
    return out;
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    const size_t esize = DTypeSize(dtype_);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      std::vector<unsigned char> fitted;
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        WindowDesc d = windows_[static_cast<size_t>(i)];
        fitted.resize(static_cast<size_t>(d.in_h * d.in_w * d.in_c) * esize);
        if (d.in_h > 0) ResampleCpu(Resample(in.raw_sample(s), in.shape(s), fitted.data(), s), filter_, dtype_, dtype_);
        d.in = fitted.data();
        d.out = out.raw_sample(s);
        WindowCpu(d, dtype_);
      }
    });
    for (int s = 0; s < in.num_samples(); ++s) {
      const Transform& t = fits_[static_cast<size_t>(s)].transform;
      std::memcpy(ws.OutputCpu(1).raw_sample(s), t.data(), sizeof(Transform));
      if (mt_slot_ >= 0) {
        const BoxMT mt = LetterboxBoxMT(t, ltrb_);
        std::memcpy(ws.OutputCpu(mt_slot_).raw_sample(s), mt.data(), sizeof(BoxMT));
      }
    }
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    const TensorListGPU& out = ws.OutputGpu(0);
    const int n = in.num_samples();
    Buffer& scratch = scratch_[ws.slot()];
    if (scratch.size() < out.buffer().size()) scratch = Buffer::Allocate(MemoryKind::kDevice, out.buffer().size(), ws.stream());
    auto* base = static_cast<unsigned char*>(scratch.device_ptr());
    const auto* out_base = static_cast<const unsigned char*>(out.buffer().device_ptr());
    ResampleDesc* r = resample_descs_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    WindowDesc* w = window_descs_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    Transform* t = transforms_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    BoxMT* mt = mt_slot_ >= 0 ? mts_.Write(ws.slot(), static_cast<size_t>(n), ws.stream()) : nullptr;
    for (int s = 0; s < n; ++s) {
      void* fitted = base + (static_cast<const unsigned char*>(out.raw_sample(s)) - out_base);
      w[s] = windows_[static_cast<size_t>(s)];
      w[s].in = fitted;
      w[s].out = out.raw_sample(s);
      r[s] = w[s].in_h > 0 ? Resample(in.raw_sample(s), in.shape(s), fitted, s) : ResampleDesc{};
      t[s] = fits_[static_cast<size_t>(s)].transform;
      if (mt != nullptr) mt[s] = LetterboxBoxMT(t[s], ltrb_);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    if (n == 0) return;
    const ResampleDesc* r = resample_descs_.Upload(ws.slot(), ws.stream());
    const WindowDesc* w = window_descs_.Upload(ws.slot(), ws.stream());
    const Transform* t = transforms_.Upload(ws.slot(), ws.stream());
    const BoxMT* mt = mt_slot_ >= 0 ? mts_.Upload(ws.slot(), ws.stream()) : nullptr;
    if (!out.buffer().empty()) {
      ResampleGpu(r, n, static_cast<int64_t>(out.buffer().size()), filter_, antialias_, dtype_, dtype_, ws.stream());
      WindowGpu(w, n, static_cast<int64_t>(out.buffer().size()), dtype_, ws.stream());
    }
    CopySamples(t, ws.OutputGpu(1), ws);
    if (mt != nullptr) CopySamples(mt, ws.OutputGpu(mt_slot_), ws);
  }

 private:
  ResampleDesc Resample(const void* in, const Shape& in_shape, void* fitted, int s) const {
    const LetterboxFit& f = fits_[static_cast<size_t>(s)];
    return MakeResampleDesc(in, in_shape, 0, 0, in_shape[0], in_shape[1], fitted, Shape{f.h, f.w, in_shape[2]}, filter_,
                            antialias_);
  }

  // Device array -> the samples of `list` (one copy when they are contiguous, as a fresh list's are).
  template <typename T>
  static void CopySamples(const T* device, TensorListGPU& list, const Workspace& ws) {
    const int n = list.num_samples();
    const auto* first = static_cast<unsigned char*>(list.raw_sample(0));
    bool contiguous = true;
    for (int s = 1; s < n && contiguous; ++s) {
      contiguous = static_cast<unsigned char*>(list.raw_sample(s)) == first + sizeof(T) * static_cast<size_t>(s);
    }
    const int copies = contiguous ? 1 : n;
    for (int s = 0; s < copies; ++s) {
      CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(list.raw_sample(s), device + s, sizeof(T) * (contiguous ? n : 1),
                                          cudaMemcpyDeviceToDevice, ws.stream().get()));
    }
  }

  std::vector<double> fill_;
  LetterboxAlign align_;
  resample::Filter filter_;
  bool antialias_, ltrb_;
  int mt_slot_;
  int64_t canvas_h_ = 0, canvas_w_ = 0;
  DType dtype_ = DType::kUInt8;
  std::vector<LetterboxFit> fits_;   // this batch's, from Setup
  std::vector<WindowDesc> windows_;  // this batch's canvases (in/out pointers unset), from Setup
  std::map<int, Buffer> scratch_;    // per slot: the fitted images, as large as the output's capacity
  SlotDescriptors<ResampleDesc> resample_descs_;
  SlotDescriptors<WindowDesc> window_descs_;
  SlotDescriptors<Transform> transforms_;
  SlotDescriptors<BoxMT> mts_;
};

const OperatorRegistration<LetterboxOp> kRegistration(kLetterboxSchema);

}  // namespace
}  // namespace conveyor::ops
