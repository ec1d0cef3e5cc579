#include "core/capi/function_call.h"

#include <string>

#include "core/error.h"

namespace conveyor::capi {

void FunctionOutputs::Reset(int num_outputs, int num_samples) {
  num_samples_ = num_samples;
  outputs_.resize(static_cast<size_t>(num_outputs));
  for (Output& out : outputs_) {
    out.typed = false;
    if (out.samples.size() < static_cast<size_t>(num_samples)) out.samples.resize(static_cast<size_t>(num_samples));
    for (SampleBlock& s : out.samples) s.set = false;
  }
}

void* FunctionOutputs::Set(int output, int sample, const Shape& shape, DType dtype, const Layout& layout) {
  if (output < 0 || output >= num_outputs()) {
    throw InvalidArgument("output: expected 0 to " + std::to_string(num_outputs() - 1) + ", got " +
                          std::to_string(output));
  }
  if (sample < 0 || sample >= num_samples_) {
    throw InvalidArgument("sample: expected 0 to " + std::to_string(num_samples_ - 1) + ", got " +
                          std::to_string(sample));
  }
  const std::string where = "output " + std::to_string(output) + " of sample " + std::to_string(sample);
  if (!layout.empty() && layout.ndim() != shape.ndim()) {
    throw InvalidArgument(where + ": expected a layout of " + std::to_string(shape.ndim()) + " letters for shape " +
                          shape.ToString() + ", got \"" + std::string(layout.str()) + "\"");
  }
  Output& out = outputs_[static_cast<size_t>(output)];
  SampleBlock& s = out.samples[static_cast<size_t>(sample)];
  if (s.set) throw InvalidArgument(where + ": expected one output per sample, got a second one");
  if (out.typed && out.dtype != dtype) {
    throw InvalidArgument(where + ": expected " + std::string(DTypeName(out.dtype)) +
                          ", the dtype of this output's other samples, got " + std::string(DTypeName(dtype)));
  }
  if (out.typed && !(out.layout == layout)) {
    throw InvalidArgument(where + ": expected layout \"" + std::string(out.layout.str()) +
                          "\", the layout of this output's other samples, got \"" + std::string(layout.str()) + "\"");
  }
  out.typed = true;
  out.dtype = dtype;
  out.layout = layout;
  s.shape = shape;
  s.bytes = static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype);
  if (s.bytes > s.capacity) {
    s.block.reset(new std::byte[s.bytes]);  // uninitialised: the function writes every byte
    s.capacity = s.bytes;
  }
  s.set = true;
  return s.bytes == 0 ? nullptr : s.block.get();
}

std::optional<std::pair<int, int>> FunctionOutputs::FirstUnset() const {
  for (int s = 0; s < num_samples_; ++s) {
    for (int o = 0; o < num_outputs(); ++o) {
      if (!Sample(o, s).set) return std::make_pair(o, s);
    }
  }
  return std::nullopt;
}

}  // namespace conveyor::capi
