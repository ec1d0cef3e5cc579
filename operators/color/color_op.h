// ColorOp: the run half shared by the colour operators (color.h). A derived operator describes
// itself with a ColorOpKind (mode, whether it needs 3 channels, which dtypes) and fills one
// ColorSample per sample in Fill; this class checks the input, runs ColorCpu per sample on the CPU
// and one batched ColorGpu launch from per-slot descriptors on the GPU (capturable).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/slot_descriptors.h"
#include "operators/color/color.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {

inline const std::vector<DType> kColorTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

class ColorOp : public Operator {
 public:
  // `rgb`: the input must be HWC with 3 channels (matrix modes); else any HWC/HW image.
  // `has_dtype`: the schema has a `dtype` argument (output type; "input" keeps the input's).
  ColorOp(const OpSpec& spec, bool rgb, bool has_dtype, std::vector<DType> types = kColorTypes)
      : Operator(spec),
        rgb_(rgb),
        types_(std::move(types)),
        dtype_name_(has_dtype ? spec.Arg<std::string>("dtype") : std::string("input")) {}

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    CheckInput(spec(), d, 0, rgb_ ? std::vector<Layout>{"HWC"} : std::vector<Layout>{"HWC", "HW"}, types_);
    out_type_ = dtype_name_ == "input" ? d.dtype : ParseDType(dtype_name_);
    samples_.assign(d.shapes.size(), ColorSample{});
    BeginBatch(ws);
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      const Shape& shape = d.shapes[i];
      if (rgb_ && shape[2] != 3) {
        throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(si) + " has " +
                              std::to_string(shape[2]) + " channels, expected 3 (RGB)");
      }
      ColorSample& s = samples_[i];
      s.pixels = rgb_ ? shape.num_elements() / 3 : shape.num_elements();
      Fill(ws, si, d.dtype, s);
    }
    d.dtype = out_type_;
    return {d};
  }

  void RunCpu(Workspace& ws) final {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ColorSample s = samples_[static_cast<size_t>(i)];
        s.in = in.raw_sample(static_cast<int>(i));
        s.out = out.raw_sample(static_cast<int>(i));
        ColorCpu(s, out_type_, in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    ColorSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
  }

  void RunGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    const auto* descs = descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write (docs/executor.md)
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(out_type_)) / n / (rgb_ ? 3 : 1);
    ColorGpu(descs, n, hint, out_type_, in.dtype(), ws.stream());
  }

 protected:
  // Called once per Setup before the Fill calls: where an operator binds its SampleArgs.
  virtual void BeginBatch(const Workspace& ws) = 0;
  // Fills the mode and parameters of sample `sample` (pixels are set; pointers are not).
  virtual void Fill(const Workspace& ws, int sample, DType in_type, ColorSample& s) = 0;
  DType out_type() const { return out_type_; }

  static void SetMatrix(ColorSample& s, const double m[9], double offset) {
    s.mode = ColorMode::kMatrix;
    for (int k = 0; k < 9; ++k) s.m[k] = static_cast<float>(m[k]);
    for (int c = 0; c < 3; ++c) s.offset[c] = static_cast<float>(offset);
  }

 private:
  bool rgb_;
  std::vector<DType> types_;
  std::string dtype_name_;
  DType out_type_ = DType::kFloat32;
  std::vector<ColorSample> samples_;
  SlotDescriptors<ColorSample> descs_;
};

}  // namespace conveyor::ops
