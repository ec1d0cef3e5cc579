// `conveyor preview`: one batch of an image output as a PNG grid (image_grid.h).
//
// | output samples                         | read as                                   |
// |----------------------------------------|-------------------------------------------|
// | layout HWC / CHW / HW                  | that layout                               |
// | layout FHWC / FCHW (video clips)       | a strip of up to 8 frames, evenly spaced  |
// | no layout, 3-D, last extent 1, 3 or 4  | HWC (first extent 1, 3 or 4: CHW)         |
// | 1 channel / 3 channels / 4 channels    | gray / RGB / RGB with alpha dropped       |
//
// Values: uint8 as they are; other dtypes through the producing crop_mirror_normalize node's
// mean/std/scale/shift inverted when the output comes straight from one, else min/max-scaled
// per image to 0..255. Captions: the label from an output of one integer per sample (the first
// such output besides the image), else the sample index.
//
// Boxes and mask outlines (preview_overlays.h): an output named boxes/bboxes ([N, 4] float) or
// --boxes NAME has each sample's boxes outlined on its tile, an output named mask/masks (integer
// label maps) or --mask NAME its label regions, in colours fixed by class.
//
// --inputs NAME adds node output NAME (say the decoded images) to the pipeline's outputs and puts
// sample i's NAME image, shrunk to the output tile's size, left of its output tile, captioned
// NAME: pairs [input | output] fill the rows. --tile-size N shrinks every tile to fit N x N.
#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/commands.h"
#include "cli/image_grid.h"
#include "cli/preview_overlays.h"
#include "cli/session.h"
#include "core/error.h"
#include "core/tensor/half.h"
#include "core/util/strings.h"

namespace conveyor::cli {
namespace {

enum class ImageLayout { kNone, kHWC, kCHW, kHW, kFHWC, kFCHW };

// Frames of a clip shown side by side in its tile, evenly spaced over the clip.
constexpr int64_t kMaxStripFrames = 8;

ImageLayout Classify(const Shape& s, const Layout& layout) {
  if (layout.str() == "FHWC" && s.ndim() == 4) return ImageLayout::kFHWC;
  if (layout.str() == "FCHW" && s.ndim() == 4) return ImageLayout::kFCHW;
  if (layout.str() == "HWC" && s.ndim() == 3) return ImageLayout::kHWC;
  if (layout.str() == "CHW" && s.ndim() == 3) return ImageLayout::kCHW;
  if (layout.str() == "HW" && s.ndim() == 2) return ImageLayout::kHW;
  if (!layout.empty()) return ImageLayout::kNone;
  auto channels = [](int64_t c) { return c == 1 || c == 3 || c == 4; };
  if (s.ndim() == 3 && channels(s[2])) return ImageLayout::kHWC;
  if (s.ndim() == 3 && channels(s[0])) return ImageLayout::kCHW;
  return ImageLayout::kNone;
}

// in = (out - shift) / scale * std + mean, per channel (crop_mirror_normalize's formula inverted).
struct Denormalize {
  std::vector<double> mean, std;
  double scale = 1, shift = 0;
  double Apply(double v, int c) const {
    const double m = mean.size() == 1 ? mean[0] : mean[static_cast<size_t>(c) % mean.size()];
    const double s = std.size() == 1 ? std[0] : std[static_cast<size_t>(c) % std.size()];
    return (v - shift) / scale * s + m;
  }
};

std::optional<Denormalize> FindNormalization(const Graph& graph, const std::string& output) {
  for (const GraphNode& node : graph.nodes()) {
    const auto& outs = node.spec.outputs();
    if (node.op() != "crop_mirror_normalize" || std::find(outs.begin(), outs.end(), output) == outs.end()) continue;
    Denormalize d;
    d.mean = node.spec.Arg<std::vector<double>>("mean");
    d.std = node.spec.Arg<std::vector<double>>("std");
    d.scale = node.spec.Arg<double>("scale");
    d.shift = node.spec.Arg<double>("shift");
    if (d.mean.empty() || d.std.empty() || d.scale == 0) return std::nullopt;
    return d;
  }
  return std::nullopt;
}

// A sample as one tile: an image, or a clip's frames (up to kMaxStripFrames, evenly spaced: frame
// k * F / n of n) left to right; min/max scaling, where used, over the whole tile.
RgbImage ToTile(const TensorListCPU& batch, int i, ImageLayout kind, const std::optional<Denormalize>& undo) {
  const bool clip = kind == ImageLayout::kFHWC || kind == ImageLayout::kFCHW;
  const bool chw = kind == ImageLayout::kCHW || kind == ImageLayout::kFCHW;
  const Shape& full = batch.shape(i);
  const Shape s = clip ? Shape(full.begin() + 1, full.end()) : full;  // one frame
  const int64_t frames = clip ? full[0] : 1;
  const int64_t shown = std::min(frames, kMaxStripFrames);
  const int64_t h = chw ? s[1] : s[0];
  const int64_t w = chw ? s[2] : s[1];
  const int64_t c = kind == ImageLayout::kHW ? 1 : (chw ? s[0] : s[2]);
  const void* data = batch.raw_sample(i);
  auto index = [&](int64_t f, int64_t y, int64_t x, int64_t ch) {
    return f * h * w * c + (chw ? (ch * h + y) * w + x : (y * w + x) * c + ch);
  };
  // Gray for one channel; the first three otherwise (alpha and any extra channel dropped).
  const int64_t used = c >= 3 ? 3 : 1;
  const int64_t strip_w = w * shown;
  std::vector<double> v(static_cast<size_t>(h * strip_w * 3));
  for (int64_t k = 0; k < shown; ++k) {
    const int64_t f = k * frames / shown;
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        for (int64_t ch = 0; ch < 3; ++ch) {
          const int64_t src = used == 3 ? ch : 0;
          double e = SampleElement(data, batch.dtype(), index(f, y, x, src));
          if (undo) e = undo->Apply(e, static_cast<int>(src));
          v[static_cast<size_t>((y * strip_w + k * w + x) * 3 + ch)] = e;
        }
      }
    }
  }
  double lo = 0, hi = 255;
  if (batch.dtype() != DType::kUInt8 && !undo && !v.empty()) {
    lo = *std::min_element(v.begin(), v.end());
    hi = *std::max_element(v.begin(), v.end());
  }
  const double k = hi > lo ? 255.0 / (hi - lo) : 0.0;
  RgbImage tile(static_cast<int>(strip_w), static_cast<int>(h));
  for (size_t j = 0; j < v.size(); ++j) {
    tile.pixels[j] = static_cast<uint8_t>(std::clamp(std::lround((v[j] - lo) * k), 0L, 255L));
  }
  return tile;
}

bool IsLabelOutput(const TensorListCPU& b) {
  if (b.num_samples() == 0 || IsFloatingPoint(b.dtype()) || b.dtype() == DType::kBool) return false;
  for (const Shape& s : b.shapes()) {
    if (s.num_elements() != 1) return false;
  }
  return true;
}

// Tile i of `images` (checked to be an image), through `undo` when it is set.
RgbImage SampleTile(const TensorListCPU& images, int i, const std::string& name, const std::optional<Denormalize>& undo) {
  const ImageLayout kind = Classify(images.shape(i), images.layout());
  if (kind == ImageLayout::kNone) {
    throw InvalidArgument(name + ": sample " + std::to_string(i) + " has shape " + images.shape(i).ToString() +
                          " and layout \"" + std::string(images.layout().str()) +
                          "\"; expected HWC, CHW or HW images or FHWC / FCHW clips");
  }
  return ToTile(images, i, kind, undo);
}

}  // namespace

int PreviewCommand(const PipelineCommand& cmd, const PreviewOptions& options, std::ostream& out) {
  PipelineCommand with_inputs = cmd;
  with_inputs.extra_output = options.inputs;
  Session session = Session::Open(with_inputs);
  session.SetIterations(1);
  PipelineOutputs outputs = session.Next();
  outputs.Sync();
  std::vector<TensorListCPU> host;
  for (int i = 0; i < outputs.size(); ++i) host.push_back(OutputToHost(outputs, i));
  const std::vector<std::string>& names = outputs.names();
  const int input_index = options.inputs.empty() ? -1 : outputs.Index(options.inputs);

  const Graph& graph = session.pipeline().graph();
  const PreviewOverlays overlays = FindOverlays(graph, names, host, options);

  int chosen = -1;
  if (!options.output.empty()) {
    const auto it = std::find(names.begin(), names.end(), options.output);
    if (it == names.end()) {
      throw ConfigError("--output " + options.output + ": the pipeline has no output \"" + options.output + "\"" +
                        DidYouMean(options.output, names) + " (outputs: " + Join(names, ", ") + ")");
    }
    chosen = static_cast<int>(it - names.begin());
  } else {
    for (int i = 0; i < static_cast<int>(host.size()) && chosen < 0; ++i) {
      // Label maps look like 1-channel images: a mask is never the image unless --output says so.
      const bool mask_like = i == overlays.mask || names[i] == "mask" || names[i] == "masks";
      if (i == input_index || mask_like || i == overlays.boxes) continue;
      if (host[i].num_samples() > 0 && Classify(host[i].shape(0), host[i].layout()) != ImageLayout::kNone) chosen = i;
    }
    if (chosen < 0) {
      throw ConfigError(cmd.path + ": no output looks like images (HWC, CHW or HW samples, or 3-D with 1, 3 or 4 "
                        "channels); outputs: " + Join(names, ", ") + "; pick one with --output");
    }
  }
  const TensorListCPU& images = host[static_cast<size_t>(chosen)];
  int label_output = -1;
  for (int i = 0; i < static_cast<int>(host.size()) && label_output < 0; ++i) {
    const bool overlay = i == overlays.boxes || i == overlays.box_classes;
    if (i != chosen && !overlay && IsLabelOutput(host[i]) && host[i].num_samples() == images.num_samples()) {
      label_output = i;
    }
  }
  const std::optional<Denormalize> undo =
      IsFloatingPoint(images.dtype()) ? FindNormalization(graph, names[chosen]) : std::nullopt;

  std::vector<RgbImage> tiles;
  std::vector<std::string> captions;
  const int n = std::min(options.samples, images.num_samples());
  const int limit = options.tile_size > 0 ? options.tile_size : 1 << 30;
  for (int i = 0; i < n; ++i) {
    const RgbImage full = SampleTile(images, i, "--output " + names[chosen], undo);
    RgbImage tile = ShrinkToFit(full, limit, limit);
    // Drawn on the shrunk tile, so outlines stay one pixel wide.
    overlays.Draw(host, i, full.height, full.width, tile);
    if (input_index >= 0) {
      const TensorListCPU& in = host[static_cast<size_t>(input_index)];
      if (i >= in.num_samples()) {
        throw InvalidArgument("--inputs " + options.inputs + ": " + std::to_string(in.num_samples()) +
                              " samples, fewer than the " + std::to_string(images.num_samples()) + " outputs");
      }
      const std::optional<Denormalize> in_undo =
          IsFloatingPoint(in.dtype()) ? FindNormalization(graph, options.inputs) : std::nullopt;
      tiles.push_back(ShrinkToFit(SampleTile(in, i, "--inputs " + options.inputs, in_undo), tile.width, tile.height));
      captions.push_back(options.inputs);
    }
    tiles.push_back(std::move(tile));
    if (label_output >= 0) {
      const TensorListCPU& l = host[static_cast<size_t>(label_output)];
      captions.push_back(names[label_output] + " " +
                         std::to_string(static_cast<int64_t>(SampleElement(l.raw_sample(i), l.dtype(), 0))));
    } else {
      captions.push_back("#" + std::to_string(i));
    }
  }
  // With inputs: pairs per row ceil(sqrt(n / 2)) (an even column count keeps each pair together).
  const int columns =
      input_index >= 0 ? 2 * std::max(1, static_cast<int>(std::ceil(std::sqrt(n / 2.0)))) : 0;
  const RgbImage grid = RenderGrid(tiles, captions, columns);
  WritePng(options.png_path, grid);
  out << "preview: " << options.png_path << " (" << grid.width << "x" << grid.height << "), " << n << " samples of \""
      << names[chosen] << "\" (" << DTypeName(images.dtype()) << ")"
      << (undo ? ", normalization undone from crop_mirror_normalize" : "")
      << (images.dtype() != DType::kUInt8 && !undo ? ", min/max scaled per image" : "")
      << (label_output >= 0 ? ", captions from \"" + names[label_output] + "\"" : std::string(", captions: sample index"))
      << (input_index >= 0 ? ", \"" + options.inputs + "\" beside them" : std::string())
      << (overlays.Describe(names).empty() ? std::string() : ", " + overlays.Describe(names)) << "\n";
  return 0;
}

}  // namespace conveyor::cli
