// Slot buffers: every TensorList an iteration writes lives in buffers that its prefetch slot owns
// and keeps across iterations. Place() binds a list to its slot buffer and grows that buffer only
// when a batch no longer fits, to the next power of two, so:
//   - steady state allocates nothing (sizes vary within capacity);
//   - addresses stay put between growths, which is what a captured CUDA graph records;
//   - kernels of capturable operators may size their grids by capacity (list.buffer().size()).
//
// A CPU output that feeds the GPU is placed in pinned memory: the producer writes straight into
// the staging buffer and one cudaMemcpyAsync per edge moves it to the device.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/memory/buffer.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::pipeline_internal {

// Bytes a TensorList needs for these samples (16-byte aligned samples, as TensorList lays them out).
size_t BatchBytes(const std::vector<Shape>& shapes, DType dtype);

// The capacity a slot buffer gets for `bytes`: the next power of two, at least 256 bytes.
size_t CapacityFor(size_t bytes);

// Binds `list` to `shapes`/`dtype` in its current buffer when that is of `kind` and big enough,
// else in a new buffer of CapacityFor(bytes) (stream-ordered on `stream` for device memory).
// Returns true when it allocated.
template <typename Backend>
bool Place(TensorList<Backend>& list, const std::vector<Shape>& shapes, DType dtype, MemoryKind kind,
           std::optional<StreamView> stream) {
  const size_t needed = BatchBytes(shapes, dtype);
  Buffer buffer = list.buffer();
  const bool grow = buffer.empty() || buffer.kind() != kind || buffer.size() < needed;
  if (grow) buffer = Buffer::Allocate(kind, CapacityFor(needed), stream);
  list.SetBuffer(std::move(buffer), shapes, dtype);
  return grow;
}

}  // namespace conveyor::pipeline_internal
