// AnyTensor: a tensor of either backend, as an import produces it (the producer's device decides).
#pragma once

#include <variant>

#include "core/tensor/tensor.h"

namespace conveyor::interop {

using AnyTensor = std::variant<TensorCPU, TensorGPU>;

// Read access to the fields both backends share.
template <typename F>
decltype(auto) Visit(const AnyTensor& t, F&& f) {
  return std::visit(std::forward<F>(f), t);
}
inline const Buffer& BufferOf(const AnyTensor& t) {
  return Visit(t, [](const auto& x) -> const Buffer& { return x.buffer(); });
}
inline bool IsGpu(const AnyTensor& t) { return std::holds_alternative<TensorGPU>(t); }

// A device-side view of `t` (same Buffer, shape, strides, ready event): TensorGPU as is, and
// pinned or managed TensorCPU memory through its device address. Throws InvalidArgument for
// pageable host memory, which a kernel cannot read.
TensorGPU DeviceView(const AnyTensor& t);

}  // namespace conveyor::interop
