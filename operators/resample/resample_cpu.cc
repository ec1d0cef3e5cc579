// The resampling reference: a direct, unoptimised transcription of the contract in resample.h
// and resample_math.h (horizontal pass into floats, then vertical pass). The kernel is checked
// against it bit for bit.
#include <vector>

#include "core/error.h"
#include "operators/resample/resample.h"

namespace conveyor::ops {

using resample::Axis;
using resample::FAdd;
using resample::Filter;
using resample::FMul;
using resample::MakeTap;
using resample::Tap;
using resample::Weight;

namespace {

Axis MakeAxis(Filter filter, bool antialias, int extent, int out) {
  Axis a;
  a.extent = extent;
  a.scale = static_cast<float>(static_cast<double>(extent) / out);
  a.stretch = (antialias && filter != Filter::kNearest && a.scale > 1.f) ? a.scale : 1.f;
  const float radius = filter == Filter::kCubic ? 2.f : 1.f;
  a.support = radius * a.stretch;
  return a;
}

template <typename In, typename Out>
void Run(const ResampleDesc& d, Filter filter) {
  const int c = d.channels;
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  std::vector<Tap> tx(static_cast<size_t>(d.out_w)), ty(static_cast<size_t>(d.out_h));
  for (int o = 0; o < d.out_w; ++o) tx[o] = MakeTap(filter, d.axis_x, o);
  for (int o = 0; o < d.out_h; ++o) ty[o] = MakeTap(filter, d.axis_y, o);

  // Horizontal pass over every window row: tmp[row][ox][ch].
  const int rows = d.axis_y.extent;
  std::vector<float> tmp(static_cast<size_t>(rows) * d.out_w * c);
  for (int r = 0; r < rows; ++r) {
    const In* row = in + (static_cast<int64_t>(d.y0) + r) * d.in_row_stride + static_cast<int64_t>(d.x0) * c;
    for (int ox = 0; ox < d.out_w; ++ox) {
      const Tap& t = tx[ox];
      for (int ch = 0; ch < c; ++ch) {
        float acc = 0.f;
        for (int j = t.lo; j < t.lo + t.count; ++j) {
          acc = FAdd(acc, FMul(Weight(filter, d.axis_x, t, j), static_cast<float>(row[j * c + ch])));
        }
        tmp[(static_cast<size_t>(r) * d.out_w + ox) * c + ch] = acc;
      }
    }
  }
  // Vertical pass.
  for (int oy = 0; oy < d.out_h; ++oy) {
    const Tap& t = ty[oy];
    for (int ox = 0; ox < d.out_w; ++ox) {
      for (int ch = 0; ch < c; ++ch) {
        float acc = 0.f;
        for (int j = t.lo; j < t.lo + t.count; ++j) {
          acc = FAdd(acc, FMul(Weight(filter, d.axis_y, t, j), tmp[(static_cast<size_t>(j) * d.out_w + ox) * c + ch]));
        }
        Out* o = out + OutPixel(d, oy, ox) * c + ch;
        if constexpr (sizeof(Out) == 1) {
          *o = resample::ToUint8(acc);
        } else {
          *o = acc;
        }
      }
    }
  }
}

}  // namespace

ResampleDesc MakeResampleDesc(const void* in, const Shape& in_shape, int64_t y0, int64_t x0, int64_t win_h,
                              int64_t win_w, void* out, const Shape& out_shape, Filter filter, bool antialias,
                              int64_t frames) {
  ResampleDesc d{};
  d.frames = static_cast<int>(frames);
  d.in = in;
  d.out = out;
  d.channels = static_cast<int>(in_shape[2]);
  d.in_row_stride = in_shape[1] * in_shape[2];
  d.in_rows = in_shape[0];
  d.y0 = static_cast<int>(y0);
  d.x0 = static_cast<int>(x0);
  d.out_h = static_cast<int>(out_shape[0]);
  d.out_w = static_cast<int>(out_shape[1]);
  if (d.out_h > 0 && d.out_w > 0 && win_h > 0 && win_w > 0) {
    d.axis_y = MakeAxis(filter, antialias, static_cast<int>(win_h), d.out_h);
    d.axis_x = MakeAxis(filter, antialias, static_cast<int>(win_w), d.out_w);
  } else {
    d.out_h = d.out_w = 0;  // nothing to read or write
  }
  return d;
}

ResampleDesc MakeResizeCropDesc(const void* in, const Shape& in_shape, int64_t resized_h, int64_t resized_w,
                                int64_t crop_y, int64_t crop_x, void* out, const Shape& out_shape, Filter filter,
                                bool antialias, int mirror, int64_t frames) {
  // The whole image is the window; the scale is the full resize's, and the crop is where its
  // outputs start (Axis::origin).
  ResampleDesc d = MakeResampleDesc(in, in_shape, 0, 0, in_shape[0], in_shape[1], out, out_shape, filter, antialias,
                                    frames);
  if (d.out_h == 0 || resized_h <= 0 || resized_w <= 0) {
    d.out_h = d.out_w = 0;
    return d;
  }
  d.axis_y = MakeAxis(filter, antialias, static_cast<int>(in_shape[0]), static_cast<int>(resized_h));
  d.axis_x = MakeAxis(filter, antialias, static_cast<int>(in_shape[1]), static_cast<int>(resized_w));
  d.axis_y.origin = static_cast<int>(crop_y);
  d.axis_x.origin = static_cast<int>(crop_x);
  d.mirror = mirror;
  return d;
}

Filter ParseInterpType(const std::string& name) {
  if (name == "nearest" || name == "INTERP_NN") return Filter::kNearest;
  if (name == "linear" || name == "INTERP_LINEAR") return Filter::kLinear;
  if (name == "cubic" || name == "INTERP_CUBIC") return Filter::kCubic;
  throw InvalidArgument("interp_type: expected nearest, linear or cubic, got \"" + name + "\"");
}

void ResampleCpu(const ResampleDesc& d, Filter filter, DType in_dtype, DType out_dtype) {
  if (d.out_h == 0 || d.out_w == 0 || d.channels == 0) return;
  void (*run)(const ResampleDesc&, Filter) = nullptr;
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kUInt8) run = Run<uint8_t, uint8_t>;
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kFloat32) run = Run<uint8_t, float>;
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kUInt8) run = Run<float, uint8_t>;
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kFloat32) run = Run<float, float>;
  if (run == nullptr) {
    throw InvalidArgument("resample: unsupported dtypes " + std::string(DTypeName(in_dtype)) + " -> " +
                          std::string(DTypeName(out_dtype)));
  }
  // Each frame is an image of its own with the sample's window and taps.
  const size_t in_frame = static_cast<size_t>(d.in_rows * d.in_row_stride) * DTypeSize(in_dtype);
  const size_t out_frame = static_cast<size_t>(d.out_h) * d.out_w * d.channels * DTypeSize(out_dtype);
  ResampleDesc frame = d;
  for (int f = 0; f < d.frames; ++f) {
    frame.in = static_cast<const char*>(d.in) + f * in_frame;
    frame.out = static_cast<char*>(d.out) + f * out_frame;
    run(frame, filter);
  }
}

}  // namespace conveyor::ops
