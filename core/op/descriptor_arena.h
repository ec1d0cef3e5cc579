// DescriptorArena: the descriptor arrays of one captured segment's operators for one prefetch
// slot, placed side by side in one pinned host buffer with one device twin, so the segment's graph
// uploads them all with a single memcpy node at its head instead of one per operator (on the H100
// each memcpy node cost ~3 us of host issue time: 10 casts at batch 1 ran 45.8 us per iteration).
//
//   executor, per iteration:  arena.Begin();  [current = &arena] PrepareGpu of every node  [current = null]
//                             arena.Finish(stream);  signature += arena.words()
//   capture only:             copy arena.capacity() bytes host -> device; [current = &arena] RunGpu ...
//
// SlotDescriptors::Write places its array in the current arena (CurrentDescriptorArena(), set by the
// executor on its stage thread) and Upload returns the array's device address without a copy; with
// no current arena (eager nodes, tests, harness) they keep their own buffers and copy as before.
//
// Placement: the k-th Place of a pass gets entry k, whose reservation only grows, and entries sit
// in order, so offsets change only when a reservation grows or the number of entries changes —
// then generation() changes, which the executor puts in the capture signature (kernels captured
// with the old offsets are recaptured). A growth beyond the host buffer's capacity moves the
// arena to a bigger one; the arrays placed earlier in the pass stay writable where they are (an
// operator may fill two arrays after writing both) and Settle() gathers them into the new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cuda/stream.h"
#include "core/memory/buffer.h"

namespace conveyor {

class DescriptorArena {
 public:
  // `host_kind` kPinned for the executor (kHost lets the CPU tests check placement alone).
  explicit DescriptorArena(MemoryKind host_kind = MemoryKind::kPinned) : host_kind_(host_kind) {}

  void Begin();
  // Reserves `bytes` for the pass's next entry; returns its offset.
  size_t Place(size_t bytes);
  void* host(size_t offset) const;
  const void* device(size_t offset) const;
  // Ends the pass on the host: arrays left in a buffer the arena moved out of are copied in. Then
  // Place throws InvalidArgument until the next Begin() (an operator writing descriptors in RunGpu).
  void Settle();
  // Settle(), then the device buffer covers the host capacity (allocated stream-ordered).
  void Finish(StreamView stream);

  size_t entries() const { return entries_used_; }
  size_t used() const;                      // bytes up to the end of the last entry of the pass
  size_t capacity() const { return host_.size(); }
  uint64_t generation() const { return generation_; }
  const Buffer& host_buffer() const { return host_; }
  const Buffer& device_buffer() const { return device_; }

 private:
  static constexpr size_t kAlign = 64;
  MemoryKind host_kind_;
  bool sealed_ = false;
  Buffer host_, device_;
  struct Retired {
    Buffer buffer;  // a host buffer the arena moved out of during this pass
    size_t begin, end;  // the bytes this pass placed in it
  };
  std::vector<size_t> reserved_, offsets_;  // [entry]
  std::vector<Retired> retired_;
  size_t pass_start_ = 0;  // first offset this pass placed in host_
  size_t entries_used_ = 0;
  size_t last_pass_entries_ = 0;
  uint64_t generation_ = 0;
};

// The arena SlotDescriptors place into on this thread; null outside the executor's captured
// segments.
DescriptorArena*& CurrentDescriptorArena();

// Sets the current arena for a scope.
class ScopedDescriptorArena {
 public:
  explicit ScopedDescriptorArena(DescriptorArena* arena) : previous_(CurrentDescriptorArena()) {
    CurrentDescriptorArena() = arena;
  }
  ~ScopedDescriptorArena() { CurrentDescriptorArena() = previous_; }
  ScopedDescriptorArena(const ScopedDescriptorArena&) = delete;
  ScopedDescriptorArena& operator=(const ScopedDescriptorArena&) = delete;

 private:
  DescriptorArena* previous_;
};

}  // namespace conveyor
