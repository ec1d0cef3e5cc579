// Buffer: one type for memory of every kind, with shared ownership of the allocation.
//
// device_ptr() gives a device-accessible address for device, pinned (its mapped address) and
// managed memory alike, so a pinned buffer passes to a kernel exactly like a device buffer.
// Whoever needs memory to outlive a call holds a Buffer (a captured CUDA graph, an exported
// DLPack tensor, a tensor view).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

#include "core/memory/memory_kind.h"
#include "core/memory/memory_resource.h"

namespace conveyor {

class Buffer {
 public:
  static constexpr size_t kDefaultAlignment = 256;

  Buffer() = default;

  // Allocates from DefaultResource(kind, device). Stream-ordered for device memory: the memory is
  // usable by work queued on `stream` after this call, and is returned after the work queued on the
  // release stream (initially `stream`) when the last copy of the Buffer goes away.
  static Buffer Allocate(MemoryKind kind, size_t bytes, std::optional<StreamView> stream = std::nullopt,
                         int device = -1);
  static Buffer Allocate(MemoryResource& resource, size_t bytes, std::optional<StreamView> stream,
                         size_t alignment = kDefaultAlignment);

  // Wraps memory owned elsewhere (zero-copy import). `owner` is released — exactly once — when the
  // last copy of this Buffer goes away; it may be null when the caller guarantees the lifetime.
  static Buffer Wrap(void* ptr, size_t bytes, MemoryKind kind, int device, std::shared_ptr<void> owner);

  bool empty() const { return alloc_ == nullptr; }
  size_t size() const;
  MemoryKind kind() const;
  int device() const;  // -1 for host and pinned memory
  void* data() const;  // the allocation's own address (host address for pinned memory)
  // Throws InvalidArgument for memory the host cannot dereference (kDevice).
  void* host_ptr() const;
  // Throws InvalidArgument for memory the device cannot dereference (kHost).
  void* device_ptr() const;
  long use_count() const { return alloc_.use_count(); }

  // The stream after whose queued work the memory is returned (see Allocate). If that stream (one
  // made by Stream::Create) is destroyed first, its work has finished and the memory is returned
  // without ordering.
  void set_release_stream(std::optional<StreamView> stream);

  friend bool operator==(const Buffer& a, const Buffer& b) { return a.alloc_ == b.alloc_; }

 private:
  struct Allocation;
  std::shared_ptr<Allocation> alloc_;
};

}  // namespace conveyor
