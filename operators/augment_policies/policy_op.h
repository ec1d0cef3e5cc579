// PolicyOp: the run half shared by auto_augment, rand_augment and trivial_augment_wide. A policy
// says how a sample's operations are drawn (Draw, from ws.Rng(sample), policy.h); this class
// turns them into steps (stage.h) in Setup, runs them per sample on the CPU, and on the GPU runs
// step k of every sample with one batched launch per kernel (5 launches per step, any batch size),
// ping-ponging between the output and one per-slot scratch buffer so that the last step writes
// the output:
//
//   steps = 2:   input ──step 0──▶ scratch ──step 1──▶ output
//   steps = 3:   input ──step 0──▶ output ──step 1──▶ scratch ──step 2──▶ output
//
// Descriptors: five SlotDescriptors arrays of steps x batch (Write in PrepareGpu, Upload in
// RunGpu); the scratch grows only with the output's capacity (in the capture signature).
// Capturable. Input: HWC uint8 with 3 channels (RGB); the output has the input's shape.
#pragma once

#include <string>
#include <vector>

#include "core/memory/buffer.h"
#include "core/op/operator.h"
#include "core/op/schema.h"
#include "core/op/slot_descriptors.h"
#include "core/op/workspace.h"
#include "operators/augment_policies/stage.h"

namespace conveyor::ops::augment {

// fill_value and interp_type, shared by the three schemas.
OpSchema& AddPolicyArgs(OpSchema& schema);

class PolicyOp : public Operator {
 public:
  PolicyOp(const OpSpec& spec, int steps);

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;
  void PrepareGpu(Workspace& ws) final;
  void RunGpu(Workspace& ws) final;

 protected:
  virtual SampleOps Draw(Philox& rng, int64_t h, int64_t w) const = 0;
  // "op \"rand_augment\" (ra): argument \"m\": expected ..., got ..." for constructor checks.
  [[noreturn]] void ThrowArg(const std::string& name, const std::string& expected, const std::string& got) const;

 private:
  template <typename T>
  T* WriteArray(SlotDescriptors<T>& descs, const Workspace& ws, size_t count) {
    return descs.Write(ws.slot(), count, ws.stream());
  }

  int steps_;
  float fill_;
  resample::Filter filter_;
  std::vector<StepSample> samples_;  // steps_ x batch, step-major; addresses unset
  std::vector<Buffer> scratch_;      // per slot
  SlotDescriptors<CenterSample> centers_;
  SlotDescriptors<ColorSample> colors_;
  SlotDescriptors<WarpSample> warps_;
  SlotDescriptors<SharpnessSample> sharpness_;
  SlotDescriptors<HistogramSample> histograms_;
};

}  // namespace conveyor::ops::augment
