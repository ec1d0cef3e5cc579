// crop_mirror_normalize: crop + horizontal mirror + per-channel normalization + dtype conversion
// + layout change (HWC → CHW) in one pass, as DALI's operator of the same name.
//
// | argument             | meaning (DALI's)                                               | per sample |
// |----------------------|----------------------------------------------------------------|------------|
// | crop                 | [h, w] of the window; [] = the whole image                     | no         |
// | crop_pos_x, _y       | anchor: x0 = round(crop_pos_x * (W - w)), same for y           | yes        |
// | mirror               | nonzero: flip the window horizontally                          | yes        |
// | mean, std            | one value or one per channel; std 0 is an error                | yes        |
// | scale, shift         | out = (in - mean) / std * scale + shift                        | no         |
// | dtype                | float32 (default), float16, bfloat16, uint8 (clamped, RNE)     | no         |
// | output_layout        | CHW (default, as DALI) or HWC; FCHW / FHWC for FHWC clips       | no         |
// | pad_output           | append a zero channel (3 → 4)                                  | no         |
// | out_of_bounds_policy | only "error": a window larger than the image is rejected       | no         |
//
// An FHWC clip takes its sample's window, mirror and factors for every frame; its output is FCHW
// (output_layout CHW) or FHWC. output_layout FCHW / FHWC name the same choices.
//
// GPU: PrepareGpu writes one CmnSample per sample into the slot's descriptor array; RunGpu
// uploads it and launches one kernel per batch (grid from the output capacity): capturable.
#include <cmath>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/crop_mirror_normalize/crop_mirror_normalize.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kInputTypes = {DType::kUInt8, DType::kFloat16, DType::kFloat32};
const std::vector<DType> kOutputTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8};

const OpSchema kCmnSchema =
    OpSchema("crop_mirror_normalize")
        .Doc("Crops a window, optionally mirrors it horizontally, normalizes each channel "
             "(out = (in - mean) / std * scale + shift), converts to `dtype` and writes `output_layout` — "
             "one read of the window, one write. HWC input (or FHWC clips: every frame alike, output FCHW or FHWC) "
             "with 1 to 4 channels, uint8, float16 or float32.")
        .Input("images", {"HWC", "FHWC"}, kInputTypes)
        .Output("output")
        .Arg<std::vector<int64_t>>("crop", std::vector<int64_t>{}, "Window [h, w]; [] keeps the whole image.")
        .Min(1)
        .Arg<float>("crop_pos_x", 0.5f, "Horizontal anchor in [0, 1]: x0 = round(crop_pos_x * (W - w)).",
                    PerSample::kAllowed)
        .Range(0, 1)
        .Arg<float>("crop_pos_y", 0.5f, "Vertical anchor in [0, 1]: y0 = round(crop_pos_y * (H - h)).",
                    PerSample::kAllowed)
        .Range(0, 1)
        .Arg<int>("mirror", 0, "Nonzero: mirror the window horizontally.", PerSample::kAllowed)
        .Arg<std::vector<double>>("mean", std::vector<double>{0.0}, "Mean, one value or one per channel.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("std", std::vector<double>{1.0},
                                  "Standard deviation, one value or one per channel; nonzero.", PerSample::kAllowed)
        .Arg<float>("scale", 1.0f, "Multiplies the normalized value.")
        .Arg<float>("shift", 0.0f, "Added after scaling.")
        .Arg<DType>("dtype", DType::kFloat32, "Output dtype: float32, float16, bfloat16 or uint8 (clamped, rounded).")
        .Arg<Layout>("output_layout", Layout("CHW"),
                     "CHW or HWC (per frame: an FHWC clip gives FCHW or FHWC; those names are taken too).")
        .Arg<bool>("pad_output", false, "Append a zero channel (e.g. RGB → RGB0).")
        .Arg<std::string>("out_of_bounds_policy", "error",
                          "What a window larger than the image does; only \"error\" is supported.")
        .Choices({"error"})
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class CropMirrorNormalizeOp final : public Operator {
 public:
  explicit CropMirrorNormalizeOp(const OpSpec& spec)
      : Operator(spec),
        crop_(spec.Arg<std::vector<int64_t>>("crop")),
        scale_(spec.Arg<float>("scale")),
        shift_(spec.Arg<float>("shift")),
        dtype_(spec.Arg<DType>("dtype")),
        pad_(spec.Arg<bool>("pad_output")) {
    if (!crop_.empty() && crop_.size() != 2) {
      throw InvalidArgument(spec.Describe() + ": argument \"crop\": expected [h, w], got " +
                            std::to_string(crop_.size()) + " values");
    }
    bool ok = false;
    for (DType t : kOutputTypes) ok = ok || t == dtype_;
    if (!ok) {
      throw InvalidArgument(spec.Describe() + ": argument \"dtype\": expected " + DTypeList(kOutputTypes) + ", got " +
                            std::string(DTypeName(dtype_)));
    }
    // The frame's layout; an F in front (DALI's spelling for sequences) says the same.
    const Layout layout = spec.Arg<Layout>("output_layout");
    const std::string_view name = layout.str();
    const std::string_view frame = name.size() == 4 && name[0] == 'F' ? name.substr(1) : name;
    if (frame != "CHW" && frame != "HWC") {
      throw InvalidArgument(spec.Describe() + ": argument \"output_layout\": expected CHW or HWC (FCHW or FHWC for "
                            "clips), got " + std::string(name));
    }
    chw_ = frame == "CHW";
    frames_layout_ = name.size() == 4;
  }

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc in = ws.InputDesc(0);
    const Layout in_layout = CheckInput(spec(), in, 0, {"HWC", "FHWC"}, kInputTypes);
    const bool clips = IsSequenceLayout(in_layout);
    if (frames_layout_ && !clips) {
      throw InvalidArgument(spec().Describe() + ": argument \"output_layout\": " +
                            std::string(spec().Arg<Layout>("output_layout").str()) +
                            " is for FHWC clips, but input 0 is " + std::string(in_layout.str()) + " (give " +
                            (chw_ ? "CHW" : "HWC") + ")");
    }
    samples_.resize(in.shapes.size());
    const Layout frame_layout = chw_ ? Layout("CHW") : Layout("HWC");
    OutputDesc out{{}, dtype_, clips ? (chw_ ? Layout("FCHW") : Layout("FHWC")) : frame_layout};
    out.shapes.reserve(in.shapes.size());
    SampleArgs args(ws);
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const SampleFrames f = SplitFrames(in.shapes[i], in_layout);
      samples_[i] = Describe(args, f.frame, static_cast<int>(i), clips ? "frames" : "image");
      CmnSample& s = samples_[i];
      s.frames = static_cast<int32_t>(f.count);  // every frame of a clip alike
      s.in_frame_stride = f.frame.num_elements();
      const Shape frame_out = chw_ ? Shape{s.out_channels, s.h, s.w} : Shape{s.h, s.w, s.out_channels};
      out.shapes.push_back(clips ? JoinFrames(f.count, frame_out, in_layout) : frame_out);
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        CmnSample s = samples_[static_cast<size_t>(i)];
        Bind(s, in, out, static_cast<int>(i));
        CropMirrorNormalizeCpu(s, dtype_, in.dtype(), chw_);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    CmnSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      Bind(d[i], in, out, i);
    }
  }

  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    if (n == 0) return;
    const CmnSample* dev = descs_.Upload(ws.slot(), ws.stream());
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(dtype_)) / n;
    CropMirrorNormalizeGpu(dev, n, hint, dtype_, in.dtype(), chw_, ws.stream());
  }

 private:
  // The per-sample arguments, each read once per batch when constant; the factors of constant
  // mean and std computed once per channel count.
  struct SampleArgs {
    explicit SampleArgs(const Workspace& ws)
        : pos_x(ws, "crop_pos_x"), pos_y(ws, "crop_pos_y"), mirror(ws, "mirror"), mean(ws, "mean"), std(ws, "std") {}
    SampleArg<float> pos_x, pos_y;
    SampleArg<int> mirror;
    SampleArg<std::vector<double>> mean, std;
    int64_t factors_channels = -1;  // the channel count mul/add were computed for (constant mean and std)
    float mul[kCmnMaxChannels] = {}, add[kCmnMaxChannels] = {};
  };

  // Geometry and per-channel factors of sample i, an image or a clip's frame of `shape` (no
  // addresses yet).
  CmnSample Describe(SampleArgs& args, const Shape& shape, int i, const char* what) const {
    CmnSample s{};
    const int64_t H = shape[0], W = shape[1], C = shape[2];
    if (C < 1 || C > kCmnMaxChannels || (pad_ && C + 1 > kCmnMaxChannels)) {
      throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has " + std::to_string(C) +
                            " channels, expected 1 to " + std::to_string(pad_ ? kCmnMaxChannels - 1 : kCmnMaxChannels) +
                            (pad_ ? " (pad_output adds one)" : ""));
    }
    const int64_t h = crop_.empty() ? H : crop_[0], w = crop_.empty() ? W : crop_[1];
    if (h > H || w > W) {
      throw InvalidArgument(spec().Describe() + ": sample " + std::to_string(i) + ": crop window [" + std::to_string(h) +
                            ", " + std::to_string(w) + "] does not fit the " + what + " of shape " + shape.ToString() +
                            " (out_of_bounds_policy \"error\")");
    }
    s.y0 = static_cast<int32_t>(std::lround(static_cast<double>(args.pos_y(i)) * (H - h)));
    s.x0 = static_cast<int32_t>(std::lround(static_cast<double>(args.pos_x(i)) * (W - w)));
    s.h = static_cast<int32_t>(h);
    s.w = static_cast<int32_t>(w);
    s.in_row_stride = W * C;
    s.channels = static_cast<int32_t>(C);
    s.out_channels = static_cast<int32_t>(C + (pad_ ? 1 : 0));
    s.mirror = args.mirror(i) != 0 ? 1 : 0;
    const bool constant = !args.mean.fed() && !args.std.fed();
    if (!constant || args.factors_channels != C) {
      NormalizeFactors(spec(), args.mean(i), args.std(i), C, i, scale_, shift_, args.mul, args.add);
      args.factors_channels = constant ? C : -1;
    }
    for (int64_t c = 0; c < C; ++c) {
      s.mul[c] = args.mul[c];
      s.add[c] = args.add[c];
    }
    return s;
  }

  template <typename List, typename OutList>
  static void Bind(CmnSample& s, const List& in, OutList& out, int i) {
    s.in = in.raw_sample(i);
    s.out = out.raw_sample(i);
    s.in_bytes = in.shape(i).num_elements() * static_cast<int64_t>(DTypeSize(in.dtype()));
  }

  std::vector<int64_t> crop_;
  float scale_, shift_;
  DType dtype_;
  bool pad_;
  bool chw_ = true;
  bool frames_layout_ = false;  // output_layout was given as FCHW / FHWC
  std::vector<CmnSample> samples_;  // this iteration's geometry, from Setup
  SlotDescriptors<CmnSample> descs_;
};

const OperatorRegistration<CropMirrorNormalizeOp> kRegistration(kCmnSchema);

}  // namespace
}  // namespace conveyor::ops
