#include "operators/pad_paste/window_op.h"

#include <sstream>

#include "core/error.h"
#include "operators/resample/image_input.h"

namespace conveyor::ops {

std::string NumberString(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

OutputDescs WindowOp::Setup(const Workspace& ws) {
  CheckImageInput(ws, 0, {"HWC"}, WindowDTypes(), 0);
  const TensorListDesc in = ws.InputDesc(0);
  dtype_ = in.dtype;
  BeginBatch(ws, in);
  OutputDesc out{{}, in.dtype, in.layout.empty() ? Layout("HWC") : in.layout};
  const int n = static_cast<int>(in.shapes.size());
  out.shapes.reserve(static_cast<size_t>(n));
  plans_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const WindowDesc& d = plans_[static_cast<size_t>(i)] = Plan(ws, i, in.shapes[static_cast<size_t>(i)]);
    out.shapes.push_back(Shape{d.out_h, d.out_w, d.out_c});
  }
  return {out};
}

void WindowOp::RunCpu(Workspace& ws) {
  const TensorListCPU& in = ws.InputCpu(0);
  TensorListCPU& out = ws.OutputCpu(0);
  ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int s = static_cast<int>(i);
      WindowCpu(Bound(s, in.raw_sample(s), out.raw_sample(s)), dtype_);
    }
  });
}

void WindowOp::PrepareGpu(Workspace& ws) {
  const TensorListGPU& in = ws.InputGpu(0);
  TensorListGPU& out = ws.OutputGpu(0);
  WindowDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
  for (int s = 0; s < in.num_samples(); ++s) d[s] = Bound(s, in.raw_sample(s), out.raw_sample(s));
}

void WindowOp::RunGpu(Workspace& ws) {
  TensorListGPU& out = ws.OutputGpu(0);
  // Uploaded before the early return: every Write of PrepareGpu meets its Upload (a captured
  // segment's descriptor arena is positional; docs/executor.md).
  const WindowDesc* d = descs_.Upload(ws.slot(), ws.stream());
  if (out.num_samples() == 0 || out.buffer().empty()) return;
  WindowGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), out.dtype(), ws.stream());
}

WindowDesc WindowOp::Bound(int s, const void* in, void* out) const {
  WindowDesc d = plans_[static_cast<size_t>(s)];
  d.in = in;
  d.out = out;
  return d;
}

void WindowOp::SetFill(const std::vector<double>& values, const char* arg, DType dtype, int sample,
                       WindowDesc& d) const {
  MakeFill(values, arg, dtype, d.out_c, Where(sample), d.fill, &d.fill_count);
}

void MakeFill(const std::vector<double>& values, const char* arg, DType dtype, int64_t channels,
              const std::string& where, uint32_t* fill, int32_t* fill_count) {
  const auto count = static_cast<int64_t>(values.size());
  if (count != 1 && (count != channels || count > kMaxWindowFill)) {
    throw InvalidArgument(where + ": " + arg + " has " + std::to_string(count) + " values, the output has " +
                          std::to_string(channels) + " channels (give 1 or " + std::to_string(channels) +
                          (channels > kMaxWindowFill ? ", at most " + std::to_string(kMaxWindowFill) : std::string()) +
                          ")");
  }
  *fill_count = static_cast<int32_t>(count);
  for (int64_t c = 0; c < count; ++c) {
    std::string why;
    if (!FillBits(values[static_cast<size_t>(c)], dtype, &fill[c], &why)) {
      throw InvalidArgument(where + ": " + arg + "[" + std::to_string(c) + "] = " +
                            NumberString(values[static_cast<size_t>(c)]) + ": " + why);
    }
  }
}

}  // namespace conveyor::ops
