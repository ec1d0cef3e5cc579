// Argument and input checks shared by the per-pixel image operators. Messages name the node
// (spec.Describe()), the argument or input, the sample, what was expected and what arrived.
#pragma once

#include <string>
#include <vector>

#include "core/op/spec.h"
#include "core/op/workspace.h"

namespace conveyor::ops {

// The layout a batch is taken as by an operator that accepts `layouts`: its own when it is one of
// them; for a batch with no layout (an external source, readers.numpy without `layout`), the first
// of `layouts` when its samples have that rank (judged by sample 0; the per-sample checks catch the
// rest); else none (empty). Shared by CheckInput and the geometric operators' CheckImageInput.
Layout TakenLayout(const TensorListDesc& desc, const std::vector<Layout>& layouts);

// Throws InvalidArgument unless input `index` has one of `layouts` (when non-empty: samples must
// then have as many dims as the layout letters) and one of `dtypes` (when non-empty). Returns the
// layout the input is taken as (TakenLayout; desc.layout when `layouts` is empty).
//   op "cmn" (cmn): input 0: expected layout HWC, got CHW
//   op "cmn" (cmn): input 0: expected layout HWC, got none (sample 0 has shape (4, 5); an unlabelled
//                   batch is taken as HWC only when every sample has 3 dims)
//   op "cmn" (cmn): input 0: expected layout HWC or FHWC, got NHWC (a sequence is FHWC: frames first)
//   op "cmn" (cmn): input 0: expected dtype uint8 or float32, got int32
//   op "cmn" (cmn): input 0: sample 2 has shape (4, 5), expected 3 dims (HWC)
Layout CheckInput(const OpSpec& spec, const TensorListDesc& desc, int index, const std::vector<Layout>& layouts,
                  const std::vector<DType>& dtypes);

// `values` (an argument's list for one sample) expanded to `channels` floats: one value is
// broadcast, otherwise there must be exactly one per channel:
//   op "n" (normalize): argument "mean": expected 1 or 3 values (one per channel), got 2 at sample 0
std::vector<float> PerChannel(const OpSpec& spec, const std::string& arg, const std::vector<double>& values,
                              int64_t channels, int sample);

// The affine factors of normalization for one sample: mean and std expanded by PerChannel, then
// mul[c] = scale / std[c] and add[c] = shift - mean[c] * mul[c] for c < channels. A zero std:
//   op "n" (normalize): argument "std": must be nonzero, got 0 for channel 1 at sample 0
void NormalizeFactors(const OpSpec& spec, const std::vector<double>& mean, const std::vector<double>& std,
                      int64_t channels, int sample, float scale, float shift, float* mul, float* add);

// A sample as `count` frames of shape `frame`: a sequence layout (FHWC, FCHW: first axis F)
// splits off its first axis; any other layout is one frame of the whole shape. The image
// operators that take clips apply the sample's parameters to each frame.
struct SampleFrames {
  int64_t count;
  Shape frame;
};
SampleFrames SplitFrames(const Shape& sample, const Layout& layout);

// `frame` with `count` frames in front when `layout` is a sequence layout, else `frame` itself:
// the output shape of an operator that maps each frame to `frame`.
Shape JoinFrames(int64_t count, const Shape& frame, const Layout& layout);

// True for layouts whose first axis is frames (FHWC, FCHW).
bool IsSequenceLayout(const Layout& layout);

// "uint8 or float32" from a dtype list.
std::string DTypeList(const std::vector<DType>& dtypes);

}  // namespace conveyor::ops
