// DecodePlan: what the decoders' Setup decides for one batch — each sample's parsed header and the
// window to decode (the whole image for decoders.image, a random window for
// decoders.image_random_crop) — and the per-sample CPU decode with its error context. Shared by
// the CPU backend (decoders_op.cc) and the GPU backend (gpu_decoder), so both decode the same
// windows and name failing samples the same way.
//
//   Setup:  plan = PlanBatch(ws, input, color, crop, adjust_orientation, max_pixels)
//                                                   → output shapes [window.h, window.w, C]
//   RunCpu: DecodeSampleCpu(input, i, plan, out.raw_sample(i)) per sample, in parallel
//   RunGpu: nvJPEG for the images it takes; DecodeSampleCpu (into host memory) for the others
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op/workspace.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/decode_cpu.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

struct DecodePlan {
  OutputColor color = OutputColor::kRgb;
  std::vector<ImageInfo> infos;     // per sample
  std::vector<CropWindow> windows;  // per sample, inside the shown (oriented) image
  // Per sample: the EXIF orientation applied (info.orientation with adjust_orientation, else 1).
  std::vector<int> orientations;
  std::string where;                // spec.Describe(): `op "decoders.image" (dec)`
  int64_t max_pixels = kDefaultMaxPixels;  // the decoders' argument: headers and decodes held to it

  int channels() const { return OutputChannels(color); }
  // Shapes [h, w, C] of the windows.
  OutputDesc Desc() const;
};

// "op \"decoders.image\" (dec): sample 3 of 256 (file \"/data/x.jpg\", reader index 1234)": how
// messages about one sample start; the part in parentheses when the input carries the sample's
// source (TensorList::sources, set by readers).
std::string SampleWhere(const std::string& where, const TensorListCPU& input, int sample);
// "file \"/data/x.jpg\", reader index 1234", or "" when the source is unknown.
std::string SourceText(const TensorListCPU& input, int sample);

// Checks the input (uint8, 1-D samples), parses every header and checks each file's structure
// (image_check.h: truncation, damaged markers or chunks) in parallel on ws's pool, and, with
// `crop`, draws each sample's window from ws.Rng(sample). With `adjust_orientation` the windows
// (the whole image or the random one) lie in the image turned by its EXIF orientation, so 5-8
// swap the output's height and width. A declared size over `max_pixels` is refused here, before the
// output (sized from the plan) is allocated, on either backend. Throws InvalidArgument starting
// with SampleWhere for the first bad sample.
DecodePlan PlanBatch(const Workspace& ws, const TensorListCPU& input, OutputColor color,
                     const std::optional<RandomCropParams>& crop, bool adjust_orientation, int64_t max_pixels);

// The window PlanBatch plans for sample `sample` (header `info`, EXIF `orientation` applied or 1):
// the whole shown image, or with `crop` a random one drawn from ws.Rng(sample). The decoder's
// look-ahead draws the same windows through it before Setup.
CropWindow PlanWindow(const Workspace& ws, int sample, const ImageInfo& info, int orientation,
                      const std::optional<RandomCropParams>& crop);

// Decodes sample `sample` of `input` as planned into `out` (its window of the shown image, HWC
// packed: DecodeOrientedImageCpu, held to plan.max_pixels). Throws
// InvalidArgument: SampleWhere + the decoder's reason.
void DecodeSampleCpu(const TensorListCPU& input, int sample, const DecodePlan& plan, uint8_t* out);

}  // namespace conveyor::ops
