// Slot buffers: every TensorList an iteration writes lives in buffers that its prefetch slot owns
// and keeps across iterations. Place() binds a list to its slot buffer and grows that buffer only
// when a batch no longer fits (CapacityFor: 1/8 above the batch, at least 1/4 above the old
// capacity), so:
//   - steady state allocates nothing (sizes vary within capacity);
//   - addresses stay put between growths, which is what a captured CUDA graph records;
//   - kernels of capturable operators may size their grids by capacity (list.buffer().size());
//   - a fixed-size batch holds 1.125x its bytes, a varying one at most ~1.4x its largest (growths
//     are geometric, so a slot recaptures a few times at most). Powers of two held up to 2x: a
//     224x224 float16 batch of 256 (73.5 MiB) took 128 MiB per slot (H100, 2026-11-25: the fused
//     training pipeline's slot buffers 647 MiB in use for ~400 MiB of batches).
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

// The capacity a slot buffer gets for `bytes` when the one it has (`previous` bytes; 0 for none)
// is too small: max(bytes + bytes/8, previous + previous/4), rounded up to 256 bytes.
size_t CapacityFor(size_t bytes, size_t previous = 0);

// Binds `list` to `shapes`/`dtype` in its current buffer when that is of `kind` and big enough,
// else in a new buffer of CapacityFor (stream-ordered on `stream` for device memory).
// Returns true when it allocated.
template <typename Backend>
bool Place(TensorList<Backend>& list, const std::vector<Shape>& shapes, DType dtype, MemoryKind kind,
           std::optional<StreamView> stream) {
  const size_t needed = BatchBytes(shapes, dtype);
  Buffer buffer = list.buffer();
  const bool same_kind = !buffer.empty() && buffer.kind() == kind;
  const bool grow = !same_kind || buffer.size() < needed;
  if (grow) buffer = Buffer::Allocate(kind, CapacityFor(needed, same_kind ? buffer.size() : 0), stream);
  list.SetBuffer(std::move(buffer), shapes, dtype);
  return grow;
}

}  // namespace conveyor::pipeline_internal
