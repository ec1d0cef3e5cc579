#include "core/memory/buffer.h"

#include <cuda_runtime_api.h>

#include <string>

#include "core/cuda/check.h"
#include "core/error.h"

namespace conveyor {

struct Buffer::Allocation {
  void* ptr = nullptr;
  size_t bytes = 0;
  size_t alignment = 0;
  MemoryKind kind = MemoryKind::kHost;
  int device = -1;
  MemoryResource* resource = nullptr;  // set when we allocated it
  std::shared_ptr<void> owner;         // set when we wrapped it
  std::optional<StreamView> release_stream;
  mutable void* mapped = nullptr;      // device address of pinned memory, looked up once

  ~Allocation() {
    if (resource == nullptr) return;
    // A Buffer may outlive the stream it was allocated on (a test's stream declared after the
    // pipeline, a fed batch kept by the executor). That stream's work is finished (Stream waits
    // before destroying), so the release needs no ordering — and must not touch the dead handle.
    std::optional<StreamView> stream = release_stream;
    if (stream && cuda::IsDestroyedStream(stream->get())) stream.reset();
    resource->Deallocate(ptr, bytes, alignment, stream);
  }
};

Buffer Buffer::Allocate(MemoryKind kind, size_t bytes, std::optional<StreamView> stream, int device) {
  return Allocate(DefaultResource(kind, device), bytes, stream);
}

Buffer Buffer::Allocate(MemoryResource& resource, size_t bytes, std::optional<StreamView> stream,
                        size_t alignment) {
  Buffer b;
  auto a = std::make_shared<Allocation>();
  a->ptr = resource.Allocate(bytes, alignment, stream);
  a->bytes = bytes;
  a->alignment = alignment;
  a->kind = resource.kind();
  a->device = resource.device();
  a->resource = &resource;
  a->release_stream = stream;
  b.alloc_ = std::move(a);
  return b;
}

Buffer Buffer::Wrap(void* ptr, size_t bytes, MemoryKind kind, int device, std::shared_ptr<void> owner) {
  if (ptr == nullptr && bytes != 0) {
    throw InvalidArgument("Buffer::Wrap: expected a non-null pointer for " + std::to_string(bytes) +
                          " bytes of " + std::string(MemoryKindName(kind)) + " memory");
  }
  Buffer b;
  auto a = std::make_shared<Allocation>();
  a->ptr = ptr;
  a->bytes = bytes;
  a->kind = kind;
  a->device = (kind == MemoryKind::kHost || kind == MemoryKind::kPinned) ? -1 : device;
  a->owner = std::move(owner);
  b.alloc_ = std::move(a);
  return b;
}

size_t Buffer::size() const { return alloc_ ? alloc_->bytes : 0; }
MemoryKind Buffer::kind() const { return alloc_ ? alloc_->kind : MemoryKind::kHost; }
int Buffer::device() const { return alloc_ ? alloc_->device : -1; }
void* Buffer::data() const { return alloc_ ? alloc_->ptr : nullptr; }

void* Buffer::host_ptr() const {
  if (!alloc_) return nullptr;
  if (!IsHostAccessible(alloc_->kind)) {
    throw InvalidArgument("Buffer::host_ptr: expected host, pinned or managed memory, got " +
                          std::string(MemoryKindName(alloc_->kind)) + " memory (copy it to the host first)");
  }
  return alloc_->ptr;
}

void* Buffer::device_ptr() const {
  if (!alloc_) return nullptr;
  switch (alloc_->kind) {
    case MemoryKind::kDevice:
    case MemoryKind::kManaged:
      return alloc_->ptr;
    case MemoryKind::kPinned:
      if (alloc_->mapped == nullptr && alloc_->ptr != nullptr) {
        CONVEYOR_CUDA_CHECK(cudaHostGetDevicePointer(&alloc_->mapped, alloc_->ptr, 0));
      }
      return alloc_->mapped;
    case MemoryKind::kHost:
      break;
  }
  throw InvalidArgument(
      "Buffer::device_ptr: expected device, pinned or managed memory, got pageable host memory "
      "(a kernel cannot read it; stage it through a pinned buffer)");
}

void Buffer::set_release_stream(std::optional<StreamView> stream) {
  if (alloc_) alloc_->release_stream = stream;
}

}  // namespace conveyor
