// VirtualBuffer: device memory whose address never changes while it grows.
//
//   reserve once:  [base ........................................ base + reserved)
//   grow:          [chunk 0][chunk 1][chunk 2] ...  mapped at base + offset, access set
//
// A captured CUDA graph records raw addresses; because growth maps new physical chunks behind the
// same virtual range, a graph captured over this buffer stays valid when a batch is larger than any
// before. Driver calls go through cudaGetDriverEntryPointByVersion (nothing links libcuda).
#pragma once

#include <cstddef>
#include <memory>

#include "core/memory/buffer.h"
#include "core/memory/device_ptr.h"

namespace conveyor {

class VirtualBuffer {
 public:
  // Reserves `max_bytes` (rounded up to the allocation granularity) of virtual address space on
  // `device` (-1: current) and maps `initial_bytes`. Throws CudaError / OutOfMemory.
  static VirtualBuffer Create(size_t max_bytes, size_t initial_bytes = 0, int device = -1);

  VirtualBuffer() = default;

  DevicePtr<std::byte> base() const;
  size_t mapped_bytes() const;    // usable bytes from base()
  size_t reserved_bytes() const;  // the most it can ever grow to
  size_t granularity() const;
  size_t chunk_count() const;
  int device() const;

  // Ensures at least `bytes` are mapped; maps new chunks at the end. Throws OutOfMemory beyond the
  // reservation. Growth is not stream-ordered: callers make sure no kernel is running past the end.
  void Grow(size_t bytes);

  // A Buffer over the mapped range that shares ownership of the whole reservation, so a graph or a
  // tensor holding it keeps every chunk alive.
  Buffer AsBuffer() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace conveyor
