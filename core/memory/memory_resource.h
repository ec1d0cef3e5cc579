// Stream-ordered memory resources, one per MemoryKind (and device).
//
//   kHost    → aligned operator new; the stream is ignored.
//   kPinned  → cudaHostAlloc(Mapped | Portable) behind a size-class pool: pinning costs
//              milliseconds, so blocks are kept and reused once the stream work that last used
//              them has finished (an event recorded at Deallocate).
//   kDevice  → a cudaMallocAsync pool of our own per device whose release threshold keeps its
//              memory, so steady-state iterations never reach cudaMalloc/cudaFree.
//   kManaged → cudaMallocManaged (synchronising; for tests and odd cases, not hot paths).
//
// All resources are thread-safe. `stream` == std::nullopt means "no stream work uses this
// memory": the allocation is usable at once and the deallocation may be reused at once.
#pragma once

#include <cstddef>
#include <optional>

#include "core/cuda/stream.h"
#include "core/memory/memory_kind.h"

namespace conveyor {

using cuda::StreamView;

class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  virtual MemoryKind kind() const = 0;
  virtual int device() const = 0;  // -1 for host memory

  // Throws OutOfMemory (size and kind in the message) or CudaError.
  virtual void* Allocate(size_t bytes, size_t alignment, std::optional<StreamView> stream) = 0;
  // Memory returns to the pool after the work queued on `stream` so far has completed.
  virtual void Deallocate(void* ptr, size_t bytes, size_t alignment,
                          std::optional<StreamView> stream) noexcept = 0;
};

// The process-wide resource for `kind` on `device` (-1: the current device; ignored for kHost).
MemoryResource& DefaultResource(MemoryKind kind, int device = -1);

// Returns pooled pinned blocks whose last use has finished to the driver (e.g. after a burst).
void TrimPinnedPool();

}  // namespace conveyor
