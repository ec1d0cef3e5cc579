// DecodePlan: what the decoders' Setup decides for one batch — each sample's parsed header and the
// window to decode (the whole image for decoders.image, a random window for
// decoders.image_random_crop) — and the per-sample CPU decode with its error context. Shared by
// the CPU backend (decoders_op.cc) and the GPU backend (gpu_decoder), so both decode the same
// windows and name failing samples the same way.
//
//   Setup:  plan = PlanBatch(ws, input, color, crop)  → output shapes [window.h, window.w, C]
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
  std::vector<CropWindow> windows;  // per sample, inside the image
  std::string where;                // spec.Describe(): `op "decoders.image" (dec)`

  int channels() const { return OutputChannels(color); }
  // Shapes [h, w, C] of the windows.
  OutputDesc Desc() const;
};

// "op \"decoders.image\" (dec): sample 3 of 256": how messages about one sample start.
std::string SampleWhere(const std::string& where, int sample, int num_samples);

// Checks the input (uint8, 1-D samples), parses every header (in parallel on ws's pool) and,
// with `crop`, draws each sample's window from ws.Rng(sample). Throws InvalidArgument starting
// with SampleWhere for the first bad sample.
DecodePlan PlanBatch(const Workspace& ws, const TensorListCPU& input, OutputColor color,
                     const std::optional<RandomCropParams>& crop);

// Decodes sample `sample` of `input` as planned into `out` (its window, HWC packed). Throws
// InvalidArgument: SampleWhere + the decoder's reason.
void DecodeSampleCpu(const TensorListCPU& input, int sample, const DecodePlan& plan, uint8_t* out);

}  // namespace conveyor::ops
