#include "operators/detection/boxes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/error.h"

namespace conveyor::ops {
namespace {

double Clip01(double v) { return std::min(1.0, std::max(0.0, v)); }

std::string Where(const Workspace& ws, int input, const char* name, size_t sample) {
  return ws.spec().Describe() + ": input " + std::to_string(input) + " (\"" + name + "\"), sample " +
         std::to_string(sample);
}

}  // namespace

Box ClipBox(const Box& box) {
  if (std::isnan(box.l) || std::isnan(box.t) || std::isnan(box.r) || std::isnan(box.b)) return Box{};
  Box out{Clip01(box.l), Clip01(box.t), Clip01(box.r), Clip01(box.b)};
  out.r = std::max(out.r, out.l);
  out.b = std::max(out.b, out.t);
  return out;
}

bool HasArea(const Box& box) { return box.r > box.l && box.b > box.t; }

double Area(const Box& box) { return HasArea(box) ? box.width() * box.height() : 0.0; }

double IntersectionArea(const Box& a, const Box& b) {
  const double w = std::min(a.r, b.r) - std::max(a.l, b.l);
  const double h = std::min(a.b, b.b) - std::max(a.t, b.t);
  return w > 0 && h > 0 ? w * h : 0.0;
}

double IoU(const Box& a, const Box& b) {
  const double inter = IntersectionArea(a, b);
  const double uni = Area(a) + Area(b) - inter;
  return uni > 0 ? inter / uni : 0.0;
}

BoxLayout BoxLayout::FromLtrb(bool ltrb) { return BoxLayout(ltrb ? "xyXY" : "xyWH"); }

BoxLayout BoxLayout::Parse(const std::string& text, const std::string& where) {
  std::string sorted = text;
  std::sort(sorted.begin(), sorted.end());
  // Sorted by ASCII: upper case first.
  if (sorted != "XYxy" && sorted != "HWxy") {
    throw InvalidArgument(where + ": bbox_layout must be a permutation of xyXY or xyWH, got \"" + text + "\"");
  }
  return BoxLayout(text);
}

Box BoxLayout::Read(const float* v) const {
  double x = 0, y = 0, x1 = 0, y1 = 0, w = 0, h = 0;
  for (size_t i = 0; i < 4; ++i) {
    switch (name_[i]) {
      case 'x':
        x = v[i];
        break;
      case 'y':
        y = v[i];
        break;
      case 'X':
        x1 = v[i];
        break;
      case 'Y':
        y1 = v[i];
        break;
      case 'W':
        w = v[i];
        break;
      case 'H':
        h = v[i];
        break;
      default:
        break;
    }
  }
  const bool extent = name_.find('W') != std::string::npos;
  return extent ? Box{x, y, x + w, y + h} : Box{x, y, x1, y1};
}

void BoxLayout::Write(const Box& box, float* v) const {
  for (size_t i = 0; i < 4; ++i) {
    double value = 0;
    switch (name_[i]) {
      case 'x':
        value = box.l;
        break;
      case 'y':
        value = box.t;
        break;
      case 'X':
        value = box.r;
        break;
      case 'Y':
        value = box.b;
        break;
      case 'W':
        value = box.width();
        break;
      case 'H':
        value = box.height();
        break;
      default:
        break;
    }
    v[i] = static_cast<float>(value);
  }
}

void CheckBoxesInput(const Workspace& ws, int input, const char* name) {
  const TensorListDesc d = ws.InputDesc(input);
  if (d.dtype != DType::kFloat32) {
    throw InvalidArgument(ws.spec().Describe() + ": input " + std::to_string(input) + " (\"" + name +
                          "\"): expected dtype float32, got " + std::string(DTypeName(d.dtype)));
  }
  for (size_t i = 0; i < d.shapes.size(); ++i) {
    const Shape& s = d.shapes[i];
    if (s.ndim() != 2 || s[1] != 4) {
      throw InvalidArgument(Where(ws, input, name, i) + ": expected a [N, 4] tensor of boxes, got shape " +
                            s.ToString());
    }
  }
}

void CheckLabelsInput(const Workspace& ws, int input, int boxes_input, const char* name) {
  const TensorListDesc d = ws.InputDesc(input);
  const TensorListDesc boxes = ws.InputDesc(boxes_input);
  if (d.dtype != DType::kInt32 && d.dtype != DType::kInt64) {
    throw InvalidArgument(ws.spec().Describe() + ": input " + std::to_string(input) + " (\"" + name +
                          "\"): expected dtype int32 or int64, got " + std::string(DTypeName(d.dtype)));
  }
  if (d.shapes.size() != boxes.shapes.size()) {
    throw InvalidArgument(ws.spec().Describe() + ": input " + std::to_string(input) + " (\"" + name +
                          "\"): expected one sample per sample of input " + std::to_string(boxes_input) + " (" +
                          std::to_string(boxes.shapes.size()) + "), got " + std::to_string(d.shapes.size()));
  }
  for (size_t i = 0; i < d.shapes.size(); ++i) {
    const Shape& s = d.shapes[i];
    const int64_t n = boxes.shapes[i][0];
    const bool rank_ok = s.ndim() == 1 || (s.ndim() == 2 && s[1] == 1);
    if (!rank_ok || s[0] != n) {
      throw InvalidArgument(Where(ws, input, name, i) + ": expected " + std::to_string(n) +
                            " labels (shape [N] or [N, 1], one per box of input " + std::to_string(boxes_input) +
                            "), got shape " + s.ToString());
    }
  }
}

std::vector<Box> ReadClippedBoxes(const TensorListCPU& boxes, int sample, const BoxLayout& layout) {
  const int64_t n = boxes.shape(sample)[0];
  const auto* v = static_cast<const float*>(boxes.raw_sample(sample));
  std::vector<Box> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = ClipBox(layout.Read(v + 4 * i));
  return out;
}

int64_t ReadLabel(const TensorListCPU& labels, int sample, int64_t i) {
  if (labels.dtype() == DType::kInt64) return static_cast<const int64_t*>(labels.raw_sample(sample))[i];
  return static_cast<const int32_t*>(labels.raw_sample(sample))[i];
}

void WriteLabel(TensorListCPU& labels, int sample, int64_t i, int64_t value) {
  if (labels.dtype() == DType::kInt64) {
    static_cast<int64_t*>(labels.raw_sample(sample))[i] = value;
  } else {
    static_cast<int32_t*>(labels.raw_sample(sample))[i] = static_cast<int32_t>(value);
  }
}

Shape LabelShape(const Shape& input_shape, int64_t n) { return input_shape.ndim() == 2 ? Shape{n, 1} : Shape{n}; }

std::string NumberText(double value) {
  std::ostringstream s;
  s.precision(9);
  s << value;
  return s.str();
}

}  // namespace conveyor::ops
