// The half of warp_affine and rotate that they share: input checks, output sizes, fill values,
// per-sample descriptors and the runs (CPU reference per sample on the CPU stage's threads; GPU
// descriptors written in PrepareGpu, one launch per batch in RunGpu: capturable). A subclass only
// says, per sample, how large the output is and which matrix maps it onto the input.
//
// Shared arguments: fill_value (per sample; [] = clamp to the edge, one value, or one per
// channel), interp_type (nearest, linear, cubic and DALI's INTERP_* names), dtype (same, uint8,
// float32). Messages name the node, the argument or input, the sample, the expectation and the
// value, e.g.
//   op "warp_affine" (w): argument "fill_value": expected 1 or 3 values (one per channel), got 2 at sample 1
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "core/op/slot_descriptors.h"
#include "core/op/workspace.h"
#include "operators/geometry/affine_matrix.h"
#include "operators/geometry/warp.h"

namespace conveyor::ops {

// Adds the shared arguments (fill_value, interp_type, dtype) to a warp operator's schema.
OpSchema& AddWarpArgs(OpSchema& schema);

class WarpOp : public Operator {
 public:
  explicit WarpOp(const OpSpec& spec);

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;
  void PrepareGpu(Workspace& ws) final;
  void RunGpu(Workspace& ws) final;

 protected:
  struct Geometry {
    int64_t out_h = 0, out_w = 0;
    Affine2D out_to_in;
  };
  // One geometry per input shape (HWC, at least one pixel each; empty samples are not asked).
  // `samples[k]` is the batch index of `shapes[k]`, for messages and per-sample arguments.
  virtual std::vector<Geometry> Geometries(const Workspace& ws, const std::vector<Shape>& shapes,
                                           const std::vector<int>& samples) const = 0;

  // An output size argument for one sample: [] → nullopt; else [h, w], each finite, >= 0 and at
  // most kMaxWarpSide, rounded to the nearest integer.
  std::optional<std::pair<int64_t, int64_t>> SizeArg(const std::string& name, const std::vector<double>& values,
                                                    int sample) const;
  std::string AtSample(int sample) const { return " at sample " + std::to_string(sample); }

 private:
  void FillValues(const std::vector<double>& values, int sample, WarpSample& s) const;

  resample::Filter filter_;
  std::string dtype_;
  std::vector<WarpSample> samples_;  // Setup's, without addresses
  SlotDescriptors<WarpSample> descs_;
};

}  // namespace conveyor::ops
