// What one call of a registered function sees (conveyor_function_call_t): the node's host inputs
// for a range of samples, and FunctionOutputs, where the outputs the function sets are kept until
// the node copies them into the executor's lists. Built by the python_function operator; read and
// written by the conveyor_function_call_* functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/capi/conveyor_function.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::capi {

// The outputs of one batch: per output one dtype and layout, per sample a shape and a host block.
// Blocks keep their capacity from batch to batch, so a steady batch allocates nothing.
class FunctionOutputs {
 public:
  // Forgets the previous batch's shapes (not its memory).
  void Reset(int num_outputs, int num_samples);

  // The memory of (output, sample), `shape` x `dtype` bytes (null when empty). Throws
  // InvalidArgument for a sample already set, or a dtype / layout other than the output's.
  void* Set(int output, int sample, const Shape& shape, DType dtype, const Layout& layout);

  // The first (output, sample) never set, or nullopt when all are.
  std::optional<std::pair<int, int>> FirstUnset() const;

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  int num_samples() const { return num_samples_; }
  // After every sample of `output` was set (or for an empty batch: the last batch's dtype).
  DType dtype(int output) const { return outputs_.at(static_cast<size_t>(output)).dtype; }
  const Layout& layout(int output) const { return outputs_.at(static_cast<size_t>(output)).layout; }
  const Shape& shape(int output, int sample) const { return Sample(output, sample).shape; }
  const void* data(int output, int sample) const { return Sample(output, sample).block.get(); }
  size_t bytes(int output, int sample) const { return Sample(output, sample).bytes; }

 private:
  struct SampleBlock {
    bool set = false;
    Shape shape;
    size_t bytes = 0;
    size_t capacity = 0;
    std::unique_ptr<std::byte[]> block;
  };
  struct Output {
    bool typed = false;  // dtype and layout fixed by a sample of this batch
    DType dtype = DType::kUInt8;
    Layout layout;
    std::vector<SampleBlock> samples;
  };
  const SampleBlock& Sample(int output, int sample) const {
    return outputs_.at(static_cast<size_t>(output)).samples.at(static_cast<size_t>(sample));
  }

  int num_samples_ = 0;
  std::vector<Output> outputs_;
};

}  // namespace conveyor::capi

// One call: samples [first_sample, first_sample + num_samples) of the node's batch.
struct conveyor_function_call_s {
  std::vector<const conveyor::TensorListCPU*> inputs;
  std::vector<std::string> input_layouts;  // NUL-terminated copies for the C API
  int first_sample = 0;
  int num_samples = 0;
  bool batch_processing = true;
  int64_t iteration = 0;
  std::string node;
  std::string function;
  conveyor::capi::FunctionOutputs* outputs = nullptr;
  std::string error;    // set by the function (conveyor_function_call_set_error)
  std::string refused;  // the first of this call's C API calls that failed, with its message
};
