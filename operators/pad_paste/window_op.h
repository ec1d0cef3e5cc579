// WindowOp: the operator glue shared by pad, slice and paste. Each op says, per sample, which
// window of its input it outputs (Plan, in Setup); this class checks the input, builds the output
// descriptors, and runs the window engine (window.h) on either backend: the CPU reference per
// sample, or on the GPU one capturable launch per batch with the windows in per-slot descriptors.
#pragma once

#include <string>
#include <vector>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/pad_paste/window.h"

namespace conveyor::ops {

// A number for messages: "300", "0.5", "-1e+10".
std::string NumberString(double value);

// d.fill / d.fill_count from `values` (argument `arg`): one value, or one per channel of `channels`.
// Throws InvalidArgument "<where>: <arg> has 2 values, the output has 3 channels (give 1 or 3)" or
// "<where>: <arg>[0] = 256: expected an integer in [0, 255] for uint8".
void MakeFill(const std::vector<double>& values, const char* arg, DType dtype, int64_t channels,
              const std::string& where, uint32_t* fill, int32_t* fill_count);

class WindowOp : public Operator {
 public:
  explicit WindowOp(const OpSpec& spec) : Operator(spec) {}

  OutputDescs Setup(const Workspace& ws) override;
  void RunCpu(Workspace& ws) override;
  void PrepareGpu(Workspace& ws) override;
  void RunGpu(Workspace& ws) override;

 protected:
  // Called once per batch before the Plan calls (read batch-wide values: SampleArg, batch maxima).
  virtual void BeginBatch(const Workspace& ws, const TensorListDesc& in) = 0;
  // Sample i's window for an input of shape `shape` ([H, W, C]): in/out pointers left null.
  virtual WindowDesc Plan(const Workspace& ws, int i, const Shape& shape) = 0;

  // "op \"pad\" (p): sample 3"
  std::string Where(int sample) const { return spec().Describe() + ": sample " + std::to_string(sample); }
  // Fills d.fill / d.fill_count from `values` (argument `arg`): one value, or one per output
  // channel. Throws InvalidArgument naming the op, the sample, the count or the bad value.
  void SetFill(const std::vector<double>& values, const char* arg, DType dtype, int sample, WindowDesc& d) const;

 private:
  WindowDesc Bound(int s, const void* in, void* out) const;

  DType dtype_ = DType::kUInt8;
  std::vector<WindowDesc> plans_;  // this batch's windows, from Setup
  SlotDescriptors<WindowDesc> descs_;
};

}  // namespace conveyor::ops
