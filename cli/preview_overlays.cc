#include "cli/preview_overlays.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/tensor/half.h"
#include "core/util/strings.h"
#include "operators/detection/boxes.h"

namespace conveyor::cli {
namespace {

bool IsIntegerLabel(DType dtype) { return !IsFloatingPoint(dtype) && dtype != DType::kBool; }

// "" when every sample is [N, 4] of a floating-point dtype, else why not.
std::string BoxesProblem(const TensorListCPU& list) {
  for (int i = 0; i < list.num_samples(); ++i) {
    const Shape& s = list.shape(i);
    if (!IsFloatingPoint(list.dtype()) || s.ndim() != 2 || s[1] != 4) {
      return "sample " + std::to_string(i) + " is " + std::string(DTypeName(list.dtype())) + " of shape " +
             s.ToString() + "; expected [N, 4] floating-point boxes (ltrb or xywh)";
    }
  }
  return "";
}

// The label map's height and width of sample i (0, 0 when it is not one).
std::pair<int64_t, int64_t> MaskExtent(const TensorListCPU& list, int i) {
  const Shape& s = list.shape(i);
  if (!IsIntegerLabel(list.dtype())) return {0, 0};
  if (s.ndim() == 2) return {s[0], s[1]};
  if (s.ndim() == 3 && s[2] == 1 && list.layout().str() != "CHW") return {s[0], s[1]};
  if (s.ndim() == 3 && s[0] == 1 && list.layout().str() == "CHW") return {s[1], s[2]};
  return {0, 0};
}

std::string MaskProblem(const TensorListCPU& list) {
  for (int i = 0; i < list.num_samples(); ++i) {
    if (MaskExtent(list, i).first == 0 && list.shape(i).num_elements() != 0) {
      return "sample " + std::to_string(i) + " is " + std::string(DTypeName(list.dtype())) + " of shape " +
             list.shape(i).ToString() + " (layout \"" + std::string(list.layout().str()) +
             "\"); expected integer label maps [H, W], [H, W, 1] or [1, H, W] (CHW)";
    }
  }
  return "";
}

// The output the option names (ConfigError when there is none), checked by `problem`; or, without
// a name, the first output named one of `defaults` that `problem` accepts; -1 for none.
template <typename Problem>
int PickOutput(const std::string& option, const std::string& name, const std::vector<std::string>& defaults,
               const std::vector<std::string>& names, const std::vector<TensorListCPU>& host, Problem problem) {
  if (!name.empty()) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      throw ConfigError(option + " " + name + ": the pipeline has no output \"" + name + "\"" +
                        DidYouMean(name, names) + " (outputs: " + Join(names, ", ") + ")");
    }
    const int index = static_cast<int>(it - names.begin());
    const std::string why = problem(host[static_cast<size_t>(index)]);
    if (!why.empty()) throw InvalidArgument(option + " " + name + ": " + why);
    return index;
  }
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    const bool named = std::find(defaults.begin(), defaults.end(), names[i]) != defaults.end();
    if (named && problem(host[static_cast<size_t>(i)]).empty()) return i;
  }
  return -1;
}

// The layout of the boxes `output`, from its producing node's arguments (rule in the header).
std::string ProducerLayout(const Graph& graph, const std::string& output) {
  for (const GraphNode& node : graph.nodes()) {
    const auto& outs = node.spec.outputs();
    if (std::find(outs.begin(), outs.end(), output) == outs.end()) continue;
    const OpSchema& schema = node.schema();
    if (schema.FindArg("bbox_layout") != nullptr && !node.spec.Arg<std::string>("bbox_layout").empty()) {
      return node.spec.Arg<std::string>("bbox_layout");
    }
    return schema.FindArg("ltrb") == nullptr || node.spec.Arg<bool>("ltrb") ? "xyXY" : "xyWH";
  }
  return "xyXY";
}

bool LooksNormalized(const TensorListCPU& boxes) {
  for (int i = 0; i < boxes.num_samples(); ++i) {
    const int64_t n = boxes.shape(i).num_elements();
    for (int64_t k = 0; k < n; ++k) {
      const double v = SampleElement(boxes.raw_sample(i), boxes.dtype(), k);
      if (std::isfinite(v) && (v < -1.0 || v > 2.0)) return false;
    }
  }
  return true;
}

// The first output besides `skip` with one integer class per box of every sample.
int FindBoxClasses(const std::vector<TensorListCPU>& host, int boxes, const std::vector<int>& skip) {
  const TensorListCPU& b = host[static_cast<size_t>(boxes)];
  for (int o = 0; o < static_cast<int>(host.size()); ++o) {
    if (o == boxes || std::find(skip.begin(), skip.end(), o) != skip.end()) continue;
    const TensorListCPU& l = host[static_cast<size_t>(o)];
    if (!IsIntegerLabel(l.dtype()) || l.num_samples() != b.num_samples()) continue;
    bool fits = true;
    for (int i = 0; i < b.num_samples() && fits; ++i) {
      const Shape& s = l.shape(i);
      fits = (s.ndim() == 1 || (s.ndim() == 2 && s[1] == 1)) && s[0] == b.shape(i)[0];
    }
    if (fits) return o;
  }
  return -1;
}

}  // namespace

double SampleElement(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8: return static_cast<const uint8_t*>(data)[i];
    case DType::kInt8: return static_cast<const int8_t*>(data)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(data)[i];
    case DType::kInt16: return static_cast<const int16_t*>(data)[i];
    case DType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::kFloat32: return static_cast<const float*>(data)[i];
    case DType::kFloat64: return static_cast<const double*>(data)[i];
  }
  return 0;
}

PreviewOverlays FindOverlays(const Graph& graph, const std::vector<std::string>& names,
                             const std::vector<TensorListCPU>& host, const PreviewOptions& options) {
  PreviewOverlays o;
  o.boxes = PickOutput("--boxes", options.boxes, {"boxes", "bboxes"}, names, host, BoxesProblem);
  o.mask = PickOutput("--mask", options.mask, {"mask", "masks"}, names, host, MaskProblem);
  if (o.boxes >= 0) {
    const std::string& name = names[static_cast<size_t>(o.boxes)];
    o.layout = ProducerLayout(graph, name);
    o.normalized = LooksNormalized(host[static_cast<size_t>(o.boxes)]);
    o.box_classes = FindBoxClasses(host, o.boxes, {o.mask});
  }
  return o;
}

std::string PreviewOverlays::Describe(const std::vector<std::string>& names) const {
  std::string text;
  if (boxes >= 0) {
    const std::string shown = layout == "xyXY" ? "ltrb" : layout == "xyWH" ? "xywh" : "bbox_layout " + layout;
    const std::string colours =
        box_classes >= 0 ? "colours by \"" + names[static_cast<size_t>(box_classes)] + "\"" : "one colour";
    text += "boxes from \"" + names[static_cast<size_t>(boxes)] + "\" (" + shown + ", " +
            (normalized ? "normalized" : "pixels") + ", " + colours + ")";
  }
  if (mask >= 0) {
    text += std::string(text.empty() ? "" : ", ") + "mask outlines from \"" + names[static_cast<size_t>(mask)] + "\"";
  }
  return text;
}

void PreviewOverlays::Draw(const std::vector<TensorListCPU>& host, int i, int64_t image_h, int64_t image_w,
                           RgbImage& tile) const {
  if (mask >= 0 && i < host[static_cast<size_t>(mask)].num_samples()) {
    const TensorListCPU& m = host[static_cast<size_t>(mask)];
    const auto [mh, mw] = MaskExtent(m, i);
    if (mh > 0 && mw > 0) {
      // Nearest by pixel centres: tile pixel (x, y) reads mask pixel floor((x + 0.5) * mw / tile.width).
      std::vector<int64_t> labels(static_cast<size_t>(tile.width) * tile.height);
      for (int y = 0; y < tile.height; ++y) {
        const int64_t my = (2 * int64_t{y} + 1) * mh / (2 * int64_t{tile.height});
        for (int x = 0; x < tile.width; ++x) {
          const int64_t mx = (2 * int64_t{x} + 1) * mw / (2 * int64_t{tile.width});
          labels[static_cast<size_t>(y) * tile.width + x] =
              static_cast<int64_t>(SampleElement(m.raw_sample(i), m.dtype(), my * mw + mx));
        }
      }
      DrawLabelOutlines(tile, labels);
    }
  }
  if (boxes < 0 || i >= host[static_cast<size_t>(boxes)].num_samples()) return;
  const TensorListCPU& b = host[static_cast<size_t>(boxes)];
  const ops::BoxLayout box_layout = ops::BoxLayout::Parse(layout, "preview");
  // To tile pixels: fractions times the tile's size, or image pixels times its scale.
  const double sx = normalized ? tile.width : static_cast<double>(tile.width) / std::max<int64_t>(1, image_w);
  const double sy = normalized ? tile.height : static_cast<double>(tile.height) / std::max<int64_t>(1, image_h);
  const int64_t count = b.shape(i)[0];
  for (int64_t k = 0; k < count; ++k) {
    float v[4];
    for (int c = 0; c < 4; ++c) v[c] = static_cast<float>(SampleElement(b.raw_sample(i), b.dtype(), 4 * k + c));
    const ops::Box box = box_layout.Read(v);
    int64_t cls = 0;
    if (box_classes >= 0) {
      const TensorListCPU& l = host[static_cast<size_t>(box_classes)];
      cls = static_cast<int64_t>(SampleElement(l.raw_sample(i), l.dtype(), k));
    }
    uint8_t rgb[3];
    ClassColour(cls, rgb);
    DrawBoxOutline(tile, box.l * sx, box.t * sy, box.r * sx, box.b * sy, rgb);
  }
}

}  // namespace conveyor::cli
