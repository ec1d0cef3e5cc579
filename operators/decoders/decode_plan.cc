#include "operators/decoders/decode_plan.h"

#include <exception>
#include <mutex>

#include "core/error.h"
#include "operators/decoders/image_check.h"

namespace conveyor::ops {

OutputDesc DecodePlan::Desc() const {
  OutputDesc desc;
  desc.dtype = DType::kUInt8;
  desc.layout = "HWC";
  desc.shapes.reserve(windows.size());
  for (const CropWindow& w : windows) desc.shapes.push_back(Shape{w.h, w.w, channels()});
  return desc;
}

std::string SourceText(const TensorListCPU& input, int sample) {
  const SampleSource* source = input.source(sample);
  if (source == nullptr) return "";
  std::string text = "file \"" + source->file + "\"";
  if (source->index >= 0) text += ", reader index " + std::to_string(source->index);
  return text;
}

std::string SampleWhere(const std::string& where, const TensorListCPU& input, int sample) {
  const std::string source = SourceText(input, sample);
  return where + ": sample " + std::to_string(sample) + " of " + std::to_string(input.num_samples()) +
         (source.empty() ? "" : " (" + source + ")");
}

CropWindow PlanWindow(const Workspace& ws, int sample, const ImageInfo& info, int orientation,
                      const std::optional<RandomCropParams>& crop) {
  const CropWindow shown = OrientedFullWindow(info, orientation);
  if (!crop) return shown;
  Philox rng = ws.Rng(sample);
  return DrawRandomCropWindow(rng, shown.h, shown.w, *crop);
}

DecodePlan PlanBatch(const Workspace& ws, const TensorListCPU& input, OutputColor color,
                     const std::optional<RandomCropParams>& crop, bool adjust_orientation, int64_t max_pixels) {
  DecodePlan plan;
  plan.color = color;
  plan.max_pixels = max_pixels;
  plan.where = ws.spec().Describe();
  const int n = input.num_samples();
  if (n > 0 && input.dtype() != DType::kUInt8) {
    throw InvalidArgument(plan.where + ": expected encoded bytes (uint8), got " + std::string(DTypeName(input.dtype())));
  }
  for (int i = 0; i < n; ++i) {
    if (input.shape(i).ndim() != 1) {
      throw InvalidArgument(SampleWhere(plan.where, input, i) + ": expected a 1-D sample of encoded bytes, got shape " +
                            input.shape(i).ToString());
    }
  }
  plan.infos.resize(static_cast<size_t>(n));
  plan.windows.resize(static_cast<size_t>(n));
  plan.orientations.assign(static_cast<size_t>(n), 1);
  // Headers in parallel; the first failing sample (lowest index) is reported, as a serial loop would.
  std::mutex mu;
  int failed = n;
  std::string message;
  ws.ParallelFor(n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int i = static_cast<int>(k);
      try {
        const uint8_t* data = static_cast<const uint8_t*>(input.raw_sample(i));
        const size_t size = static_cast<size_t>(input.shape(i)[0]);
        const ImageInfo info = ParseImageInfo(data, size, max_pixels);
        // Truncation and damaged structure are found here, on the host, for both backends: the
        // GPU's hardware engines may decode a truncated file without a word.
        const std::string damaged = CheckImageStructure(data, size, info);
        if (!damaged.empty()) throw InvalidArgument(damaged + " [" + info.Describe() + "]");
        plan.infos[static_cast<size_t>(i)] = info;
        // Windows are drawn in the shown image, as the user sees it (DALI does the same).
        const int orientation = adjust_orientation ? info.orientation : 1;
        plan.windows[static_cast<size_t>(i)] = PlanWindow(ws, i, info, orientation, crop);
        plan.orientations[static_cast<size_t>(i)] = orientation;
      } catch (const InvalidArgument& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < failed) {
          failed = i;
          message = e.what();
        }
      }
    }
  });
  if (failed < n) throw SampleError(SampleWhere(plan.where, input, failed) + ": " + message, failed, message);
  return plan;
}

void DecodeSampleCpu(const TensorListCPU& input, int sample, const DecodePlan& plan, uint8_t* out) {
  const size_t i = static_cast<size_t>(sample);
  try {
    DecodeOrientedImageCpu(static_cast<const uint8_t*>(input.raw_sample(sample)),
                           static_cast<size_t>(input.shape(sample)[0]), plan.infos[i], plan.color,
                           plan.orientations[i], plan.windows[i], out, plan.max_pixels);
  } catch (const InvalidArgument& e) {
    const std::string reason = std::string(e.what()) + " [" + plan.infos[i].Describe() + "]";
    throw SampleError(SampleWhere(plan.where, input, sample) + ": " + reason, sample, reason);
  }
}

}  // namespace conveyor::ops
