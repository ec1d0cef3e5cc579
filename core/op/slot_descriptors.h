// SlotDescriptors<T>: the per-sample parameter arrays of a GPU operator, one per prefetch slot,
// following the executor's contract (docs/executor.md, "Contracts for operators"):
//
//   PrepareGpu(ws):  T* d = descs_.Write(ws.slot(), n, ws.stream());  fill d[0..n)   (host, every iteration)
//   RunGpu(ws):      const T* dev = descs_.Upload(ws.slot(), ws.stream()); launch(dev, ...)
//
// Write() returns the slot's pinned host array (and grows both arrays: allocation is not allowed
// while RunGpu is being captured); the executor rewrites slot s only after its previous GPU work
// finished, so no event is needed. Upload() queues one H2D copy of the array
// into the slot's device array and returns the device address: kernels then read descriptors
// from device memory (a pinned, mapped read costs a PCIe round trip at every block start). Both
// addresses stay put while the count does not grow, and a growth changes the sample count, which
// is in the capture signature: a captured copy node and kernel replay correctly.
// `Mapped()` gives the pinned array's device address instead, for kernels that want no copy.
//
// Inside the executor's captured segments the arrays live in the segment's DescriptorArena
// (descriptor_arena.h): Write places the array there and Upload returns its device address with no
// copy of its own — the segment's graph uploads the whole arena with one memcpy node.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/descriptor_arena.h"

namespace conveyor {

template <typename T>
class SlotDescriptors {
  static_assert(std::is_trivially_copyable_v<T>, "descriptors are copied bytewise to the device");

 public:
  // The host array of `count` descriptors of `slot`, grown (never shrunk) as needed, with its
  // device twin (allocated stream-ordered on `stream`).
  T* Write(int slot, size_t count, StreamView stream) {
    Slot& s = At(slot);
    s.count = count;
    s.arena = CurrentDescriptorArena();
    if (s.arena != nullptr) {
      s.offset = s.arena->Place(Bytes(count));
      return static_cast<T*>(s.arena->host(s.offset));
    }
    const size_t bytes = Bytes(count);
    if (s.host.empty() || s.host.size() < bytes) s.host = Buffer::Allocate(MemoryKind::kPinned, bytes);
    if (s.device.empty() || s.device.size() < bytes) s.device = Buffer::Allocate(MemoryKind::kDevice, bytes, stream);
    return static_cast<T*>(s.host.host_ptr());
  }

  // Queues the copy of the slot's array (as last written) to device memory on `stream`; returns
  // its device address.
  const T* Upload(int slot, StreamView stream) {
    Slot& s = At(slot);
    if (s.arena != nullptr) return static_cast<const T*>(s.arena->device(s.offset));
    if (s.count > 0) {
      CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(s.device.device_ptr(), s.host.host_ptr(), sizeof(T) * s.count,
                                          cudaMemcpyHostToDevice, stream.get()));
    }
    return static_cast<const T*>(s.device.device_ptr());
  }

  // Upload, for kernels that complete the array on the device before others read it (a value only
  // the GPU knows, as auto_augment's contrast centre): the copy is fresh every iteration (or, with
  // an arena, at the captured graph's head), so device writes never outlive the iteration.
  T* UploadMutable(int slot, StreamView stream) { return const_cast<T*>(Upload(slot, stream)); }

  // The device address of the slot's pinned array (zero-copy reads over the bus).
  const T* Mapped(int slot) {
    Slot& s = At(slot);
    if (s.arena != nullptr) {
      return reinterpret_cast<const T*>(static_cast<const char*>(s.arena->host_buffer().device_ptr()) + s.offset);
    }
    return static_cast<const T*>(s.host.device_ptr());
  }

 private:
  struct Slot {
    Buffer host;    // pinned, mapped
    Buffer device;  // device copy made by Upload
    size_t count = 0;
    DescriptorArena* arena = nullptr;  // where the last Write placed the array (null: host above)
    size_t offset = 0;                 // its offset there
  };
  static size_t Bytes(size_t count) { return sizeof(T) * (count > 0 ? count : 1); }
  Slot& At(int slot) {
    if (slots_.size() <= static_cast<size_t>(slot)) slots_.resize(static_cast<size_t>(slot) + 1);
    return slots_[static_cast<size_t>(slot)];
  }

  std::vector<Slot> slots_;
};

}  // namespace conveyor
